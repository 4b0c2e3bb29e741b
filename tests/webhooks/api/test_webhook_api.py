import pytest

from webhooks.models import WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def manager_api(api_client_for):
    return api_client_for("project_manager")


def test_create_read_update_rotate_and_delete(manager_api, make_project, loopback_allowed):
    project = make_project(n_prompts=1, per_group=1)
    created = manager_api.post(
        "/api/v1/webhooks/create",
        {"project": project.pk, "url": "http://127.0.0.1:8265/h", "events": ["task.submitted"]},
        format="json",
    )
    assert created.status_code == 201, created.json()
    hook = created.json()
    assert hook["secret"].startswith("whsec_") and hook["events"] == ["task.submitted"]
    listed = manager_api.get(f"/api/v1/webhooks/?project={project.pk}").json()
    assert [h["id"] for h in listed["results"]] == [hook["id"]]
    updated = manager_api.patch(
        f"/api/v1/webhooks/{hook['id']}/update",
        {"events": ["project.completed"], "active": False},
        format="json",
    ).json()
    assert updated["events"] == ["project.completed"] and updated["active"] is False
    rotated = manager_api.post(f"/api/v1/webhooks/{hook['id']}/rotate-secret").json()
    assert rotated["secret"] != hook["secret"] and rotated["previous_secret_until"]
    assert manager_api.get(f"/api/v1/webhooks/{hook['id']}/deliveries").json()["results"] == []
    assert manager_api.delete(f"/api/v1/webhooks/{hook['id']}/delete").status_code == 204
    assert not WebhookEndpoint.objects.exists()


def test_a_private_url_is_refused_with_the_reason_and_nothing_is_written(manager_api):
    answer = manager_api.post(
        "/api/v1/webhooks/create",
        {"url": "http://169.254.169.254/latest", "events": ["run.finished"]},
        format="json",
    )
    assert answer.status_code == 400
    assert "169.254.169.254 is a private, loopback or reserved address" in answer.json()["errors"]["url"]
    unknown = manager_api.post(
        "/api/v1/webhooks/create", {"url": "https://example.org/", "events": ["nope"]}, format="json"
    )
    assert unknown.status_code == 400 and "events" in unknown.json()
    assert not WebhookEndpoint.objects.exists()


def test_redeliver_over_the_api_logs_a_new_delivery(
    manager_api, make_project, receiver, loopback_allowed, django_capture_on_commit_callbacks
):
    from webhooks.services import webhook_create

    hook = webhook_create(project=None, url=receiver.url, events=["export.finished"])
    old = WebhookDelivery.objects.create(
        endpoint=hook,
        event="export.finished",
        message_id="msg_abc",
        payload={"type": "export.finished"},
        status="failed",
    )
    with django_capture_on_commit_callbacks(execute=True):
        answer = manager_api.post(f"/api/v1/webhooks/deliveries/{old.pk}/redeliver")
    assert answer.status_code == 202 and answer.json()["redelivery_of"] == old.pk
    log = manager_api.get(f"/api/v1/webhooks/{hook.pk}/deliveries").json()["results"]
    assert [(d["status"], d["attempts"]) for d in log] == [("succeeded", 1), ("failed", 0)]
    assert log[0]["attempt_log"][0]["status_code"] == 204
    assert receiver.received[0].headers["webhook-id"] == "msg_abc"
