"""A project manager opens a project's agreement dashboard in headless Chromium; an annotator cannot."""

import pytest
from django.core.cache import cache

from tests.analytics.conftest import work_through
from tests.analytics.test_reports import likert_answers
from tests.annotation import conftest as annotation_fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
make_project = annotation_fixtures.make_project


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()


@pytest.fixture
def answered(make_project):
    project = make_project(n_prompts=3, n_models=2, per_group=2, overlap=2, criteria=["relevance", "fluency"])
    c1, c2 = project.annotators
    work_through(project, c1, likert_answers(project, "c1"))
    work_through(project, c2, likert_answers(project, "c2"))
    return project


def test_manager_sees_alpha_values_and_a_rendered_chart(page, login, answered):
    login(page, "project_manager", username="manajer")
    page.goto("/")
    page.get_by_test_id("agreement-dashboards").click()
    page.get_by_role("link", name=answered.name).click()
    page.wait_for_selector("[data-table=alpha-alpha]")
    page.select_option("#level", "interval")
    page.wait_for_url("**level=interval")
    table = page.locator("[data-table=alpha-alpha]")
    assert "Relevance" in table.inner_text()  # the criterion by its name, not its code
    assert "0.866" in table.inner_text()  # 71/82, see tests/analytics/test_reports.py
    chart = page.get_by_test_id("chart-alpha")
    chart.locator("svg").first.wait_for()
    assert chart.locator("svg .mark-symbol path, svg .mark-symbol").count() >= 1
    assert page.get_by_test_id("chart-distributions").locator("svg").count() == 1


def test_annotator_gets_403(page, login, answered):
    login(page, "annotator", username="anotator")
    response = page.goto(f"/analytics/projects/{answered.pk}/")
    assert response.status == 403
    assert page.locator("[data-table=alpha-alpha]").count() == 0
