from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.domain.pairs import PairUnit, all_pairs, n_pairs, pair_units, sample_pair_units, sample_pairs

MODELS = ["sealion", "gpt-4o", "llama", "qwen", "gemma"]


def test_all_pairs_are_sorted_and_unordered():
    assert all_pairs(["c", "a", "b"]) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert len(all_pairs(MODELS)) == n_pairs(5) == 10
    assert all_pairs(["solo"]) == []


def test_repeated_model_names_are_refused():
    with pytest.raises(ValueError, match="qwen"):
        all_pairs(["qwen", "llama", "qwen"])


def test_sample_pairs_on_a_fixed_item():
    pairs = sample_pairs(MODELS, 3, seed=42, item_id="q1")
    assert len(pairs) == len(set(pairs)) == 3
    assert set(pairs) <= set(all_pairs(MODELS))
    assert pairs == sorted(pairs)
    # Same seed and item: same pairs, whatever order the models were listed in.
    assert sample_pairs(list(reversed(MODELS)), 3, seed=42, item_id="q1") == pairs


def test_sample_pairs_bounds():
    assert sample_pairs(MODELS, 0, 1, 1) == []
    assert sample_pairs(MODELS, 10, 1, 1) == all_pairs(MODELS)
    with pytest.raises(ValueError, match="5 models give only 10 pairs"):
        sample_pairs(MODELS, 11, 1, 1)
    with pytest.raises(ValueError):
        sample_pairs(MODELS, -1, 1, 1)


def test_items_get_different_pairs_and_every_pair_is_used_evenly():
    items = 3000
    counts = Counter(pair for item in range(items) for pair in sample_pairs(MODELS, 3, 7, item))
    assert len({tuple(sample_pairs(MODELS, 3, 7, item)) for item in range(20)}) > 5
    # Each of the 10 pairs is expected 3000 * 3 / 10 = 900 times. Sampling without replacement within an
    # item only lowers the variance, so the multinomial chi-square bound (9 dof, 0.1%: 27.88) is safe.
    assert set(counts) == set(all_pairs(MODELS))
    assert sum((c - 900) ** 2 / 900 for c in counts.values()) < 27.88


@settings(max_examples=60, deadline=None)
@given(n_models=st.integers(2, 8), data=st.data())
def test_sample_pairs_never_repeats(n_models, data):
    models = [f"m{i}" for i in range(n_models)]
    k = data.draw(st.integers(0, n_pairs(n_models)))
    item = data.draw(st.integers(0, 10**6))
    pairs = sample_pairs(models, k, 3, item)
    assert len(pairs) == k == len(set(pairs))
    assert all(a < b for a, b in pairs)


def test_pair_units_per_turn_and_overall():
    pairs = [("a", "b"), ("a", "c")]
    assert pair_units(pairs, 2, "per_turn") == [
        PairUnit(("a", "b"), 0),
        PairUnit(("a", "b"), 1),
        PairUnit(("a", "c"), 0),
        PairUnit(("a", "c"), 1),
    ]
    assert pair_units(pairs, 2, "overall") == [PairUnit(("a", "b"), None), PairUnit(("a", "c"), None)]
    with pytest.raises(ValueError):
        pair_units(pairs, 0, "overall")
    with pytest.raises(ValueError):
        pair_units(pairs, 2, "both")


def test_sample_pair_units_seabench_shape():
    # SeaBench: 3 pairs per two-turn question, judged per turn -> 6 tasks.
    units = sample_pair_units(MODELS, 3, 42, "q1", n_turns=2, mode="per_turn")
    assert len(units) == 6
    assert [u.pair for u in units[::2]] == sample_pairs(MODELS, 3, 42, "q1")
    assert [u.turn for u in units] == [0, 1, 0, 1, 0, 1]
