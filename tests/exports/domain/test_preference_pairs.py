import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exports.domain.preference_pairs import (
    FILTER_REASONS,
    PAIR_COLUMNS,
    PairConfig,
    build_preference_pairs,
    item_agreement,
    split_conversation,
)


def make_items(*rows):
    """rows: (item_id, prompt, category, language, register)."""
    return pd.DataFrame(
        [
            {
                "item_id": i,
                "prompt": p,
                "category": c,
                "language": lang,
                "register": r,
                "dataset_id": 7,
                "project_id": 3,
            }
            for i, p, c, lang, r in rows
        ]
    )


def make_responses(*rows):
    """rows: (response_id, item_id, model_name, messages)."""
    return pd.DataFrame(rows, columns=["response_id", "item_id", "model_name", "messages"])


def make_ratings(item_id, table):
    """table: {response_id: {criterion: [value of ann0, value of ann1, ...]}}."""
    rows = []
    for response_id, per_criterion in table.items():
        for criterion, values in per_criterion.items():
            for k, value in enumerate(values):
                rows.append((item_id, f"ann{k}", response_id, criterion, value))
    return pd.DataFrame(rows, columns=["item_id", "annotator", "response_id", "criterion", "value"])


def pair_set(pairs):
    return {
        (c, r): m
        for c, r, m in zip(
            pairs["chosen_response_id"], pairs["rejected_response_id"], pairs["margin"], strict=True
        )
    }


# One single-turn item with three responses, rated by two annotators on two criteria.
#   r1: relevance 5,4 -> 4.5   fluency 4,4 -> 4.0   sum 8.5
#   r2: relevance 3,3 -> 3.0   fluency 5,4 -> 4.5   sum 7.5
#   r3: relevance 4,4 -> 4.0   fluency 5,4 -> 4.5   sum 8.5
Q1_RATINGS = {
    "r1": {"relevance": [5, 4], "fluency": [4, 4]},
    "r2": {"relevance": [3, 3], "fluency": [5, 4]},
    "r3": {"relevance": [4, 4], "fluency": [5, 4]},
}


@pytest.fixture
def single_turn():
    items = make_items(("q1", ["Apa ibu kota Jawa Barat?"], "Culture", "ind", ""))
    responses = make_responses(
        ("r1", "q1", "m-one", ["Bandung."]),
        ("r2", "q1", "m-two", ["Surabaya."]),
        ("r3", "q1", "m-three", ["Kota Bandung."]),
    )
    return items, responses


def test_scores_orders_pairs_by_weighted_sum_and_drops_ties(single_turn):
    items, responses = single_turn
    result = build_preference_pairs(items, responses, ratings=make_ratings("q1", Q1_RATINGS))
    pairs = result.pairs
    # r1 (8.5) > r2 (7.5): margin 1.0; r3 (8.5) > r2: margin 1.0; r1 vs r3 tie (8.5 = 8.5) dropped.
    assert pair_set(pairs) == {("r1", "r2"): 1.0, ("r3", "r2"): 1.0}
    assert pairs["chosen_score"].tolist() == [8.5, 8.5]
    assert pairs["rejected_score"].tolist() == [7.5, 7.5]
    assert pairs["chosen_model"].tolist() == ["m-one", "m-three"]
    assert pairs["rejected_model"].tolist() == ["m-two", "m-two"]
    assert pairs["chosen_score_relevance"].tolist() == [4.5, 4.0]
    assert pairs["rejected_score_fluency"].tolist() == [4.5, 4.5]
    assert pairs["n_annotators"].tolist() == [2, 2]
    # Six (response, criterion) cells with two ratings each; equal in r1-fluency, r2-relevance,
    # r3-relevance: 3 cells x 2 ordered pairs agree out of 6 x 2 = 12 -> 0.5.
    assert pairs["agreement"].tolist() == [0.5, 0.5]
    assert pairs[["category", "language", "register", "dataset_id", "project_id"]].iloc[0].tolist() == [
        "Culture",
        "ind",
        "",
        7,
        3,
    ]
    counts = result.counts
    assert (counts.candidate_pairs, counts.ties_dropped, counts.below_margin_dropped, counts.pairs_out) == (
        3,
        1,
        0,
        2,
    )
    assert (counts.items_in, counts.items_kept, counts.items_out) == (1, 1, 1)
    assert list(pairs.columns[: len(PAIR_COLUMNS)]) == list(PAIR_COLUMNS)


