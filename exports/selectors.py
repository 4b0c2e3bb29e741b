"""Reads every export shares: the paging of large querysets, the prompts of a project's tasks, annotator
pseudonyms, who did the work, and the lists the export pages show. Each family's own reads sit beside it
in ``exports.families`` (``preferences_selectors``, ``raw_selectors``, ``parallel_corpus_selectors``,
``question_set_selectors``).

The frames the pair builder reads come from one ORM-built query per table, streamed in chunks of
``chunk_rows`` from the driver (a server-side cursor on PostgreSQL, the same ``chunked_cursor`` that
``QuerySet.iterator()`` uses) and turned chunk by chunk into compact columns (integer ids, categorical
criteria); no model instance or per-row dict is built, which is what makes a million ratings cheap to read.
Raw rows, which need Django's value conversion (timestamps), are read in primary-key pages
(``keyset_pages``).

Only the current answer counts: annotations of the assignment's current round, of submitted, non-gold
assignments. In the frames the pair builder reads, annotators are user ids (never written out); raw rows
name them by ``annotator_pseudonym`` only, and so do the corpus and question-set rows their translators and
question creators (``person_pseudonym``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
from django.conf import settings
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.db import connections
from django.db.models import Count, Q, QuerySet

from accounts import roles
from accounts.sql import row_chunks
from annotation.models import (
    RATING_KINDS,
    SPAN_KINDS,
    Annotation,
    Assignment,
    Project,
    Task,
)
from datasets_app.models import Prompt
from exports.models import Export

CHUNK_ROWS = 50_000
TRANSLATION_KINDS = (Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
QUESTION_KINDS = (Project.Kind.QUESTION_AUTHORING, Project.Kind.MCQ_ANSWER)
EXPORTABLE_KINDS = (*RATING_KINDS, *TRANSLATION_KINDS, *QUESTION_KINDS, *SPAN_KINDS, Project.Kind.ARENA)
# Criterion names the annotation service stores for what is not a 1-5 rating.
PICK_CRITERION = "best"
VOTE_CRITERION = "vote"
COMMENT_CRITERION = "comment"
NON_RATING_CRITERIA = (PICK_CRITERION, VOTE_CRITERION, COMMENT_CRITERION)

# The columns of a raw annotations export (``exports.families.raw``), in order.
RAW_COLUMNS = (
    "project_id",
    "dataset_id",
    "task_id",
    "item_id",
    "prompt_external_id",
    "category",
    "language",
    "register",
    "annotator",
    "group",
    "is_gold",
    "round",
    "criterion",
    "response_id",
    "model_name",
    "shown_position",
    "turn",
    "value",
    "choice",
    "comment",
    "rubric_version",
    "shown_order",
    "response_a_id",
    "response_b_id",
    "started_at",
    "submitted_at",
    "seconds_on_task",
    "n_edits",
    "annotated_at",
)


def annotator_pseudonym(*, project: Project, user_id: int) -> str:
    """A stable, non-reversible name for an annotator within one project.

    HMAC-SHA256 of the user id keyed by the site secret, the project id and the project seed: the same
    annotator gets the same pseudonym in every export of a project and another one in another project,
    and without the secret key nobody can get back to a user id by trying ids in turn.
    """
    key = f"{settings.SECRET_KEY}:export-pseudonym:{project.pk}:{project.seed}".encode()
    digest = hmac.new(key, str(user_id).encode(), hashlib.sha256).hexdigest()
    return f"ann-{digest[:12]}"


def person_pseudonym(*, project: Project, user_id: int | None = None, name: str = "") -> str | None:
    """``annotator_pseudonym`` for a user; for a person known only by an imported name, the same keyed
    hash of ``name:<name>`` (never all digits, so it cannot meet a user id's); ``None`` for nobody."""
    if user_id is not None:
        return annotator_pseudonym(project=project, user_id=user_id)
    if not name:
        return None
    key = f"{settings.SECRET_KEY}:export-pseudonym:{project.pk}:{project.seed}".encode()
    digest = hmac.new(key, f"name:{name}".encode(), hashlib.sha256).hexdigest()
    return f"ann-{digest[:12]}"


def keyset_pages(
    queryset: QuerySet[Any], fields: Sequence[str], *, chunk_rows: int = CHUNK_ROWS
) -> Iterator[list[tuple[Any, ...]]]:
    """Rows ``(pk, *fields)`` of ``queryset`` in pages of at most ``chunk_rows``, in primary-key order."""
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be at least 1")
    last = None
    while True:
        page = queryset if last is None else queryset.filter(pk__gt=last)
        rows = list(page.order_by("pk").values_list("pk", *fields)[:chunk_rows])
        if not rows:
            return
        yield rows
        if len(rows) < chunk_rows:
            return
        last = rows[-1][0]


def stream_rows(
    queryset: QuerySet[Any], fields: Sequence[str], *, ordered: bool = True, chunk_rows: int = CHUNK_ROWS
) -> Iterator[list[tuple[Any, ...]]]:
    """Rows ``(*fields)`` of ``queryset`` as the driver returns them, ``chunk_rows`` at a time.

    ``ordered`` sorts by primary key (for outputs whose row order must not depend on the database's
    plan); JSON columns arrive as text and are decoded by the caller (``json_value``).
    """
    query = (queryset.order_by("pk") if ordered else queryset.order_by()).values_list(*fields)
    yield from row_chunks(query, chunk_rows)


def json_value(value: Any) -> Any:
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def json_values(values: Sequence[Any]) -> list[Any]:
    """``[json_value(v) for v in values]``, with texts parsed in one ``json.loads`` of a JSON array.

    SQLite's driver returns a JSON column as text, PostgreSQL's as decoded values (kept as they are).
    One parse of the joined texts costs far less than a call per value on hundreds of thousands of
    them. Each stored text is one JSON document (Django's JSON field on SQLite checks ``JSON_VALID``),
    so the array has one element per value; should it not, or should anything but texts come (decoded
    values, bytes, nulls), the values are taken one by one as ``json_value`` takes them.
    """
    try:
        joined = ",".join(values)
    except TypeError:  # not all texts
        return [json_value(value) for value in values]
    try:
        parsed = json.loads(f"[{joined}]")
    except ValueError:
        parsed = None
    if parsed is None or len(parsed) != len(values):
        return [json_value(value) for value in values]
    return parsed


def transposed(rows: list[tuple[Any, ...]], n_fields: int) -> list[tuple[Any, ...]]:
    """Transpose a chunk into one tuple per field."""
    if not rows:
        return [() for _ in range(n_fields)]
    return list(zip(*rows, strict=True))


def object_array(values: Sequence[Any]) -> np.ndarray:
    """A 1-D object array of ``values`` (lists stay list objects, never a 2-D array)."""
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


def current_annotations(project: Project) -> QuerySet[Annotation]:
    """The current answer rows of the project's submitted, non-gold assignments."""
    return Annotation.objects.counted().filter(assignment__project_id=project.pk)


def project_tasks(project: Project) -> QuerySet[Task]:
    return Task.objects.filter(project_id=project.pk, is_gold=False, prompt__isnull=False)


def _project_prompts(project: Project) -> QuerySet[Prompt]:
    return Prompt.objects.filter(pk__in=project_tasks(project).values("prompt_id"))


def task_targets(project: Project, *, chunk_rows: int = CHUNK_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique ids of the prompts and of the responses in the project's tasks (one pass)."""
    prompts: list[np.ndarray] = []
    responses: list[np.ndarray] = []
    fields = ("prompt_id", "response_ids")
    for rows in stream_rows(project_tasks(project), fields, ordered=False, chunk_rows=chunk_rows):
        prompts.append(np.fromiter((prompt for prompt, _ in rows), dtype=np.int64, count=len(rows)))
        ids = json_values([ids for _, ids in rows])
        responses.append(np.fromiter((rid for one in ids for rid in one), dtype=np.int64))
    empty = np.zeros(0, dtype=np.int64)
    return (
        np.unique(np.concatenate(prompts)) if prompts else empty,
        np.unique(np.concatenate(responses)) if responses else empty,
    )


def rows_by_ids(
    model_queryset: QuerySet[Any], ids: np.ndarray, fields: Sequence[str], *, chunk_rows: int = CHUNK_ROWS
) -> Iterator[list[tuple[Any, ...]]]:
    """Rows ``(pk, *fields)`` for the sorted ``ids``, in id order, whatever the database's statistics say.

    Ids that sit close together (rows imported together, the usual case) are read as primary-key ranges,
    a handful of index range scans that may read a few rows too many (dropped here); scattered ids are
    read with ``IN`` lists small enough for every backend's parameter limit.
    """
    in_list = max(1, min(chunk_rows, connections[model_queryset.db].features.max_query_params or 999) - 10)
    for start in range(0, len(ids), chunk_rows):
        block = ids[start : start + chunk_rows]
        if int(block[-1] - block[0]) + 1 <= 2 * len(block):
            ranges = [model_queryset.filter(pk__gte=int(block[0]), pk__lte=int(block[-1]))]
        else:
            ranges = [
                model_queryset.filter(pk__in=block[i : i + in_list].tolist())
                for i in range(0, len(block), in_list)
            ]
        for queryset in ranges:
            for rows in stream_rows(queryset, ("pk", *fields), chunk_rows=chunk_rows):
                wanted = np.isin(
                    np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows)), block
                )
                kept = [row for row, keep in zip(rows, wanted, strict=True) if keep]
                if kept:
                    yield kept


