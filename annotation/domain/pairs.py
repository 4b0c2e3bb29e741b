"""Which response pairs become pairwise tasks.

A pair is always written in canonical order ``(first, second)`` with ``first < second`` by model name, so
the same two models form the same pair whatever order they were listed in; the blinding layer decides
which one is shown as "A".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import Literal

from annotation.domain.blinding import HashStream, Id, derive_key

Pair = tuple[str, str]
TurnMode = Literal["overall", "per_turn"]


@dataclass(frozen=True)
class PairUnit:
    """One pairwise task: a pair of models, and the 0-based turn judged (``None``: the whole conversation)."""

    pair: Pair
    turn: int | None


def _distinct_sorted(model_names: Iterable[str]) -> list[str]:
    names = list(model_names)
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"model names repeat: {', '.join(duplicates)}")
    return sorted(names)


def all_pairs(model_names: Iterable[str]) -> list[Pair]:
    """Every unordered pair of distinct models, each as ``(first, second)`` sorted, in sorted order."""
    return list(combinations(_distinct_sorted(model_names), 2))


def sample_pairs(model_names: Iterable[str], k: int, seed: Id, item_id: Id) -> list[Pair]:
    """``k`` distinct pairs for one item, chosen uniformly and reproducibly from ``(seed, item_id)``.

    SeaBench-style evaluations show 3 of the possible pairs per question; sampling per item keeps every
    pair of models compared across the dataset without comparing every pair on every item. The result is
    in canonical (sorted) order so that it does not leak the sampling order.
    """
    names = _distinct_sorted(model_names)
    pairs = list(combinations(names, 2))
    if k < 0:
        raise ValueError("k must be non-negative")
    if k > len(pairs):
        raise ValueError(
            f"cannot sample {k} distinct pairs: {len(names)} models give only {len(pairs)} pairs"
        )
    return sorted(HashStream(derive_key("pairs", seed, item_id)).sample(pairs, k))


def pair_units(pairs: Sequence[Pair], n_turns: int, mode: TurnMode) -> list[PairUnit]:
    """Expand pairs into tasks: one per pair (``overall``) or one per pair and turn (``per_turn``)."""
    if n_turns < 1:
        raise ValueError("n_turns must be at least 1")
    if mode == "overall":
        return [PairUnit(pair=pair, turn=None) for pair in pairs]
    if mode == "per_turn":
        return [PairUnit(pair=pair, turn=turn) for pair in pairs for turn in range(n_turns)]
    raise ValueError(f"unknown turn mode {mode!r}; expected 'overall' or 'per_turn'")


def sample_pair_units(
    model_names: Iterable[str], k: int, seed: Id, item_id: Id, *, n_turns: int, mode: TurnMode
) -> list[PairUnit]:
    """``sample_pairs`` followed by ``pair_units``: the pairwise tasks of one item."""
    return pair_units(sample_pairs(model_names, k, seed, item_id), n_turns, mode)


def n_pairs(n_models: int) -> int:
    """Number of unordered pairs among ``n_models`` models."""
    return comb(n_models, 2)
