"""``manage.py webhook_deliveries``: an endpoint's delivery log, and redelivery, from the command line.

    manage.py webhook_deliveries --hook 3 [--limit 50] --json
    manage.py webhook_deliveries --redeliver 41 --json

Prints ``{"hook": {...}, "deliveries": [{"id", "event", "message_id", "status", "attempts",
"last_status_code", "attempt_log": [{"number", "status_code", "error", "duration_ms"}]}]}``, or the new
delivery after ``--redeliver``. Exit code 2 with a one-line reason for an unknown id.
"""

from __future__ import annotations

import json

from django.core.management.base import CommandParser

from evaluation.management.commands import CsvCommand
from webhooks import selectors, services
from webhooks.models import WebhookDelivery, WebhookEndpoint


def _delivery(d: WebhookDelivery) -> dict:
    return {
        "id": d.pk,
        "event": d.event,
        "message_id": d.message_id,
        "status": d.status,
        "attempts": d.attempts,
        "last_status_code": d.last_status_code,
        "last_error": d.last_error,
        "redelivery_of": d.redelivery_of_id,
        "created_at": d.created_at.isoformat(),
        "attempt_log": [
            {"number": a.number, "status_code": a.status_code, "error": a.error, "duration_ms": a.duration_ms}
            for a in d.attempt_log.all()
        ],
    }


class Command(CsvCommand):
    help = "Print a webhook endpoint's delivery log, or send a delivery again."
    requires_system_checks = "__all__"

    def add_arguments(self, parser: CommandParser) -> None:
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--hook", type=int, help="The endpoint whose log to print.")
        group.add_argument("--redeliver", type=int, help="A delivery to send again.")
        parser.add_argument("--limit", type=int, default=50)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options) -> None:
        if options["redeliver"] is not None:
            delivery = WebhookDelivery.objects.filter(pk=options["redeliver"]).first()
            if delivery is None:
                raise self.bad_input(f"--redeliver: no delivery {options['redeliver']}")
            try:
                again = services.webhook_redeliver(delivery=delivery)
            except services.WebhookInvalid as exc:
                raise self.bad_input(str(exc)) from exc
            again.refresh_from_db()
            result = _delivery(again)
        else:
            hook = WebhookEndpoint.objects.filter(pk=options["hook"]).first()
            if hook is None:
                raise self.bad_input(f"--hook: no webhook {options['hook']}")
            log = selectors.delivery_log(hook=hook)[: max(1, options["limit"])]
            result = {
                "hook": {"id": hook.pk, "url": hook.url, "project": hook.project_id, "events": hook.events},
                "deliveries": [_delivery(d) for d in log],
            }
        if options["json"]:
            self.stdout.write(json.dumps(result))
        else:
            self.stdout.write(json.dumps(result, indent=2))
