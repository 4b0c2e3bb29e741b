"""Quality signals of one annotator's work in one project, on plain values.

- straight-lining: the share of tasks where every response got the same value on a criterion (tasks with at
  least two rated responses), and the spread (population standard deviation) of the annotator's ratings
  against the spread of everybody's ratings in the project;
- speed: median seconds per task against the project's median, and the share of tasks under a floor;
- position bias (pairwise): the share of A/B votes for the side shown first, with an exact two-sided
  binomial test against 0.5 (ties and "both bad" left out);
- gold accuracy is computed in ``annotation.domain.gold``; it is compared with its threshold here.

``signal_flags`` names the signals past their thresholds; an annotator with fewer than ``min_tasks`` tasks
is never flagged (too little to judge).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields

__all__ = [
    "QualityThresholds",
    "QualitySignals",
    "binomial_two_sided_p",
    "position_bias",
    "rating_spread",
    "signal_flags",
    "speed",
    "spread_from_moments",
    "straight_lining",
    "straight_share",
]


@dataclass(frozen=True)
class QualityThresholds:
    """What a manager may change per project; the defaults are where a reviewer should look."""

    gold_accuracy_min: float = 0.7
    straight_share_max: float = 0.5
    spread_ratio_min: float = 0.5
    speed_floor_seconds: float = 5.0
    fast_share_max: float = 0.3
    position_p_max: float = 0.01
    attention_share_min: float = 0.5
    min_tasks: int = 5

    @classmethod
    def from_mapping(cls, values: Mapping[str, object] | None) -> QualityThresholds:
        """Stored settings over the defaults; unknown keys are ignored."""
        known = {f.name: f.type for f in fields(cls)}
        given = {k: v for k, v in (values or {}).items() if k in known and v is not None}
        return cls(**{k: int(v) if k == "min_tasks" else float(v) for k, v in given.items()})  # type: ignore[arg-type]

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


@dataclass(frozen=True)
class QualitySignals:
    n_tasks: int
    gold_accuracy: float | None = None
    straight_share: float | None = None
    spread: float | None = None
    project_spread: float | None = None
    median_seconds: float | None = None
    project_median_seconds: float | None = None
    fast_share: float | None = None
    first_share: float | None = None
    n_position_votes: int = 0
    position_p: float | None = None
    attention_share: float | None = None

    @property
    def spread_ratio(self) -> float | None:
        if self.spread is None or not self.project_spread:
            return None
        return self.spread / self.project_spread


def straight_lining(tasks: Iterable[Mapping[str, Sequence[int]]]) -> float | None:
    """Share of tasks where, on at least one criterion, every rated response got the same value.

    Each task maps a criterion to the values the annotator gave to the task's responses; a criterion with
    fewer than two values cannot be straight-lined and is left out, as is a task with no such criterion.
    """
    counted = flat = 0
    for task in tasks:
        rated = [values for values in task.values() if len(values) >= 2]
        if not rated:
            continue
        counted += 1
        if any(len(set(values)) == 1 for values in rated):
            flat += 1
    return flat / counted if counted else None


def straight_share(n_tasks: int, n_flat: int) -> float | None:
    """The share of ``straight_lining`` from its two counts (tasks that count, tasks flat on a criterion),
    as a database aggregates them."""
    if not 0 <= n_flat <= n_tasks:
        raise ValueError(f"{n_flat} flat tasks out of {n_tasks}")
    return n_flat / n_tasks if n_tasks else None


def rating_spread(values: Sequence[float]) -> float | None:
    """Population standard deviation of ratings (``None`` below two ratings)."""
    return statistics.pstdev(values) if len(values) >= 2 else None


def spread_from_moments(n: int, total: float, squares: float) -> float | None:
    """Population standard deviation from the count, sum and sum of squares of the ratings (what a
    database aggregates); equal to ``rating_spread`` of the same ratings up to rounding."""
    if n < 2:
        return None
    mean = total / n
    return math.sqrt(max(0.0, squares / n - mean * mean))


def speed(seconds: Sequence[float], *, floor: float) -> tuple[float | None, float | None]:
    """(median seconds per task, share of tasks strictly under ``floor`` seconds); ``None`` with no times."""
    if not seconds:
        return None, None
    return statistics.median(seconds), sum(1 for s in seconds if s < floor) / len(seconds)


def binomial_two_sided_p(k: int, n: int, p: float = 0.5) -> float:
    """Exact two-sided binomial test: the probability, under Binomial(n, p), of an outcome no more likely
    than ``k`` (the rule ``scipy.stats.binomtest`` uses, with its relative tolerance)."""
    if not 0 <= k <= n:
        raise ValueError(f"k={k} must lie in 0..n={n}")
    if n == 0:
        return 1.0

    def pmf(i: int) -> float:
        return math.comb(n, i) * p**i * (1 - p) ** (n - i)

    observed = pmf(k)
    total = sum(q for q in (pmf(i) for i in range(n + 1)) if q <= observed * (1 + 1e-7))
    return min(1.0, total)


def position_bias(shown_first: Sequence[bool]) -> tuple[float | None, float | None]:
    """(share of votes for the side shown first, two-sided binomial p against 0.5) over A/B votes."""
    n = len(shown_first)
    if n == 0:
        return None, None
    k = sum(1 for first in shown_first if first)
    return k / n, binomial_two_sided_p(k, n)


def signal_flags(
    signals: QualitySignals, thresholds: QualityThresholds, *, qualification_failed: bool = False
) -> list[str]:
    """Names of the signals past their thresholds (none below ``min_tasks`` tasks), after
    ``qualification`` for an annotator who failed the qualification set: they get no real tasks, so no
    other signal would ever flag them."""
    flags = ["qualification"] if qualification_failed else []
    if signals.n_tasks < thresholds.min_tasks:
        return flags
    if signals.gold_accuracy is not None and signals.gold_accuracy < thresholds.gold_accuracy_min:
        flags.append("gold")
    if signals.straight_share is not None and signals.straight_share > thresholds.straight_share_max:
        flags.append("straight_lining")
    ratio = signals.spread_ratio
    if ratio is not None and ratio < thresholds.spread_ratio_min:
        flags.append("spread")
    if signals.fast_share is not None and signals.fast_share > thresholds.fast_share_max:
        flags.append("speed")
    if signals.position_p is not None and signals.position_p < thresholds.position_p_max:
        flags.append("position")
    if signals.attention_share is not None and signals.attention_share < thresholds.attention_share_min:
        flags.append("attention")
    return flags
