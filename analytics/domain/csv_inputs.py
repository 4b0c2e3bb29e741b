"""Reading and checking the CSV files of the ``agreement``, ``judge_agreement``, ``taxonomy_shares`` and
``leaderboard`` commands.

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
from typing import TYPE_CHECKING

import numpy as np

from analytics.domain.agreement import check_level
from analytics.domain.judge_agreement import ERROR, TIE, A, B

# pandas takes long to import: the functions that use it import it, so start-up (URL loading, a
# worker's boot) does not.
if TYPE_CHECKING:
    import pandas as pd

AGREEMENT_OPTIONAL = ("criterion", "group", "category", "language", "register")
VOTE_OPTIONAL = ("turn", "category", "language")
# Optional columns of the vote files that may be empty in a row (an item without a register).
VOTE_BLANKABLE = ("register",)

_VOTES = {"a": A, "b": B, "tie": TIE, "both_bad": TIE, "both bad": TIE, "bothbad": TIE}


class InputError(ValueError):
    """What is wrong with an input file, in one line."""


def read_csv(path: str | Path, *, sep: str = ",") -> pd.DataFrame:
    """All cells as stripped strings (empty string for an empty cell), column names lower-cased."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        frame = pd.read_csv(
            path, sep=sep, dtype=str, keep_default_na=False, na_filter=False, skipinitialspace=True
        )
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
    import pandas as pd

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
    import pandas as pd

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
    """Human pairwise votes: item, annotator, vote (A/B/tie), optional turn, category, language and
    register (the only one that may be empty)."""
    _require(raw, ("item", "annotator", "vote"), source)
    optional = [c for c in VOTE_OPTIONAL if c in raw.columns]
    blankable = [c for c in VOTE_BLANKABLE if c in raw.columns]
    frame = raw[["item", "annotator", "vote", *optional, *blankable]]
    _require_filled(frame, ["item", "annotator", "vote", *optional], source)
    out = frame.copy()
    out["vote"] = _votes(frame, "vote", source, allow_error=False)
    if "turn" in optional:
        out["turn"] = _turns(frame, source)
    keys = ["item", *(["turn"] if "turn" in optional else [])]
    _reject_duplicates(out, [*keys, "annotator"], source, "the annotator voted on this item more than once")
    return out.reset_index(drop=True)


