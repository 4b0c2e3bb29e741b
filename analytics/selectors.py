"""Reads for the agreement dashboards: a data version, and one query each into a DataFrame.

Only submitted, non-gold work counts, in its current review round (a returned answer is replaced by its
revision). Annotators are named by username: the dashboards are for project managers and researchers,
who see the same names on the progress pages. Gold answers are scored separately
(``annotation.selectors.gold_scores``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pandas as pd
from django.db.models import Count, Max, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from annotation.models import Annotation, Assignment, Project, Task
from datasets_app.models import Response
from evaluation.domain.judge_templates import PAIRWISE
from evaluation.models import JudgeRun, Judgment, PairVerdict, RunStatus

ANNOTATION_COLUMNS = [
    "annotation_id",
    "task",
    "response",
    "model",
    "coder",
    "group",
    "criterion",
    "value",
    "choice",
    "turn",
    "task_turn",
    "submitted_at",
    "category",
    "language",
    "register",
    "response_a",
    "response_b",
    "model_a",
    "model_b",
]
JUDGMENT_COLUMNS = [
    "run",
    "judge",
    "judge_kind",
    "response_a",
    "response_b",
    "turn",
    "task",
    "order",
    "parse_status",
    "verdict",
    "score",
    "consistency",
]


def _judge_runs(project: Project):
    return JudgeRun.objects.filter(Q(annotation_project_id=project.pk) | Q(dataset_id=project.dataset_id))


@dataclass(frozen=True)
class DataVersion:
    key: str
    n_annotations: int


def data_version_info(*, project: Project) -> DataVersion:
    """A short fingerprint of everything a report reads; any new, edited or returned answer changes it.

    Edits and revisions write new annotation rows (new ids), a review return changes the assignment's
    round and status, and new judgments raise the largest judgment id. Two queries.
    """
    work = Assignment.objects.filter(project_id=project.pk).aggregate(
        n_annotations=Count("annotations"),
        last_annotation=Max("annotations__id"),
        n_submitted=Count("id", filter=Q(status=Assignment.Status.SUBMITTED), distinct=True),
        rounds=Sum("round"),
        last_submitted=Max("submitted_at"),
    )
    # Pair verdicts are written in the same transaction as the judgments they combine; a run that ends
    # changes the count of unfinished runs (its results stop being partial).
    judged = _judge_runs(project).aggregate(
        n=Count("judgments__id"),
        last=Max("judgments__id"),
        runs=Count("id", distinct=True),
        unfinished=Count("id", filter=~Q(status=RunStatus.SUCCEEDED), distinct=True),
    )
    text = repr(sorted(work.items())) + repr(sorted(judged.items()))
    return DataVersion(hashlib.sha256(text.encode()).hexdigest()[:16], int(work["n_annotations"] or 0))


def data_version(*, project: Project) -> str:
    return data_version_info(project=project).key


def judge_runs_unfinished(*, project: Project) -> list[dict]:
    """The project's judge runs that have not succeeded (still working, failed or cancelled), with the
    items whose results are written so far: one pair verdict per pairwise item, one judgment per graded
    item. One query."""

    def count(model, **filters) -> Coalesce:
        rows = (
            model.objects.filter(judge_run=OuterRef("pk"), **filters)
            .order_by()
            .values("judge_run")
            .annotate(n=Count("id"))
            .values("n")
        )
        return Coalesce(Subquery(rows), 0)

    rows = (
        _judge_runs(project)
        .exclude(status=RunStatus.SUCCEEDED)
        .annotate(n_pairs=count(PairVerdict), n_single=count(Judgment, order=Judgment.Order.SINGLE))
        .order_by("pk")
        .values("pk", "endpoint__slug", "judge_kind", "status", "n_total", "n_pairs", "n_single")
    )
    return [
        {
            "run": row["pk"],
            "judge": row["endpoint__slug"],
            "status": row["status"],
            "n_total": row["n_total"],
            "n_done": row["n_pairs"] if row["judge_kind"] == PAIRWISE else row["n_single"],
        }
        for row in rows
    ]


def annotation_frame(*, project: Project) -> pd.DataFrame:
    """Every counted answer value of the project in long format, one query.

    ``value`` holds 1-5 ratings, ``choice`` the pairwise vote (canonical A/B/tie/both_bad) or
    ``all_bad``; ``response`` is the rated response, the best pick, or the pairwise winner.
    """
    rows = (
        Annotation.objects.counted()
        .filter(assignment__project_id=project.pk)
        .exclude(criterion="comment")
        .order_by("assignment__submitted_at", "id")
        .values_list(
            "id",
            "assignment__task_id",
            "response_id",
            "response__model_name",
            "assignment__annotator__username",
            "assignment__group__name",
            "criterion",
            "value_int",
            "choice",
            "turn",
            "assignment__task__turn",
            "assignment__submitted_at",
            "assignment__task__prompt__category",
            "assignment__task__prompt__language",
            "assignment__task__prompt__register",
            "assignment__task__response_a_id",
            "assignment__task__response_b_id",
            "assignment__task__response_a__model_name",
            "assignment__task__response_b__model_name",
        )
    )
    return pd.DataFrame.from_records(list(rows), columns=ANNOTATION_COLUMNS)


def judgment_frame(*, project: Project) -> pd.DataFrame:
    """Judge results over the project's responses: pairwise verdicts (both orders combined) and grades.

    Pairwise runs contribute their ``PairVerdict`` rows (canonical verdict and consistency flag); graded
    runs their single-response ``Judgment`` rows (score, or a parse error). Runs over the project's tasks
    and runs over its dataset both count. One query per kind; empty when no judge has run.
    """
    runs = _judge_runs(project)
    pairs = PairVerdict.objects.filter(judge_run__in=runs.values("pk")).values_list(
        "judge_run_id",
        "judge_run__endpoint__slug",
        "judge_run__judge_kind",
        "response_a_id",
        "response_b_id",
        "turn",
        "annotation_task_id",
        "verdict",
        "consistency",
    )
    records = [
        (run, slug, kind, a, b, turn, task, "both", "ok", verdict, None, consistency)
        for run, slug, kind, a, b, turn, task, verdict, consistency in pairs
    ]
    graded = Judgment.objects.filter(
        judge_run__in=runs.values("pk"), order=Judgment.Order.SINGLE
    ).values_list(
        "judge_run_id",
        "judge_run__endpoint__slug",
        "judge_run__judge_kind",
        "response_a_id",
        "turn",
        "annotation_task_id",
        "parse_status",
        "score",
    )
    records += [
        (run, slug, kind, a, None, turn, task, "single", status, "", score, "")
        for run, slug, kind, a, turn, task, status, score in graded
    ]
    return pd.DataFrame.from_records(records, columns=JUDGMENT_COLUMNS)


def empty_task_models() -> pd.DataFrame:
    return pd.DataFrame(columns=["task", "response", "model"])


def task_models(*, project: Project) -> pd.DataFrame:
    """Every (task, response, model) the project showed, for best picks' implied comparisons (two queries)."""
    names = dict(
        Response.objects.filter(prompt__annotation_tasks__project_id=project.pk)
        .distinct()
        .values_list("id", "model_name")
    )
    rows = [
        (task_id, response_id, names.get(response_id))
        for task_id, response_ids in Task.objects.filter(project_id=project.pk, is_gold=False).values_list(
            "id", "response_ids"
        )
        for response_id in response_ids or []
    ]
    return pd.DataFrame.from_records(rows, columns=["task", "response", "model"])
