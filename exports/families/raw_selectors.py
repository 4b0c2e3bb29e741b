"""Reads of a raw annotations export: every current answer of the project in long format (``RAW_COLUMNS``),
annotators under pseudonyms."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
from django.db.models import QuerySet

from annotation.models import Annotation, Assignment, Project
from datasets_app.models import Response
from exports.selectors import (
    CHUNK_ROWS,
    RAW_COLUMNS,
    annotator_pseudonym,
    items_frame,
    keyset_pages,
    project_tasks,
)


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