def test_scores_weights_and_min_margin(single_turn):
    items, responses = single_turn
    config = PairConfig(weights={"relevance": 2.0, "fluency": 1.0}, min_margin=1.0)
    result = build_preference_pairs(items, responses, ratings=make_ratings("q1", Q1_RATINGS), config=config)
    # r1 = 2*4.5 + 4.0 = 13.0; r2 = 2*3.0 + 4.5 = 10.5; r3 = 2*4.0 + 4.5 = 12.5.
    # r1>r2 by 2.5, r3>r2 by 2.0 kept; r1>r3 by 0.5 < min_margin 1.0 dropped.
    assert pair_set(result.pairs) == {("r1", "r2"): 2.5, ("r3", "r2"): 2.0}
    assert (result.counts.ties_dropped, result.counts.below_margin_dropped) == (0, 1)


def test_scores_lexicographic_relevance_then_fluency(single_turn):
    items, responses = single_turn
    config = PairConfig(ordering="lexicographic")
    result = build_preference_pairs(items, responses, ratings=make_ratings("q1", Q1_RATINGS), config=config)
    # Relevance decides every pair: r1 4.5 > r3 4.0 > r2 3.0; margins are relevance differences.
    assert pair_set(result.pairs) == {("r1", "r2"): 1.5, ("r1", "r3"): 0.5, ("r3", "r2"): 1.0}
    assert result.counts.ties_dropped == 0


def test_scores_lexicographic_falls_through_to_second_criterion(single_turn):
    items, responses = single_turn
    ratings = make_ratings(
        "q1",
        {
            "r1": {"relevance": [4, 4], "fluency": [2, 3]},
            "r2": {"relevance": [4, 4], "fluency": [5, 5]},
            "r3": {"relevance": [4, 4], "fluency": [3, 2]},
        },
    )
    result = build_preference_pairs(
        items, responses, ratings=ratings, config=PairConfig(ordering="lexicographic")
    )
    # Relevance ties everywhere (4.0); fluency: r2 5.0 beats r1 2.5 and r3 2.5 by 2.5; r1 vs r3 ties.
    assert pair_set(result.pairs) == {("r2", "r1"): 2.5, ("r2", "r3"): 2.5}
    assert result.counts.ties_dropped == 1


def test_scores_leave_out_responses_missing_a_criterion(single_turn):
    items, responses = single_turn
    ratings = make_ratings("q1", Q1_RATINGS)
    ratings = ratings[~((ratings["response_id"] == "r3") & (ratings["criterion"] == "fluency"))]
    result = build_preference_pairs(items, responses, ratings=ratings)
    assert pair_set(result.pairs) == {("r1", "r2"): 1.0}
    assert (result.counts.unscored_responses, result.counts.candidate_pairs) == (1, 1)


def test_scores_ignore_criteria_without_weight(single_turn):
    items, responses = single_turn
    ratings = pd.concat(
        [make_ratings("q1", Q1_RATINGS), make_ratings("q1", {"r2": {"safety": [5, 5]}})], ignore_index=True
    )
    result = build_preference_pairs(
        items, responses, ratings=ratings, config=PairConfig(weights={"relevance": 1.0})
    )
    # Relevance only: r1 4.5, r3 4.0, r2 3.0.
    assert pair_set(result.pairs) == {("r1", "r2"): 1.5, ("r1", "r3"): 0.5, ("r3", "r2"): 1.0}
    assert "chosen_score_safety" not in result.pairs.columns


