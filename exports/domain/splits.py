"""Seeded train/test split of exported rows at the item level, stratified by category.

All pairs of one prompt land in the same split, so a model trained on ``train`` never saw the prompt of a
``test`` pair. Each category is shuffled by its own generator, seeded from the export seed and the category
name, so the split of one category does not move when another category gains or loses items.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Hashable

import numpy as np
import pandas as pd

TRAIN = "train"
TEST = "test"


def n_test_items(n_items: int, test_size: float, min_items_for_test: int = 2) -> int:
    """How many of a category's ``n_items`` go to test.

    ``test_size * n`` rounded half up; at least one when the category has ``min_items_for_test`` items or
    more (so every such category is represented in test), and never all of them (train keeps one).
    """
    if n_items <= 1 or test_size <= 0:
        return 0
    wanted = math.floor(test_size * n_items + 0.5)
    if n_items >= min_items_for_test:
        wanted = max(wanted, 1)
    return min(wanted, n_items - 1)


def assign_item_splits(
    item_ids: pd.Series,
    categories: pd.Series,
    *,
    seed: int,
    test_size: float = 0.1,
    min_items_for_test: int = 2,
) -> pd.Series:
    """``train`` / ``test`` per item id (a Series indexed by item id), deterministic for a seed.

    ``item_ids`` and ``categories`` are aligned row by row and may repeat (one row per pair); an item must
    have one category. Missing categories form one stratum of their own.
    """
    if not 0 <= test_size < 1:
        raise ValueError("test_size must lie in [0, 1)")
    if seed < 0:
        raise ValueError("seed must be a non-negative integer")
    frame = pd.DataFrame(
        {
            "item_id": item_ids.to_numpy(),
            "category": categories.astype(object).where(categories.notna(), "").to_numpy(),
        }
    ).drop_duplicates()
    if frame["item_id"].duplicated().any():
        raise ValueError("an item appears with more than one category")
    labels: dict[Hashable, str] = {}
    for category, group in frame.groupby("category", sort=True):
        ids = np.sort(group["item_id"].to_numpy())
        rng = np.random.default_rng([seed, zlib.crc32(str(category).encode("utf-8"))])
        order = rng.permutation(len(ids))
        n_test = n_test_items(len(ids), test_size, min_items_for_test)
        for rank, index in enumerate(order):
            labels[ids[index]] = TEST if rank < n_test else TRAIN
    return pd.Series(labels, name="split", dtype=object).rename_axis("item_id")


def split_pairs(
    pairs: pd.DataFrame,
    *,
    seed: int,
    test_size: float = 0.1,
    stratify_column: str = "category",
    min_items_for_test: int = 2,
) -> dict[str, pd.DataFrame]:
    """``{"train": ..., "test": ...}`` with every pair of an item in one split, row order kept.

    A split without rows is left out (``test_size=0`` or too few items), since ``datasets`` cannot load
    an empty split.
    """
    labels = assign_item_splits(
        pairs["item_id"],
        pairs[stratify_column],
        seed=seed,
        test_size=test_size,
        min_items_for_test=min_items_for_test,
    )
    split = pairs["item_id"].map(labels).to_numpy()
    parts = {name: pairs[split == name].reset_index(drop=True) for name in (TRAIN, TEST)}
    return {name: part for name, part in parts.items() if len(part)}
