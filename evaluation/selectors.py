"""Reads of evaluation: judge targets, run lists, result tables (querysets, plain rows, DataFrames)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations
from typing import Any

import pandas as pd
from django.core.exceptions import ValidationError
from django.db.models import F, Q, QuerySet

from annotation.models import Task
from datasets_app.models import Prompt, Response
from evaluation.domain.answer_extraction import REFUSAL_RULE
from evaluation.domain.benchmark_metrics import accuracy_by, chrf_pp_corpus, chrf_pp_corpus_by, mean_score_by
from evaluation.domain.judge_templates import (
    ASPECT_CATEGORIES,
    LANGUAGES,
    PAIRWISE,
    SEABENCH_CATEGORIES,
    aspects_for,
    category_label,
    normalise_category,
)
from evaluation.models import (
    BenchmarkResult,
    BenchmarkRun,
    CategoryAspects,
    GenerationRun,
    JudgeRun,
    JudgeTemplate,
    Judgment,
    ModelEndpoint,
    PairVerdict,
    RunChunk,
    RunStatus,
    validate_api_key_env,
    validate_base_url,
    validate_trust_remote_code,
)


def pair_key(a: int, b: int, turn: int | None) -> str:
    return f"pair:{a}:{b}:t{'all' if turn is None else turn}"


def single_key(response_id: int, turn: int) -> str:
    return f"resp:{response_id}:t{turn}"


def _responses_of(
    dataset_id: int, model_names: Sequence[str] | None, generation_run_ids: Sequence[int] | None
):
    responses = Response.objects.filter(prompt__dataset_id=dataset_id)
    if model_names:
        responses = responses.filter(model_name__in=list(model_names))
    if generation_run_ids:
        responses = responses.filter(generation_run_id__in=list(generation_run_ids))
    return responses.order_by("prompt_id", "model_name", "id").values("id", "prompt_id", "turns")


def judge_targets_from_dataset(
    *,
    dataset_id: int,
    judge_kind: str,
    model_names: Sequence[str] | None = None,
    generation_run_ids: Sequence[int] | None = None,
    per_turn: bool = False,
) -> list[dict[str, Any]]:
    """Items a judge run over a dataset's responses works on.

    Pairwise: every pair of the prompt's (chosen) responses, canonical A = the first by model name, over the
    whole conversation or, with ``per_turn``, one item per turn. Graded: each response and turn; the factual
    judge only where the prompt has a reference (gold) answer for that turn.
    """
    rows = list(_responses_of(dataset_id, model_names, generation_run_ids))
    by_prompt: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_prompt.setdefault(row["prompt_id"], []).append(row)
    prompts = {
        p["id"]: p for p in Prompt.objects.filter(pk__in=by_prompt).values("id", "turns", "references")
    }
    items: list[dict[str, Any]] = []
    for prompt_id, responses in by_prompt.items():
        n_turns = len(prompts[prompt_id]["turns"])
        if judge_kind == PAIRWISE:
            for a, b in combinations(responses, 2):
                turns: Iterable[int | None] = range(n_turns) if per_turn and n_turns > 1 else [None]
                for turn in turns:
                    items.append(
                        {
                            "key": pair_key(a["id"], b["id"], turn),
                            "prompt": prompt_id,
                            "a": a["id"],
                            "b": b["id"],
                            "turn": turn,
                        }
                    )
            continue
        references = prompts[prompt_id]["references"] or []
        for response in responses:
            for turn in range(n_turns):
                if judge_kind == "factual" and not (
                    turn < len(references) and (references[turn] or "").strip()
                ):
                    continue
                items.append(
                    {
                        "key": single_key(response["id"], turn),
                        "prompt": prompt_id,
                        "a": response["id"],
                        "turn": turn,
                    }
                )
    return items


def judge_targets_from_annotation_project(*, project_id: int, judge_kind: str) -> list[dict[str, Any]]:
    """The exact tasks of an annotation project: the same pair and turn a human saw, keyed by the task.

    Pairwise judges take pairwise tasks (``response_a``/``response_b``, ``turn``: empty means the whole
    conversation); graded judges grade every response of every task, per turn (each once).
    """
    tasks = Task.objects.filter(project_id=project_id).order_by("id")
    items: list[dict[str, Any]] = []
    if judge_kind == PAIRWISE:
        for task in (
            tasks.exclude(response_a=None)
            .exclude(response_b=None)
            .values("id", "prompt_id", "response_a_id", "response_b_id", "turn")
        ):
            items.append(
                {
                    "key": f"task:{task['id']}",
                    "prompt": task["prompt_id"],
                    "a": task["response_a_id"],
                    "b": task["response_b_id"],
                    "turn": task["turn"],
                    "task": task["id"],
                }
            )
        return items
    seen: set[str] = set()
    task_rows = list(tasks.values("id", "prompt_id", "response_ids", "turn"))
    response_ids = {rid for t in task_rows for rid in (t["response_ids"] or [])}
    n_turns = {
        r["id"]: len(r["turns"]) for r in Response.objects.filter(pk__in=response_ids).values("id", "turns")
    }
    for task in task_rows:
        for response_id in task["response_ids"] or []:
            turns = [task["turn"]] if task["turn"] is not None else range(n_turns.get(response_id, 0))
            for turn in turns:
                key = single_key(response_id, turn)
                if key not in seen:
                    seen.add(key)
                    items.append({"key": key, "prompt": task["prompt_id"], "a": response_id, "turn": turn})
    return items


def aspect_overrides(project_id: int | None = None) -> dict[str, dict[str, list[str]]]:
    """Per-category aspects edited in the application, in the shape ``aspects_for`` takes: the shared
    ones, with annotation project ``project_id``'s own on top when given (project > shared > shipped)."""
    return _aspect_layers(project_id)[0]


