"""Reads for exports: a rating project's prompts, responses and answers as long-format DataFrames; the
final parallel corpus of a translation project and the final question set of a question project.

The frames the pair builder reads (items, responses, ratings, picks, votes) come from one ORM-built query
per table, streamed in chunks of ``chunk_rows`` from the driver (a server-side cursor on PostgreSQL, the
same ``chunked_cursor`` that ``QuerySet.iterator()`` uses) and turned chunk by chunk into compact columns
(integer ids, categorical criteria); no model instance or per-row dict is built, which is what makes a
million ratings cheap to read. Raw rows, which need Django's value conversion (timestamps), are read in
primary-key pages (``keyset_pages``).

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
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Count, Q, QuerySet, Sum

from accounts import roles
from annotation.domain import rubrics as default_rubrics
from annotation.domain.submission import ALL_BAD
from annotation.models import (
    RATING_KINDS,
    Annotation,
    Assignment,
    Project,
    QuestionRound,
    Rubric,
    Task,
    TranslationRound,
)
from datasets_app.models import Prompt, Question, Response, TranslationUnit
from exports.models import Export

CHUNK_ROWS = 50_000
TRANSLATION_KINDS = (Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
QUESTION_KINDS = (Project.Kind.QUESTION_AUTHORING, Project.Kind.MCQ_ANSWER)
EXPORTABLE_KINDS = (*RATING_KINDS, *TRANSLATION_KINDS, *QUESTION_KINDS)
# Criterion names the annotation service stores for what is not a 1-5 rating.
PICK_CRITERION = "best"
VOTE_CRITERION = "vote"
COMMENT_CRITERION = "comment"
NON_RATING_CRITERIA = (PICK_CRITERION, VOTE_CRITERION, COMMENT_CRITERION)

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
    plan); JSON columns arrive as text and are decoded by the caller (``_json``).
    """
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be at least 1")
    query = (queryset.order_by("pk") if ordered else queryset.order_by()).values_list(*fields)
    try:
        sql, params = query.query.get_compiler(using=query.db).as_sql()
    except EmptyResultSet:
        return
    with connections[query.db].chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(chunk_rows):
            yield rows


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def _scalar_matrix(rows: list[tuple[Any, ...]]) -> np.ndarray:
    """A chunk of scalar-only rows as a 2-D object array (a C loop: far cheaper than transposing)."""
    return np.array(rows, dtype=object)


def _ints_or(column: np.ndarray, missing: int = -1) -> np.ndarray:
    """An object column of ints and Nones as int64, ``missing`` for None."""
    present = column != None  # noqa: E711 - elementwise comparison on an object array
    out = np.full(len(column), missing, dtype=np.int64)
    out[present] = column[present].astype(np.int64)
    return out


def _columns(rows: list[tuple[Any, ...]], n_fields: int) -> list[tuple[Any, ...]]:
    """Transpose a chunk into one tuple per field."""
    if not rows:
        return [() for _ in range(n_fields)]
    return list(zip(*rows, strict=True))


