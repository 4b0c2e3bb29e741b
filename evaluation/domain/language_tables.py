"""Per-language tables: rows (models, benchmark runs, judges) by languages, with an ``avg`` column.

The tables SeaBench and LoraxBench print: one column per language and an average column. ``avg`` is the
unweighted mean over the table's languages (macro over languages): every language counts once, however
many items it has. Beside it, ``overall`` is the figure over every item pooled (accuracy over all items,
the corpus chrF++ of all sentences, the mean of all grades); the two differ when the languages differ in
size. A row without a value for one of the table's languages has no ``avg`` (None): an average over fewer
languages would not compare with the other rows'.

Per language the value is the metric computed on that language's items alone: accuracy (a missing answer
counts wrong, as in :func:`~evaluation.domain.benchmark_metrics.accuracy_by`), the mean of a score, the
corpus chrF++ of the language's sentences (:func:`~evaluation.domain.benchmark_metrics.chrf_pp_corpus_by`,
never a mean of sentence scores), or SeaBench's mean grade (grades that did not parse left out).

A table is a JSON-ready dict::

    {"metric": "accuracy", "average": "macro over languages", "row_columns": ["model"],
     "languages": ["ind", "jav"],
     "rows": [{"model": "m", "ind": 0.5, "jav": 1.0, "avg": 0.75, "overall": 0.6, "n": 5}]}

Items without a language are grouped under ``"(none)"``. Rows come in the order of their keys, the
languages in sorted order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from datasets_app.domain.languages import REGISTER_SEPARATOR
from evaluation.domain.benchmark_metrics import (
    MISSING_LEVEL,
    accuracy_by,
    chrf_pp_corpus,
    chrf_pp_corpus_by,
    mean_score_by,
)

# Frames come in from callers; pandas (long to import) is named here in annotations only, so importing this
# module at start-up (URL loading, a worker's boot) does not import it.
if TYPE_CHECKING:
    import pandas as pd

AVG = "avg"
OVERALL = "overall"
N = "n"
AVERAGE = "macro over languages"
LANGUAGE = "language"

# Metric names a table carries.
ACCURACY = "accuracy"
MEAN = "mean"
CORPUS_CHRF_PP = "corpus_chrf_pp"
MEAN_GRADE = "mean_grade"


@dataclass(frozen=True)
class LanguageCell:
    """The metric of one row (its key: one value per row column) on one language's items."""

    row: tuple[str, ...]
    language: str
    value: float | None
    n: int


def _number(value: object) -> float | None:
    if value is None:
        return None
    number = float(value)  # type: ignore[arg-type]
    return None if math.isnan(number) else number


def language_table(
    cells: Iterable[LanguageCell],
    *,
    row_columns: Sequence[str],
    metric: str,
    overall: Mapping[tuple[str, ...], float | None] | None = None,
) -> dict[str, object]:
    """Pivot per-(row, language) cells into one wide row per row key, with ``avg`` (the macro mean over the
    table's languages) and, when given, ``overall`` (the pooled figure) and ``n`` (items of the row).

    A language that clashes with a row column or with ``avg``, ``overall`` or ``n`` is a ValueError, as is
    a second cell for the same row and language.
    """
    row_columns = list(row_columns)
    if not row_columns:
        raise ValueError("a language table needs at least one row column")
    reserved = {*row_columns, AVG, OVERALL, N}
    values: dict[tuple[str, ...], dict[str, float | None]] = {}
    counts: dict[tuple[str, ...], int] = {}
    languages: set[str] = set()
    for cell in cells:
        if len(cell.row) != len(row_columns):
            raise ValueError(f"row {cell.row!r} does not match the row columns {row_columns!r}")
        if cell.language in reserved:
            raise ValueError(f"language {cell.language!r} has the name of a column of the table")
        row = values.setdefault(cell.row, {})
        if cell.language in row:
            raise ValueError(f"row {cell.row!r} has more than one value for language {cell.language!r}")
        row[cell.language] = _number(cell.value)
        counts[cell.row] = counts.get(cell.row, 0) + int(cell.n)
        languages.add(cell.language)
    ordered = sorted(languages, key=lambda code: (code == MISSING_LEVEL, code))
    rows = []
    for key in sorted(values):
        row_values = [values[key].get(language) for language in ordered]
        defined = [value for value in row_values if value is not None]
        avg = math.fsum(defined) / len(defined) if defined and len(defined) == len(ordered) else None
        row: dict[str, object] = dict(zip(row_columns, key, strict=True))
        row.update(zip(ordered, row_values, strict=True))
        row[AVG] = avg
        if overall is not None:
            row[OVERALL] = _number(overall.get(key))
        row[N] = counts[key]
        rows.append(row)
    return {
        "metric": metric,
        "average": AVERAGE,
        "row_columns": row_columns,
        "languages": ordered,
        "rows": rows,
    }


