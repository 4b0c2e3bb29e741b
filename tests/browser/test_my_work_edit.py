"""An annotator changes a submitted answer from My work and comes back there; work sent back shows on the
home page as needing revision. In English and Indonesian."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from annotation import services
from annotation.models import Assignment
from tests.annotation import conftest as annotation_fixtures
from tests.annotation.conftest import likert_payload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
make_project = annotation_fixtures.make_project

TEXTS = {
    "en": {
        "done": "2 of 2 done",
        "saved": "Your change was saved.",
        "all_done": "All done",
        "back": "1 sent back for revision",
        "one": "1 of 2 done",
    },
    "id": {
        "done": "2 dari 2 selesai",
        "saved": "Perubahan Anda disimpan.",
        "all_done": "Semua selesai",
        "back": "1 dikembalikan untuk direvisi",
        "one": "1 dari 2 selesai",
    },
}


@pytest.fixture(autouse=True)
def _no_rate_limit_leftovers():
    cache.clear()


def _finish(project, user) -> list[Assignment]:
    done = []
    while (assignment := services.assignment_claim(project=project, user=user)) is not None:
        services.assignment_submit(token=assignment.token, user=user, payload=likert_payload(2, value=3))
        done.append(assignment)
    return done


def _language(page, lang: str) -> None:
    if lang == "id":
        page.click("[data-testid=lang-id]")
        page.wait_for_load_state()


@pytest.mark.parametrize("lang", ["en", "id"])
def test_an_edit_from_my_work_keeps_the_count_and_returns_there(page, login, make_project, lang):
    texts = TEXTS[lang]
    project = make_project(n_prompts=2, n_models=2, per_group=0, activate=False)
    user = login(page, "annotator", username="rina")
    services.project_member_add(project=project, user=user, group=project.groups.get())
    services.project_activate(project=project)
    _finish(project, user)
    _language(page, lang)
    page.goto(f"/annotate/projects/{project.pk}/mine/")
    with page.expect_navigation():
        page.get_by_test_id("my-work-edit").first.click()
    page.wait_for_selector("#task-form")
    page.wait_for_load_state("domcontentloaded")
    assert page.get_by_test_id("progress").inner_text() == texts["done"]  # not one less while editing
    for key in ("5", "5", "5", "5"):
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/annotate/projects/{project.pk}/mine/")
    assert page.get_by_text(texts["saved"]).is_visible()
    assert texts["all_done"] not in page.content()
    page.goto("/")
    assert texts["done"] in page.get_by_test_id("annotator-project").inner_text()


@pytest.mark.parametrize("lang", ["en", "id"])
def test_work_sent_back_shows_on_home_as_needing_revision(page, login, make_user, make_project, lang):
    texts = TEXTS[lang]
    project = make_project(n_prompts=2, n_models=2, per_group=0, activate=False)
    user = login(page, "annotator", username="tono")
    services.project_member_add(project=project, user=user, group=project.groups.get())
    services.project_activate(project=project)
    first = _finish(project, user)[0]
    services.review_create(assignment=first, reviewer=make_user("reviewer"), verdict="reject", comment="cek")
    _language(page, lang)
    page.goto("/")
    line = page.get_by_test_id("annotator-project")
    assert texts["one"] in line.inner_text()
    assert page.get_by_test_id("sent-back").inner_text() == texts["back"]
    with page.expect_navigation():
        page.get_by_test_id("sent-back").click()
    assert page.url.endswith(f"/annotate/projects/{project.pk}/mine/")