def _aspect_layers(
    project_id: int | None,
) -> tuple[dict[str, dict[str, list[str]]], dict[str, set[str]]]:
    """The merged overrides, and per category the languages that are the project's own."""
    overrides: dict[str, dict[str, list[str]]] = {}
    own: dict[str, set[str]] = {}
    rows = CategoryAspects.objects.filter(project__isnull=True)
    if project_id is not None:
        rows = CategoryAspects.objects.filter(Q(project__isnull=True) | Q(project_id=project_id))
    # Shared rows first, so that a project's own row replaces the shared one of its category and language.
    for row in rows.order_by(F("project_id").asc(nulls_first=True)).values(
        "project_id", "category", "language", "aspects"
    ):
        category = normalise_category(row["category"])
        overrides.setdefault(category, {})[row["language"]] = list(row["aspects"])
        if row["project_id"] is not None:
            own.setdefault(category, set()).add(row["language"])
    return overrides, own


def aspect_table(project_id: int | None = None) -> list[dict[str, Any]]:
    """Every category's priority aspects as single-answer judges will use them: the shipped categories
    (IndoPref's, SeaBench's ten, the general set) and any other category given aspects here, with whether
    each language's list was edited, and, for annotation project ``project_id``, whether it is the
    project's own."""
    overrides, own = _aspect_layers(project_id)
    categories = list(ASPECT_CATEGORIES) + sorted(set(overrides) - set(ASPECT_CATEGORIES))
    rows = []
    for category in categories:
        row: dict[str, Any] = {
            "category": category,
            "seabench": category in SEABENCH_CATEGORIES,
            "label": {language: category_label(category, language) for language in LANGUAGES},
        }
        for language in LANGUAGES:
            row[language] = list(aspects_for(category, language, overrides))
            row[f"edited_{language}"] = language in overrides.get(category, {})
            row[f"own_{language}"] = language in own.get(category, set())
        row["own"] = bool(own.get(category))
        rows.append(row)
    return rows


def judge_template_latest(*, kind: str, language: str, name: str = "default") -> JudgeTemplate | None:
    return JudgeTemplate.objects.filter(name=name, kind=kind, language=language).order_by("-version").first()


def endpoint_list() -> QuerySet[ModelEndpoint]:
    return ModelEndpoint.objects.order_by("slug")


def model_queues(*, configured: Sequence[str] = ()) -> list[str]:
    """The model queues (``gpu.<name>``) a model worker should consume, sorted: ``configured`` when given
    (the deployment's ``MODEL_QUEUES``), else the queues of every stored endpoint, active or not, so that
    chunks already queued for an endpoint switched off still run. ``default`` is the default worker's."""
    if configured:
        names = {name.strip() for name in configured if name.strip()}
    else:
        names = set(ModelEndpoint.objects.values_list("queue", flat=True).distinct())
    return sorted(name for name in names if name != "default")


