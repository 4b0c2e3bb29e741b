"""Indonesian pages show codes by their labels: the agreement dashboard of a pairwise project a judge ran on
(tables, notes and charts) and the judge run's page. The API keeps the codes."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache

from evaluation.models import JudgeRun
from tests.analytics.test_partial_judges import running_judge
from tests.analytics.test_reports import pairwise  # noqa: F401 - the answered pairwise project fixture
from tests.annotation import conftest as annotation_fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
make_project = annotation_fixtures.make_project

# Codes and English names the report and the run keep, as whole words.
RAW = re.compile(
    r"\b(tie|both_bad|error|biased_first|biased_second|consistent|single|pairwise|human-human|human|"
    r"best_of_n|criterion|count|measure|source|share|judge|run \d+)\b"
)


@pytest.fixture(autouse=True)
def _no_rate_limit_leftovers():
    cache.clear()


@pytest.fixture
def judged(pairwise):  # noqa: F811
    run = running_judge(pairwise, n_total=1)
    JudgeRun.objects.filter(pk=run.pk).update(status="succeeded", n_done=1)
    return pairwise, run


def in_indonesian(page, login):
    login(page, "project_manager", username="manajer")
    page.click("[data-testid=lang-id]")
    page.wait_for_load_state()


def raw_codes(text: str) -> list[str]:
    return sorted({m.group(0) for m in RAW.finditer(text)})


def test_the_indonesian_dashboard_shows_no_codes(page, login, judged):
    project, run = judged
    in_indonesian(page, login)
    page.goto(f"/analytics/projects/{project.pk}/")
    for chart in ("distributions", "judges", "bradley_terry"):
        page.get_by_test_id(f"chart-{chart}").locator("svg").first.wait_for()
    distributions = page.locator("[data-table=distributions-distributions]").inner_text()
    assert "Seri" in distributions and "Keduanya buruk" in distributions and "Suara" in distributions
    leaderboard = page.locator("[data-table=judges-leaderboard]").inner_text()
    assert f"juri-x (proses {run.pk})" in leaderboard and "Antarmanusia" in leaderboard
    assert "Putusan berpasangan" in leaderboard
    assert "Suara berpasangan" in page.locator("[data-table=bradley_terry-ratings]").inner_text()
    tables = page.locator("main table").all_inner_texts()
    assert raw_codes("\n".join(tables)) == []
    # The charts' axes and legends: the field titles in Indonesian, not the rows' field names.
    charts = " ".join(page.locator(".chart svg").all_text_contents())
    assert "Jumlah" in charts and "Ukuran" in charts and "Sumber" in charts
    assert raw_codes(charts) == []
    # A tooltip names its fields in Indonesian too.
    page.get_by_test_id("chart-distributions").locator("svg .mark-rect path").first.hover()
    tooltip = page.locator("#vg-tooltip-element.visible")
    tooltip.wait_for()
    assert "Kriteria" in tooltip.inner_text() and raw_codes(tooltip.inner_text()) == []


def test_the_indonesian_judge_run_page_shows_no_codes(page, login, judged):
    _project, run = judged
    in_indonesian(page, login)
    page.goto(f"/evaluation/runs/judge/{run.pk}/")
    main = page.locator("main").inner_text()
    assert "Konsisten 1" in main and "Seri 0" in main and "Kesalahan 0" in main
    assert f"Proses juri #{run.pk}" in page.locator(".crumbs").inner_text()
    assert raw_codes(main.replace("juri-x", "")) == []