MULTI_TURN_PROMPT = [
    {"role": "system", "content": "Jawab singkat."},
    {"role": "user", "content": "Sebutkan satu buah."},
    "Warnanya apa?",
]


def test_multi_turn_prompt_is_first_user_turn_and_continuations_keep_every_turn():
    items = make_items(("q2", MULTI_TURN_PROMPT, "Chat", "jav", "krama"))
    responses = make_responses(
        ("a", "q2", "m-a", ["Pisang.", {"role": "assistant", "content": "Kuning."}]),
        ("b", "q2", "m-b", ["Apel.", "Tidak tahu."]),
    )
    ratings = make_ratings(
        "q2", {"a": {"relevance": [5, 5], "fluency": [5, 4]}, "b": {"relevance": [4, 2], "fluency": [3, 3]}}
    )
    pairs = build_preference_pairs(items, responses, ratings=ratings).pairs
    assert len(pairs) == 1
    row = pairs.iloc[0]
    assert row["prompt"] == [
        {"role": "system", "content": "Jawab singkat."},
        {"role": "user", "content": "Sebutkan satu buah."},
    ]
    assert row["chosen"] == [
        {"role": "assistant", "content": "Pisang."},
        {"role": "user", "content": "Warnanya apa?"},
        {"role": "assistant", "content": "Kuning."},
    ]
    assert row["rejected"] == [
        {"role": "assistant", "content": "Apel."},
        {"role": "user", "content": "Warnanya apa?"},
        {"role": "assistant", "content": "Tidak tahu."},
    ]
    # a: 5 + 4.5 = 9.5; b: 3 + 3 = 6.0.
    assert (row["chosen_score"], row["rejected_score"], row["margin"]) == (9.5, 6.0, 3.5)
    assert (row["language"], row["register"]) == ("jav", "krama")


def test_split_conversation_rejects_missing_turns_and_bad_roles():
    with pytest.raises(ValueError, match="2 user turn"):
        split_conversation(["u1", "u2"], ["a1"])
    with pytest.raises(ValueError, match="user turns led by system"):
        split_conversation([{"role": "assistant", "content": "x"}, "u1"], ["a1"])
    with pytest.raises(ValueError, match="assistant turns"):
        split_conversation(["u1"], [{"role": "user", "content": "a1"}])
    assert split_conversation("Halo", "Hai") == (
        [{"role": "user", "content": "Halo"}],
        [{"role": "assistant", "content": "Hai"}],
    )


def test_response_with_too_few_turns_is_named_in_the_error():
    items = make_items(("q2", ["u1", "u2"], "Chat", "ind", ""))
    responses = make_responses(("a", "q2", "m", ["x", "y"]), ("b", "q2", "m2", ["only one"]))
    ratings = make_ratings(
        "q2", {"a": {"relevance": [5], "fluency": [5]}, "b": {"relevance": [1], "fluency": [1]}}
    )
    with pytest.raises(ValueError, match="response 'b'"):
        build_preference_pairs(items, responses, ratings=ratings)


@pytest.fixture
def best_of_n():
    items = make_items(
        ("p1", ["q"], "Math", "ind", ""),
        ("p2", ["q"], "Math", "ind", ""),
        ("p3", ["q"], "Math", "ind", ""),
    )
    responses = make_responses(
        ("p1-a", "p1", "A", ["a"]),
        ("p1-b", "p1", "B", ["b"]),
        ("p1-c", "p1", "C", ["c"]),
        ("p1-d", "p1", "D", ["d"]),
        ("p2-a", "p2", "A", ["a"]),
        ("p2-b", "p2", "B", ["b"]),
        ("p3-a", "p3", "A", ["a"]),
        ("p3-b", "p3", "B", ["b"]),
    )
    picks = pd.DataFrame(
        [
            # p1: a a b (all bad) a -> a has 3 picks, b 1, all bad 1: a wins.
            ("p1", "u1", "p1-a"),
            ("p1", "u2", "p1-a"),
            ("p1", "u3", "p1-b"),
            ("p1", "u4", None),
            ("p1", "u5", "p1-a"),
            # p2: a b -> tie for most picks, dropped.
            ("p2", "u1", "p2-a"),
            ("p2", "u2", "p2-b"),
            # p3: all bad twice, b once -> all bad wins, dropped.
            ("p3", "u1", None),
            ("p3", "u2", None),
            ("p3", "u3", "p3-b"),
        ],
        columns=["item_id", "annotator", "response_id"],
    )
    return items, responses, picks