def endpoint_policy_errors(endpoint: ModelEndpoint) -> list[str]:
    """Why the deployment's allow-lists refuse a stored endpoint (its runs would fail); empty when allowed."""
    errors: list[str] = []
    checks = [(validate_api_key_env, endpoint.api_key_env)]
    if endpoint.backend == ModelEndpoint.Backend.OPENAI:
        checks.append((validate_base_url, endpoint.base_url))
    for validate, value in checks:
        try:
            validate(value)
        except ValidationError as exc:
            errors.extend(exc.messages)
    try:
        validate_trust_remote_code(endpoint.backend, endpoint.model_id, endpoint.backend_options)
    except ValidationError as exc:
        errors.extend(exc.messages)
    return errors


def run_lists(limit: int = 50) -> dict[str, list[Any]]:
    return {
        "generation": list(
            GenerationRun.objects.select_related("dataset").prefetch_related("endpoints")[:limit]
        ),
        "judge": [
            run_live_progress(run)
            for run in JudgeRun.objects.select_related("endpoint", "template", "dataset")[:limit]
        ],
        "benchmark": list(BenchmarkRun.objects.select_related("endpoint", "dataset")[:limit]),
    }


def run_chunk_errors(*, run, limit: int = 20) -> list[dict[str, str]]:
    errors: list[dict[str, str]] = []
    for chunk_errors in (
        RunChunk.objects.filter(run_kind=run.kind, run_id=run.pk)
        .exclude(errors=[])
        .values_list("errors", flat=True)
    ):
        errors.extend(chunk_errors)
        if len(errors) >= limit:
            break
    return errors[:limit]


@dataclass(frozen=True)
class ChunkRecovery:
    """A chunk of a run whose worker stopped under it, sent again."""

    index: int
    stopped_at: datetime
    attempt: int


def run_chunk_recoveries(*, run) -> list[ChunkRecovery]:
    """The run's chunks whose worker the sweep found stopped, with the attempt that ran (or will run) next."""
    rows = (
        RunChunk.objects.filter(run_kind=run.kind, run_id=run.pk, worker_stopped_at__isnull=False)
        .order_by("index")
        .values_list("index", "worker_stopped_at", "started_at", "attempts")
    )
    return [
        # Not begun again since its worker stopped: the next attempt is still to come.
        ChunkRecovery(
            index=index + 1,
            stopped_at=stopped_at,
            attempt=attempts + (started_at is None or started_at <= stopped_at),
        )
        for index, stopped_at, started_at, attempts in rows
    ]


def judge_items_done(*, run: JudgeRun) -> int:
    """Items of a judge run with their results written: one pair verdict per pairwise item, one judgment
    per graded item. Counted from the result rows, which are written as items finish inside a chunk."""
    if run.judge_kind == PAIRWISE:
        return PairVerdict.objects.filter(judge_run=run).count()
    return Judgment.objects.filter(judge_run=run).count()


def run_live_progress(run):
    """``run`` with its done count as of now: a judge run that has not succeeded (working, cancelled or
    failed) counts its finished items, as the dashboard does (the counts on the row move only when a whole
    chunk commits, so a chunk cut short by a cancel wrote results the row does not count). One query for
    such a judge run, none otherwise."""
    if isinstance(run, JudgeRun) and run.status != RunStatus.SUCCEEDED:
        run.n_done = max(run.n_done, judge_items_done(run=run))
    return run


def judgment_list(*, run: JudgeRun) -> QuerySet[Judgment]:
    return Judgment.objects.filter(judge_run=run).select_related("response_a", "response_b").order_by("id")


UNPARSED_SHOWN = 50


def judgments_unparsed(*, run: JudgeRun, limit: int = UNPARSED_SHOWN) -> list[Judgment]:
    """The run's first ``limit`` judgments whose output did not parse, with their raw output and reason."""
    return list(
        Judgment.objects.filter(judge_run=run, parse_status=Judgment.ParseStatus.ERROR)
        .only("id", "target_key", "order", "turn", "parse_reason", "raw_output")
        .order_by("id")[:limit]
    )


def pair_verdict_list(*, run: JudgeRun) -> QuerySet[PairVerdict]:
    return PairVerdict.objects.filter(judge_run=run).select_related("response_a", "response_b").order_by("id")


