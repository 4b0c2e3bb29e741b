import json

import pytest
from django.core.management import CommandError, call_command

from webhooks.domain.signing import signed_headers
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_create

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def _files(tmp_path, headers, body=b'{"type":"run.finished"}'):
    (tmp_path / "h.json").write_text(json.dumps(headers))
    (tmp_path / "b.json").write_bytes(body)
    return ["--headers", str(tmp_path / "h.json"), "--body", str(tmp_path / "b.json")]


def run(*args):
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return json.loads(out.getvalue())


def test_verify_accepts_a_signed_message_and_names_what_fails(tmp_path):
    body = b'{"type":"run.finished"}'
    headers = signed_headers(secrets=[SECRET], message_id="msg_1", timestamp=1_700_000_000, body=body)
    files = _files(tmp_path, headers, body)
    ok = run("webhook_verify", "--secret", SECRET, *files, "--now", "1700000010", "--json")
    assert ok == {"valid": True, "reason": None, "message_id": "msg_1", "timestamp": "1700000000"}
    with pytest.raises(CommandError, match="no v1 signature") as failed:
        call_command(
            "webhook_verify", "--secret", SECRET, *_files(tmp_path, headers, b"{}"), "--now", "1700000010"
        )
    assert failed.value.returncode == 1
    with pytest.raises(CommandError, match="more than 300 s"):
        call_command("webhook_verify", "--secret", SECRET, *files, "--now", "1700009999")


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"secret": "abc"}, "--secret: a secret starts with 'whsec_'"),
        ({"headers": "[1, 2]"}, "--headers: a JSON object"),
        ({"headers": "{nope"}, "--headers: not JSON (line 1, column 2)"),
    ],
)
def test_verify_bad_input_exits_2_with_one_line(tmp_path, change, says):
    files = _files(tmp_path, {})
    if "headers" in change:
        (tmp_path / "h.json").write_text(change["headers"])
    with pytest.raises(CommandError, match=says.replace("(", r"\(").replace(")", r"\)")) as failed:
        call_command("webhook_verify", "--secret", change.get("secret", SECRET), *files)
    assert failed.value.returncode == 2


@pytest.mark.django_db
def test_deliveries_log_and_redelivery(
    tmp_path, receiver, loopback_allowed, django_capture_on_commit_callbacks
):
    hook = webhook_create(project=None, url=receiver.url, events=["export.finished"])
    old = WebhookDelivery.objects.create(
        endpoint=hook,
        event="export.finished",
        message_id="msg_cli",
        payload={"type": "export.finished"},
        status="failed",
    )
    with django_capture_on_commit_callbacks(execute=True):
        again = run("webhook_deliveries", "--redeliver", str(old.pk), "--json")
    # printed when queued; sent when the command's transaction committed
    assert (again["status"], again["redelivery_of"]) == ("pending", old.pk)
    sent = WebhookDelivery.objects.get(pk=again["id"])
    assert (sent.status, sent.last_status_code) == ("succeeded", 204)
    log = run("webhook_deliveries", "--hook", str(hook.pk), "--json")
    assert [d["id"] for d in log["deliveries"]] == [again["id"], old.pk]
    with pytest.raises(CommandError, match="--hook: no webhook 999") as failed:
        call_command("webhook_deliveries", "--hook", "999")
    assert failed.value.returncode == 2