def test_best_vs_rest_pairs_the_most_picked_with_every_other_response(best_of_n):
    items, responses, picks = best_of_n
    result = build_preference_pairs(items, responses, picks=picks, config=PairConfig(strategy="best_vs_rest"))
    pairs = result.pairs
    # a (3 picks) against b (1), c (0), d (0): margins 2, 3, 3.
    assert pair_set(pairs) == {("p1-a", "p1-b"): 2.0, ("p1-a", "p1-c"): 3.0, ("p1-a", "p1-d"): 3.0}
    assert pairs["chosen_score"].tolist() == [3.0, 3.0, 3.0]
    assert pairs["rejected_score"].tolist() == [1.0, 0.0, 0.0]
    assert pairs["n_annotators"].tolist() == [5, 5, 5]
    # p1 picks a a b none a: agreeing ordered pairs 3*2 = 6 out of 5*4 = 20 -> 0.3.
    assert pairs["agreement"].tolist() == pytest.approx([0.3, 0.3, 0.3])
    counts = result.counts
    assert (counts.ties_dropped, counts.all_bad_dropped, counts.all_bad_picks) == (1, 1, 3)
    assert (counts.candidate_pairs, counts.pairs_out, counts.items_out) == (3, 3, 1)


def test_best_vs_rest_min_margin_and_tie_with_all_bad(best_of_n):
    items, responses, picks = best_of_n
    config = PairConfig(strategy="best_vs_rest", min_margin=3)
    result = build_preference_pairs(items, responses, picks=picks, config=config)
    assert pair_set(result.pairs) == {("p1-a", "p1-c"): 3.0, ("p1-a", "p1-d"): 3.0}
    assert result.counts.below_margin_dropped == 1

    # One "all bad" and one pick of a: the top is shared with "all bad", which counts as a tie.
    tie = pd.DataFrame(
        [("p2", "u1", None), ("p2", "u2", "p2-a")], columns=["item_id", "annotator", "response_id"]
    )
    result = build_preference_pairs(items, responses, picks=tie, config=PairConfig(strategy="best_vs_rest"))
    assert (result.counts.pairs_out, result.counts.ties_dropped, result.counts.all_bad_dropped) == (0, 1, 0)


def test_best_vs_rest_reports_rating_means_when_ratings_are_given(best_of_n):
    items, responses, picks = best_of_n
    ratings = make_ratings(
        "p1", {"p1-a": {"relevance": [4, 5], "fluency": [4]}, "p1-b": {"relevance": [2, 2]}}
    )
    result = build_preference_pairs(
        items, responses, picks=picks, ratings=ratings, config=PairConfig(strategy="best_vs_rest")
    )
    first = result.pairs.iloc[0]
    assert (first["chosen_score_relevance"], first["rejected_score_relevance"]) == (4.5, 2.0)
    assert first["chosen_score_fluency"] == 4.0
    assert math.isnan(first["rejected_score_fluency"])


