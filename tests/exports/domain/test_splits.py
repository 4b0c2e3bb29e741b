import pandas as pd
import pytest

from exports.domain.splits import assign_item_splits, n_test_items, split_pairs


def make_pairs(categories):
    """Three pairs per item; ``categories`` maps category -> number of items."""
    rows = []
    for category, n_items in categories.items():
        for i in range(n_items):
            for k in range(3):
                rows.append({"item_id": f"{category}-{i}", "category": category, "pair": k})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("n_items", "test_size", "expected"),
    [
        (10, 0.1, 1),  # 1.0
        (25, 0.1, 3),  # 2.5 rounds half up
        (24, 0.1, 2),  # 2.4
        (2, 0.1, 1),  # 0.2 rounds to 0, raised to 1 so the category shows in test
        (2, 0.9, 1),  # 1.8 -> 2, capped so train keeps one
        (1, 0.5, 0),  # a lone item stays in train
        (100, 0.0, 0),
    ],
)
def test_n_test_items(n_items, test_size, expected):
    assert n_test_items(n_items, test_size) == expected


def test_min_items_for_test_leaves_small_categories_in_train():
    assert n_test_items(3, 0.1, min_items_for_test=5) == 0
    assert n_test_items(5, 0.1, min_items_for_test=5) == 1


def test_every_pair_of_an_item_lands_in_one_split_and_counts_follow_the_rule():
    pairs = make_pairs({"Math": 20, "Safety": 5, "Coding": 1})
    splits = split_pairs(pairs, seed=7, test_size=0.1)
    train_items = set(splits["train"]["item_id"])
    test_items = set(splits["test"]["item_id"])
    assert not train_items & test_items
    assert len(splits["train"]) + len(splits["test"]) == len(pairs)
    per_category = splits["test"].groupby("category")["item_id"].nunique().to_dict()
    # Math: 2.0 -> 2 items; Safety: 0.5 -> 1 (half up); Coding: one item, kept in train.
    assert per_category == {"Math": 2, "Safety": 1}
    assert splits["test"].groupby("item_id").size().eq(3).all()


def test_same_seed_same_split_whatever_the_row_order():
    pairs = make_pairs({"Math": 30, "Chat": 30})
    first = assign_item_splits(pairs["item_id"], pairs["category"], seed=11)
    shuffled = pairs.sample(frac=1.0, random_state=3)
    second = assign_item_splits(shuffled["item_id"], shuffled["category"], seed=11)
    assert first.sort_index().equals(second.sort_index())
    other = assign_item_splits(pairs["item_id"], pairs["category"], seed=12)
    # 3 test items of 30 per category: two seeds choosing the same 6 items is very unlikely, and these do not.
    assert set(first[first == "test"].index) != set(other[other == "test"].index)


def test_a_new_category_does_not_move_the_others():
    before = make_pairs({"Math": 30})
    after = make_pairs({"Math": 30, "Law": 12})
    a = assign_item_splits(before["item_id"], before["category"], seed=5)
    b = assign_item_splits(after["item_id"], after["category"], seed=5)
    assert a.equals(b[a.index])


def test_zero_test_size_gives_train_only_and_missing_categories_form_a_stratum():
    pairs = make_pairs({"Math": 4})
    assert list(split_pairs(pairs, seed=1, test_size=0.0)) == ["train"]
    pairs.loc[pairs["item_id"].isin(["Math-0", "Math-1"]), "category"] = None
    labels = assign_item_splits(pairs["item_id"], pairs["category"], seed=1, test_size=0.1)
    # Two strata of two items: each sends one item to test.
    assert (labels == "test").sum() == 2
    assert labels[["Math-0", "Math-1"]].tolist().count("test") == 1


def test_bad_arguments():
    pairs = make_pairs({"Math": 3})
    with pytest.raises(ValueError, match="test_size"):
        split_pairs(pairs, seed=1, test_size=1.0)
    with pytest.raises(ValueError, match="seed"):
        split_pairs(pairs, seed=-1)
    pairs.loc[0, "category"] = "Other"
    with pytest.raises(ValueError, match="more than one category"):
        split_pairs(pairs, seed=1)