def items_frame(
    project: Project, *, prompt_ids: np.ndarray | None = None, chunk_rows: int = CHUNK_ROWS
) -> pd.DataFrame:
    """The pair builder's ``items``: one row per prompt of the project's tasks, plus ``external_id``.

    ``prompt_ids`` (from ``task_targets``) saves reading the tasks again.
    """
    if prompt_ids is None:
        prompt_ids, _ = task_targets(project, chunk_rows=chunk_rows)
    fields = ("external_id", "turns", "category", "language", "register", "dataset_id")
    parts = []
    for rows in rows_by_ids(Prompt.objects.all(), prompt_ids, fields, chunk_rows=chunk_rows):
        pk, external_id, turns, category, language, register, dataset_id = transposed(rows, len(fields) + 1)
        parts.append(
            pd.DataFrame(
                {
                    "item_id": np.asarray(pk, dtype=np.int64),
                    "external_id": object_array(external_id),
                    "prompt": object_array(json_values(turns)),
                    "category": object_array(category),
                    "language": object_array(language),
                    "register": object_array(register),
                    "dataset_id": np.asarray(dataset_id, dtype=np.int64),
                }
            )
        )
    if not parts:
        columns = ("item_id", "external_id", "prompt", "category", "language", "register", "dataset_id")
        frame = pd.DataFrame({name: pd.Series(dtype=object) for name in columns})
    else:
        frame = pd.concat(parts, ignore_index=True)
    frame["project_id"] = project.pk
    return frame


