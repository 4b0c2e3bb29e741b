"""Reads for the agreement dashboards: a data version, and one query each into a DataFrame.

Only submitted, non-gold work counts, in its current review round (a returned answer is replaced by its
revision). Annotators are named by username: the dashboards are for project managers and researchers,
who see the same names on the progress pages. Gold answers are scored separately
(``annotation.selectors.gold_scores``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from django.db.models import Count, Max, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from accounts.sql import row_chunks
from annotation.models import Annotation, Assignment, Project, Task
from arena.domain.battles import LEADERBOARD_COLUMNS
from arena.models import Arena, Battle
from arena.selectors import battle_leaderboard_rows
from datasets_app.models import Response
from evaluation.domain.judge_templates import PAIRWISE
from evaluation.models import JudgeRun, Judgment, ModelEndpoint, PairVerdict, RunStatus

CHUNK_ROWS = 50_000

# pandas takes long to import: the functions that use it import it, so start-up (URL loading, a
# worker's boot) does not.
if TYPE_CHECKING:
    import pandas as pd

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
    "model_a",
    "language",
    "register",
    "sample",
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


# What agreement itself reads: the unit (task, response, turn), the coder, the criterion and the value.
AGREEMENT_COLUMNS = ["task", "response", "coder", "criterion", "value", "choice", "turn"]


def annotation_frame(*, project: Project, agreement_only: bool = False) -> pd.DataFrame:
    """Every counted answer value of the project in long format, one query.

    ``value`` holds 1-5 ratings, ``choice`` the pairwise vote (canonical A/B/tie/both_bad) or
    ``all_bad``; ``response`` is the rated response, the best pick, or the pairwise winner.
    ``agreement_only`` reads only :data:`AGREEMENT_COLUMNS` (see :func:`_agreement_frame`): what alpha
    needs, without the joins to prompts, groups and models, for a million ratings.
    """
    counted = (
        Annotation.objects.counted()
        .filter(assignment__project_id=project.pk)
        .exclude(criterion="comment")
        .order_by("assignment__submitted_at", "id")
    )
    if agreement_only:
        return _agreement_frame(counted)
    rows = counted.values_list(
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
    return _frame(rows, ANNOTATION_COLUMNS, datetimes=("submitted_at",))


def _agreement_frame(counted) -> pd.DataFrame:
    """The columns alpha reads, in the full frame's row order: coders by user id rather than username
    (alpha only tells coders apart), ``task`` and ``coder`` as int64, ``response``, ``value`` and ``turn``
    as float64 (NaN for null), ``criterion`` and ``choice`` as text. Each chunk of the driver's rows
    becomes one 2-D object array (a C loop) whose columns are converted whole: on a million ratings the
    names, the annotation ids and pandas' per-column type inference cost more than the figures."""
    import pandas as pd

    rows = counted.values_list(
        "assignment__task_id",
        "response_id",
        "assignment__annotator_id",
        "criterion",
        "value_int",
        "choice",
        "turn",
    )
    parts = []
    for chunk in row_chunks(rows, CHUNK_ROWS):
        matrix = np.array(chunk, dtype=object)
        del chunk
        parts.append(
            pd.DataFrame(
                {
                    "task": matrix[:, 0].astype(np.int64),
                    "response": _floats(matrix[:, 1]),
                    "coder": matrix[:, 2].astype(np.int64),
                    "criterion": matrix[:, 3],
                    "value": _floats(matrix[:, 4]),
                    "choice": matrix[:, 5],
                    "turn": _floats(matrix[:, 6]),
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            {
                name: pd.Series(dtype=np.int64 if name in ("task", "coder") else object)
                for name in AGREEMENT_COLUMNS
            }
        ).astype({"response": np.float64, "value": np.float64, "turn": np.float64})
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def _floats(column: np.ndarray) -> np.ndarray:
    """An object column of numbers and Nones as float64, NaN for None."""
    present = column != None  # noqa: E711 - elementwise comparison on an object array
    out = np.full(len(column), np.nan)
    out[present] = column[present].astype(np.float64)
    return out


def _frame(queryset, columns: list[str], *, datetimes: tuple[str, ...] = ()) -> pd.DataFrame:
    """A ``values_list`` queryset's rows as a DataFrame, read with the database cursor: the ORM's per-row
    converters (a timezone-aware datetime built row by row on SQLite) cost more than the query itself on a
    million rows; the datetime columns are converted once, column-wise, to UTC."""
    import pandas as pd

    # One frame per chunk, joined once: the driver's row tuples of one chunk at a time, never of all rows
    # (a million tuples of Python objects weighed more than the frame they became). A column with nothing
    # but nulls in some chunk comes out as objects there; infer_objects gives the whole column the type
    # one frame of every row would have had.
    parts = [pd.DataFrame.from_records(chunk, columns=columns) for chunk in row_chunks(queryset, CHUNK_ROWS)]
    if not parts:
        frame = pd.DataFrame.from_records([], columns=columns)
    elif len(parts) == 1:
        frame = parts[0]
    else:
        frame = pd.concat(parts, ignore_index=True, copy=False).infer_objects()
    del parts
    for name in datetimes:
        frame[name] = pd.to_datetime(frame[name], utc=True, format="ISO8601")
    return frame


def judgment_frame(*, project: Project) -> pd.DataFrame:
    """Judge results over the project's responses: pairwise verdicts (both orders combined) and grades.

    ``sample`` is which of a run's k sampled verdicts of the item a row is (0 for runs of one sample).
    Pairwise runs contribute their ``PairVerdict`` rows (canonical verdict and consistency flag); graded
    runs their single-response ``Judgment`` rows (score, or a parse error). Runs over the project's tasks
    and runs over its dataset both count. One query per kind; empty when no judge has run.
    """
    import pandas as pd

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
        "response_a__model_name",
        "prompt__language",
        "prompt__register",
        "sample",
    )
    records = [
        (
            run,
            slug,
            kind,
            a,
            b,
            turn,
            task,
            "both",
            "ok",
            verdict,
            None,
            consistency,
            model,
            language,
            register,
            sample,
        )
        for run, slug, kind, a, b, turn, task, verdict, consistency, model, language, register, sample in pairs
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
        "response_a__model_name",
        "prompt__language",
        "prompt__register",
        "sample",
    )
    records += [
        (
            run,
            slug,
            kind,
            a,
            None,
            turn,
            task,
            "single",
            status,
            "",
            score,
            "",
            model,
            language,
            register,
            sample,
        )
        for run, slug, kind, a, turn, task, status, score, model, language, register, sample in graded
    ]
    return pd.DataFrame.from_records(records, columns=JUDGMENT_COLUMNS)


def empty_task_models() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(columns=["task", "response", "model"])


def task_models(*, project: Project) -> pd.DataFrame:
    """Every (task, response, model) the project showed, for best picks' implied comparisons (two queries)."""
    import pandas as pd

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


# -- judge lab ------------------------------------------------------------------------------------------

LAB_JUDGMENT_COLUMNS = [
    "run",
    "judge",
    "family",
    "response_a",
    "response_b",
    "turn",
    "order",
    "parse_status",
    "verdict",
    "sample",
    "category",
    "language",
    "register",
]


def lab_judgments(*, project: Project) -> pd.DataFrame:
    """Every pairwise judgment (each order and sample) of the judge runs over the project's responses, with
    the judge endpoint's model family and the prompt's category, language and register. One query."""
    rows = (
        Judgment.objects.filter(
            judge_run__in=_judge_runs(project).filter(judge_kind=PAIRWISE).values("pk"),
            order__in=(Judgment.Order.AB, Judgment.Order.BA),
        )
        .order_by("pk")
        .values_list(
            "judge_run_id",
            "judge_run__endpoint__slug",
            "judge_run__endpoint__family",
            "response_a_id",
            "response_b_id",
            "turn",
            "order",
            "parse_status",
            "verdict",
            "sample",
            "prompt__category",
            "prompt__language",
            "prompt__register",
        )
    )
    return _frame(rows, LAB_JUDGMENT_COLUMNS)


def lab_responses(*, response_ids: set[int]) -> dict[int, tuple[str, list[str]]]:
    """Model name and turns of each response. One query."""
    rows = Response.objects.filter(pk__in=response_ids).values_list("pk", "model_name", "turns")
    return {pk: (model, list(turns or [])) for pk, model, turns in rows}


def model_families() -> dict[str, str]:
    """Model family of every endpoint that names one, by slug (the model name of its responses)."""
    return dict(ModelEndpoint.objects.exclude(family="").values_list("slug", "family"))


def arena_battle_frame(*, project: Project) -> pd.DataFrame:
    """The arena's voted battles as rows of the ``leaderboard`` command's CSV (model_a, model_b, winner,
    language, register, category, length and markdown counts per side, sampler, probability)."""
    import pandas as pd

    rows = battle_leaderboard_rows(project_ids=[project.pk])
    return pd.DataFrame.from_records(rows, columns=list(LEADERBOARD_COLUMNS))


def arena_model_names(*, project: Project) -> list[str]:
    """Every model of the arena (its endpoints' model names), battled or not."""
    arena = Arena.objects.filter(project_id=project.pk).first()
    if arena is None:
        return []
    return sorted(endpoint.model_name for endpoint in arena.endpoints.all())


def arena_battles_version(*, project: Project) -> str:
    """Changes whenever a vote is cast in the arena, or a reviewer takes a battle out or puts it back (a key
    for the cached leaderboard)."""
    found = Battle.objects.filter(project_id=project.pk, status=Battle.Status.VOTED).aggregate(
        n=Count("id"),
        last=Max("voted_at"),
        top=Max("id"),
        out=Count("id", filter=Q(excluded=True)),
        changed=Max("excluded_at"),
    )
    last = found["last"].isoformat() if found["last"] else "-"
    changed = found["changed"].isoformat() if found["changed"] else "-"
    return f"{found['n']}-{found['top']}-{last}-{found['out']}-{changed}"
