"""Reading and checking the CSV files of the ``agreement`` and ``judge_agreement`` commands.

Every cell is read as text and converted here, so a bad file fails with one line that names the file,
the line (header = line 1) and the column, instead of a traceback from deep inside pandas. Column names
are matched after stripping spaces and lower-casing; cells are stripped.

Vote values are case-insensitive: ``A``, ``B``, ``tie`` and ``both_bad`` (also written ``both bad`` or
``bothbad``). ``both_bad`` is read as a tie, as FastChat's agreement script reads "tie (bothbad)": for
agreement and accuracy both mean "no side preferred". In a judge file ``error`` or an empty vote marks a
judge output that did not parse; an empty score does the same for score-based judges.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from analytics.domain.agreement import check_level
from analytics.domain.judge_agreement import ERROR, TIE, A, B

AGREEMENT_OPTIONAL = ("criterion", "group", "category", "language", "register")
VOTE_OPTIONAL = ("turn", "category")

_VOTES = {"a": A, "b": B, "tie": TIE, "both_bad": TIE, "both bad": TIE, "bothbad": TIE}


class InputError(ValueError):
    """What is wrong with an input file, in one line."""


def read_csv(path: str | Path) -> pd.DataFrame:
    """All cells as stripped strings (empty string for an empty cell), column names lower-cased."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, skipinitialspace=True)
    except pd.errors.EmptyDataError as exc:
        raise InputError(f"{path}: the file is empty") from exc
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path}: not a readable CSV file ({first})") from exc
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    if frame.columns.duplicated().any():
        name = frame.columns[frame.columns.duplicated()][0]
        raise InputError(f"{path}: column {name!r} appears twice")
    return frame.apply(lambda column: column.str.strip())


def _line(frame: pd.DataFrame, position: int) -> int:
    """CSV line of the row at ``position`` (the header is line 1)."""
    return int(frame.index[position]) + 2


def _require(frame: pd.DataFrame, columns: Sequence[str], source: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"{source}: missing column {missing[0]!r} (needs {', '.join(columns)})")


def _require_filled(frame: pd.DataFrame, columns: Sequence[str], source: str) -> None:
    for column in columns:
        empty = (frame[column] == "").to_numpy()
        if empty.any():
            raise InputError(
                f"{source}: line {_line(frame, int(empty.argmax()))}: column {column!r} is empty"
            )


def _to_numbers(frame: pd.DataFrame, column: str, source: str, *, allow_empty: bool) -> pd.Series:
    text = frame[column]
    numbers = pd.to_numeric(text.where(text != "", None), errors="coerce").astype("float64")
    bad = (numbers.isna() & (text != "")) | np.isinf(numbers)
    if not allow_empty:
        bad |= text == ""
    if bad.any():
        position = int(bad.to_numpy().argmax())
        raise InputError(
            f"{source}: line {_line(frame, position)}: column {column!r}: {text.iloc[position]!r} is not a number"
        )
    return numbers


def _reject_duplicates(frame: pd.DataFrame, columns: Sequence[str], source: str, what: str) -> None:
    duplicated = frame.duplicated(list(columns)).to_numpy()
    if duplicated.any():
        raise InputError(f"{source}: line {_line(frame, int(duplicated.argmax()))}: {what}")


def agreement_frame(raw: pd.DataFrame, level: str, *, source: str = "input") -> pd.DataFrame:
    """Ratings for the ``agreement`` command: unit, coder, value and the optional grouping columns.

    An empty value is a missing rating and its row is dropped. Non-nominal levels need numbers;
    nominal values are compared as numbers when every value is one, as text otherwise.
    """
    try:
        level = check_level(level)
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    _require(raw, ("unit", "coder", "value"), source)
    optional = [c for c in AGREEMENT_OPTIONAL if c in raw.columns]
    frame = raw[["unit", "coder", "value", *optional]]
    _require_filled(frame, ["unit", "coder", *[c for c in optional if c == "criterion"]], source)
    numbers = _to_numbers(frame, "value", source, allow_empty=True) if level != "nominal" else None
    if numbers is None:
        converted = pd.to_numeric(frame["value"].where(frame["value"] != "", None), errors="coerce")
        is_numeric = bool((converted.notna() | (frame["value"] == "")).all())
        numbers = converted.astype("float64") if is_numeric else None
    scope = ["criterion"] if "criterion" in optional else []
    _reject_duplicates(
        frame.loc[frame["value"] != ""],
        [*scope, "unit", "coder"],
        source,
        "the coder rated this unit" + (" on this criterion" if scope else "") + " more than once",
    )
    out = frame.copy()
    out["value"] = numbers if numbers is not None else frame["value"]
    out = out.loc[frame["value"] != ""]
    return out.reset_index(drop=True)


