"""A researcher reads an arena's leaderboard in headless Chromium, changes its options, and reads it again in
Indonesian; an annotator cannot open it."""

import pytest
from django.core.cache import cache

from tests.analytics.test_arena_leaderboard import SLUGS, _voted
from tests.arena.builders import make_arena, make_endpoints
from tests.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()


@pytest.fixture
def arena(make_user):
    voter = make_user("annotator", username="pemilih")
    endpoints = make_endpoints("http://127.0.0.1:9/v1", slugs=SLUGS)
    project = make_arena(endpoints=endpoints, members=[voter], name="Arena Nusantara")
    alpha, beta, _ = endpoints
    texts = [("## Jawab\n**ya** satu dua", "tidak"), ("ya", "**tidak** mau"), ("satu", "dua tiga")]
    for n in range(9):
        vote = ("A", "A", "B")[n % 3]
        _voted(project, voter, alpha, beta, vote, texts=texts[n % 3], language=("ind", "sun")[n % 2])
    _voted(project, voter, beta, alpha, "tie", texts=("a b", "c"))
    return project


def test_researcher_reads_the_leaderboard_and_changes_its_options(page, login, arena):
    login(page, "researcher", username="peneliti")
    page.goto("/analytics/")
    page.get_by_test_id("arena-leaderboards").get_by_role("link", name="Arena Nusantara").click()
    table = page.get_by_test_id("leaderboard-table")
    rows = table.locator("tbody tr")
    assert rows.count() == 3
    assert rows.nth(0).get_attribute("data-model") == "lb-alpha"  # 6 wins + a half of 10 battles
    assert "No battles yet." in table.inner_text()  # lb-gamma, listed without a rating
    assert page.get_by_test_id("rating-plot").locator("circle").count() == 2
    assert page.get_by_test_id("pair-matrix").locator("tbody tr").count() == 3
    assert page.get_by_test_id("breakdown-language").locator("details").count() == 2
    shot(page, "arena-leaderboard")

    page.check("input[name=style][value=length]")
    page.select_option("#ties", "davidson")
    page.fill("#bootstrap", "100")
    page.get_by_test_id("leaderboard-show").click()
    page.wait_for_url("**ties=davidson**")
    coefficients = page.get_by_test_id("style-coefficients")
    assert "length" in coefficients.inner_text() and "ν" in coefficients.inner_text()
    assert page.locator("input[name=style][value=length]").is_checked()

    page.click("[data-testid=lang-id]")
    page.wait_for_function("document.documentElement.lang === 'id'")
    assert "Papan peringkat" in page.locator("h1").inner_text()
    assert "Suara per pasangan" in page.content() and "Gaya dan seri" in page.content()


def test_annotator_cannot_open_it(page, login, arena):
    login(page, "annotator", username="anotator")
    response = page.goto(f"/analytics/arena/{arena.pk}/leaderboard/")
    assert response.status == 403
    assert page.get_by_test_id("leaderboard-table").count() == 0
