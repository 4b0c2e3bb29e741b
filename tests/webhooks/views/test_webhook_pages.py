import pytest

from webhooks.models import WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("language", "texts"),
    [
        ("en", ["Webhooks", "Add a webhook", "All projects (site-wide)"]),
        ("id", ["Webhook", "Tambah webhook", "Semua proyek (seluruh situs)"]),
    ],
)
def test_the_manager_adds_a_webhook_and_sees_its_secret_and_log(
    role_client, make_project, loopback_allowed, language, texts
):
    client = role_client("project_manager")
    client.cookies["django_language"] = language
    project = make_project(n_prompts=1, per_group=1)
    page = client.get("/webhooks/").content.decode()
    assert all(text in page for text in texts)
    posted = client.post(
        "/webhooks/",
        {
            "url": "http://127.0.0.1:8266/in",
            "project": project.pk,
            "events": ["task.submitted", "run.finished"],
        },
    )
    hook = WebhookEndpoint.objects.get()
    assert posted.status_code == 302 and posted["Location"] == f"/webhooks/{hook.pk}/"
    assert (hook.project_id, hook.events) == (project.pk, ["task.submitted", "run.finished"])
    WebhookDelivery.objects.create(
        endpoint=hook,
        event="run.finished",
        message_id="msg_page",
        payload={},
        status="failed",
        attempts=3,
        last_status_code=500,
    )
    detail = client.get(f"/webhooks/{hook.pk}/").content.decode()
    assert hook.secret in detail and "msg_page" in detail
    fragment = client.get(f"/webhooks/{hook.pk}/", headers={"HX-Request": "true"}).content.decode()
    assert fragment.lstrip().startswith('<div id="webhook-log"') and "msg_page" in fragment


def test_a_refused_url_is_shown_on_the_form_and_nothing_is_saved(role_client):
    client = role_client("project_manager")
    page = client.post("/webhooks/", {"url": "http://10.0.0.1/in", "events": ["task.submitted"]})
    assert page.status_code == 200
    assert "10.0.0.1 is a private, loopback or reserved address" in page.content.decode()
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize(
    ("url", "events", "says"),
    [
        ("http://10.0.0.1/in", ["task.submitted"], "10.0.0.1 adalah alamat privat, loopback, atau khusus"),
        ("ftp://hooks.example.org/", ["task.submitted"], "URL harus diawali http:// atau https://"),
        ("https://u:p@hooks.example.org/", ["task.submitted"], "URL tidak boleh memuat nama pengguna"),
    ],
)
def test_refusal_reasons_are_shown_in_the_pages_language(role_client, url, events, says):
    client = role_client("project_manager")
    page = client.post("/webhooks/", {"url": url, "events": events}, HTTP_ACCEPT_LANGUAGE="id")
    assert page.status_code == 200 and says in page.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_a_host_outside_the_allow_list_is_refused_in_indonesian(role_client, settings):
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.example.org"]
    client = role_client("project_manager")
    page = client.post(
        "/webhooks/",
        {"url": "https://other.example.org/in", "events": ["task.submitted"]},
        HTTP_ACCEPT_LANGUAGE="id",
    )
    assert "other.example.org:443 tidak ada dalam daftar host webhook situs ini" in page.content.decode()


def test_redelivery_to_a_switched_off_endpoint_says_why_in_indonesian(role_client, loopback_allowed):
    from webhooks.services import webhook_create

    hook = webhook_create(project=None, url="http://127.0.0.1:8267/", events=["import.finished"])
    hook.active = False
    hook.save(update_fields=["active"])
    delivery = WebhookDelivery.objects.create(
        endpoint=hook, event="import.finished", message_id="msg_off", payload={}, status="failed"
    )
    client = role_client("project_manager")
    page = client.post(
        f"/webhooks/deliveries/{delivery.pk}/redeliver", follow=True, HTTP_ACCEPT_LANGUAGE="id"
    )
    assert "endpoint dimatikan; nyalakan untuk mengirim ulang" in page.content.decode()


def test_rotate_switch_off_and_delete_from_the_page(role_client, loopback_allowed):
    from webhooks.services import webhook_create

    client = role_client("project_manager")
    hook = webhook_create(project=None, url="http://127.0.0.1:8267/", events=["import.finished"])
    old = hook.secret
    client.post(f"/webhooks/{hook.pk}/rotate")
    hook.refresh_from_db()
    assert hook.secret != old and hook.previous_secret == old
    client.post(f"/webhooks/{hook.pk}/active", {"active": "0"})
    hook.refresh_from_db()
    assert not hook.active
    client.post(f"/webhooks/{hook.pk}/delete")
    assert not WebhookEndpoint.objects.exists()
