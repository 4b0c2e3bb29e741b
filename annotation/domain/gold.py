"""Gold items: when to serve one, how to score an annotator's answer to it, and accuracy per annotator.

Gold answers are stored in canonical indexes (like every answer), so scoring never depends on the order
in which a particular annotator saw the responses.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from annotation.domain.blinding import HashStream, Id, derive_key
from annotation.domain.submission import Answer, BestOfNAnswer, LikertAnswer, PairwiseAnswer

DEFAULT_GOLD_BLOCK = 20


def _gold_count_in_block(phase: Fraction, rate: Fraction, block: int, index: int) -> int:
    # Cumulative count floor(n * rate + phase) sampled at block boundaries: every prefix of blocks holds
    # within one of its exact share of gold items, whatever the rate.
    return math.floor((index + 1) * block * rate + phase) - math.floor(index * block * rate + phase)


def is_gold_slot(
    project_seed: Id, annotator_id: Id, n_served: int, rate: float, *, block: int = DEFAULT_GOLD_BLOCK
) -> bool:
    """Whether the annotator's next task (``n_served`` tasks already handed out, gold included) is gold.

    The annotator's stream of tasks is cut into blocks of ``block`` slots; each block holds
    ``rate * block`` gold slots (rounded up or down so the running total stays exact within one), at
    positions drawn per block. Gold thus arrives at the set rate without a pattern an annotator could learn
    (a fixed "every 10th task") and without the long gaps or streaks of a coin flip per task. A per-annotator
    phase spreads the rounding so annotators do not all meet gold at the same counts.
    """
    if n_served < 0:
        raise ValueError("n_served must be non-negative")
    if not 0 <= rate <= 1:
        raise ValueError("rate must be between 0 and 1")
    if block < 1:
        raise ValueError("block must be at least 1")
    exact_rate = Fraction(rate).limit_denominator(1_000_000)
    if exact_rate == 0:
        return False
    phase = Fraction(HashStream(derive_key("gold-phase", project_seed, annotator_id)).next_u64(), 1 << 64)
    index, position = divmod(n_served, block)
    count = _gold_count_in_block(phase, exact_rate, block, index)
    chosen = HashStream(derive_key("gold-slots", project_seed, annotator_id, index)).sample(
        range(block), count
    )
    return position in chosen


def gold_slots(
    project_seed: Id, annotator_id: Id, rate: float, n: int, *, block: int = DEFAULT_GOLD_BLOCK
) -> list[int]:
    """Indexes among the first ``n`` slots that ``is_gold_slot`` marks as gold (for previews and checks)."""
    return [i for i in range(n) if is_gold_slot(project_seed, annotator_id, i, rate, block=block)]


def _index_key(key: object) -> object:
    # Gold answers stored as JSON come back with string keys ("0"); answers use ints.
    if isinstance(key, str) and key.strip().lstrip("+-").isdigit():
        return int(key)
    return key


def _plain(given: object) -> object:
    if isinstance(given, LikertAnswer | BestOfNAnswer | PairwiseAnswer):
        if not given.canonical:
            raise ValueError("score gold against a canonical answer")
        if isinstance(given, LikertAnswer):
            return given.ratings
        if isinstance(given, BestOfNAnswer):
            return given.best
        return given.votes
    return given


def score_gold(kind: str, expected: object, given: object | Answer, *, tolerance: int = 1) -> float:
    """Score in [0, 1] of one answer against a gold item.

    - ``likert``: ``expected`` maps canonical response index to {criterion: value}; the score is the
      share of those cells the annotator rated within ``tolerance`` (default ±1; a named category must
      match exactly). Cells the gold item leaves out are not scored.
    - ``best_of_n``: canonical index or ``"all_bad"``; 1.0 on an exact match, else 0.0.
    - ``pairwise``: one vote, or {turn: vote}; the share of gold turns voted exactly the same.

    ``given`` is the same plain shape or a canonical answer from ``annotation.domain.submission``. Index
    and turn keys may be digit strings, as they come back from JSON.
    """
    if tolerance < 0:
        raise ValueError("tolerance must be non-negative")
    value = _plain(given)
    if kind == "likert":
        if not isinstance(expected, Mapping) or not isinstance(value, Mapping):
            raise TypeError("likert gold and answer are mappings of response -> criterion -> value")
        value = {_index_key(target): row for target, row in value.items()}
        cells = [
            (_index_key(target), criterion, level)
            for target, row in expected.items()
            for criterion, level in row.items()
        ]
        if not cells:
            raise ValueError("likert gold item has no expected ratings")
        hits = 0
        for target, criterion, level in cells:
            rated = value.get(target, {}).get(criterion)
            if rated is None:
                continue
            if isinstance(level, str) or isinstance(rated, str):  # a named category: exact match only
                hits += rated == level
            elif abs(rated - level) <= tolerance:
                hits += 1
        return hits / len(cells)
    if kind == "best_of_n":
        return 1.0 if _index_key(value) == _index_key(expected) else 0.0
    if kind == "pairwise":
        expected_votes = (
            {_index_key(turn): vote for turn, vote in expected.items()}
            if isinstance(expected, Mapping)
            else {None: expected}
        )
        given_votes = (
            {_index_key(turn): vote for turn, vote in value.items()}
            if isinstance(value, Mapping)
            else {None: value}
        )
        if not expected_votes:
            raise ValueError("pairwise gold item has no expected vote")
        hits = sum(1 for turn, vote in expected_votes.items() if given_votes.get(turn) == vote)
        return hits / len(expected_votes)
    raise ValueError(f"unknown gold kind {kind!r}; expected likert, best_of_n or pairwise")


@dataclass(frozen=True)
class GoldAccuracy:
    n_items: int
    mean_score: float
    n_exact: int


def gold_accuracy(rows: Iterable[Mapping[str, object]]) -> dict[Hashable, GoldAccuracy]:
    """Per-annotator gold accuracy from rows with ``annotator`` and ``score`` (output of ``score_gold``).

    ``n_exact`` counts items scored 1.0, which for likert means every rated cell was within tolerance.
    """
    scores: dict[Hashable, list[float]] = {}
    for row in rows:
        score = float(row["score"])  # type: ignore[arg-type]
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"gold score {score} outside [0, 1]")
        scores.setdefault(row["annotator"], []).append(score)  # type: ignore[arg-type]
    return {
        annotator: GoldAccuracy(
            n_items=len(values),
            mean_score=sum(values) / len(values),
            n_exact=sum(1 for value in values if value == 1.0),
        )
        for annotator, values in scores.items()
    }


def qualification_settings_from(settings: Mapping[str, object] | None) -> tuple[int, float]:
    """(number of gold tasks in a project's qualification set, pass mark as a share) from its quality
    settings; (0, _) when none is required."""
    settings = settings or {}
    return int(settings.get("qualification_n", 0) or 0), float(settings.get("qualification_pass", 0.8))  # type: ignore[arg-type]


def qualification_outcome(*, n_required: int, pass_mark: float, n_done: int, mean_score: float | None) -> str:
    """``passed`` or ``failed`` once an annotator has submitted the ``n_required`` tasks of the set (a set
    with no scorable answer fails), ``""`` before that or when no set is required."""
    if n_required == 0 or n_done < n_required:
        return ""
    return "passed" if mean_score is not None and mean_score >= pass_mark else "failed"
