import hashlib
import os
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.domain.blinding import (
    ORDER_KEY_MODULUS,
    HashStream,
    annotator_order_slot,
    check_permutation,
    derive_key,
    invert_permutation,
    map_pairwise_vote,
    response_permutation,
    rotate_order_key,
    shown_labels,
    side_swap,
    task_order_key,
    task_shuffle_key,
    task_shuffle_keys,
    to_canonical,
    to_shown,
)

REPO_ROOT = Path(__file__).resolve().parents[3]


def chi_square(counts: Counter, categories: list, total: int) -> float:
    expected = total / len(categories)
    return sum((counts[c] - expected) ** 2 / expected for c in categories)


# --- the hashing scheme is pinned, so stored permutations can be recomputed after any upgrade -----------


def test_derive_key_is_blake2b_over_length_prefixed_text():
    # 4-byte big-endian length, then UTF-8 text, for the purpose and each part in turn.
    material = b"".join(len(t).to_bytes(4, "big") + t for t in (b"response-order", b"7", b"101", b"ann-1"))
    expected = hashlib.blake2b(material, digest_size=32, person=b"timbang.v1").digest()
    assert derive_key("response-order", 7, 101, "ann-1") == expected


def test_ids_compare_as_text():
    task = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert response_permutation(7, 101, 3, 5) == response_permutation("7", "101", "3", 5)
    assert response_permutation(7, task, 3, 5) == response_permutation(7, str(task), 3, 5)


def test_length_prefix_keeps_parts_apart():
    assert derive_key("x", "1", "23") != derive_key("x", "12", "3")


@pytest.mark.parametrize("bad", [True, 1.5, None, b"1"])
def test_seed_parts_must_be_ids(bad):
    with pytest.raises(TypeError):
        derive_key("x", bad)


def test_stream_words_are_blake2b_counter_blocks():
    key = derive_key("anything", 1)
    block0 = hashlib.blake2b((0).to_bytes(8, "big"), key=key, digest_size=64).digest()
    block1 = hashlib.blake2b((1).to_bytes(8, "big"), key=key, digest_size=64).digest()
    stream = HashStream(key)
    words = [stream.next_u64() for _ in range(9)]
    assert words[0] == int.from_bytes(block0[:8], "big")
    assert words[7] == int.from_bytes(block0[56:], "big")
    assert words[8] == int.from_bytes(block1[:8], "big")


def test_permutation_is_fisher_yates_over_the_stream():
    stream = HashStream(derive_key("response-order", 7, 101, "ann-1"))
    order = [0, 1, 2, 3, 4]
    for i in range(4, 0, -1):
        j = stream.randbelow(i + 1)
        order[i], order[j] = order[j], order[i]
    assert response_permutation(7, 101, "ann-1", 5) == order


def test_fixed_example_permutations():
    # Pinned: a change here means every stored assignment permutation would stop matching its seed.
    assert response_permutation(7, 101, "ann-1", 5) == [1, 0, 2, 3, 4]
    assert response_permutation(7, 101, "ann-2", 5) == [0, 4, 2, 3, 1]
    assert side_swap(7, 101, "ann-1") is True


def test_same_permutation_in_a_fresh_process_with_another_hash_seed():
    code = (
        "from annotation.domain.blinding import response_permutation, task_order_key;"
        "print(response_permutation(7, 101, 'ann-1', 5), task_order_key(7, 'ann-1', 101))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == f"{response_permutation(7, 101, 'ann-1', 5)} {task_order_key(7, 'ann-1', 101)}"


# --- properties ------------------------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**40),
    task=st.integers(0, 10**9),
    annotator=st.text(min_size=1, max_size=12),
    n=st.integers(1, 9),
)
def test_permutation_is_a_permutation_and_round_trips(seed, task, annotator, n):
    perm = response_permutation(seed, task, annotator, n)
    assert sorted(perm) == list(range(n))
    assert perm == response_permutation(seed, task, annotator, n)
    inverse = invert_permutation(perm)
    for shown in range(n):
        canonical = to_canonical(perm, shown)
        assert to_shown(perm, canonical) == shown
        assert inverse[canonical] == shown


def test_permutations_differ_across_annotators_and_tasks():
    by_annotator = {tuple(response_permutation(7, 101, f"ann-{i}", 5)) for i in range(30)}
    by_task = {tuple(response_permutation(7, t, "ann-1", 5)) for t in range(30)}
    # 30 uniform draws from 120 permutations give ~26.7 distinct on average; 20 is far in the tail.
    assert len(by_annotator) >= 20
    assert len(by_task) >= 20


def test_first_position_is_uniform_over_annotators():
    total = 6000
    firsts = Counter(response_permutation(2024, 55, a, 5)[0] for a in range(total))
    # Chi-square with 4 degrees of freedom: 18.47 is the 0.1% critical value.
    assert chi_square(firsts, list(range(5)), total) < 18.47