def simulated_user(path: str) -> Q:
    """Rows whose user at ``path`` is simulated: the last name ``accounts.roles.SIMULATED_LAST_NAME`` and
    no usable password (Django marks one with a leading ``!``), as the demo makes its stand-ins."""
    return Q(
        **{
            f"{path}__last_name": roles.SIMULATED_LAST_NAME,
            f"{path}__password__startswith": UNUSABLE_PASSWORD_PREFIX,
        }
    )


def annotator_counts(project: Project) -> tuple[int, int]:
    """``(annotators, simulated annotators)`` among those whose counted answers an export reads."""
    answered = current_annotations(project).values("assignment_id")
    counts = Assignment.objects.filter(project_id=project.pk, id__in=answered).aggregate(
        n=Count("annotator_id", distinct=True),
        simulated=Count("annotator_id", distinct=True, filter=simulated_user("annotator")),
    )
    return int(counts["n"] or 0), int(counts["simulated"] or 0)


def work_counts(rows: QuerySet, *, user: str, unit: str = "id") -> dict[str, int]:
    """Who did a piece of work: ``rows`` (distinct ``unit`` values), ``simulated_rows`` (those done by a
    simulated user at the path ``user``), ``unrecorded_rows`` (no user: imported with a name only, or the
    user was deleted), ``people`` and ``simulated`` (distinct users of each kind)."""
    simulated = simulated_user(user)
    counts = rows.order_by().aggregate(
        rows=Count(unit, distinct=True),
        simulated_rows=Count(unit, distinct=True, filter=simulated),
        recorded_rows=Count(unit, distinct=True, filter=Q(**{f"{user}__isnull": False})),
        users=Count(user, distinct=True),
        simulated_users=Count(user, distinct=True, filter=simulated),
    )
    n = {key: int(value or 0) for key, value in counts.items()}
    return {
        "rows": n["rows"],
        "simulated_rows": n["simulated_rows"],
        "unrecorded_rows": n["rows"] - n["recorded_rows"],
        "people": n["users"] - n["simulated_users"],
        "simulated": n["simulated_users"],
    }


def project_facets(project: Project) -> dict[str, list[tuple[str, int]]]:
    """Categories, languages and registers of the project's prompts with prompt counts (export filters)."""
    prompts = _project_prompts(project)
    out: dict[str, list[tuple[str, int]]] = {}
    for column in ("category", "language", "register"):
        counts = prompts.order_by().values_list(column).annotate(n=Count("id")).order_by(column)
        out[column] = [(value, n) for value, n in counts]
    return out


def export_projects() -> QuerySet[Project]:
    """Projects an export can read (rating, translation and question projects), newest first."""
    return (
        Project.objects.filter(kind__in=EXPORTABLE_KINDS)
        .select_related("dataset")
        .annotate(n_exports=Count("exports"))
        .order_by("-created_at", "-id")
    )


def export_list(*, project: Project | None = None) -> QuerySet[Export]:
    exports = Export.objects.select_related("project")
    return exports.filter(project=project) if project is not None else exports
