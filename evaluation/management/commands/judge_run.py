"""``manage.py judge_run``: start an LLM-judge run from the command line, as the run form and the API do.

``--endpoint SLUG`` and either ``--project ID`` (an annotation project: the exact tasks humans saw) or
``--dataset ID`` (its responses). ``--kind`` pairwise (default), single_grade or factual; ``--family``
no_tie (the judge must pick Response 1 or 2, IndoPref) or with_tie (A, B or tie, MT-bench) for pairwise
judges; ``--language`` en or id picks the template; ``--order-mode`` both or single_random. ``--wait S``
waits up to S seconds for the run to finish (with a worker; with eager Celery it is finished at once) and
reports its verdict counts. ``--json`` prints ``{"run", "status", "pairwise_family", "template", "n_total",
"n_done", "n_failed", "summary", "sampling", "sampling_sources"}`` (the sampling used, and for each value
whether the run, the template, the endpoint or Timbang's defaults gave it). Bad input ends with exit code 2 and one line naming what was wrong.
"""

from __future__ import annotations

import json
import time
from typing import Any

from django.core.management.base import CommandParser

from annotation.models import Project
from datasets_app.models import Dataset
from evaluation import selectors
from evaluation.management.commands import CsvCommand
from evaluation.models import JudgeRun, JudgeTemplate, ModelEndpoint
from evaluation.services import judge_run_start
from evaluation.services.runs import RunConfigError


class Command(CsvCommand):
    help = "Start an LLM-judge run over an annotation project's tasks or a dataset's responses."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--endpoint", required=True, help="slug of the judge model's endpoint")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--project", type=int, help="annotation project id")
        source.add_argument("--dataset", type=int, help="dataset id")
        parser.add_argument("--kind", default="pairwise", choices=list(JudgeTemplate.Kind.values))
        parser.add_argument("--family", choices=list(JudgeRun.PairwiseFamily.values), default=None)
        parser.add_argument("--language", default="en", choices=list(JudgeTemplate.Language.values))
        parser.add_argument("--order-mode", default="both", choices=list(JudgeRun.OrderMode.values))
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--max-tokens", type=int, default=None)
        parser.add_argument("--temperature", type=float, default=None)
        parser.add_argument("--name", default="")
        parser.add_argument("--wait", type=float, default=0.0, help="seconds to wait for the run to finish")
        parser.add_argument("--json", action="store_true", help="print a JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        endpoint = ModelEndpoint.objects.filter(slug=options["endpoint"]).first()
        if endpoint is None:
            raise self.bad_input(f"--endpoint: no model endpoint with slug {options['endpoint']!r}")
        project = dataset = None
        if options["project"] is not None:
            project = Project.objects.filter(pk=options["project"]).first()
            if project is None:
                raise self.bad_input(f"--project: no annotation project with id {options['project']}")
        else:
            dataset = Dataset.objects.filter(pk=options["dataset"]).first()
            if dataset is None:
                raise self.bad_input(f"--dataset: no dataset with id {options['dataset']}")
        run_options: dict[str, Any] = {"language": options["language"]}
        for key in ("seed", "max_tokens"):
            if options[key] is not None:
                run_options[key] = options[key]
        if options["temperature"] is not None:
            run_options["sampling"] = {"temperature": options["temperature"]}
        try:
            run = judge_run_start(
                judge_kind=options["kind"],
                endpoint=endpoint,
                dataset=dataset,
                annotation_project=project,
                order_mode=options["order_mode"],
                pairwise_family=options["family"],
                options=run_options,
                name=options["name"],
            )
        except RunConfigError as exc:
            raise self.bad_input(str(exc)) from exc
        deadline = time.monotonic() + max(options["wait"], 0.0)
        run.refresh_from_db()
        while run.is_active and time.monotonic() < deadline:
            time.sleep(0.5)
            run.refresh_from_db()
        report = {
            "run": run.pk,
            "status": run.status,
            "pairwise_family": run.pairwise_family,
            "template": str(run.template),
            "n_total": run.n_total,
            "n_done": run.n_done,
            "n_failed": run.n_failed,
            "summary": selectors.judge_run_summary(run=run),
            "sampling": run.config.get("sampling"),
            "sampling_sources": run.config.get("sampling_sources"),
        }
        if options["json"]:
            self.stdout.write(json.dumps(report))
        else:
            self.stdout.write(
                f"judge run {run.pk} ({run.pairwise_family}, {run.template}): {run.status}, "
                f"{run.n_done} of {run.n_total} done, {run.n_failed} failed"
            )