def test_all_orders_of_three_are_equally_likely():
    total = 6000
    orders = Counter(tuple(response_permutation(9, "task", a, 3)) for a in range(total))
    categories = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    assert set(orders) == set(categories)
    # 5 degrees of freedom: 20.52 is the 0.1% critical value.
    assert chi_square(orders, categories, total) < 20.52


def test_side_swap_is_the_two_response_permutation_and_fair():
    swaps = [side_swap(3, 17, a) for a in range(4000)]
    for a in range(50):
        assert response_permutation(3, 17, a, 2) == ([1, 0] if swaps[a] else [0, 1])
    # Binomial(4000, 1/2): sd = sqrt(4000)/2 = 31.6; allow 4 sd.
    assert abs(sum(swaps) - 2000) < 4 * 31.7


def test_randbelow_and_sample_bounds():
    stream = HashStream(derive_key("t", 1))
    assert all(0 <= stream.randbelow(3) < 3 for _ in range(200))
    assert sorted(stream.sample(range(5), 5)) == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError):
        stream.randbelow(0)
    with pytest.raises(ValueError):
        stream.sample([1, 2], 3)


# --- mapping between shown and canonical -------------------------------------------------------------


def test_to_canonical_and_back_on_a_hand_example():
    perm = [2, 0, 1]  # shown 0 is canonical 2, shown 1 is canonical 0, shown 2 is canonical 1
    assert [to_canonical(perm, s) for s in range(3)] == [2, 0, 1]
    assert [to_shown(perm, c) for c in range(3)] == [1, 2, 0]
    assert invert_permutation(perm) == [1, 2, 0]
    with pytest.raises(IndexError):
        to_canonical(perm, 3)
    with pytest.raises(IndexError):
        to_shown(perm, 5)


def test_check_permutation():
    check_permutation([1, 0, 2], 3)
    for bad, n in [([0, 0, 1], 3), ([0, 1], 3), ([1, 2], None)]:
        with pytest.raises(ValueError):
            check_permutation(bad, n)


def test_pairwise_votes_map_back_when_sides_were_swapped():
    assert map_pairwise_vote("A", swapped=True) == "B"
    assert map_pairwise_vote("B", swapped=True) == "A"
    assert map_pairwise_vote("A", swapped=False) == "A"
    assert map_pairwise_vote("tie", swapped=True) == "tie"
    assert map_pairwise_vote("both_bad", swapped=True) == "both_bad"
    for vote in ("A", "B", "tie", "both_bad"):
        assert map_pairwise_vote(map_pairwise_vote(vote, True), True) == vote
    with pytest.raises(ValueError):
        map_pairwise_vote("a", swapped=False)


def test_shown_labels():
    assert shown_labels(3, "id") == ["Respons 1", "Respons 2", "Respons 3"]
    assert shown_labels(2, "en") == ["Response 1", "Response 2"]
    assert shown_labels(2, "id", pairwise=True) == ["A", "B"]
    with pytest.raises(ValueError):
        shown_labels(3, "en", pairwise=True)
    with pytest.raises(ValueError):
        shown_labels(2, "jv")


# --- task order --------------------------------------------------------------------------------------


def test_rotate_order_key_by_hand():
    assert rotate_order_key(5, 3) == 2
    assert rotate_order_key(3, 5) == ORDER_KEY_MODULUS - 2
    assert rotate_order_key(7, 7) == 0


def test_shuffle_keys_fit_a_signed_bigint():
    keys = [k for t in range(200) for k in task_shuffle_keys(1, t)]
    assert all(0 <= k < 2**63 for k in keys)
    assert len(set(keys)) == len(keys)
    assert task_shuffle_keys(1, 5, n_slots=3) == [task_shuffle_key(1, 5, s) for s in range(3)]


def test_task_order_equals_the_two_range_scans_a_database_would_run():
    tasks = list(range(1, 41))
    for annotator in ("ann-1", "ann-2", "ann-3"):
        where = annotator_order_slot(11, annotator)
        keyed = sorted((task_shuffle_key(11, t, where.slot), t) for t in tasks)
        from_index = [t for k, t in keyed if k >= where.offset] + [t for k, t in keyed if k < where.offset]
        in_python = sorted(tasks, key=lambda t, a=annotator: (task_order_key(11, a, t), t))
        assert in_python == from_index


def test_task_orders_are_reproducible_and_differ_across_annotators():
    tasks = list(range(30))
    orders = {a: sorted(tasks, key=lambda t, a=a: task_order_key(5, a, t)) for a in range(12)}
    assert orders[0] == sorted(tasks, key=lambda t: task_order_key(5, 0, t))
    assert all(sorted(order) == tasks for order in orders.values())
    assert len({tuple(order) for order in orders.values()}) == 12
    # First tasks are spread out rather than everyone starting on the same one.
    assert len({order[0] for order in orders.values()}) >= 8


def test_annotators_spread_over_slots():
    total = 4000
    slots = Counter(annotator_order_slot(1, a).slot for a in range(total))
    # 7 degrees of freedom: 24.32 is the 0.1% critical value.
    assert chi_square(slots, list(range(8)), total) < 24.32
