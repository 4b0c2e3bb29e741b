"""``manage.py model_queues``: the queues a model worker consumes, for ``celery worker -Q``.

Prints the ``gpu.<name>`` queues comma-separated on one line: those in the ``MODEL_QUEUES`` setting when it
is set (a host that serves some models only), else the queues of every endpoint in the database. A new
endpoint's queue is therefore picked up the next time a model worker starts, with no code edited.
An empty line when there is none; with ``--required`` that is an error instead (exit code 2), so a worker
start fails loudly rather than listening on no queue. ``--json`` prints ``{"queues": [...], "source":
"setting" | "endpoints"}``. A configured name that is not a model queue is refused with exit code 2.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser

from evaluation.management.commands import CsvCommand
from evaluation.models import QUEUE_NAME
from evaluation.selectors import model_queues


class Command(CsvCommand):
    help = "Print the model queues (gpu.<endpoint>) a model worker consumes, comma-separated."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print a JSON object")
        parser.add_argument("--required", action="store_true", help="exit with code 2 when there is none")

    def handle(self, *args: Any, **options: Any) -> None:
        configured = [name.strip() for name in settings.MODEL_QUEUES if name.strip()]
        bad = [name for name in configured if name == "default" or not QUEUE_NAME.match(name)]
        if bad:
            raise self.bad_input(f"MODEL_QUEUES: not a model queue (gpu.<name>): {', '.join(bad)}")
        queues = model_queues(configured=configured)
        if not queues and options["required"]:
            raise self.bad_input(
                "no model queue: no endpoint has a gpu.<name> queue and MODEL_QUEUES is not set"
            )
        if options["json"]:
            self.stdout.write(
                json.dumps({"queues": queues, "source": "setting" if configured else "endpoints"})
            )
        else:
            self.stdout.write(",".join(queues))
