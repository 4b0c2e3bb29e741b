import numpy as np
import pandas as pd
import pytest

from exports.domain.splits import assign_item_splits, n_test_total, plan_split, split_pairs


def make_pairs(strata):
    """Three pairs per item; ``strata`` maps category (or (category, language)) -> number of items."""
    rows = []
    for key, n_items in strata.items():
        category, language = key if isinstance(key, tuple) else (key, "ind")
        for i in range(n_items):
            for k in range(3):
                item = f"{category}-{language}-{i}"
                rows.append({"item_id": item, "category": category, "language": language, "pair": k})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("n_items", "test_size", "expected"),
    [
        (10, 0.1, 1),  # 1.0
        (25, 0.1, 3),  # 2.5 rounds half up
        (24, 0.1, 2),  # 2.4
        (2, 0.1, 0),  # 0.2 rounds to nothing
        (2, 0.9, 1),  # 1.8 -> 2, capped so train keeps one
        (1, 0.5, 0),  # a lone item stays in train
        (100, 0.0, 0),
    ],
)
def test_n_test_total(n_items, test_size, expected):
    assert n_test_total(n_items, test_size) == expected


def test_largest_remainders_share_the_test_items_out():
    # 26 items -> 2.6 -> 3 test items. Quotas: Math 2.0, Safety 0.5, Coding 0.1. Floors 2, 0, 0; the one
    # left goes to the largest remainder, Safety. Coding (one item) gets none: too small.
    plan = plan_split(
        {("Math", "ind"): 20, ("Safety", "ind"): 5, ("Coding", "ind"): 1}, test_size=0.1, seed=7
    )
    assert {s.key[0]: s.n_test for s in plan.strata} == {"Coding": 0, "Math": 2, "Safety": 1}
    assert plan.n_test == plan.n_test_wanted == 3
    assert [s.key for s in plan.too_small] == [("Coding", "ind")]


def test_many_small_strata_no_longer_inflate_the_test_share():
    # The reported case: ten strata of two items each used to send one item each to test (50%). Now 20
    # items at 0.1 give 2 test items; every quota is 0.2, so the seeded draw picks two strata and the
    # other eight are reported as too small.
    sizes = {(f"c{i}", "ind"): 2 for i in range(10)}
    plan = plan_split(sizes, test_size=0.1, seed=3)
    assert plan.n_test == 2
    assert sorted(s.n_test for s in plan.strata) == [0] * 8 + [1, 1]
    assert len(plan.too_small) == 8
    # Same seed, same strata; another seed may pick others, but always two.
    assert plan_split(sizes, test_size=0.1, seed=3) == plan
    assert plan_split(sizes, test_size=0.1, seed=4).n_test == 2


def test_lone_items_go_to_test_only_when_nothing_else_can():
    # 20 strata of one item: no stratum can keep one in train and give one to test, so two lone items go.
    plan = plan_split({(f"c{i}", "sun"): 1 for i in range(20)}, test_size=0.1, seed=1)
    assert plan.n_test == 2 and len(plan.too_small) == 18


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_test_share_within_one_item_of_what_was_asked(seed):
    rng = np.random.default_rng(seed)
    for _ in range(200):
        sizes = {(f"c{i}", "ind"): int(n) for i, n in enumerate(rng.integers(1, 9, size=rng.integers(1, 15)))}
        share = float(rng.choice([0.05, 0.1, 0.2, 0.3]))
        plan = plan_split(sizes, test_size=share, seed=seed)
        n = sum(sizes.values())
        if n > 1:
            assert abs(plan.n_test - share * n) <= 1, (sizes, share, plan.n_test)


def test_strata_are_category_and_language_and_pairs_of_an_item_stay_together():
    pairs = make_pairs({("Math", "ind"): 10, ("Math", "sun"): 10, ("Chat", "ind"): 5})
    splits, plan = split_pairs(pairs, seed=7, test_size=0.1)
    train_items, test_items = set(splits["train"]["item_id"]), set(splits["test"]["item_id"])
    assert not train_items & test_items
    assert len(splits["train"]) + len(splits["test"]) == len(pairs)
    # 25 items -> 2.5 -> 3: Math/ind 1.0 -> 1, Math/sun 1.0 -> 1, Chat/ind 0.5 -> 0 + the one left -> 1.
    per_stratum = splits["test"].groupby(["category", "language"])["item_id"].nunique().to_dict()
    assert per_stratum == {("Chat", "ind"): 1, ("Math", "ind"): 1, ("Math", "sun"): 1}
    assert splits["test"].groupby("item_id").size().eq(3).all()
    assert plan.too_small == ()


def test_same_seed_same_split_whatever_the_row_order():
    pairs = make_pairs({"Math": 30, "Chat": 30})
    first, _ = assign_item_splits(pairs["item_id"], [pairs["category"]], seed=11)
    shuffled = pairs.sample(frac=1.0, random_state=3)
    second, _ = assign_item_splits(shuffled["item_id"], [shuffled["category"]], seed=11)
    assert first.sort_index().equals(second.sort_index())
    other, _ = assign_item_splits(pairs["item_id"], [pairs["category"]], seed=12)
    # 3 test items of 30 per category: two seeds choosing the same 6 items is very unlikely, and these do not.
    assert set(first[first == "test"].index) != set(other[other == "test"].index)


def test_zero_test_size_gives_train_only_and_missing_categories_form_a_stratum():
    pairs = make_pairs({"Math": 4})
    splits, plan = split_pairs(pairs, seed=1, test_size=0.0)
    assert list(splits) == ["train"] and plan.too_small == ()
    pairs = make_pairs({"Math": 10})
    pairs.loc[pairs["item_id"].isin([f"Math-ind-{i}" for i in range(5)]), "category"] = None
    labels, plan = assign_item_splits(pairs["item_id"], [pairs["category"]], seed=1, test_size=0.2)
    # Two strata of five items, 0.2 each: one test item per stratum.
    assert (labels == "test").sum() == 2
    assert [s.key for s in plan.strata] == [("",), ("Math",)]
    assert labels[[f"Math-ind-{i}" for i in range(5)]].tolist().count("test") == 1


def test_bad_arguments():
    pairs = make_pairs({"Math": 3})
    with pytest.raises(ValueError, match="test_size"):
        split_pairs(pairs, seed=1, test_size=1.0)
    with pytest.raises(ValueError, match="seed"):
        split_pairs(pairs, seed=-1)
    pairs.loc[0, "category"] = "Other"
    with pytest.raises(ValueError, match="more than one category"):
        split_pairs(pairs, seed=1)