@pytest.fixture
def pairwise():
    items = make_items(("s1", ["u1", "u2"], "Reasoning", "ind", ""))
    responses = make_responses(
        ("x", "s1", "MX", ["x1", "x2"]),
        ("y", "s1", "MY", ["y1", "y2"]),
        ("z", "s1", "MZ", ["z1", "z2"]),
    )
    votes = pd.DataFrame(
        [
            # (x, y): A for x; B with the sides swapped is also x; one tie -> x 2, y 0, tie 1.
            ("s1", "h1", "x", "y", "A"),
            ("s1", "h2", "y", "x", "B"),
            ("s1", "h3", "x", "y", "tie"),
            # (x, z): one vote each -> no majority, dropped as a tie.
            ("s1", "h1", "x", "z", "A"),
            ("s1", "h2", "x", "z", "B"),
            # (y, z): both bad twice, z once -> dropped as both bad.
            ("s1", "h1", "y", "z", "both_bad"),
            ("s1", "h2", "z", "y", "both_bad"),
            ("s1", "h3", "z", "y", "A"),
        ],
        columns=["item_id", "annotator", "response_a", "response_b", "vote"],
    )
    return items, responses, votes


def test_pairwise_majority_keeps_clear_majorities_only(pairwise):
    items, responses, votes = pairwise
    result = build_preference_pairs(
        items, responses, votes=votes, config=PairConfig(strategy="pairwise_majority")
    )
    pairs = result.pairs
    assert pair_set(pairs) == {("x", "y"): 2.0}
    row = pairs.iloc[0]
    assert (row["chosen_score"], row["rejected_score"], row["n_annotators"]) == (2.0, 0.0, 3)
    assert row["chosen"] == [
        {"role": "assistant", "content": "x1"},
        {"role": "user", "content": "u2"},
        {"role": "assistant", "content": "x2"},
    ]
    # Canonical outcomes per pair: (x,y) x x tie -> 2 agreeing ordered pairs of 6; (x,z) x z -> 0 of 2;
    # (y,z) both_bad both_bad z -> 2 of 6. Pooled: 4 / 14.
    assert row["agreement"] == pytest.approx(4 / 14)
    counts = result.counts
    assert (counts.candidate_pairs, counts.ties_dropped, counts.both_bad_dropped, counts.pairs_out) == (
        3,
        1,
        1,
        1,
    )


def test_pairwise_tie_majority_is_dropped(pairwise):
    items, responses, _ = pairwise
    votes = pd.DataFrame(
        [("s1", "h1", "x", "y", "tie"), ("s1", "h2", "x", "y", "tie"), ("s1", "h3", "x", "y", "A")],
        columns=["item_id", "annotator", "response_a", "response_b", "vote"],
    )
    result = build_preference_pairs(
        items, responses, votes=votes, config=PairConfig(strategy="pairwise_majority")
    )
    assert (result.counts.pairs_out, result.counts.ties_dropped) == (0, 1)


def test_pairwise_votes_per_turn_pool_or_select(pairwise):
    items, responses, _ = pairwise
    votes = pd.DataFrame(
        [
            ("s1", "h1", "x", "y", "A", 1),
            ("s1", "h2", "x", "y", "A", 1),
            ("s1", "h1", "x", "y", "B", 2),
            ("s1", "h2", "x", "y", "B", 2),
            ("s1", "h3", "x", "y", "B", 2),
        ],
        columns=["item_id", "annotator", "response_a", "response_b", "vote", "turn"],
    )
    pooled = build_preference_pairs(
        items, responses, votes=votes, config=PairConfig(strategy="pairwise_majority")
    )
    # Pooled: x 2 votes (turn 1), y 3 votes (turn 2) -> y wins by 1.
    assert pair_set(pooled.pairs) == {("y", "x"): 1.0}
    first = build_preference_pairs(
        items, responses, votes=votes, config=PairConfig(strategy="pairwise_majority", turn=1)
    )
    assert pair_set(first.pairs) == {("x", "y"): 2.0}
    assert first.pairs["n_annotators"].tolist() == [2]


