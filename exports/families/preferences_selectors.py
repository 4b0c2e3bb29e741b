"""Reads of a preferences export: the responses shown in the tasks, and the ratings, best-of-N picks and
pairwise votes as long-format frames for the pair builder (annotators are user ids here, never written out);
the rubric wording the annotators saw, for the card."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from annotation.domain import rubrics as default_rubrics
from annotation.domain.submission import ALL_BAD
from annotation.models import Project, Rubric, Task
from datasets_app.models import Response
from exports.selectors import (
    CHUNK_ROWS,
    PICK_CRITERION,
    VOTE_CRITERION,
    current_annotations,
    json_values,
    object_array,
    rows_by_ids,
    stream_rows,
    task_targets,
    transposed,
)


def _scalar_matrix(rows: list[tuple[Any, ...]]) -> np.ndarray:
    """A chunk of scalar-only rows as a 2-D object array (a C loop: far cheaper than transposing)."""
    return np.array(rows, dtype=object)


def _ints_or(column: np.ndarray, missing: int = -1) -> np.ndarray:
    """An object column of ints and Nones as int64, ``missing`` for None."""
    present = column != None  # noqa: E711 - elementwise comparison on an object array
    out = np.full(len(column), missing, dtype=np.int64)
    out[present] = column[present].astype(np.int64)
    return out


def responses_frame(
    project: Project, *, response_ids: np.ndarray | None = None, chunk_rows: int = CHUNK_ROWS
) -> pd.DataFrame:
    """The pair builder's ``responses``: those shown in the project's tasks, with their turns."""
    if response_ids is None:
        _, response_ids = task_targets(project, chunk_rows=chunk_rows)
    parts = []
    fields = ("prompt_id", "model_name", "turns")
    for rows in rows_by_ids(Response.objects.all(), response_ids, fields, chunk_rows=chunk_rows):
        pk, prompt_id, model_name, turns = transposed(rows, len(fields) + 1)
        parts.append(
            pd.DataFrame(
                {
                    "response_id": np.asarray(pk, dtype=np.int64),
                    "item_id": np.asarray(prompt_id, dtype=np.int64),
                    "model_name": object_array(model_name),
                    "messages": object_array(json_values(turns)),
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
        return _empty_ratings()
    frame = pd.concat(parts, ignore_index=True)
    # Pages may have seen different criteria: concat turns mismatched categoricals into objects.
    frame["criterion"] = frame["criterion"].astype("category")
    return frame


def _empty_ratings() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "item_id": pd.Series(dtype=np.int64),
            "annotator": pd.Series(dtype=np.int64),
            "response_id": pd.Series(dtype=np.int64),
            "criterion": pd.Series(dtype=object),
            "value": pd.Series(dtype=np.int8),
        }
    )


def ratings_from_answers(project: Project, answers: pd.DataFrame) -> pd.DataFrame:
    """:func:`ratings_frame` from the answers the card's alpha is computed from
    (``analytics.selectors.annotation_frame(agreement_only=True)``: ``task``, ``response``, ``coder`` as a
    user id, ``criterion``, ``value``), so that a million ratings are read once, not twice.

    The same rows (counted values of a rated response; comments, which the answers leave out, never
    carry one), in the answers' order rather than the database's, which the pair builder does not depend
    on; the item is the task's prompt (one small read of the project's tasks).
    """
    rated_rows = answers["value"].notna() & answers["response"].notna()
    # A Likert project without best picks: every answer is a rating, and the frame is taken as it is.
    rated = answers if bool(rated_rows.all()) else answers.loc[rated_rows]
    if not len(rated):
        return _empty_ratings()
    tasks = Task.objects.filter(project_id=project.pk).order_by("pk").values_list("pk", "prompt_id")
    task_ids, prompt_ids = (np.asarray(column) for column in zip(*tasks, strict=True))
    prompt_of_row = prompt_ids[np.searchsorted(task_ids, rated["task"].to_numpy(dtype=np.int64))]
    return pd.DataFrame(
        {
            "item_id": prompt_of_row.astype(np.int64),
            "annotator": rated["coder"].to_numpy(dtype=np.int64),
            "response_id": rated["response"].to_numpy(dtype=np.int64),
            "criterion": rated["criterion"].astype("category").array,
            "value": rated["value"].to_numpy().astype(np.int8),
        }
    )


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
