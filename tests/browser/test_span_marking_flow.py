"""Error spans in headless Chromium: an annotator marks two spans with the Indonesian interface (one with
the keyboard, one with the mouse), edits one and submits with Enter; then one span with the English
interface by tapping words; the reviewer sees the spans, the manager the system scores. An attention check
is marked in the same page as any task and credited."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from annotation import selectors
from annotation.models import Annotation, AttentionCheck, ErrorSpan
from datasets_app.models import Dataset, TranslationUnit
from tests.annotation import conftest as annotation_fixtures
from tests.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
job_project = annotation_fixtures.job_project

# Written for this test: two systems' Javanese translations of one Indonesian sentence.
SOURCE = "Harga beras naik lima persen minggu ini."
TARGETS = {
    "sys-one": "Regane beras mundhak sepuluh persen minggu iki.",
    "sys-two": "Regane beras munggah limang persen.",
}


@pytest.fixture(autouse=True)
def _no_rate_limit_leftovers():
    cache.clear()


def build() -> Dataset:
    dataset = Dataset.objects.create(name="spans-browser", kind=Dataset.Kind.TRANSLATIONS)
    for system, target in TARGETS.items():
        TranslationUnit.objects.create(
            dataset=dataset,
            external_id=system,
            source_text=SOURCE,
            source_language="ind",
            target_language="jav",
            register="ngoko",
            translation_text=target,
            translator_name=system,
            status="accepted",
        )
    return dataset


def words(page, side: str) -> list:
    return page.locator(f"[data-testid=span-{side}] .tok:not(.sp)").all()


def drag(page, first, last) -> None:
    a, b = first.bounding_box(), last.bounding_box()
    page.mouse.move(a["x"] + 2, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] - 2, b["y"] + b["height"] / 2, steps=5)
    page.mouse.up()


def set_language(page, code: str) -> None:
    page.click(f"[data-testid=lang-{code}]")
    page.wait_for_load_state("domcontentloaded")


def test_mark_edit_submit_review_and_scores(page, browser, live_server, login, job_project):
    annotator = login(page, "annotator", username="penanda")
    project = job_project(kind="translation_mqm", dataset=build(), members=[annotator])

    set_language(page, "id")
    page.goto(f"/annotate/projects/{project.pk}/")
    page.click("[data-testid=start]")
    page.wait_for_selector("#span-task")
    page.wait_for_load_state("domcontentloaded")
    assert page.locator("html").get_attribute("lang") == "id"
    assert "Kesalahan yang ditandai" in page.content()
    first_target = page.locator("[data-testid=span-target]").inner_text()

    # Keyboard: t (first word), → to the second, Shift+→ to the third; 1 (mistranslation), j (major).
    page.keyboard.press("t")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    tokens = words(page, "target")
    expected_keyboard = (int(tokens[1].get_attribute("data-s")), int(tokens[2].get_attribute("data-e")))
    page.keyboard.press("1")
    page.keyboard.press("j")
    assert page.locator("[data-testid=span-row]").count() == 1

    # Mouse: drag over the last two words, choose Style in the list, click Minor.
    tokens = words(page, "target")
    drag(page, tokens[-3], tokens[-2])
    expected_mouse = (int(tokens[-3].get_attribute("data-s")), int(tokens[-2].get_attribute("data-e")))
    page.select_option("[data-testid=span-category]", "style")
    page.click("[data-testid=severity-minor]")
    assert page.locator("[data-testid=span-row]").count() == 2

    shot(page, "task-mqm-id")
    # Edit the keyboard span: Edit, then m makes it minor.
    page.locator("[data-testid=span-row]").first.locator("[data-testid=span-edit]").click()
    page.keyboard.press("m")
    assert page.locator("[data-testid=span-row]").count() == 2
    page.keyboard.press("Enter")
    # The next task comes in place of this one (htmx): wait until its translation is another.
    page.wait_for_function(
        "t => { const el = document.querySelector('[data-testid=span-target]'); return el && el.dataset.testid && el.closest('#span-task').dataset.ready === '1' && el.innerText !== t; }",
        arg=first_target,
    )

    first = Annotation.objects.get(assignment__task__translation_unit__translation_text=first_target)
    spans = sorted(
        ErrorSpan.objects.filter(assignment=first.assignment).values_list(
            "start", "end", "category", "severity"
        )
    )
    assert spans == sorted(
        [
            (*expected_keyboard, "accuracy/mistranslation", "minor"),
            (*expected_mouse, "style", "minor"),
        ]
    )

    # The second task in English: tap a first and a last word (touch-style clicks), 6 (spelling), m.
    set_language(page, "en")
    page.goto(f"/annotate/projects/{project.pk}/")
    page.click("[data-testid=start]")
    page.wait_for_selector("#span-task")
    page.wait_for_load_state("domcontentloaded")
    assert "Marked errors" in page.content()
    second_target = page.locator("[data-testid=span-target]").inner_text()
    assert second_target != first_target
    tokens = words(page, "target")
    tokens[0].click()
    tokens[1].click()
    expected_tap = (int(tokens[0].get_attribute("data-s")), int(tokens[1].get_attribute("data-e")))
    page.keyboard.press("6")
    page.keyboard.press("m")
    page.click("[data-testid=submit]")
    page.wait_for_selector("#task.done")
    second = ErrorSpan.objects.get(assignment__task__translation_unit__translation_text=second_target)
    assert (second.start, second.end, second.category, second.severity) == (
        *expected_tap,
        "fluency/spelling",
        "minor",
    )

    # The reviewer sees the spans marked in the text and listed.
    reviewer_context = browser.new_context(base_url=live_server.url)
    reviewer_page = reviewer_context.new_page()
    login(reviewer_page, "reviewer", username="peninjau")
    reviewer_page.goto(f"/annotate/review/?project={project.pk}")
    listed = reviewer_page.locator("[data-testid=review-span]").all_inner_texts()
    assert len(listed) == 3
    assert any("Style" in text for text in listed)
    assert reviewer_page.locator("[data-testid=marked-target] mark").count() >= 3
    shot(reviewer_page, "review-mqm")

    # The manager sees both systems ranked with the chart.
    manager_context = browser.new_context(base_url=live_server.url)
    manager_page = manager_context.new_page()
    login(manager_page, "project_manager", username="pengelola")
    manager_page.goto(f"/annotate/manage/{project.pk}/")
    manager_page.click("[data-testid=span-scores-link]")
    rows = manager_page.locator("[data-testid=system-scores] tbody tr")
    assert rows.count() == 2
    assert manager_page.locator("[data-testid=score-chart] rect").count() == 2
    shot(manager_page, "manager-mqm-scores")
    for context in (reviewer_context, manager_context):
        context.close()


def test_marking_by_touch_on_a_phone(browser, live_server, login, job_project):
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    phone = context.new_page()
    phone.set_default_timeout(10_000)
    annotator = login(phone, "annotator", username="ponsel")
    project = job_project(kind="translation_esa", dataset=build(), members=[annotator])
    phone.goto(f"/annotate/projects/{project.pk}/")
    phone.locator("[data-testid=start]").tap()
    phone.wait_for_selector("#span-task")
    phone.wait_for_load_state("domcontentloaded")
    target = phone.locator("[data-testid=span-target]").inner_text()
    tokens = words(phone, "target")
    tokens[1].tap()
    tokens[2].tap()
    expected = (int(tokens[1].get_attribute("data-s")), int(tokens[2].get_attribute("data-e")))
    assert phone.locator("[data-testid=span-selected]").inner_text() == target[expected[0] : expected[1]]
    phone.locator("[data-testid=severity-major]").tap()
    phone.locator("[data-testid=esa-score]").fill("40")
    phone.locator("[data-testid=submit]").tap()
    phone.wait_for_function(
        "t => { const el = document.querySelector('[data-testid=span-target]'); return !el || el.innerText !== t; }",
        arg=target,
    )
    span = ErrorSpan.objects.get(assignment__task__translation_unit__translation_text=target)
    assert (span.start, span.end, span.severity, span.category) == (*expected, "major", "")
    assert Annotation.objects.get(assignment=span.assignment).value_int == 40
    context.close()


def test_an_attention_check_is_marked_like_any_task_and_credited(browser, live_server, login, job_project):
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(10_000)
    annotator = login(page, "annotator", username="teliti")
    project = job_project(
        kind="translation_esa",
        dataset=build(),
        members=[annotator],
        span_settings={"attention_checks": {"share": 0.5, "kinds": ["untranslated"]}},
    )
    check = AttentionCheck.objects.get(task__project=project)
    page.goto(f"/annotate/projects/{project.pk}/")
    page.locator("[data-testid=start]").click()
    seen = []
    for _ in range(project.n_tasks):
        page.wait_for_selector("#span-task")
        target = page.locator("[data-testid=span-target]").inner_text()
        seen.append(target)
        tokens = words(page, "target")
        if target == check.target_text:  # mark the inserted source word, as a careful annotator would
            chosen = [t for t in tokens if int(t.get_attribute("data-s")) == check.start]
        else:
            chosen = tokens[:1]
        chosen[0].click()
        page.locator("[data-testid=severity-major]").click()
        page.locator("[data-testid=esa-score]").fill("50")
        page.locator("[data-testid=submit]").click()
        page.wait_for_function(
            "t => { const el = document.querySelector('[data-testid=span-target]'); return !el || el.innerText !== t; }",
            arg=target,
        )
    assert check.target_text in seen and len(seen) == 3
    assert selectors.attention_check_scores(project)[annotator.pk] == {
        "seen": 1,
        "found": 1,
        "missed": 0,
        "share": 1.0,
    }
    assert len(selectors.span_score_rows(project)) == 2  # the check counts in no score
    context.close()
