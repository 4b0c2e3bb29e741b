"""An annotator works through tasks with the keyboard only, in headless Chromium."""

import pytest
from django.core.cache import cache

from annotation import services
from annotation.models import Annotation
from tests.annotation import conftest as annotation_fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
make_project = annotation_fixtures.make_project  # the rating-job project builder, as a fixture here


@pytest.fixture(autouse=True)
def _no_rate_limit_leftovers():
    cache.clear()


def join(project, user):
    services.project_member_add(project=project, user=user, group=project.groups.get())
    services.project_activate(project=project)


def start(page, project_name: str):
    page.goto("/")
    page.locator("[data-testid=annotator-project]", has_text=project_name).get_by_role(
        "button", name="Start / continue"
    ).click()
    page.wait_for_selector("#task-form")
    # The keyboard handlers are bound on DOMContentLoaded (deferred script): wait for it before typing.
    page.wait_for_load_state("domcontentloaded")


def test_likert_with_the_keyboard_only(page, login, make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=0, activate=False, best_pick="optional")
    user = login(page, "annotator", username="ani")
    join(project, user)
    start(page, project.name)
    progress = page.locator("[data-testid=progress]")
    assert progress.inner_text() == "0 of 2 done"
    first_url = page.url
    # Two responses x two criteria: each digit rates the highlighted scale and moves on.
    for key in ("4", "5", "3", "2"):
        page.keyboard.press(key)
    # Best pick: b, then the response number.
    page.keyboard.press("b")
    page.keyboard.press("2")
    assert page.locator("fieldset.scale input:checked").count() == 4
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=progress]').innerText === '1 of 2 done'"
    )
    assert page.url != first_url  # the next task's own address, without a page load
    assert page.locator("fieldset.scale input:checked").count() == 0
    values = sorted(
        Annotation.objects.filter(criterion__in=["relevance", "fluency"]).values_list("value_int", flat=True)
    )
    assert values == [2, 3, 4, 5]
    assert Annotation.objects.filter(criterion="best").count() == 1


def test_keys_typed_before_the_next_task_settles_land_on_it(page, login, make_project):
    project = make_project(n_prompts=3, n_models=2, per_group=0, activate=False)
    user = login(page, "annotator", username="dewi")
    join(project, user)
    start(page, project.name)
    # htmx swaps the next task in and settles it later; a long settle opens the gap a fast typist can hit.
    page.evaluate("htmx.config.defaultSettleDelay = 3000")
    for key in ("4", "5", "3", "2", "Enter"):
        page.keyboard.press(key)
    page.wait_for_function(
        "() => document.querySelector('[data-testid=progress]').innerText === '1 of 3 done'"
    )
    for key in ("1", "2", "3", "4"):
        page.keyboard.press(key)
    checked = page.locator("fieldset.scale input:checked")
    assert [checked.nth(i).get_attribute("value") for i in range(checked.count())] == ["1", "2", "3", "4"]
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=progress]').innerText === '2 of 3 done'"
    )
    assert sorted(Annotation.objects.values_list("value_int", flat=True)) == [1, 2, 2, 3, 3, 4, 4, 5]


def test_an_incomplete_answer_is_named_in_indonesian(page, login, make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=0, activate=False, best_pick="required")
    user = login(page, "annotator", username="eka")
    join(project, user)
    page.click("[data-testid=lang-id]")
    page.wait_for_load_state()
    page.goto("/")
    page.get_by_test_id("annotator-project").get_by_role("button").first.click()
    page.wait_for_selector("#task-form")
    page.wait_for_load_state("domcontentloaded")
    for key in ("4", "5", "3"):  # the fourth rating and the best pick left out
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    alert = page.locator("#task-form .form-errors")
    alert.wait_for()
    text = alert.inner_text()
    assert "Penilaian ini wajib diisi." in text and "Pilih respons terbaik." in text
    assert "required" not in text and "Pick" not in text
    assert page.locator("fieldset.scale input:checked").count() == 3  # what was given stays
    assert page.get_by_test_id("progress").inner_text() == "0 dari 2 selesai"
    assert not Annotation.objects.exists()


def test_pairwise_tie_with_the_keyboard_only(page, login, make_project):
    project = make_project(kind="pairwise", n_prompts=2, n_models=2, n_turns=2, per_group=0, activate=False)
    user = login(page, "annotator", username="budi")
    join(project, user)
    start(page, project.name)
    assert page.locator(".pair").count() == 2  # two turns, side by side
    page.keyboard.press("t")
    assert page.locator("input[name=vote][value=tie]").is_checked()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=progress]').innerText === '1 of 2 done'"
    )
    assert Annotation.objects.get(criterion="vote").choice == "tie"


def test_task_page_fits_a_phone(phone_page, login, make_project):
    project = make_project(n_prompts=1, n_models=3, per_group=0, activate=False)
    user = login(phone_page, "annotator", username="cici")
    join(project, user)
    start(phone_page, project.name)
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    wide = phone_page.evaluate(
        "Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > 391)"
        ".map(e => e.tagName + '.' + e.className).slice(0, 8)"
    )
    assert width <= 390, wide
    box = phone_page.locator("[data-testid=submit]").bounding_box()
    assert box is not None and box["x"] + box["width"] <= 390
