"""Gold items on a running project and the qualification gate, in the browser, in English and Indonesian."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from annotation import services
from annotation.models import Project, Task
from tests.annotation import conftest as annotation_fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
make_project = annotation_fixtures.make_project


@pytest.fixture(autouse=True)
def _no_rate_limit_leftovers():
    cache.clear()


TEXTS = {
    "en": {
        "section": "Gold items",
        "save_rate": "Save gold rate",
        "rate_saved": "Gold rate saved; it applies to the tasks handed out from now on.",
        "mark": "Mark as gold",
        "marked": "is now a gold task.",
        "given": "already given out",
        "failed": "You did not reach the pass mark",
        "done": "All done",
        "flag": "failed qualification",
    },
    "id": {
        "section": "Butir acuan",
        "save_rate": "Simpan laju emas",
        "rate_saved": "Laju emas disimpan; laju ini berlaku untuk tugas yang dibagikan mulai sekarang.",
        "mark": "Tandai sebagai emas",
        "marked": "kini menjadi tugas emas.",
        "given": "sudah dibagikan",
        "failed": "Anda belum mencapai nilai lulus",
        "done": "Semua selesai",
        "flag": "tidak lulus kualifikasi",
    },
}


def _language(page, lang: str) -> None:
    if lang == "id":
        page.click("[data-testid=lang-id]")
        page.wait_for_load_state()


@pytest.mark.parametrize("lang", ["en", "id"])
def test_manager_changes_gold_on_an_active_project(page, login, make_project, lang):
    texts = TEXTS[lang]
    project = make_project(n_prompts=3, n_models=2, activate=True, kind="best_of_n", seed=5)
    given = services.assignment_claim(project=project, user=project.annotators[0]).task
    fresh = project.tasks.exclude(pk=given.pk).order_by("pk").first()
    login(page, "project_manager", username="manajer")
    _language(page, lang)
    page.goto(f"/annotate/manage/{project.pk}/")
    page.get_by_text(texts["section"], exact=True).click()
    page.fill("#id_gold_rate", "0.25")
    with page.expect_navigation():
        page.get_by_role("button", name=texts["save_rate"]).click()
    assert page.get_by_text(texts["rate_saved"]).is_visible()
    assert Project.objects.get(pk=project.pk).gold_rate == 0.25

    page.goto(f"/annotate/manage/{project.pk}/gold/tasks")
    rows = page.get_by_test_id("gold-task-row")
    assert rows.filter(has_text=texts["given"]).count() == 1
    page.goto(f"/annotate/manage/{project.pk}/gold/tasks/{fresh.pk}")
    page.select_option("[data-testid=gold-answer] select", index=1)
    with page.expect_navigation():
        page.get_by_role("button", name=texts["mark"]).click()
    assert page.get_by_text(texts["marked"]).is_visible()
    assert Task.objects.get(pk=fresh.pk).is_gold


@pytest.mark.parametrize("lang", ["en", "id"])
def test_a_failed_qualification_says_so_alone_and_the_manager_sees_the_flag(page, login, make_project, lang):
    texts = TEXTS[lang]
    project = make_project(n_prompts=4, n_models=2, per_group=0, activate=False, kind="best_of_n")
    for task in project.tasks.order_by("id")[:2]:
        services.task_gold_set(task=task, answer=0)
    services.project_qualification_set(project=project, n_tasks=2, pass_mark=1.0)
    user = login(page, "annotator", username="wulan")
    services.project_member_add(project=project, user=user, group=project.groups.get())
    services.project_activate(project=project)
    _language(page, lang)
    page.goto("/")
    page.get_by_test_id("annotator-project").get_by_role("button").first.click()
    for round_ in range(2):
        page.wait_for_selector("#task-form")
        token = page.url.rstrip("/").rsplit("/", 1)[-1]
        assignment = services.assignment_claim(project=project, user=user)
        assert assignment.token == token
        wrong = assignment.permutation.index(1) + 1
        page.locator(f"input[name=best][value='{wrong}']").check()
        page.get_by_test_id("submit").click()
        if round_ == 0:
            page.wait_for_function("(t) => !location.pathname.includes(t)", arg=token)
    refused = page.get_by_test_id("refused")
    refused.wait_for()
    assert texts["failed"] in refused.inner_text()
    body = page.locator("#task").inner_text()
    assert texts["done"] not in body

    manager_page = page.context.browser.new_context(base_url=page.url.split("/annotate")[0]).new_page()
    login(manager_page, "project_manager", username="manajer")
    _language(manager_page, lang)
    manager_page.goto(f"/annotate/manage/{project.pk}/")
    row = manager_page.get_by_test_id("quality-row").filter(has_text="wulan")
    assert row.get_by_test_id("quality-flags").inner_text().startswith(texts["flag"])
    manager_page.context.close()