def test_reliability_weights_flip_the_plain_majority(pairwise):
    items, responses, _ = pairwise
    votes = pd.DataFrame(
        [
            # (x, y): h1 for x, h2 and h3 for y: plain majority y 2 - 1; weighted x 0.9 > y 0.3 + 0.3 = 0.6.
            ("s1", "h1", "x", "y", "A"),
            ("s1", "h2", "x", "y", "B"),
            ("s1", "h3", "y", "x", "A"),
            # (x, z): h1 tie, h2 and h3 for z: plain z 2 - 0 (and 1 tie); weighted tie 0.9 > z 0.6: dropped.
            ("s1", "h1", "x", "z", "tie"),
            ("s1", "h2", "z", "x", "A"),
            ("s1", "h3", "x", "z", "B"),
        ],
        columns=["item_id", "annotator", "response_a", "response_b", "vote"],
    )
    config = PairConfig(strategy="pairwise_majority")
    plain = build_preference_pairs(items, responses, votes=votes, config=config)
    assert pair_set(plain.pairs) == {("y", "x"): 1.0, ("z", "x"): 2.0}
    weights = {"h1": 0.9, "h2": 0.3, "h3": 0.3}
    weighted = build_preference_pairs(items, responses, votes=votes, config=config, vote_weights=weights)
    assert set(pair_set(weighted.pairs)) == {("x", "y")}
    row = weighted.pairs.iloc[0]
    assert (row["chosen_score"], row["rejected_score"]) == pytest.approx((0.9, 0.6))
    assert row["margin"] == pytest.approx(0.3)
    assert row["n_annotators"] == 3  # annotators are still counted, not weighed
    assert (weighted.counts.candidate_pairs, weighted.counts.ties_dropped) == (2, 1)


def test_reliability_weights_equal_sums_are_a_tie_and_weights_are_checked(pairwise):
    items, responses, _ = pairwise
    votes = pd.DataFrame(
        [("s1", "h1", "x", "y", "A"), ("s1", "h2", "x", "y", "B"), ("s1", "h3", "x", "y", "B")],
        columns=["item_id", "annotator", "response_a", "response_b", "vote"],
    )
    config = PairConfig(strategy="pairwise_majority")
    # 0.1 + 0.2 and 0.3 differ by float rounding only: a tie, not a win for y.
    even = build_preference_pairs(
        items, responses, votes=votes, config=config, vote_weights={"h1": 0.3, "h2": 0.1, "h3": 0.2}
    )
    assert (even.counts.pairs_out, even.counts.ties_dropped) == (0, 1)
    with pytest.raises(ValueError, match="no weight for annotator.*h3"):
        build_preference_pairs(
            items, responses, votes=votes, config=config, vote_weights={"h1": 0.5, "h2": 0.5}
        )
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        build_preference_pairs(
            items, responses, votes=votes, config=config, vote_weights={"h1": -1, "h2": 1, "h3": 1}
        )
    with pytest.raises(ValueError, match="pairwise_majority strategy only"):
        build_preference_pairs(
            items,
            responses,
            votes=votes,
            picks=pd.DataFrame({"item_id": ["s1"], "annotator": ["h1"], "response_id": ["x"]}),
            config=PairConfig(strategy="best_vs_rest"),
            vote_weights={"h1": 1.0},
        )