def _votes(frame: pd.DataFrame, column: str, source: str, *, allow_error: bool) -> pd.Series:
    lowered = frame[column].str.lower()
    mapped = lowered.map(_VOTES)
    if allow_error:
        mapped = mapped.where(~lowered.isin(["", ERROR]), ERROR)
    bad = mapped.isna().to_numpy()
    if bad.any():
        position = int(bad.argmax())
        allowed = "A, B, tie, both_bad" + (", error or empty" if allow_error else "")
        raise InputError(
            f"{source}: line {_line(frame, position)}: column {column!r}: "
            f"{frame[column].iloc[position]!r} is not one of {allowed}"
        )
    return mapped


def _turns(frame: pd.DataFrame, source: str) -> pd.Series:
    numbers = _to_numbers(frame, "turn", source, allow_empty=False)
    fractional = (numbers != numbers.round()).to_numpy()
    if fractional.any():
        position = int(fractional.argmax())
        raise InputError(f"{source}: line {_line(frame, position)}: column 'turn' must be a whole number")
    return numbers.astype("int64")


def human_votes_frame(raw: pd.DataFrame, *, source: str = "human CSV") -> pd.DataFrame:
    """Human pairwise votes: item, annotator, vote (A/B/tie), optional turn and category."""
    _require(raw, ("item", "annotator", "vote"), source)
    optional = [c for c in VOTE_OPTIONAL if c in raw.columns]
    frame = raw[["item", "annotator", "vote", *optional]]
    _require_filled(frame, ["item", "annotator", "vote", *optional], source)
    out = frame.copy()
    out["vote"] = _votes(frame, "vote", source, allow_error=False)
    if "turn" in optional:
        out["turn"] = _turns(frame, source)
    keys = ["item", *(["turn"] if "turn" in optional else [])]
    _reject_duplicates(out, [*keys, "annotator"], source, "the annotator voted on this item more than once")
    return out.reset_index(drop=True)


def judge_frame(raw: pd.DataFrame, *, source: str = "judge CSV") -> pd.DataFrame:
    """Judge outputs: item, judge and either vote or score_a, score_b; optional turn and category.

    Votes become A/B/tie/error; scores become floats with NaN for a failed parse.
    """
    _require(raw, ("item", "judge"), source)
    has_vote = "vote" in raw.columns
    has_scores = "score_a" in raw.columns or "score_b" in raw.columns
    if has_vote == has_scores:
        raise InputError(
            f"{source}: needs either a 'vote' column or 'score_a' and 'score_b' columns, not both"
        )
    if has_scores:
        _require(raw, ("item", "judge", "score_a", "score_b"), source)
    result_columns = ["vote"] if has_vote else ["score_a", "score_b"]
    optional = [c for c in VOTE_OPTIONAL if c in raw.columns]
    frame = raw[["item", "judge", *result_columns, *optional]]
    _require_filled(frame, ["item", "judge", *optional], source)
    out = frame.copy()
    if has_vote:
        out["vote"] = _votes(frame, "vote", source, allow_error=True)
    else:
        out["score_a"] = _to_numbers(frame, "score_a", source, allow_empty=True)
        out["score_b"] = _to_numbers(frame, "score_b", source, allow_empty=True)
    if "turn" in optional:
        out["turn"] = _turns(frame, source)
    keys = ["item", *(["turn"] if "turn" in optional else [])]
    _reject_duplicates(out, [*keys, "judge"], source, "the judge has more than one output for this item")
    return out.reset_index(drop=True)