def table_avg(table: Mapping[str, object], **row: str) -> float | None:
    """The ``avg`` of the row of ``table`` whose row columns equal ``row`` (None when there is none)."""
    for candidate in table["rows"]:  # type: ignore[union-attr]
        if all(candidate.get(column) == value for column, value in row.items()):
            return candidate[AVG]
    return None


# -- from per-item rows -----------------------------------------------------------------------------


def _prepared(rows: pd.DataFrame, row_columns: Sequence[str], needed: Sequence[str]) -> pd.DataFrame:
    absent = [column for column in [*row_columns, LANGUAGE, *needed] if column not in rows.columns]
    if absent:
        raise ValueError(f"result rows lack column(s): {', '.join(absent)}")
    frame = rows[[*dict.fromkeys([*row_columns, LANGUAGE, *needed])]].copy()
    for column in [*row_columns, LANGUAGE]:
        blank = frame[column].isna() | (frame[column].astype(str) == "")
        frame[column] = frame[column].astype(object).where(~blank, MISSING_LEVEL).astype(str)
    return frame


def _key(record: Mapping[str, object], row_columns: Sequence[str]) -> tuple[str, ...]:
    return tuple(str(record[column]) for column in row_columns)


def accuracy_by_language(
    rows: pd.DataFrame, *, row_columns: Sequence[str] = ("model",), correct_col: str = "correct"
) -> dict[str, object]:
    """Accuracy per row and language (multiple choice, open QA by match); a missing ``correct`` counts
    wrong. ``overall`` is the accuracy over all the row's items."""
    frame = _prepared(rows, row_columns, [correct_col])
    cells = [
        LanguageCell(_key(r, row_columns), str(r[LANGUAGE]), r["accuracy"], int(r["n"]))
        for r in accuracy_by(frame, [*row_columns, LANGUAGE], correct_col).to_dict("records")
    ]
    overall = {
        _key(r, row_columns): r["accuracy"]
        for r in accuracy_by(frame, list(row_columns), correct_col).to_dict("records")
    }
    return language_table(cells, row_columns=row_columns, metric=ACCURACY, overall=overall)


def mean_by_language(
    rows: pd.DataFrame,
    *,
    row_columns: Sequence[str] = ("model",),
    score_col: str = "score",
    missing: str = "zero",
    metric: str = MEAN,
) -> dict[str, object]:
    """Mean of a score per row and language (a judged open-QA score, a grade). ``missing``: ``zero``
    counts a missing score as 0, ``drop`` leaves it out (a language whose scores are all missing then has
    no value, and its row no ``avg``)."""
    frame = _prepared(rows, row_columns, [score_col])
    cells = [
        LanguageCell(_key(r, row_columns), str(r[LANGUAGE]), r["mean"], int(r["n"]))
        for r in mean_score_by(frame, [*row_columns, LANGUAGE], score_col, missing).to_dict("records")
    ]
    overall = {
        _key(r, row_columns): r["mean"]
        for r in mean_score_by(frame, list(row_columns), score_col, missing).to_dict("records")
    }
    return language_table(cells, row_columns=row_columns, metric=metric, overall=overall)


def grades_by_language(
    rows: pd.DataFrame, *, row_columns: Sequence[str] = ("model",), score_col: str = "score"
) -> dict[str, object]:
    """SeaBench's table: the mean single-answer grade per model and language; grades that did not parse
    (a missing score) are left out of the means, not counted as zero. ``n`` counts every judgment."""
    return mean_by_language(
        rows, row_columns=row_columns, score_col=score_col, missing="drop", metric=MEAN_GRADE
    )


def chrf_by_language(
    rows: pd.DataFrame,
    *,
    row_columns: Sequence[str] = ("model",),
    prediction_col: str = "prediction",
    reference_col: str = "reference",
) -> dict[str, object]:
    """LoraxBench's table: the corpus chrF++ (0-100) of each row's sentences in each language, from the
    pooled statistics of those sentences; ``overall`` is the corpus chrF++ of all the row's sentences."""
    frame = _prepared(rows, row_columns, [prediction_col, reference_col])
    cells: list[LanguageCell] = []
    overall: dict[tuple[str, ...], float | None] = {}
    for key, part in frame.groupby(list(row_columns), sort=True):
        key = tuple(str(k) for k in (key if isinstance(key, tuple) else (key,)))
        hypotheses = [str(text) for text in part[prediction_col]]
        references = [str(text) for text in part[reference_col]]
        for group in chrf_pp_corpus_by(hypotheses, references, list(part[LANGUAGE])):
            cells.append(LanguageCell(key, str(group["group"]), group["corpus_chrf_pp"], int(group["n"])))
        overall[key] = chrf_pp_corpus(hypotheses, references)
    return language_table(cells, row_columns=row_columns, metric=CORPUS_CHRF_PP, overall=overall)


def language_register(language: object, register: object) -> str:
    """The group of an item by language and register: ``"jav / krama"``, or the language alone."""
    code = str(language) if isinstance(language, str) and language else MISSING_LEVEL
    if isinstance(register, str) and register:
        return f"{code}{REGISTER_SEPARATOR}{register}"
    return code
