"""A researcher opens a project's judge lab in headless Chromium from its agreement dashboard: the tables,
the reliability diagram, the length-bias curve and the interval chart, in English and then in Indonesian."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from tests.analytics.test_judge_lab import lab_project  # noqa: F401 - the judged project fixture
from tests.annotation import conftest as annotation_fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
make_project = annotation_fixtures.make_project


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()


def _charts_drawn(page) -> None:
    for chart in ("reliability", "length_bias", "ppi"):
        page.get_by_test_id(f"chart-{chart}").locator("svg").first.wait_for()


def test_the_judge_lab_in_both_languages(page, login, lab_project):  # noqa: F811
    login(page, "researcher", username="peneliti")
    page.goto(f"/analytics/projects/{lab_project.pk}/")
    page.get_by_test_id("judge-lab-link").click()
    page.wait_for_url(f"**/analytics/projects/{lab_project.pk}/judge-lab/")
    _charts_drawn(page)
    bias = page.locator("[data-table=lab-judges]").inner_text()
    assert f"juri-x (run {lab_project.lab_run.pk})" in bias and "0.800 [" in bias and "qwen" in bias
    assert "People (majority)" in bias
    # The reliability diagram draws one point per confidence bin (1 and 2/3) and the diagonal.
    reliability = page.get_by_test_id("chart-reliability")
    assert reliability.locator("svg .mark-symbol.role-mark path").count() == 2
    axes = " ".join(reliability.locator("svg text").all_text_contents())
    assert "Confidence (share of the majority verdict)" in axes
    length_texts = " ".join(page.get_by_test_id("chart-length_bias").locator("svg text").all_text_contents())
    assert "Relative length difference" in length_texts and "People" in length_texts
    assert "alpha over beta" in page.locator("[data-table=lab-ppi]").inner_text()
    # Another baseline from the form.
    page.select_option("#baseline", "alpha")
    page.get_by_test_id("lab-options").get_by_role("button").click()
    page.wait_for_url("**baseline=alpha**")
    assert "beta" in page.locator("[data-table=lab-length-controlled]").inner_text()

    page.click("[data-testid=lang-id]")
    page.wait_for_load_state()
    page.goto(f"/analytics/projects/{lab_project.pk}/judge-lab/")
    _charts_drawn(page)
    main = page.locator("main").inner_text()
    assert "Lab juri" in main and "Kalibrasi" in main and "Bias panjang" in main
    assert "Perkiraan berbantuan prediksi" in main and "Juri mana untuk irisan mana" in main
    assert f"juri-x (proses {lab_project.lab_run.pk})" in page.locator("[data-table=lab-judges]").inner_text()
    axes = " ".join(page.get_by_test_id("chart-reliability").locator("svg text").all_text_contents())
    assert "Keyakinan" in axes and "Confidence" not in axes
    curve = " ".join(page.get_by_test_id("chart-length_bias").locator("svg text").all_text_contents())
    assert "Selisih panjang relatif" in curve and "Orang" in curve
    assert "Bahasa Jawa / Krama" in page.locator("[data-testid=lab-choice]").inner_text()
