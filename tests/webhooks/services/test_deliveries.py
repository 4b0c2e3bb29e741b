"""Deliveries to a receiver the test starts on the loopback interface, through the real services and an
eager Celery task (retries run at once; their delays are the domain's, tested there)."""

import base64
import hashlib
import hmac
import json
import time

import pytest
from rest_framework.test import APIClient

from annotation import services as annotation_services
from annotation.models import Assignment, Review
from tests.annotation.conftest import likert_payload
from webhooks.models import WebhookAttempt, WebhookDelivery
from webhooks.services import (
    WebhookInvalid,
    deliveries_record,
    webhook_create,
    webhook_redeliver,
    webhook_secret_rotate,
    webhook_update,
)

pytestmark = pytest.mark.django_db

committed = None


@pytest.fixture(autouse=True)
def _committed(django_capture_on_commit_callbacks):
    """Work queued on commit (the delivery tasks) runs at the end of each outermost transaction here."""
    global committed
    committed = lambda: django_capture_on_commit_callbacks(execute=True)  # noqa: E731
    yield


def spec_verify(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """The specification's receiver check, written out: HMAC-SHA256 over "id.timestamp.body" with the
    base64-decoded key after "whsec_", compared with each space-separated "v1," signature."""
    key = base64.b64decode(secret.split("_", 1)[1])
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    if abs(time.time() - int(headers["webhook-timestamp"])) > 300:
        return False
    return any(
        part.split(",", 1)[1] == expected
        for part in headers["webhook-signature"].split(" ")
        if part.startswith("v1,")
    )


def submit_all(project, annotator):
    api = APIClient()
    api.force_authenticate(annotator)
    while True:
        claimed = api.get(f"/api/v1/projects/{project.pk}/next")
        if claimed.status_code == 204:
            return
        task = claimed.json()
        with committed():
            posted = api.post(
                f"/api/v1/tasks/{task['task']}/annotations",
                {"answer": likert_payload(len(task["responses"]))},
                format="json",
            )
        assert posted.status_code == 201, posted.json()


def test_a_submitted_task_reaches_the_receiver_signed_as_the_specification_says(
    make_project, make_user, receiver, loopback_allowed
):
    project = make_project(n_prompts=2, per_group=1, overlap=1)
    hook = webhook_create(project=project, url=receiver.url, events=["task.submitted", "project.completed"])
    submit_all(project, project.annotators[0])
    types = [json.loads(r.body)["type"] for r in receiver.received]
    assert types == ["task.submitted", "task.submitted", "project.completed"]
    for request in receiver.received:
        assert spec_verify(hook.secret, request.headers, request.body)
        assert request.headers["content-type"] == "application/json"
    first = json.loads(receiver.received[0].body)
    assert first["data"]["project"] == project.pk and set(first["data"]) == {
        "project",
        "task",
        "assignment",
        "round",
    }
    assert json.loads(receiver.received[2].body)["data"] == {"project": project.pk}
    log = WebhookDelivery.objects.filter(endpoint=hook)
    assert {(d.status, d.attempts, d.last_status_code) for d in log} == {("succeeded", 1, 204)}
    # each message its own id, and the webhook-id header is the delivery's
    assert len({d.message_id for d in log}) == 3
    assert {r.headers["webhook-id"] for r in receiver.received} == {d.message_id for d in log}


def test_a_receiver_failing_three_times_gets_retries_then_the_delivery_succeeds(
    make_project, receiver, loopback_allowed
):
    receiver.answers = [500, 503, 500, 200]
    project = make_project(n_prompts=1, per_group=1, overlap=1)
    hook = webhook_create(project=project, url=receiver.url, events=["task.submitted"])
    submit_all(project, project.annotators[0])
    delivery = WebhookDelivery.objects.get(endpoint=hook)
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("succeeded", 4, 200)
    assert list(delivery.attempt_log.values_list("number", "status_code")) == [
        (1, 500),
        (2, 503),
        (3, 500),
        (4, 200),
    ]
    # the same message each time: one id, one body
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 1
    assert len({r.body for r in receiver.received}) == 1


def test_a_receiver_that_keeps_failing_is_logged_as_failed_after_the_last_attempt(
    make_project, receiver, loopback_allowed
):
    loopback_allowed.WEBHOOK_MAX_ATTEMPTS = 3
    receiver.answers = [500]
    project = make_project(n_prompts=1, per_group=1, overlap=1)
    hook = webhook_create(project=project, url=receiver.url, events=["task.submitted"])
    submit_all(project, project.annotators[0])
    delivery = WebhookDelivery.objects.get(endpoint=hook)
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("failed", 3, 500)
    assert delivery.finished_at is not None and delivery.next_attempt_at is None
    assert [a.status_code for a in delivery.attempt_log.all()] == [500, 500, 500]
    assert len(receiver.received) == 3


def test_redelivery_sends_the_same_message_again_as_a_new_logged_delivery(
    make_project, receiver, loopback_allowed
):
    loopback_allowed.WEBHOOK_MAX_ATTEMPTS = 1
    receiver.answers = [500, 200]
    project = make_project(n_prompts=1, per_group=1, overlap=1)
    hook = webhook_create(project=project, url=receiver.url, events=["task.submitted"])
    submit_all(project, project.annotators[0])
    failed = WebhookDelivery.objects.get(endpoint=hook)
    assert failed.status == "failed"
    with committed():
        again = webhook_redeliver(delivery=failed)
    again.refresh_from_db()
    assert (again.status, again.attempts, again.redelivery_of_id) == ("succeeded", 1, failed.pk)
    assert again.message_id == failed.message_id and again.payload == failed.payload
    assert [r.headers["webhook-id"] for r in receiver.received] == [failed.message_id] * 2
    assert spec_verify(hook.secret, receiver.received[1].headers, receiver.received[1].body)
    webhook_update(hook=hook, active=False)
    with pytest.raises(WebhookInvalid, match="switched off"):
        webhook_redeliver(delivery=failed)


def test_after_rotation_both_secrets_sign_until_the_overlap_ends(make_project, receiver, loopback_allowed):
    project = make_project(n_prompts=2, per_group=1, overlap=1)
    hook = webhook_create(project=project, url=receiver.url, events=["task.submitted"])
    old = hook.secret
    hook = webhook_secret_rotate(hook=hook)
    assert hook.secret != old and hook.previous_secret == old
    submit_all(project, project.annotators[0])
    request = receiver.received[0]
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    assert spec_verify(hook.secret, request.headers, request.body)
    assert spec_verify(old, request.headers, request.body)


def test_a_private_address_is_refused_unless_its_network_is_allowed(make_project, receiver, settings):
    project = make_project(n_prompts=1, per_group=1, overlap=1)
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    for url in (receiver.url, "http://localhost:9/x", "http://10.0.0.7/x", "http://[::1]:8080/x"):
        with pytest.raises(WebhookInvalid, match="private, loopback or reserved"):
            webhook_create(project=project, url=url, events=["task.submitted"])
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    hook = webhook_create(project=project, url=receiver.url, events=["task.submitted"])
    # a network allowed when the hook was saved and taken back since: the attempt is refused and logged
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    submit_all(project, project.annotators[0])
    delivery = WebhookDelivery.objects.get(endpoint=hook)
    assert delivery.status == "failed" and delivery.last_error.startswith("refused: 127.0.0.1")
    assert receiver.received == []


def test_unknown_events_and_bad_urls_write_nothing(make_project, loopback_allowed):
    project = make_project(n_prompts=1, per_group=1)
    with pytest.raises(WebhookInvalid, match="unknown event"):
        webhook_create(project=project, url="http://127.0.0.1:1/", events=["task.deleted"])
    with pytest.raises(WebhookInvalid, match="must start with"):
        webhook_create(project=project, url="file:///etc/passwd", events=["task.submitted"])
    assert not project.webhooks.exists()


def test_a_rejected_review_and_site_wide_hooks(make_project, make_user, receiver, loopback_allowed):
    project = make_project(n_prompts=1, per_group=1, overlap=1)
    other = make_project(n_prompts=1, per_group=1, overlap=1)
    site = webhook_create(project=None, url=receiver.url, events=["review.rejected", "import.finished"])
    own = webhook_create(project=other, url=receiver.url, events=["review.rejected"])
    submit_all(project, project.annotators[0])
    assignment = Assignment.objects.get(project=project)
    reviewer = make_user("reviewer")
    with committed():
        annotation_services.review_create(
            assignment=assignment, reviewer=reviewer, verdict=Review.Verdict.REJECT, comment="Perbaiki nilai."
        )
    deliveries = WebhookDelivery.objects.all()
    # the site-wide hook hears every project; the other project's hook does not hear this one
    assert [(d.endpoint_id, d.event) for d in deliveries] == [(site.pk, "review.rejected")]
    assert deliveries[0].payload["data"]["assignment"] == assignment.pk
    assert not WebhookDelivery.objects.filter(endpoint=own).exists()
    # a site-wide event (no project) reaches the site-wide hook only
    with committed():
        deliveries_record(name="import.finished", project_id=None, data={"import": 1, "status": "succeeded"})
    assert WebhookDelivery.objects.filter(endpoint=site, event="import.finished", status="succeeded").exists()
    assert WebhookAttempt.objects.count() == 2


def test_nobody_listening_costs_no_query_once_the_subscriptions_are_cached(
    make_project, django_assert_num_queries
):
    deliveries_record(name="task.submitted", project_id=1, data={})
    with django_assert_num_queries(0):
        assert deliveries_record(name="task.submitted", project_id=1, data={}) == []


def test_finished_runs_exports_and_imports_are_events(make_project, receiver, loopback_allowed):
    from datasets_app.jobs import job_finish
    from datasets_app.models import DatasetImport
    from datasets_app.services import IMPORT_JOB
    from evaluation.models import GenerationRun
    from evaluation.services.runs import run_fail
    from exports.models import Export
    from exports.services import EXPORT_JOB

    project = make_project(n_prompts=1, per_group=1)
    hook = webhook_create(
        project=None, url=receiver.url, events=["run.finished", "export.finished", "import.finished"]
    )
    run = GenerationRun.objects.create(dataset=project.dataset, status="running")
    export = Export.objects.create(project=project, kind="raw", status="running", task_id="t1")
    record = DatasetImport.objects.create(status="running", task_id="t2")
    with committed():
        run_fail(run=run, error="endpoint gone")
        job_finish(kind=EXPORT_JOB, job=export, status=Export.Status.SUCCEEDED)
        job_finish(kind=IMPORT_JOB, job=record, status=DatasetImport.Status.FAILED, message="bad line 3")
    bodies = [json.loads(r.body) for r in receiver.received]
    assert [(b["type"], b["data"]) for b in bodies] == [
        ("run.finished", {"run": run.pk, "kind": "generation", "status": "failed", "project": None}),
        ("export.finished", {"export": export.pk, "status": "succeeded", "project": project.pk}),
        ("import.finished", {"import": record.pk, "status": "failed", "project": None}),
    ]
    assert all(spec_verify(hook.secret, r.headers, r.body) for r in receiver.received)


def test_pending_deliveries_whose_task_was_lost_are_sent_again(make_project, receiver, loopback_allowed):
    from datetime import timedelta

    from django.utils import timezone

    from webhooks.services import deliveries_requeue_stale

    hook = webhook_create(project=None, url=receiver.url, events=["run.finished"])
    now = timezone.now()
    lost = WebhookDelivery.objects.create(
        endpoint=hook, event="run.finished", message_id="msg_lost", payload={}
    )
    waiting = WebhookDelivery.objects.create(
        endpoint=hook,
        event="run.finished",
        message_id="msg_wait",
        payload={},
        next_attempt_at=now + timedelta(minutes=5),
    )
    WebhookDelivery.objects.filter(pk=lost.pk).update(created_at=now - timedelta(hours=1))
    assert deliveries_requeue_stale(now=now) == [lost.pk]
    lost.refresh_from_db()
    waiting.refresh_from_db()
    assert (lost.status, lost.attempts) == ("succeeded", 1) and waiting.status == "pending"
    assert [r.headers["webhook-id"] for r in receiver.received] == ["msg_lost"]


def test_an_endpoint_switched_off_gets_nothing_more(make_project, receiver, loopback_allowed):
    from webhooks.services import delivery_attempt

    hook = webhook_create(project=None, url=receiver.url, events=["run.finished"])
    pending = WebhookDelivery.objects.create(
        endpoint=hook, event="run.finished", message_id="msg_off", payload={}
    )
    webhook_update(hook=hook, active=False)
    pending.refresh_from_db()
    outcome = delivery_attempt(delivery=pending)
    assert outcome.delivery.status == "failed" and outcome.retry_in is None
    assert outcome.delivery.last_error == "refused: the endpoint is switched off"
    assert receiver.received == []
