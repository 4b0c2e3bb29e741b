"""``manage.py benchmark_run``: start a benchmark run from the command line.

    python manage.py benchmark_run --task mcq --endpoint SLUG --dataset ID --mode completion --k-shot 3 \
        --shot-split shot --eval-split test --seed 1 [--inline] --json

Starts the run as the API and the run form do (``benchmark_run_start``), so the same options are checked the
same way. Without ``--inline`` the run's chunks go to the workers and the command prints the queued run;
with ``--inline`` they run in this process, one after the other, and the command prints the finished run
with its tables: accuracy overall, by category, language, register and (multiple choice) by the prompt
template each question was asked with, and the numbers of refusals and of ambiguous answers (two or more
letters named); ``by_language`` (a column per language
and ``avg``, the unweighted mean over languages: SeaBench's and LoraxBench's table) and ``language_avg``; and
``comparison``, the same table over the succeeded runs of the dataset scored the same way (null when there is
no other). Bad input (an unknown endpoint, dataset,
mode or option) ends with exit code 2 and one line naming it; nothing is written.
"""

from __future__ import annotations

import json
from typing import Any

from celery import current_app
from django.core.management.base import CommandParser

from datasets_app.jobs import task_named
from datasets_app.models import Dataset
from evaluation.domain.benchmark_metrics import CLOZE_RULES, MATCH_RULES
from evaluation.domain.prompt_sets import AGGREGATIONS
from evaluation.management.commands import CsvCommand, json_safe
from evaluation.models import BenchmarkRun, ModelEndpoint, RunChunk
from evaluation.selectors import benchmark_comparison, benchmark_tables
from evaluation.services import RunConfigError, benchmark_run_start
from evaluation.services.benchmarks import DIRECTIONS

_OPTIONS = {
    "k_shot": "k_shot",
    "shot_split": "shot_split",
    "eval_split": "eval_split",
    "seed": "seed",
    "prompt_language": "prompt_language",
    "variant": "variant",
    "max_tokens": "max_tokens",
    "scoring": "scoring",
    "chunk_size": "chunk_size",
    "match_rule": "match_rule",
    "cloze_rule": "cloze_rule",
    "direction": "direction",
    "aggregation": "aggregation",
}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return json_safe(value)


class Command(CsvCommand):
    help = "Start a benchmark run (multiple choice, translation, open QA); --inline runs it here."
    requires_system_checks = "__all__"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--task", required=True, choices=BenchmarkRun.Task.values)
        parser.add_argument("--endpoint", required=True, help="slug of the model endpoint")
        parser.add_argument("--dataset", required=True, type=int, help="dataset id")
        parser.add_argument("--mode", choices=BenchmarkRun.Mode.values, help="multiple choice: how to ask")
        parser.add_argument("--k-shot", type=int)
        parser.add_argument("--shot-split")
        parser.add_argument("--eval-split")
        parser.add_argument("--seed", type=int)
        parser.add_argument("--prompt-language", choices=("id", "en"))
        parser.add_argument("--variant", help="one prompt template id instead of the seeded draw")
        parser.add_argument("--max-tokens", type=int)
        parser.add_argument("--temperature", type=float, help="sampling temperature (0: greedy)")
        parser.add_argument("--scoring")
        parser.add_argument("--chunk-size", type=int)
        parser.add_argument(
            "--match-rule",
            choices=MATCH_RULES,
            help="open QA by substring: substring (LoraxBench) or whole_word",
        )
        parser.add_argument(
            "--cloze-rule",
            choices=tuple(CLOZE_RULES),
            help="cloze mode: total log-probability (LoraxBench) or mean",
        )
        parser.add_argument(
            "--direction",
            choices=DIRECTIONS,
            help="translation: to_source (into Indonesian, LoraxBench) or from_source",
        )
        parser.add_argument(
            "--back-translate", action="store_true", help="translation: translate the translations back"
        )
        parser.add_argument(
            "--templates",
            help="comma-separated prompt template ids (shipped or added on the prompt templates page)",
        )
        parser.add_argument(
            "--aggregation",
            choices=AGGREGATIONS,
            help="over the templates: draw one per item, or ask with each and take the mean or the best",
        )
        parser.add_argument("--name", default="")
        parser.add_argument("--inline", action="store_true", help="run the chunks in this process")
        parser.add_argument("--json", action="store_true", help="print a JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        endpoint = ModelEndpoint.objects.filter(slug=options["endpoint"]).first()
        if endpoint is None:
            raise self.bad_input(f"--endpoint: no model endpoint with slug {options['endpoint']!r}")
        dataset = Dataset.objects.filter(pk=options["dataset"]).first()
        if dataset is None:
            raise self.bad_input(f"--dataset: no dataset with id {options['dataset']}")
        run_options = {key: options[arg] for arg, key in _OPTIONS.items() if options[arg] is not None}
        if options["back_translate"]:
            run_options["back_translate"] = True
        if options["templates"]:
            run_options["templates"] = [t.strip() for t in options["templates"].split(",") if t.strip()]
        if options["temperature"] is not None:
            run_options["sampling"] = {"temperature": options["temperature"]}
        eager = current_app.conf.task_always_eager
        if options["inline"]:
            current_app.conf.task_always_eager = True
        try:
            run = benchmark_run_start(
                task=options["task"],
                endpoint=endpoint,
                dataset=dataset,
                mode=options["mode"],
                options=run_options,
                name=options["name"],
            )
        except RunConfigError as exc:
            raise self.bad_input(str(exc)) from exc
        finally:
            current_app.conf.task_always_eager = eager
        if options["inline"]:
            # Chunks the commit hook has not run yet (the command called inside an outer transaction).
            pending = RunChunk.objects.filter(
                run_kind=RunChunk.RunKind.BENCHMARK, run_id=run.pk, status=RunChunk.Status.PENDING
            )
            for chunk_id in pending.order_by("index").values_list("pk", flat=True):
                task_named("evaluation.benchmark_chunk")(chunk_id)
        run.refresh_from_db()
        report = {
            "run": run.pk,
            "task": run.task,
            "mode": run.mode,
            "status": run.status,
            "n_total": run.n_total,
            "n_done": run.n_done,
            "n_failed": run.n_failed,
            "error": run.error or None,
            "config": run.config,
        }
        if options["inline"]:
            report["tables"] = _plain(benchmark_tables(run=run))
            report["comparison"] = _plain(benchmark_comparison(run=run))
        if options["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False))
            return
        self.stdout.write(f"benchmark run {run.pk} ({run.task}, {run.mode}): {run.status}")
        for row in report.get("tables", {}).get("overall", []):
            self.stdout.write(f"overall: {row}")
