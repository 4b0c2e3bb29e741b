"""Reads of evaluation: judge targets, run lists, result tables (querysets, plain rows, DataFrames)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db.models import Count, F, Q, QuerySet

from annotation.models import Task
from datasets_app.models import Prompt, Response
from evaluation.domain.answer_extraction import AMBIGUOUS_RULE, MCQ_PROMPT_VARIANTS, REFUSAL_RULE
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
from evaluation.domain.language_tables import (
    AVG,
    accuracy_by_language,
    chrf_by_language,
    grades_by_language,
    language_register,
    mean_by_language,
)
from evaluation.domain.presets import PRESETS, benchmark_rule_values, judge_rule_values, rules_against_preset
from evaluation.domain.prompt_sets import DRAW, combine_template_table
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

# pandas takes long to import: the functions that use it import it, so start-up (URL loading, a
# worker's boot) does not.
if TYPE_CHECKING:
    import pandas as pd


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
    """Counts of parse status, and for pairwise runs of verdicts and position consistency; graded runs
    their mean score and ``by_language`` (SeaBench's table: the mean grade of each model's responses per
    language, grades that did not parse left out, and ``avg`` over languages)."""
    import pandas as pd

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
        rows = list(
            judgments.filter(order=Judgment.Order.SINGLE).values_list(
                "response_a__model_name", "prompt__language", "parse_status", "score"
            )
        )
        if rows:
            frame = pd.DataFrame(
                [
                    (model or "", language, score if status == Judgment.ParseStatus.OK else None)
                    for model, language, status, score in rows
                ],
                columns=["model", "language", "score"],
            )
            frame["score"] = frame["score"].astype(float)
            # SeaBench's table: the mean grade per model and language, and the mean over languages.
            summary["by_language"] = grades_by_language(frame)
    return summary


def benchmark_result_list(*, run: BenchmarkRun) -> QuerySet[BenchmarkResult]:
    return BenchmarkResult.objects.filter(benchmark_run=run).order_by("id")


def benchmark_results_frame(*, run: BenchmarkRun) -> pd.DataFrame:
    import pandas as pd

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


def _scored_by_score(run: BenchmarkRun) -> bool:
    return run.task == BenchmarkRun.Task.TRANSLATION or run.config.get("scoring") == "judge"


def _language_table(run: BenchmarkRun, frame: pd.DataFrame, row_columns: Sequence[str]) -> dict[str, Any]:
    """The per-language table of ``frame`` (results of runs like ``run``): corpus chrF++ for translation,
    the mean score for judged open QA, accuracy otherwise; with the macro ``avg`` over languages."""
    if run.task == BenchmarkRun.Task.TRANSLATION:
        return chrf_by_language(frame[frame["reference"] != ""], row_columns=row_columns)
    if _scored_by_score(run):
        return mean_by_language(frame, row_columns=row_columns, score_col="score")
    return accuracy_by_language(frame, row_columns=row_columns)


def benchmark_tables(*, run: BenchmarkRun, by: Sequence[str] | None = None) -> dict[str, Any]:
    """Accuracy (multiple choice, substring open QA) or mean score (judged open QA, translation) by group,
    plus the overall figure; translation runs also get corpus-level chrF++.

    ``by`` defaults to category, language, register and language with register (``language_register``:
    ``jav / krama``, or the language alone), and for multiple choice also the prompt template
    (``variant``) each question was asked with. Multiple-choice runs count apart, among the answers no
    letter was read from, refusals (``n_refusals``) and answers naming two or more letters
    (``n_ambiguous``, the rule ``ambiguous``): both are wrong answers, but not guesses.

    ``by_language`` is SeaBench's and LoraxBench's table for the run: one row (the run's model) with a
    column per language (accuracy, the mean score, or for translation the corpus chrF++ of the language's
    sentences) and ``avg``, the unweighted mean over languages; ``language_avg`` is that ``avg``.
    """
    if by is None:
        by = ("category", "language", "register", "language_register")
        if run.task == BenchmarkRun.Task.MCQ:
            by = (*by, "variant")
    frame = benchmark_results_frame(run=run)
    frame = frame.replace({"register": {"": None}, "category": {"": None}})
    tables: dict[str, Any] = {"n": len(frame), "mode": run.mode}
    if frame.empty:
        return tables
    frame["language_register"] = [
        language_register(language, register)
        for language, register in zip(frame["language"], frame["register"], strict=True)
    ]
    if run.task == BenchmarkRun.Task.MCQ:
        tables.update(
            BenchmarkResult.objects.filter(benchmark_run=run).aggregate(
                n_refusals=Count("pk", filter=Q(raw__rule=REFUSAL_RULE)),
                n_ambiguous=Count("pk", filter=Q(raw__rule=AMBIGUOUS_RULE)),
            )
        )
    if _scored_by_score(run):
        tables["overall"] = mean_score_by(frame, by=(), score_col="score").to_dict("records")
        tables["by"] = {
            col: mean_score_by(frame, by=[col], score_col="score").to_dict("records") for col in by
        }
    else:
        tables["overall"] = accuracy_by(frame, by=()).to_dict("records")
        tables["by"] = {col: accuracy_by(frame, by=[col]).to_dict("records") for col in by}
    if run.task == BenchmarkRun.Task.TRANSLATION:
        done = frame[frame["reference"] != ""]
        if len(done):
            tables["corpus_chrf_pp"] = chrf_pp_corpus(list(done["prediction"]), list(done["reference"]))
            # LoraxBench's table: corpus chrF++ per language (and per language and register).
            hypotheses, references = list(done["prediction"]), list(done["reference"])
            languages = [str(language or "") for language in done["language"]]
            tables["corpus_chrf_pp_by_language"] = chrf_pp_corpus_by(hypotheses, references, languages)
            tables["corpus_chrf_pp_by_language_register"] = chrf_pp_corpus_by(
                hypotheses, references, list(done["language_register"])
            )
    frame["model"] = run.endpoint.slug
    if run.task != BenchmarkRun.Task.TRANSLATION or "corpus_chrf_pp" in tables:
        table = _language_table(run, frame, ("model",))
        combined = _template_tables(run, frame, tables)
        if combined is not None and table["rows"]:
            # Every item was asked with every template: the run's figures combine the templates' own.
            row = table["rows"][0]
            row.update({language: combined.get(language) for language in table["languages"]})
            row.update(avg=combined[AVG], overall=combined.get("overall"))
        tables["by_language"] = table
        tables["language_avg"] = table["rows"][0][AVG] if table["rows"] else None
        if run.task == BenchmarkRun.Task.TRANSLATION:
            # The average column of LoraxBench's table (the same figure as ``language_avg``).
            tables["corpus_chrf_pp_language_mean"] = tables["language_avg"]
    return tables


def run_template_set(run: BenchmarkRun) -> tuple[list[str], str]:
    """The ids of the templates a benchmark run asked with, and their aggregation (runs started before
    template sets: their one variant, or the language's variants drawn per question)."""
    if "templates" in run.config:
        return [t["id"] for t in run.config["templates"]], run.config.get("aggregation", DRAW)
    if run.config.get("variant"):
        return [run.config["variant"]], DRAW
    if run.task == BenchmarkRun.Task.MCQ:
        return [v.id for v in MCQ_PROMPT_VARIANTS[run.config.get("prompt_language", "id")]], DRAW
    return [], DRAW


def _template_tables(run: BenchmarkRun, frame: pd.DataFrame, tables: dict[str, Any]) -> dict[str, Any] | None:
    """For a run that asked every item with every template (``mean``/``max``): each template's per-language
    table (``tables["templates"]["table"]``) and their combination, which it returns; else None."""
    ids, aggregation = run_template_set(run)
    if aggregation == DRAW or len(ids) < 2:
        return None
    per_template = _language_table(run, frame, ("variant",))
    combined = combine_template_table(per_template, aggregation, column="variant")
    tables["templates"] = {
        "aggregation": aggregation,
        "ids": ids,
        "table": per_template,
        "combined": combined,
    }
    return combined


# Runs the comparison table of a benchmark run puts side by side at most.
COMPARED_RUNS = 12


def benchmark_comparable_runs(*, run: BenchmarkRun, limit: int = COMPARED_RUNS) -> list[BenchmarkRun]:
    """Runs scored like ``run``, newest first: the same dataset and task, the same scoring (and for
    translation the same direction), succeeded; ``run`` itself always among them."""
    candidates = (
        BenchmarkRun.objects.filter(dataset_id=run.dataset_id, task=run.task, status=RunStatus.SUCCEEDED)
        .exclude(pk=run.pk)
        .select_related("endpoint")
        .order_by("-created_at", "-id")
    )
    # Pooled per-language figures compare runs asked the same way: the same templates and aggregation.
    alike = [
        other
        for other in candidates
        if other.config.get("scoring") == run.config.get("scoring")
        and other.config.get("direction") == run.config.get("direction")
        and run_template_set(other) == run_template_set(run)
    ]
    return [run, *alike[: max(limit - 1, 0)]]


def benchmark_comparison(*, run: BenchmarkRun, limit: int = COMPARED_RUNS) -> dict[str, Any] | None:
    """The per-language table of the runs comparable with ``run`` (:func:`benchmark_comparable_runs`):
    one row per run (``run``, ``model``, ``mode``, ``name``), a column per language, ``avg`` over
    languages; best ``avg`` first. None when no other run compares."""
    import pandas as pd

    ids, aggregation = run_template_set(run)
    if aggregation != DRAW and len(ids) > 1:
        return None  # each run's figure combines its templates' own; pooling their items would not
    runs = {other.pk: other for other in benchmark_comparable_runs(run=run, limit=limit)}
    if len(runs) < 2:
        return None
    rows = list(
        BenchmarkResult.objects.filter(benchmark_run_id__in=list(runs)).values(
            "benchmark_run_id", "language", "prediction", "reference", "correct", "score"
        )
    )
    if not rows:
        return None
    frame = pd.DataFrame(rows).rename(columns={"benchmark_run_id": "run"})
    frame["model"] = [runs[pk].endpoint.slug for pk in frame["run"]]
    table = _language_table(run, frame, ("run", "model"))
    if len(table["rows"]) < 2:
        return None
    for row in table["rows"]:
        other = runs[int(row["run"])]
        row.update(run=other.pk, mode=other.mode, name=other.name)
    table["rows"].sort(key=lambda row: (row[AVG] is None, -(row[AVG] or 0.0), row["run"]))
    return table


def run_rules(run: BenchmarkRun | JudgeRun) -> dict[str, Any]:
    """Every protocol rule in force in a benchmark or judge run, each beside its preset's value when the
    run was started from one (``evaluation.domain.presets``)."""
    preset = PRESETS.get(run.config.get("preset", ""))
    if isinstance(run, BenchmarkRun):
        ids, aggregation = run_template_set(run)
        values = benchmark_rule_values(
            task=run.task, mode=run.mode, config=run.config, template_ids=ids, aggregation=aggregation
        )
    else:
        values = judge_rule_values(
            judge_kind=run.judge_kind,
            pairwise_family=run.pairwise_family,
            order_mode=run.order_mode,
            language=run.template.language,
            config=run.config,
        )
    return {"preset": preset, "rows": rules_against_preset(values, preset)}
