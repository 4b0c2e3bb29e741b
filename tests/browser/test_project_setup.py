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