def test_item_filters_count_the_first_failing_reason():
    items = make_items(
        ("i1", ["q"], "Math", "ind", ""),
        ("i2", ["q"], "Safety", "ind", ""),
        ("i3", ["q"], "Math", "sun", "lemes"),
        ("i4", ["q"], "Math", "ind", ""),
        ("i5", ["q"], "Math", "ind", ""),
        ("i6", ["q"], "Math", "ind", ""),
    )
    responses = make_responses(
        *[(f"{i}-{k}", i, f"m{k}", ["a"]) for i in ("i1", "i2", "i3", "i4", "i5", "i6") for k in (1, 2)]
    )
    ratings = pd.concat(
        [
            # i1: three annotators agreeing everywhere -> agreement 1.0.
            make_ratings(
                "i1",
                {
                    "i1-1": {"relevance": [5, 5, 5], "fluency": [5, 5, 5]},
                    "i1-2": {"relevance": [2, 2, 2], "fluency": [3, 3, 3]},
                },
            ),
            make_ratings(
                "i2",
                {
                    "i2-1": {"relevance": [5, 5, 5], "fluency": [5, 5, 5]},
                    "i2-2": {"relevance": [1, 1, 1], "fluency": [1, 1, 1]},
                },
            ),
            make_ratings(
                "i3",
                {
                    "i3-1": {"relevance": [5, 5, 5], "fluency": [5, 5, 5]},
                    "i3-2": {"relevance": [1, 1, 1], "fluency": [1, 1, 1]},
                },
            ),
            # i4: two annotators only.
            make_ratings(
                "i4",
                {
                    "i4-1": {"relevance": [5, 4], "fluency": [5, 4]},
                    "i4-2": {"relevance": [1, 1], "fluency": [1, 1]},
                },
            ),
            # i5: three annotators who never agree on a value -> agreement 0.
            make_ratings(
                "i5",
                {
                    "i5-1": {"relevance": [5, 4, 3], "fluency": [5, 4, 3]},
                    "i5-2": {"relevance": [1, 2, 3], "fluency": [1, 2, 3]},
                },
            ),
            # i6: no ratings at all.
        ],
        ignore_index=True,
    )
    config = PairConfig(categories=["Math"], languages=["ind"], min_annotators=3, min_agreement=0.5)
    result = build_preference_pairs(items, responses, ratings=ratings, config=config)
    assert result.counts.filtered_items == {
        "category": 1,  # i2 (Safety)
        "language": 1,  # i3 (Math, but sun)
        "register": 0,
        "no_annotations": 1,  # i6
        "min_annotators": 1,  # i4 (two annotators)
        "agreement_undefined": 0,
        "min_agreement": 1,  # i5 (agreement 0 < 0.5)
    }
    assert set(result.counts.filtered_items) == set(FILTER_REASONS)
    assert result.pairs["item_id"].unique().tolist() == ["i1"]
    assert result.counts.items_kept == 1


def test_register_filter_can_keep_items_without_register():
    items = make_items(
        ("k", ["q"], "Chat", "jav", "krama"),
        ("n", ["q"], "Chat", "jav", "ngoko"),
        ("e", ["q"], "Chat", "ind", None),
    )
    responses = make_responses(*[(f"{i}-{k}", i, f"m{k}", ["a"]) for i in ("k", "n", "e") for k in (1, 2)])
    ratings = pd.concat(
        [
            make_ratings(
                i,
                {f"{i}-1": {"relevance": [5], "fluency": [5]}, f"{i}-2": {"relevance": [1], "fluency": [1]}},
            )
            for i in ("k", "n", "e")
        ],
        ignore_index=True,
    )
    result = build_preference_pairs(
        items, responses, ratings=ratings, config=PairConfig(registers=["krama", ""])
    )
    assert result.pairs["item_id"].tolist() == ["k", "e"]
    assert result.pairs["register"].tolist() == ["krama", ""]
    assert result.counts.filtered_items["register"] == 1


def test_min_agreement_drops_items_without_a_repeated_judgement(single_turn):
    items, responses = single_turn
    ratings = make_ratings(
        "q1", {"r1": {"relevance": [5], "fluency": [5]}, "r2": {"relevance": [1], "fluency": [1]}}
    )
    result = build_preference_pairs(items, responses, ratings=ratings, config=PairConfig(min_agreement=0.0))
    assert result.counts.filtered_items["agreement_undefined"] == 1
    assert result.counts.pairs_out == 0
    assert list(result.pairs.columns[: len(PAIR_COLUMNS)]) == list(PAIR_COLUMNS)


