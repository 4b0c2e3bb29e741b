import pytest
from django.core.cache import cache

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _no_rate_limit_leftovers():
    cache.clear()


def test_manager_logs_in_browses_and_switches_to_indonesian(page, login):
    from tests.factories import DatasetFactory, PromptFactory

    dataset = DatasetFactory(name="Sampel browser")
    PromptFactory(dataset=dataset, external_id="ind-001", category="math")
    login(page, "project_manager", username="manajer")
    assert page.locator("h1").inner_text() == "Welcome, manajer"
    page.click("text=Browse datasets")
    page.click("text=Sampel browser")
    assert page.locator("#prompt-table").get_by_text("ind-001").is_visible()

    page.click("[data-testid=lang-id]")
    page.wait_for_load_state()
    assert page.locator("html").get_attribute("lang") == "id"
    assert page.locator("#prompt-table").get_by_text("1 prompt").is_visible()
    page.goto("/")
    assert page.locator("h1").inner_text() == "Selamat datang, manajer"
    assert page.get_by_role("button", name="Keluar").is_visible()


def test_annotator_is_refused_the_manager_pages(page, login):
    login(page, "annotator", username="ani")
    response = page.goto("/datasets/")
    assert response.status == 403
    assert page.locator("h1").inner_text() == "Not allowed"
    assert page.get_by_role("link", name="Datasets").count() == 0


def test_login_page_at_phone_width(phone_page):
    phone_page.goto("/accounts/login/")
    box = phone_page.locator('form[action="/accounts/login/"] button[type=submit]').bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