def judge_frame(raw: pd.DataFrame, *, source: str = "judge CSV") -> pd.DataFrame:
    """Judge outputs: item, judge and either vote or score_a, score_b; optional turn, category, language
    and register (the only one that may be empty).

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
    blankable = [c for c in VOTE_BLANKABLE if c in raw.columns]
    frame = raw[["item", "judge", *result_columns, *optional, *blankable]]
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


def taxonomy_label_frame(
    raw: pd.DataFrame, categories: Sequence[str], no_error: str, *, source: str = "input"
) -> pd.DataFrame:
    """One error label per line: question_id and label, a code of ``categories`` or ``no_error``. A question
    may have several lines (one per reviewer); labels are matched as written."""
    _require(raw, ("question_id", "label"), source)
    frame = raw[["question_id", "label"]]
    _require_filled(frame, ["question_id", "label"], source)
    allowed = [*categories, no_error]
    bad = (~frame["label"].isin(allowed)).to_numpy()
    if bad.any():
        position = int(bad.argmax())
        raise InputError(
            f"{source}: line {_line(frame, position)}: column 'label': {frame['label'].iloc[position]!r} is "
            f"not one of {', '.join(allowed)}"
        )
    return frame.reset_index(drop=True)


# -- judge lab ------------------------------------------------------------------------------------------

LAB_ORDERS = {"ab": "ab", "ba": "ba", "a": "ab", "b": "ba"}
LAB_ITEM_TEXT = ("category", "language", "register", "model_a", "model_b")
LAB_ITEM_NUMBERS = ("length_a", "length_b")


def _item_key(frame: pd.DataFrame, source: str) -> pd.Series:
    """``item``, or ``item:turn`` when the file has a turn column (a turn of a conversation is an item)."""
    if "turn" not in frame.columns:
        return frame["item"]
    return frame["item"] + ":" + _turns(frame, source).astype(str)


def lab_judge_frame(
    raw: pd.DataFrame, *, tie_threshold: float = 1.0, source: str = "judge CSV"
) -> pd.DataFrame:
    """Judge outputs for the judge lab: item, judge, and vote or score_a, score_b (scores become votes by
    ``tie_threshold``); optional turn, ``order`` (ab: A shown first, the default; ba: B shown first) and
    ``sample`` (a whole number: one of k sampled verdicts). One row per (item, judge, order, sample).
    Columns out: item, judge, vote, order, sample."""
    from analytics.domain.judge_agreement import verdicts_from_scores

    _require(raw, ("item", "judge"), source)
    has_vote = "vote" in raw.columns
    has_scores = "score_a" in raw.columns or "score_b" in raw.columns
    if has_vote == has_scores:
        raise InputError(
            f"{source}: needs either a 'vote' column or 'score_a' and 'score_b' columns, not both"
        )
    if has_scores:
        _require(raw, ("item", "judge", "score_a", "score_b"), source)
    _require_filled(
        raw, ["item", "judge", *[c for c in ("turn", "order", "sample") if c in raw.columns]], source
    )
    out = raw[["item", "judge"]].copy()
    out["item"] = _item_key(raw, source)
    if has_vote:
        out["vote"] = _votes(raw, "vote", source, allow_error=True)
    else:
        score_a = _to_numbers(raw, "score_a", source, allow_empty=True)
        score_b = _to_numbers(raw, "score_b", source, allow_empty=True)
        out["vote"] = verdicts_from_scores(score_a, score_b, tie_threshold=tie_threshold)
    if "order" in raw.columns:
        order = raw["order"].str.lower().map(LAB_ORDERS)
        bad = order.isna().to_numpy()
        if bad.any():
            position = int(bad.argmax())
            raise InputError(
                f"{source}: line {_line(raw, position)}: column 'order': {raw['order'].iloc[position]!r} is not "
                "ab or ba"
            )
        out["order"] = order
    else:
        out["order"] = "ab"
    if "sample" in raw.columns:
        sample = _to_numbers(raw, "sample", source, allow_empty=False)
        bad = ((sample != sample.round()) | (sample < 0)).to_numpy()
        if bad.any():
            position = int(bad.argmax())
            raise InputError(
                f"{source}: line {_line(raw, position)}: column 'sample' must be a whole number >= 0"
            )
        out["sample"] = sample.astype("int64")
    else:
        out["sample"] = 0
    _reject_duplicates(
        out,
        ["item", "judge", "order", "sample"],
        source,
        "the judge has more than one output for this item, order and sample",
    )
    return out.reset_index(drop=True)


def lab_human_frame(raw: pd.DataFrame, *, source: str = "human CSV") -> pd.DataFrame:
    """Human votes for the judge lab: item (``item:turn`` with a turn column), annotator, vote."""
    votes = human_votes_frame(raw, source=source)
    out = votes[["item", "annotator", "vote"]].copy()
    if "turn" in votes.columns:
        out["item"] = votes["item"] + ":" + votes["turn"].astype(str)
    return out


def lab_item_frame(frames: Sequence[tuple[pd.DataFrame, str]]) -> pd.DataFrame:
    """What is known of each item (category, language, register, model_a, model_b, length_a, length_b),
    gathered from the raw files in order: the first file that gives a column for an item wins. Within one
    file an item must not have two different values of a column. Lengths must be numbers >= 0."""
    import pandas as pd

    merged: pd.DataFrame | None = None
    for raw, source in frames:
        columns = [c for c in (*LAB_ITEM_TEXT, *LAB_ITEM_NUMBERS) if c in raw.columns]
        if "item" not in raw.columns:
            continue
        part = pd.DataFrame({"item": _item_key(raw, source)})
        for column in columns:
            if column in LAB_ITEM_NUMBERS:
                numbers = _to_numbers(raw, column, source, allow_empty=True)
                negative = (numbers < 0).to_numpy()
                if negative.any():
                    raise InputError(
                        f"{source}: line {_line(raw, int(negative.argmax()))}: column {column!r} must be >= 0"
                    )
                part[column] = numbers
            else:
                part[column] = raw[column].where(raw[column] != "", None)
        part = part.drop_duplicates()
        duplicated = part.duplicated("item").to_numpy()
        if duplicated.any():
            item = part["item"].iloc[int(duplicated.argmax())]
            raise InputError(f"{source}: item {item!r} has two different values of {', '.join(columns)}")
        if merged is None:
            merged = part
        else:
            merged = merged.merge(part, on="item", how="outer", suffixes=("", "__new"))
            for column in columns:
                if f"{column}__new" in merged.columns:
                    merged[column] = merged[column].combine_first(merged.pop(f"{column}__new"))
    if merged is None:
        return pd.DataFrame(columns=["item"])
    return merged.reset_index(drop=True)


def families_map(raw: pd.DataFrame, *, source: str = "families CSV") -> dict[str, str]:
    """``name,family``: a judge's or a model's name and its model family (one line per name)."""
    _require(raw, ("name", "family"), source)
    _require_filled(raw, ["name", "family"], source)
    _reject_duplicates(raw, ["name"], source, "the name appears twice")
    return dict(zip(raw["name"], raw["family"], strict=True))


BATTLE_COLUMNS = ("model_a", "model_b", "winner")
BATTLE_OPTIONAL = ("language", "register", "category")
BATTLE_WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")


def battles_frame(raw: pd.DataFrame, features: Sequence[str], *, source: str = "battles") -> pd.DataFrame:
    """Battles for the ``leaderboard`` command: model_a, model_b, winner (``model_a``, ``model_b``, ``tie``
    or ``tie (bothbad)``, any case), the optional language, register and category columns, and
    ``<f>_a`` / ``<f>_b`` (numbers >= 0) for each style feature f. Errors name the line and column."""
    _require(raw, BATTLE_COLUMNS, source)
    feature_columns = [f"{f}_{side}" for f in features for side in ("a", "b")]
    for column in feature_columns:
        if column not in raw.columns:
            feature = column.rsplit("_", 1)[0]
            raise InputError(f"{source}: style feature {feature!r} needs columns {feature}_a and {feature}_b")
    optional = [c for c in BATTLE_OPTIONAL if c in raw.columns]
    frame = raw[[*BATTLE_COLUMNS, *optional, *feature_columns]].copy()
    _require_filled(frame, [*BATTLE_COLUMNS, *feature_columns], source)
    winner = frame["winner"].str.lower()
    bad = ~winner.isin(BATTLE_WINNERS)
    if bad.any():
        position = int(bad.to_numpy().argmax())
        raise InputError(
            f"{source}: line {_line(frame, position)}: column 'winner': {frame['winner'].iloc[position]!r} is "
            "not model_a, model_b, tie or tie (bothbad)"
        )
    frame["winner"] = winner
    same = (frame["model_a"] == frame["model_b"]).to_numpy()
    if same.any():
        position = int(same.argmax())
        raise InputError(
            f"{source}: line {_line(frame, position)}: model_a and model_b are both "
            f"{frame['model_a'].iloc[position]!r}"
        )
    for column in feature_columns:
        numbers = _to_numbers(frame, column, source, allow_empty=False)
        negative = (numbers < 0).to_numpy()
        if negative.any():
            position = int(negative.argmax())
            raise InputError(f"{source}: line {_line(frame, position)}: column {column!r} is below 0")
        frame[column] = numbers
    return frame.reset_index(drop=True)