def test_item_agreement_pools_cells():
    cells = pd.DataFrame(
        {
            "item_id": ["a", "a", "a", "a", "a", "b", "b"],
            "target": [1, 1, 1, 2, 2, 1, 2],
            "value": [3, 3, 4, 5, 5, 1, 2],
        }
    )
    share = item_agreement(cells, cell_keys=["item_id", "target"], value_col="value")
    # a: target 1 -> values 3 3 4: 2 agreeing of 6 ordered pairs; target 2 -> 5 5: 2 of 2 -> 4 / 8.
    assert share["a"] == 0.5
    # b: no target judged twice -> undefined.
    assert math.isnan(share["b"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "borda"}, "unknown strategy"),
        ({"ordering": "random"}, "unknown ordering"),
        ({"weights": {}}, "at least one criterion"),
        ({"min_margin": -1}, "min_margin"),
        ({"min_annotators": 0}, "min_annotators"),
        ({"min_agreement": 1.5}, "min_agreement"),
    ],
)
def test_config_rejects_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PairConfig(**kwargs)


def test_bad_inputs_are_rejected(single_turn, pairwise):
    items, responses = single_turn
    ratings = make_ratings("q1", Q1_RATINGS)
    with pytest.raises(ValueError, match="needs picks"):
        build_preference_pairs(items, responses, ratings=ratings, config=PairConfig(strategy="best_vs_rest"))
    with pytest.raises(ValueError, match="more than one value"):
        build_preference_pairs(items, responses, ratings=pd.concat([ratings, ratings.iloc[:1]]))
    foreign = ratings.assign(item_id=ratings["item_id"].where(ratings["response_id"] != "r1", "q9"))
    with pytest.raises(ValueError, match="another item"):
        build_preference_pairs(items, responses, ratings=foreign)
    with pytest.raises(ValueError, match="not in responses"):
        build_preference_pairs(items, responses, ratings=ratings.assign(response_id="r404"))
    with pytest.raises(ValueError, match="duplicate item_id"):
        build_preference_pairs(pd.concat([items, items]), responses, ratings=ratings)
    items_p, responses_p, votes = pairwise
    with pytest.raises(ValueError, match="not in A, B, tie, both_bad"):
        build_preference_pairs(
            items_p,
            responses_p,
            votes=votes.assign(vote="C"),
            config=PairConfig(strategy="pairwise_majority"),
        )
    with pytest.raises(ValueError, match="compared with itself"):
        build_preference_pairs(
            items_p,
            responses_p,
            votes=votes.assign(response_b=votes["response_a"]),
            config=PairConfig(strategy="pairwise_majority"),
        )


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.lists(st.integers(1, 5), min_size=2, max_size=2), min_size=2, max_size=2),
        min_size=2,
        max_size=5,
    )
)
def test_scores_every_pair_is_either_kept_or_a_tie(table):
    """Per item: kept pairs + ties = C(n, 2), chosen beats rejected by the margin, integer-valued ids."""
    n = len(table)
    items = make_items(("it", ["q"], "c", "ind", ""))
    responses = make_responses(*[(k, "it", f"m{k}", ["a"]) for k in range(n)])
    ratings = make_ratings("it", {k: {"relevance": table[k][0], "fluency": table[k][1]} for k in range(n)})
    result = build_preference_pairs(items, responses, ratings=ratings)
    scores = {k: np.mean(table[k][0]) + np.mean(table[k][1]) for k in range(n)}
    expected = {
        (a, b) if scores[a] > scores[b] else (b, a)
        for a, b in combinations(range(n), 2)
        if scores[a] != scores[b]
    }
    assert (
        set(zip(result.pairs["chosen_response_id"], result.pairs["rejected_response_id"], strict=True))
        == expected
    )
    assert result.counts.pairs_out + result.counts.ties_dropped == n * (n - 1) // 2
    margins = result.pairs["chosen_score"] - result.pairs["rejected_score"]
    assert np.allclose(margins, result.pairs["margin"]) and (result.pairs["margin"] > 0).all()
