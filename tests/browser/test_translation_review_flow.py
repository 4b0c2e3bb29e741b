"""The translation review loop in headless Chromium, with the keyboard: a translator writes, a reviewer
rejects with an error category, the translator fixes, the reviewer accepts."""

import pytest
from django.core.cache import cache

from annotation import services
from annotation.models import TranslationRound
from datasets_app.models import TranslationUnit
from tests.annotation import conftest as annotation_fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
job_project = annotation_fixtures.job_project


@pytest.fixture(autouse=True)
def _no_rate_limit_leftovers():
    cache.clear()


@pytest.fixture
def second_page(browser, live_server):
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 390, "height": 844}, is_mobile=True
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


def start(page, project_name: str):
    page.goto("/")
    page.locator("[data-testid=annotator-project]", has_text=project_name).get_by_role(
        "button", name="Start / continue"
    ).click()
    page.wait_for_selector("#task-form")
    # The keyboard handlers are bound on DOMContentLoaded (deferred script): wait for it before typing.
    page.wait_for_load_state("domcontentloaded")


def test_write_reject_fix_accept(page, second_page, login, job_project):
    dataset = annotation_fixtures.build_translation_dataset(n_units=1)
    translator = login(page, "annotator", username="penerjemah")
    reviewer = login(second_page, "annotator", username="pemeriksa")
    translate = job_project(kind="translation", dataset=dataset, members=[translator])
    review = job_project(kind="translation_review", dataset=dataset, members=[reviewer])

    # The translator writes with the keyboard: t focuses the text box, Ctrl+Enter submits.
    start(page, translate.name)
    assert page.locator("[data-testid=source]").inner_text() == "Saya makan nasi di rumah."
    page.keyboard.press("t")
    page.keyboard.type("Kula nedha sega wonten griya.")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#task.done")
    assert TranslationUnit.objects.get().status == "to_review"

    # The reviewer (on a phone) rejects: r, category 4 (fluency), c for the comment, Esc, Enter.
    start(second_page, review.name)
    assert second_page.locator("[data-testid=translation]").inner_text() == "Kula nedha sega wonten griya."
    assert "penerjemah" not in second_page.content()
    width = second_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390
    second_page.keyboard.press("r")
    second_page.keyboard.press("4")
    second_page.keyboard.press("c")
    second_page.keyboard.type("Sega is Ngoko; use sekul.")
    second_page.keyboard.press("Escape")
    assert second_page.locator("input[name=verdict][value=reject]").is_checked()
    assert second_page.locator("input[name=error_categories][value=fluency]").is_checked()
    second_page.keyboard.press("Enter")
    second_page.wait_for_selector("#task.done")
    assert TranslationUnit.objects.get().status == "revise"

    # The translator sees the note and fixes the text.
    start(page, translate.name)
    assert "Sega is Ngoko; use sekul." in page.locator("[data-testid=returned]").inner_text()
    assert "Fluency" in page.locator("[data-testid=returned]").inner_text()
    page.fill("#translation", "Kula nedha sekul wonten griya.")
    page.locator("#translation").press("Control+Enter")
    page.wait_for_selector("#task.done")

    # The reviewer gets the revision back and accepts it with a.
    start(second_page, review.name)
    assert second_page.locator("[data-testid=translation]").inner_text() == "Kula nedha sekul wonten griya."
    second_page.keyboard.press("a")
    second_page.keyboard.press("Enter")
    second_page.wait_for_selector("#task.done")

    unit = TranslationUnit.objects.get()
    assert (unit.status, unit.translation_text) == ("accepted", "Kula nedha sekul wonten griya.")
    rounds = TranslationRound.objects.filter(unit=unit).order_by("round")
    assert [(r.round, r.verdict, r.error_categories) for r in rounds] == [
        (1, "reject", ["fluency"]),
        (2, "accept", []),
    ]
    assert services.assignment_claim(project=review, user=reviewer) is None
