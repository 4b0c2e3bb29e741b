"""Seeded train/test split of exported rows at the item level, stratified by category and language.

All pairs of one prompt land in the same split, so a model trained on ``train`` never saw the prompt of a
``test`` pair. The number of test items is the asked share of all items, rounded half up (so it is within
half an item of ``test_size * n_items``); it is shared out over the strata (category x language) in
proportion to their size by largest remainders, each stratum keeping at least one item in train when it
has two or more. A stratum whose share rounds to no test item is *too small*: it is reported, so the card
can say that the stratum is not represented in test. Ties between equal remainders are broken by a seeded
draw, and each stratum picks its test items with its own generator (seeded from the export seed and the
stratum), so the same seed always gives the same split.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

TRAIN = "train"
TEST = "test"
NO_VALUE = ""


def n_test_total(n_items: int, test_size: float) -> int:
    """Test items wanted over ``n_items``: ``test_size * n`` rounded half up, never all (train keeps one)."""
    if n_items <= 1 or test_size <= 0:
        return 0
    return min(math.floor(test_size * n_items + 0.5), n_items - 1)


@dataclass(frozen=True)
class Stratum:
    """One category x language cell: its items and how many went to test."""

    key: tuple[str, ...]
    n_items: int
    n_test: int

    @property
    def too_small(self) -> bool:
        """No test item (its share rounded to none) although the export has a test split."""
        return self.n_test == 0


@dataclass(frozen=True)
class SplitPlan:
    """How many items each stratum sends to test; ``n_test`` over all strata equals ``n_test_wanted``."""

    test_size: float
    n_items: int
    n_test_wanted: int
    strata: tuple[Stratum, ...]

    @property
    def n_test(self) -> int:
        return sum(s.n_test for s in self.strata)

    @property
    def too_small(self) -> tuple[Stratum, ...]:
        return tuple(s for s in self.strata if s.too_small) if self.n_test_wanted else ()


def plan_split(sizes: dict[tuple[str, ...], int], *, test_size: float, seed: int) -> SplitPlan:
    """Share ``n_test_total`` test items out over strata of the given sizes (largest remainder method).

    Every stratum gets ``floor(test_size * n)`` first; the items still missing go one each to the strata
    with the largest remainders (seeded draw among equal ones). A stratum of two or more items keeps one in
    train; a lone item may go to test only when the other strata cannot take the test share.
    """
    keys = sorted(sizes)
    n_items = sum(sizes.values())
    wanted = n_test_total(n_items, test_size)
    quota = {k: test_size * sizes[k] for k in keys}
    cap = {k: sizes[k] - 1 if sizes[k] > 1 else 0 for k in keys}
    given = {k: min(math.floor(quota[k]), cap[k]) for k in keys}
    rng = np.random.default_rng([seed, 0x5EED])
    draw = dict(zip(keys, rng.random(len(keys)), strict=True))

    def fill(limit: dict[tuple[str, ...], int]) -> None:
        while sum(given.values()) < wanted:
            open_keys = [k for k in keys if given[k] < limit[k]]
            if not open_keys:
                return
            # The stratum furthest below its proportional quota comes first.
            best = max(open_keys, key=lambda k: (quota[k] - given[k], draw[k]))
            given[best] += 1

    fill(cap)
    fill({k: sizes[k] for k in keys})  # only when the strata with room to spare are exhausted
    strata = tuple(Stratum(key=k, n_items=sizes[k], n_test=given[k]) for k in keys)
    return SplitPlan(test_size=test_size, n_items=n_items, n_test_wanted=wanted, strata=strata)


def _strata_frame(item_ids: pd.Series, strata: Sequence[pd.Series]) -> pd.DataFrame:
    columns = {"item_id": item_ids.to_numpy()}
    for i, values in enumerate(strata):
        columns[f"s{i}"] = values.astype(object).where(values.notna(), NO_VALUE).astype(str).to_numpy()
    frame = pd.DataFrame(columns).drop_duplicates()
    if frame["item_id"].duplicated().any():
        raise ValueError("an item appears with more than one category or language")
    return frame


def assign_item_splits(
    item_ids: pd.Series,
    strata: Sequence[pd.Series],
    *,
    seed: int,
    test_size: float = 0.1,
) -> tuple[pd.Series, SplitPlan]:
    """``train`` / ``test`` per item id (a Series indexed by item id) and the plan, deterministic for a seed.

    ``item_ids`` and each series of ``strata`` (e.g. category and language) are aligned row by row and may
    repeat (one row per pair); an item must have one value of each. Missing values count as one value.
    """
    if not 0 <= test_size < 1:
        raise ValueError("test_size must lie in [0, 1)")
    if seed < 0:
        raise ValueError("seed must be a non-negative integer")
    frame = _strata_frame(item_ids, strata)
    columns = [c for c in frame.columns if c != "item_id"]
    groups = {
        (key if isinstance(key, tuple) else (key,)): group["item_id"].to_numpy()
        for key, group in frame.groupby(columns, sort=True)
    }
    plan = plan_split({k: len(v) for k, v in groups.items()}, test_size=test_size, seed=seed)
    labels: dict[Hashable, str] = {}
    for stratum in plan.strata:
        ids = np.sort(groups[stratum.key])
        rng = np.random.default_rng([seed, zlib.crc32("\x1f".join(stratum.key).encode("utf-8"))])
        for rank, index in enumerate(rng.permutation(len(ids))):
            labels[ids[index]] = TEST if rank < stratum.n_test else TRAIN
    return pd.Series(labels, name="split", dtype=object).rename_axis("item_id"), plan


def split_pairs(
    pairs: pd.DataFrame,
    *,
    seed: int,
    test_size: float = 0.1,
    stratify_columns: Sequence[str] = ("category", "language"),
) -> tuple[dict[str, pd.DataFrame], SplitPlan]:
    """``{"train": ..., "test": ...}`` with every pair of an item in one split (row order kept), and the plan.

    A split without rows is left out (``test_size=0`` or too few items), since ``datasets`` cannot load
    an empty split.
    """
    labels, plan = assign_item_splits(
        pairs["item_id"], [pairs[c] for c in stratify_columns], seed=seed, test_size=test_size
    )
    split = pairs["item_id"].map(labels).to_numpy()
    parts = {name: pairs[split == name].reset_index(drop=True) for name in (TRAIN, TEST)}
    return {name: part for name, part in parts.items() if len(part)}, plan