def _objects(values: Sequence[Any]) -> np.ndarray:
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
        responses.append(np.fromiter((rid for _, ids in rows for rid in _json(ids)), dtype=np.int64))
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
        pk, external_id, turns, category, language, register, dataset_id = _columns(rows, len(fields) + 1)
        parts.append(
            pd.DataFrame(
                {
                    "item_id": np.asarray(pk, dtype=np.int64),
                    "external_id": _objects(external_id),
                    "prompt": _objects([_json(t) for t in turns]),
                    "category": _objects(category),
                    "language": _objects(language),
                    "register": _objects(register),
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


def responses_frame(
    project: Project, *, response_ids: np.ndarray | None = None, chunk_rows: int = CHUNK_ROWS
) -> pd.DataFrame:
    """The pair builder's ``responses``: those shown in the project's tasks, with their turns."""
    if response_ids is None:
        _, response_ids = task_targets(project, chunk_rows=chunk_rows)
    parts = []
    fields = ("prompt_id", "model_name", "turns")
    for rows in rows_by_ids(Response.objects.all(), response_ids, fields, chunk_rows=chunk_rows):
        pk, prompt_id, model_name, turns = _columns(rows, len(fields) + 1)
        parts.append(
            pd.DataFrame(
                {
                    "response_id": np.asarray(pk, dtype=np.int64),
                    "item_id": np.asarray(prompt_id, dtype=np.int64),
                    "model_name": _objects(model_name),
                    "messages": _objects([_json(t) for t in turns]),
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            {
                "response_id": pd.Series(dtype=np.int64),
                "item_id": pd.Series(dtype=np.int64),
                "model_name": pd.Series(dtype=object),
                "messages": pd.Series(dtype=object),
            }
        )
    return pd.concat(parts, ignore_index=True)


def ratings_frame(project: Project, *, chunk_rows: int = CHUNK_ROWS) -> pd.DataFrame:
    """Likert ratings: ``item_id, annotator, response_id, criterion, value`` (annotator = user id)."""
    queryset = current_annotations(project).filter(value_int__isnull=False, response__isnull=False)
    fields = (
        "assignment__task__prompt_id",
        "assignment__annotator_id",
        "response_id",
        "criterion",
        "value_int",
    )
    parts = []
    for rows in stream_rows(queryset, fields, ordered=False, chunk_rows=chunk_rows):
        matrix = _scalar_matrix(rows)
        parts.append(
            pd.DataFrame(
                {
                    "item_id": matrix[:, 0].astype(np.int64),
                    "annotator": matrix[:, 1].astype(np.int64),
                    "response_id": matrix[:, 2].astype(np.int64),
                    "criterion": pd.Categorical(matrix[:, 3]),
                    "value": matrix[:, 4].astype(np.int8),
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            {
                "item_id": pd.Series(dtype=np.int64),
                "annotator": pd.Series(dtype=np.int64),
                "response_id": pd.Series(dtype=np.int64),
                "criterion": pd.Series(dtype=object),
                "value": pd.Series(dtype=np.int8),
            }
        )
    frame = pd.concat(parts, ignore_index=True)
    # Pages may have seen different criteria: concat turns mismatched categoricals into objects.
    frame["criterion"] = frame["criterion"].astype("category")
    return frame


def picks_frame(project: Project, *, chunk_rows: int = CHUNK_ROWS) -> pd.DataFrame:
    """Best-of-N picks: ``item_id, annotator, response_id`` with a missing response for "all bad"."""
    queryset = current_annotations(project).filter(criterion=PICK_CRITERION)
    fields = ("assignment__task__prompt_id", "assignment__annotator_id", "response_id", "choice")
    parts = []
    for rows in stream_rows(queryset, fields, ordered=False, chunk_rows=chunk_rows):
        matrix = _scalar_matrix(rows)
        response = _ints_or(matrix[:, 2])
        named = (response >= 0) & (matrix[:, 3] != ALL_BAD)
        parts.append(
            pd.DataFrame(
                {
                    "item_id": matrix[:, 0].astype(np.int64),
                    "annotator": matrix[:, 1].astype(np.int64),
                    # Nullable: "all bad" has no response.
                    "response_id": pd.Series(response, dtype="Int64").mask(~named),
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            {
                "item_id": pd.Series(dtype=np.int64),
                "annotator": pd.Series(dtype=np.int64),
                "response_id": pd.Series(dtype="Int64"),
            }
        )
    return pd.concat(parts, ignore_index=True)


def votes_frame(project: Project, *, chunk_rows: int = CHUNK_ROWS) -> pd.DataFrame:
    """Pairwise votes: ``item_id, annotator, response_a, response_b, vote, turn`` (A = the task's A)."""
    queryset = current_annotations(project).filter(criterion=VOTE_CRITERION)
    fields = (
        "assignment__task__prompt_id",
        "assignment__annotator_id",
        "assignment__task__response_a_id",
        "assignment__task__response_b_id",
        "choice",
        "turn",
    )
    parts = []
    for rows in stream_rows(queryset, fields, ordered=False, chunk_rows=chunk_rows):
        matrix = _scalar_matrix(rows)
        parts.append(
            pd.DataFrame(
                {
                    "item_id": matrix[:, 0].astype(np.int64),
                    "annotator": matrix[:, 1].astype(np.int64),
                    "response_a": matrix[:, 2].astype(np.int64),
                    "response_b": matrix[:, 3].astype(np.int64),
                    "vote": matrix[:, 4],
                    "turn": _ints_or(matrix[:, 5]),
                }
            )
        )
    if not parts:
        columns = ("item_id", "annotator", "response_a", "response_b", "vote", "turn")
        return pd.DataFrame(
            {name: pd.Series(dtype=np.int64 if name != "vote" else object) for name in columns}
        )
    return pd.concat(parts, ignore_index=True)


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


def annotation_count(project: Project) -> int:
    """Rows a raw export of the project writes (current answers of submitted work, gold included)."""
    return _raw_annotations(project).count()


def _raw_annotations(project: Project) -> QuerySet[Annotation]:
    return Annotation.objects.current().filter(assignment__project_id=project.pk)


def raw_annotation_chunks(project: Project, *, chunk_rows: int = CHUNK_ROWS) -> Iterator[pd.DataFrame]:
    """Long-format annotation rows with pseudonymous annotators, one DataFrame per page (``RAW_COLUMNS``).

    Gold work is included and flagged (``is_gold``). ``shown_position`` is where the row's response stood
    on the annotator's screen (1-based), ``shown_order`` the response ids in the order shown; for a vote the
    response is the winner (empty for tie and both bad). No user name, e-mail or user id is read.
    """
    items = {
        int(row.item_id): row
        for row in items_frame(project, chunk_rows=chunk_rows)
        .drop(columns=["prompt"])
        .itertuples(index=False)
    }
    models = dict(
        Response.objects.filter(prompt_id__in=project_tasks(project).values("prompt_id")).values_list(
            "id", "model_name"
        )
    )
    pseudonyms: dict[int, str] = {}
    fields = (
        "assignment_id",
        "round",
        "criterion",
        "response_id",
        "turn",
        "value_int",
        "choice",
        "comment",
        "rubric_version",
        "created_at",
    )
    for rows in keyset_pages(_raw_annotations(project), fields, chunk_rows=chunk_rows):
        assignment_ids = {row[1] for row in rows}
        assignments = {
            a["id"]: a
            for a in Assignment.objects.filter(pk__in=assignment_ids).values(
                "id",
                "task_id",
                "annotator_id",
                "group__name",
                "is_gold",
                "permutation",
                "started_at",
                "submitted_at",
                "seconds_on_task",
                "n_edits",
                "task__prompt_id",
                "task__response_ids",
                "task__response_a_id",
                "task__response_b_id",
            )
        }
        out = []
        for (
            _,
            assignment_id,
            round_,
            criterion,
            response_id,
            turn,
            value,
            choice,
            comment,
            rubric,
            at,
        ) in rows:
            a = assignments[assignment_id]
            user_id = a["annotator_id"]
            if user_id not in pseudonyms:
                pseudonyms[user_id] = annotator_pseudonym(project=project, user_id=user_id)
            canonical = a["task__response_ids"]
            shown = [canonical[i] for i in a["permutation"]]
            item = items.get(a["task__prompt_id"])
            out.append(
                (
                    project.pk,
                    None if item is None else int(item.dataset_id),
                    a["task_id"],
                    a["task__prompt_id"],
                    None if item is None else item.external_id,
                    None if item is None else item.category,
                    None if item is None else item.language,
                    None if item is None else item.register,
                    pseudonyms[user_id],
                    a["group__name"],
                    a["is_gold"],
                    round_,
                    criterion,
                    response_id,
                    models.get(response_id) if response_id is not None else None,
                    shown.index(response_id) + 1 if response_id in shown else None,
                    turn,
                    value,
                    choice,
                    comment,
                    rubric,
                    shown,
                    a["task__response_a_id"],
                    a["task__response_b_id"],
                    a["started_at"],
                    a["submitted_at"],
                    a["seconds_on_task"],
                    a["n_edits"],
                    at,
                )
            )
        frame = pd.DataFrame.from_records(out, columns=list(RAW_COLUMNS))
        for name in ("response_id", "shown_position", "turn", "value", "rubric_version"):
            frame[name] = frame[name].astype("Int64")
        for name in ("response_a_id", "response_b_id", "dataset_id"):
            frame[name] = frame[name].astype("Int64")
        yield frame


def rubric_texts(project: Project, categories: Sequence[str] = ()) -> dict[str, dict[str, str]]:
    """Rubric wording the annotators saw, per criterion and language, for the dataset card.

    The general rubric of each criterion at the project's version, then any category-specific wording
    for the exported categories (keyed ``criterion (category)``).
    """
    if not project.criteria:
        return {}
    slugs = {default_rubrics.normalize_category(c) or "" for c in categories} - {""}
    out: dict[str, dict[str, str]] = {}
    for criterion in project.criteria:
        version = project.rubric_versions.get(criterion, 1)
        rows = Rubric.objects.filter(criterion=criterion, version=version, category__in={"", *slugs})
        for rubric in sorted(rows, key=lambda r: (r.category != "", r.category)):
            key = criterion if not rubric.category else f"{criterion} ({rubric.category})"
            out[key] = _rubric_text(rubric)
    return out


def _rubric_text(rubric: Rubric) -> dict[str, str]:
    texts: dict[str, str] = {}
    for language, levels in sorted(rubric.levels.items()):
        label = rubric.label.get(language) or rubric.criterion
        question = (rubric.question or {}).get(language, "")
        scale = default_rubrics.scale_from_json(rubric.scale)
        lines = [f"{label} (version {rubric.version}){': ' + question if question else ''}"]
        if scale.categories:
            # Named categories: the stored value (as exported) with the label annotators saw.
            shown = ", ".join(f"{v} ({scale.label(v, language)})" for v in scale.values)
            lines.append(f"Scale: {shown}")
        else:
            lines.append(f"Scale: 1-{scale.points}")
        lines += [f"- {value}: {levels[str(value)]}" for value in scale.values if str(value) in levels]
        texts[language] = "\n".join(lines)
    return texts


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


# --- the parallel corpus of a translation project ---------------------------------------------------------

PARALLEL_CORPUS_COLUMNS = (
    "id",
    "source",
    "target",
    "source_language",
    "target_language",
    "register",
    "translator",
    "n_rounds",
    "fixed_by_reviewer",
    "flags",
)


def corpus_units(project: Project) -> QuerySet[TranslationUnit]:
    """The accepted translation units of the project's tasks: the final corpus."""
    return TranslationUnit.objects.filter(
        pk__in=Task.objects.filter(project_id=project.pk, translation_unit__isnull=False).values(
            "translation_unit_id"
        ),
        status=TranslationUnit.Status.ACCEPTED,
    )


def parallel_corpus_counts(project: Project) -> list[tuple[str, str, str, int]]:
    """``(source_language, target_language, register, units)`` of the final corpus, sorted."""
    rows = (
        corpus_units(project)
        .order_by()
        .values_list("source_language", "target_language", "register")
        .annotate(n=Count("id"))
    )
    return sorted((s, t, r, n) for s, t, r, n in rows)


def parallel_corpus_work(project: Project) -> dict[str, dict[str, int]]:
    """Who translated the units of the final corpus, who gave the review verdicts on them, and who gave the
    verdict that accepted each (``work_counts`` each)."""
    units = corpus_units(project)
    reviews = TranslationRound.objects.filter(unit__in=units).exclude(verdict="")
    accepting = reviews.filter(verdict__in=(TranslationRound.Verdict.ACCEPT, TranslationRound.Verdict.FIX))
    return {
        "translations": work_counts(units, user="translator"),
        "review_verdicts": work_counts(reviews, user="reviewer"),
        "accepting_verdicts": work_counts(accepting, user="reviewer", unit="unit_id"),
    }


def parallel_corpus_chunks(project: Project, *, chunk_rows: int = CHUNK_ROWS) -> Iterator[pd.DataFrame]:
    """The final corpus in unit order, one DataFrame (``PARALLEL_CORPUS_COLUMNS``) per page.

    ``translator`` is ``person_pseudonym`` (the user who translated it, else the imported name);
    ``n_rounds`` counts the unit's review rounds (0 for a unit imported as accepted); ``fixed_by_reviewer``
    says whether the final text is a reviewer's correction; ``flags`` lists the codes of the automatic
    flags still on the final text.
    """
    fields = (
        "external_id",
        "source_text",
        "translation_text",
        "source_language",
        "target_language",
        "register",
        "translator_id",
        "translator_name",
        "flags",
    )
    pseudonyms: dict[tuple[int | None, str], str | None] = {}
    for rows in keyset_pages(corpus_units(project), fields, chunk_rows=chunk_rows):
        ids = [row[0] for row in rows]
        rounds = {
            unit_id: (n, fixes)
            for unit_id, n, fixes in TranslationRound.objects.filter(unit_id__in=ids)
            .order_by()
            .values_list("unit_id")
            .annotate(n=Count("id"), fixes=Count("id", filter=Q(verdict=TranslationRound.Verdict.FIX)))
        }
        out = []
        for pk, external_id, source, target, source_lang, target_lang, register, user_id, name, flags in rows:
            who = (user_id, "" if user_id is not None else name)
            if who not in pseudonyms:
                pseudonyms[who] = person_pseudonym(project=project, user_id=who[0], name=who[1])
            n_rounds, fixes = rounds.get(pk, (0, 0))
            out.append(
                (
                    external_id,
                    source,
                    target,
                    source_lang,
                    target_lang,
                    register,
                    pseudonyms[who],
                    n_rounds,
                    fixes > 0,
                    [str(f.get("code", "")) for f in flags or [] if isinstance(f, dict)],
                )
            )
        yield pd.DataFrame.from_records(out, columns=list(PARALLEL_CORPUS_COLUMNS))


def parallel_corpus_frame(project: Project) -> pd.DataFrame:
    """The whole final corpus in one DataFrame (for small projects and pages; exports stream the chunks)."""
    parts = list(parallel_corpus_chunks(project))
    if not parts:
        return pd.DataFrame({name: pd.Series(dtype=object) for name in PARALLEL_CORPUS_COLUMNS})
    return pd.concat(parts, ignore_index=True)


# --- the question set of a question project -----------------------------------------------------------

QUESTION_SET_COLUMNS = (
    "id",
    "concept",
    "category",
    "language",
    "question",
    "choice_a",
    "choice_b",
    "choice_c",
    "choice_d",
    "choice_e",
    "answer",
    "distractor",
    "creator",
    "origin",
    "n_answers",
    "accuracy",
    "n_ambiguous",
)
CHOICE_KEYS = ("A", "B", "C", "D", "E")


def project_questions(project: Project) -> QuerySet[Question]:
    """The questions of the project's tasks: written in an authoring project, answered in an answering one."""
    return Question.objects.filter(
        pk__in=Task.objects.filter(project_id=project.pk, question__isnull=False).values("question_id")
    )


def question_answers(project: Project) -> QuerySet[Annotation]:
    """Current answer rows counted for the project's questions: the answering project's own answers, or for
    an authoring project those of every answering project over its dataset."""
    rows = Annotation.objects.counted().filter(assignment__project__kind=Project.Kind.MCQ_ANSWER)
    if project.kind == Project.Kind.MCQ_ANSWER:
        return rows.filter(assignment__project_id=project.pk)
    return rows.filter(assignment__project__dataset_id=project.dataset_id)


def over_ambiguous(project: Project, max_ambiguous: int) -> QuerySet[Annotation]:
    """Ids (a subquery) of the questions flagged ambiguous in more than ``max_ambiguous`` answers."""
    return (
        question_answers(project)
        .filter(criterion="ambiguous", value_int=1)
        .order_by()
        .values("assignment__task__question_id")
        .annotate(n=Count("id"))
        .filter(n__gt=max_ambiguous)
        .values("assignment__task__question_id")
    )


def question_set_questions(project: Project, *, max_ambiguous: int) -> QuerySet[Question]:
    """The final question set: accepted (never excluded) questions within the ambiguity limit."""
    return (
        project_questions(project)
        .filter(status=Question.Status.ACCEPTED)
        .exclude(pk__in=over_ambiguous(project, max_ambiguous))
    )


def question_set_counts(project: Project, *, max_ambiguous: int) -> dict[str, Any]:
    """Questions kept per category and language, and how many were left out and why."""
    kept = question_set_questions(project, max_ambiguous=max_ambiguous)
    statuses = dict(project_questions(project).order_by().values_list("status").annotate(n=Count("id")))
    n_kept = kept.count()
    return {
        "rows": n_kept,
        "categories": dict(kept.order_by("category").values_list("category").annotate(n=Count("id"))),
        "languages": dict(kept.order_by("language").values_list("language").annotate(n=Count("id"))),
        "questions": sum(statuses.values()),
        "not_accepted": {s: n for s, n in sorted(statuses.items()) if s != Question.Status.ACCEPTED},
        "over_ambiguous": statuses.get(Question.Status.ACCEPTED, 0) - n_kept,
    }


def question_set_work(project: Project, *, max_ambiguous: int) -> dict[str, dict[str, int]]:
    """Who wrote the questions of the final set, who accepted them and who answered them (the answers
    ``n_answers`` counts), as ``work_counts`` each. Questions imported as accepted have no accepting
    verdict."""
    questions = question_set_questions(project, max_ambiguous=max_ambiguous)
    answers = question_answers(project).filter(criterion="choice", assignment__task__question__in=questions)
    accepting = QuestionRound.objects.filter(question__in=questions, verdict=QuestionRound.Verdict.ACCEPT)
    return {
        "questions": work_counts(questions, user="creator"),
        "accepting_verdicts": work_counts(accepting, user="reviewer", unit="question_id"),
        "answers": work_counts(answers, user="assignment__annotator"),
    }


def question_set_chunks(
    project: Project, *, max_ambiguous: int, chunk_rows: int = CHUNK_ROWS
) -> Iterator[pd.DataFrame]:
    """The final question set in question order, one DataFrame (``QUESTION_SET_COLUMNS``) per page.

    ``creator`` is ``person_pseudonym``; ``n_answers`` counts the answers (``question_answers``),
    ``accuracy`` is the share of scored answers that chose the key (missing without one), ``n_ambiguous``
    the answers that flagged the question.
    """
    fields = (
        "external_id",
        "concept",
        "category",
        "language",
        "text",
        "choices",
        "answer_key",
        "distractor",
        "creator_id",
        "creator_name",
        "origin",
    )
    pseudonyms: dict[tuple[int | None, str], str | None] = {}
    questions = question_set_questions(project, max_ambiguous=max_ambiguous)
    for rows in keyset_pages(questions, fields, chunk_rows=chunk_rows):
        ids = [row[0] for row in rows]
        is_choice = Q(criterion="choice")
        stats = {
            qid: (answers, scored, correct or 0, flagged)
            for qid, answers, scored, correct, flagged in question_answers(project)
            .filter(assignment__task__question_id__in=ids)
            .order_by()
            .values_list("assignment__task__question_id")
            .annotate(
                answers=Count("id", filter=is_choice),
                scored=Count("value_int", filter=is_choice),
                correct=Sum("value_int", filter=is_choice),
                flagged=Count("id", filter=Q(criterion="ambiguous", value_int=1)),
            )
        }
        out = []
        for (
            pk,
            external_id,
            concept,
            category,
            language,
            text,
            choices,
            key,
            distractor,
            uid,
            name,
            origin,
        ) in rows:
            who = (uid, "" if uid is not None else name)
            if who not in pseudonyms:
                pseudonyms[who] = person_pseudonym(project=project, user_id=who[0], name=who[1])
            answers, scored, correct, flagged = stats.get(pk, (0, 0, 0, 0))
            choices = choices or {}
            out.append(
                (
                    external_id,
                    concept,
                    category,
                    language,
                    text,
                    *(choices.get(label) for label in CHOICE_KEYS),
                    key,
                    distractor,
                    pseudonyms[who],
                    origin,
                    answers,
                    correct / scored if scored else None,
                    flagged,
                )
            )
        yield pd.DataFrame.from_records(out, columns=list(QUESTION_SET_COLUMNS))
