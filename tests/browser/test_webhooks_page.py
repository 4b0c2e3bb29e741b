"""A manager adds a webhook on the page, in Indonesian, and watches a signed delivery reach a receiver the
test started, then redelivers it from the log."""

import json

import pytest
from django.core.cache import cache

from tests.webhooks.conftest import receiver  # noqa: F401  (the fixture, asked for by name below)
from webhooks.services import SUBSCRIPTIONS_KEY, deliveries_record

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_manager_adds_a_webhook_in_indonesian_and_redelivers_from_the_log(
    page,
    login,
    settings,
    receiver,  # noqa: F811
):
    cache.clear()
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    login(page, "project_manager", username="manajer")
    page.click("[data-testid=lang-id]")
    page.wait_for_load_state()
    page.get_by_role("link", name="Webhook").first.click()
    assert page.locator("h1").inner_text() == "Webhook"
    form = page.locator("[data-testid=webhook-form]")
    form.get_by_label("URL").fill("http://10.1.2.3/masuk")
    form.get_by_label("import.finished", exact=False).check()
    form.get_by_role("button", name="Tambahkan webhook").click()
    assert "10.1.2.3 adalah alamat privat, loopback, atau khusus (reserved)" in page.content()

    form = page.locator("[data-testid=webhook-form]")
    form.get_by_label("URL").fill(receiver.url)
    form.get_by_label("import.finished", exact=False).check()
    form.get_by_role("button", name="Tambahkan webhook").click()
    page.wait_for_url("**/webhooks/*/")
    secret = page.locator("[data-testid=webhook-secret]").inner_text()
    assert secret.startswith("whsec_")
    assert page.get_by_text("Belum ada yang dikirim.").is_visible()

    deliveries_record(name="import.finished", project_id=None, data={"import": 7, "status": "succeeded"})
    page.reload()
    log = page.locator("[data-testid=delivery-log]")
    assert "import.finished" in log.inner_text() and "Terkirim" in log.inner_text()
    page.locator("[data-testid=redeliver]").first.click()
    page.wait_for_load_state()
    assert page.locator("[data-testid=delivery-log] tbody tr").count() == 2
    assert "pengiriman ulang" in page.locator("[data-testid=delivery-log]").inner_text()
    assert [json.loads(r.body)["data"]["import"] for r in receiver.received] == [7, 7]
    assert receiver.received[0].headers["webhook-id"] == receiver.received[1].headers["webhook-id"]
    cache.delete(SUBSCRIPTIONS_KEY)
