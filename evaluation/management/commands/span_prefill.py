"""``manage.py span_prefill --project ID --endpoint SLUG [--language en|id] [--limit N] [--json]``: ask a
model for the errors of every task of an MQM or ESA project and store them as suggested spans (the same
service as the project's pre-fill page). Prints the counts: tasks, parsed replies, parse errors, spans
suggested, quoted errors dropped because their words are not in the translation. Exit code 2 with one line
on bad input (no such project or endpoint, a project that is not MQM or ESA)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser

from accounts.refusals import Refused
from annotation.models import Project
from evaluation.management.commands import CsvCommand
from evaluation.models import ModelEndpoint
from evaluation.services.span_prefill import span_prefill_run


class Command(CsvCommand):
    requires_system_checks: list[str] = []
    help = "Pre-fill the error spans of an MQM or ESA project with a model's suggestions."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", type=int, required=True, help="id of the MQM or ESA project")
        parser.add_argument("--endpoint", required=True, help="slug of the model endpoint")
        parser.add_argument("--language", choices=["en", "id"], default="en", help="language of the prompt")
        parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
        parser.add_argument("--json", action="store_true", help="print a JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(pk=options["project"]).first()
        if project is None:
            raise self.bad_input(f"--project: no project {options['project']}")
        endpoint = ModelEndpoint.objects.filter(slug=options["endpoint"]).first()
        if endpoint is None:
            raise self.bad_input(f"--endpoint: no endpoint {options['endpoint']!r}")
        if options["limit"] is not None and options["limit"] < 1:
            raise self.bad_input("--limit must be at least 1")
        try:
            result = span_prefill_run(
                project=project, endpoint=endpoint, lang=options["language"], limit=options["limit"]
            )
        except Refused as exc:
            raise self.bad_input(f"--project: {exc}") from None
        counts = result.as_dict()
        if options["json"]:
            self.stdout.write(json.dumps(counts))
        else:
            self.stdout.write(" ".join(f"{k}={v}" for k, v in counts.items()))
