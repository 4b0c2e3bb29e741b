"""A manager sets up a project in the browser: the kind first, then its fields; choosing a dataset shows its
counts and one task; members are found by typing part of a name."""

from __future__ import annotations

import pytest
from django.core.cache import cache

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _no_rate_limit_leftovers():
    cache.clear()


def test_manager_sets_up_a_pairwise_project_and_finds_a_member(page, login, make_user):
    from tests.annotation.conftest import build_dataset

    dataset = build_dataset(n_prompts=3, n_models=2, name="Uji peramban")
    make_user("annotator", username="sekar", first_name="Sekar", last_name="Ayu")
    make_user("annotator", username="bagus")
    problems: list[str] = []
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))
    login(page, "project_manager", username="manajer")

    page.goto("/annotate/manage/new/")
    page.get_by_role("link", name="Pairwise A/B").click()
    assert page.locator("[data-field=pair_mode]").is_visible()
    assert page.locator("[data-field=criteria]").count() == 0
    page.select_option("#id_dataset", str(dataset.pk))  # htmx asks for the dataset's summary
    summary = page.get_by_test_id("dataset-summary")
    summary.wait_for()
    assert page.get_by_test_id("n-items").inner_text() == "3"
    preview = page.get_by_test_id("task-preview")  # the annotator's A/B layout
    assert preview.locator(".response-card h3").all_inner_texts() == ["A", "B"]
    assert preview.locator(".message.user").count() == 1

    page.fill("#id_name", "Banding")
    page.fill("#id_groups", "Tim Uji")
    page.select_option("#id_pair_mode", "all")
    page.get_by_role("button", name="Create project").click()
    page.wait_for_url("**/annotate/manage/*/")
    assert page.locator("#id_group option").all_inner_texts()[1:] == ["Tim Uji"]  # after the empty choice

    page.fill("#member-search", "ayu")
    visible = page.locator("#id_users option:not([hidden])").all_inner_texts()
    assert visible == ["sekar (Sekar Ayu)"]
    page.select_option("#id_users", label="sekar (Sekar Ayu)")
    page.select_option("#id_group", label="Tim Uji")
    with page.expect_navigation():
        page.get_by_role("button", name="Add to group").click()
    assert page.get_by_text("1 annotator(s) added.").is_visible()
    assert problems == []


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        (
            "en",
            {
                "kind": "Likert rating",
                "relevance": "Relevance",
                "fluency": "Fluency",
                "safe": "Safe",
                "yes_no": ["Yes", "No"],
                "best": "Which response is best?",
                "optional": "(optional)",
                "all_bad": "All bad",
            },
        ),
        (
            "id",
            {
                "kind": "Penilaian Likert",
                "relevance": "Relevansi",
                "fluency": "Kelancaran",
                "safe": "Aman",
                "yes_no": ["Ya", "Tidak"],
                "best": "Respons mana yang terbaik?",
                "optional": "(opsional)",
                "all_bad": "Semua buruk",
            },
        ),
    ],
)
def test_the_preview_follows_the_criteria_ticked_and_the_best_pick(page, login, lang, words):
    from playwright.sync_api import expect

    from tests.annotation.conftest import build_dataset
    from tests.annotation.scaled import seven_point_and_yes_no

    seven_point_and_yes_no()
    dataset = build_dataset(n_prompts=2, n_models=2, name="Pratinjau")
    login(page, "project_manager", username="manajer")
    if lang == "id":
        page.click("[data-testid=lang-id]")
        page.wait_for_load_state()
    page.goto("/annotate/manage/new/")
    page.get_by_role("link", name=words["kind"]).click()
    page.select_option("#id_dataset", str(dataset.pk))
    preview = page.get_by_test_id("task-preview")
    first_card = preview.locator(".response-card").first
    legends = first_card.locator("legend")
    best = preview.get_by_test_id("best-pick")
    expect(legends).to_have_text(
        [words["relevance"], words["fluency"]], use_inner_text=True
    )  # the form's default criteria
    expect(best.locator("legend")).to_have_text(f"{words['best']} {words['optional']}")
    expect(best.locator("input")).to_have_count(2)

    page.locator("#id_criteria input[value=fluency]").uncheck()
    page.locator("#id_criteria input[value=safe]").check()
    expect(legends).to_have_text([words["relevance"], words["safe"]], use_inner_text=True)
    safe = first_card.locator("[data-scale='r-1-safe'] label")
    expect(safe).to_have_text([f"1 {words['yes_no'][0]}", f"2 {words['yes_no'][1]}"])

    page.locator("#id_criteria input[value=relevance]").uncheck()
    page.locator("#id_criteria input[value=safe]").uncheck()
    expect(first_card.locator("fieldset.scale")).to_have_count(0)  # nothing ticked: no scale at all

    page.select_option("#id_best_pick", "off")
    expect(best).to_have_count(0)
    page.select_option("#id_best_pick", "required")
    expect(best.locator("legend")).to_have_text(words["best"])
    page.locator("#id_allow_all_bad").check()
    expect(best.locator("label").last).to_have_text(f"0 {words['all_bad']}")
    expect(best.locator("input")).to_have_count(3)
    expect(first_card.locator("fieldset.scale")).to_have_count(0)  # the other choices are kept