def judge_run_summary(*, run: JudgeRun) -> dict[str, Any]:
    """Counts of parse status, and for pairwise runs of verdicts and position consistency."""
    judgments = Judgment.objects.filter(judge_run=run)
    summary: dict[str, Any] = {
        "n_judgments": judgments.count(),
        "n_parse_errors": judgments.filter(parse_status=Judgment.ParseStatus.ERROR).count(),
    }
    if run.judge_kind == PAIRWISE:
        verdicts = PairVerdict.objects.filter(judge_run=run)
        summary["verdicts"] = {v: verdicts.filter(verdict=v).count() for v in PairVerdict.Verdict.values}
        summary["consistency"] = {
            c: verdicts.filter(consistency=c).count() for c in PairVerdict.Consistency.values
        }
    else:
        scores = [s for s in judgments.exclude(score=None).values_list("score", flat=True)]
        summary["mean_score"] = sum(scores) / len(scores) if scores else None
    return summary


def benchmark_result_list(*, run: BenchmarkRun) -> QuerySet[BenchmarkResult]:
    return BenchmarkResult.objects.filter(benchmark_run=run).order_by("id")


def benchmark_results_frame(*, run: BenchmarkRun) -> pd.DataFrame:
    rows = list(
        BenchmarkResult.objects.filter(benchmark_run=run).values(
            "item_key",
            "category",
            "language",
            "register",
            "variant",
            "prediction",
            "reference",
            "correct",
            "score",
        )
    )
    columns = [
        "item_key",
        "category",
        "language",
        "register",
        "variant",
        "prediction",
        "reference",
        "correct",
        "score",
    ]
    return pd.DataFrame(rows, columns=columns)


def benchmark_tables(*, run: BenchmarkRun, by: Sequence[str] | None = None) -> dict[str, Any]:
    """Accuracy (multiple choice, substring open QA) or mean score (judged open QA, translation) by group,
    plus the overall figure; translation runs also get corpus-level chrF++.

    ``by`` defaults to category, language and register, and for multiple choice also the prompt
    template (``variant``) each question was asked with. Multiple-choice runs count refusals apart
    (``n_refusals``): they are wrong answers, but not guesses.
    """
    if by is None:
        by = ("category", "language", "register")
        if run.task == BenchmarkRun.Task.MCQ:
            by = (*by, "variant")
    frame = benchmark_results_frame(run=run)
    frame = frame.replace({"register": {"": None}, "category": {"": None}})
    tables: dict[str, Any] = {"n": len(frame), "mode": run.mode}
    if frame.empty:
        return tables
    if run.task == BenchmarkRun.Task.MCQ:
        tables["n_refusals"] = BenchmarkResult.objects.filter(
            benchmark_run=run, raw__rule=REFUSAL_RULE
        ).count()
    scored_by_score = run.task == BenchmarkRun.Task.TRANSLATION or run.config.get("scoring") == "judge"
    if scored_by_score:
        tables["overall"] = mean_score_by(frame, by=(), score_col="score").to_dict("records")
        tables["by"] = {
            col: mean_score_by(frame, by=[col], score_col="score").to_dict("records") for col in by
        }
        if run.task == BenchmarkRun.Task.TRANSLATION:
            done = frame[frame["reference"] != ""]
            if len(done):
                tables["corpus_chrf_pp"] = chrf_pp_corpus(list(done["prediction"]), list(done["reference"]))
                # LoraxBench's table: corpus chrF++ per language (and per language and register), with the
                # mean over languages as its average column.
                hypotheses, references = list(done["prediction"]), list(done["reference"])
                languages = [str(language or "") for language in done["language"]]
                with_register = [
                    f"{language} / {register}" if isinstance(register, str) and register else language
                    for language, register in zip(languages, done["register"], strict=True)
                ]
                tables["corpus_chrf_pp_by_language"] = chrf_pp_corpus_by(hypotheses, references, languages)
                tables["corpus_chrf_pp_by_language_register"] = chrf_pp_corpus_by(
                    hypotheses, references, with_register
                )
                per_language = tables["corpus_chrf_pp_by_language"]
                tables["corpus_chrf_pp_language_mean"] = sum(r["corpus_chrf_pp"] for r in per_language) / len(
                    per_language
                )
    else:
        tables["overall"] = accuracy_by(frame, by=()).to_dict("records")
        tables["by"] = {col: accuracy_by(frame, by=[col]).to_dict("records") for col in by}
    return tables
