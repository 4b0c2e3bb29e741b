"""Uniform and active pair sampling: probabilities, the floor, hand-checked gains, seeded choices, and the
live ratings and vote counts the active sampler gets from an arena's battles."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analytics.domain.leaderboard import leaderboard_fit
from arena.domain.sampling import (
    RATING_SCALE,
    active_gains,
    active_probabilities,
    choose_pair,
    live_ratings,
    pair_list,
    sample_pair,
    uniform_probabilities,
    vote_matrix,
)

MODELS = ["m0", "m1", "m2", "m3"]


def test_uniform_gives_every_pair_the_same_probability():
    assert pair_list(4) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    np.testing.assert_allclose(uniform_probabilities(4), 1 / 6)
    choice = sample_pair(MODELS, np.random.default_rng(0))
    assert choice.probability == pytest.approx(1 / 6) and choice.sampler == "uniform"
    assert choice.model_a != choice.model_b and {choice.model_a, choice.model_b} <= set(MODELS)


def test_uniform_draws_every_pair_and_both_sides_about_equally():
    rng = np.random.default_rng(1)
    counts: dict[tuple[str, str], int] = {}
    for _ in range(12_000):
        choice = sample_pair(MODELS, rng)
        counts[(choice.model_a, choice.model_b)] = counts.get((choice.model_a, choice.model_b), 0) + 1
    assert len(counts) == 12  # every ordered pair
    # 12,000 / 12 = 1,000 each; a binomial standard deviation is about 30.
    assert all(880 < n < 1120 for n in counts.values())


def test_two_models_gain_by_hand():
    # One pair at equal ratings: w = p (1 - p) = 1/4, n = the prior's 1 vote, I = n w u u^T with u = (1, -1).
    # Model 0's rating relative to the mean is c = (1/2, -1/2) = u / 2: var = 1 / (4 n w) = 1 (sd 1); one
    # more vote: 1/2 (sd sqrt 1/2). The two intervals overlap, so both models count: 2 (1 - sqrt 1/2).
    gains = active_gains(np.zeros((2, 2)))
    assert gains == pytest.approx([2 - math.sqrt(2)])
    # After 3 votes (n = 4): var 1/4, next 1/5: gain 2 (1/2 - sqrt(1/5)) = 1 - sqrt(4/5).
    assert active_gains(np.array([[0, 3], [3, 0]])) == pytest.approx([1 - math.sqrt(0.8)])


def test_active_prefers_the_close_pair_that_has_few_votes():
    # Ratings 1200, 1000, 990: the 1000-990 neighbours are the close pair; give it few votes, the rest many.
    ratings = np.array([1200.0, 1000.0, 990.0])
    votes = np.array([[0, 200, 200], [200, 0, 5], [200, 5, 0]])
    gains = active_gains(votes, ratings)
    assert int(np.argmax(gains)) == pair_list(3).index((1, 2))
    probabilities = active_probabilities(votes, ratings, floor_share=0.3)
    assert probabilities.sum() == pytest.approx(1.0)
    assert probabilities[pair_list(3).index((1, 2))] == pytest.approx(0.7 + 0.1)
    assert probabilities.min() == pytest.approx(0.1)  # the floor: 0.3 spread over 3 pairs


def test_active_choice_reports_its_probability_and_is_seeded():
    ratings = np.array([1100.0, 1050.0, 1000.0, 950.0])
    votes = np.full((4, 4), 10.0) - np.diag(np.full(4, 10.0))
    probabilities = active_probabilities(votes, ratings)
    first = [choose_pair(MODELS, probabilities, np.random.default_rng(7), sampler="active") for _ in range(3)]
    assert first[0] == first[1] == first[2]
    picked = pair_list(4).index(
        tuple(sorted((MODELS.index(first[0].model_a), MODELS.index(first[0].model_b))))
    )
    assert first[0].probability == pytest.approx(probabilities[picked])
    assert set(np.round(probabilities, 12)) == {round(0.2 / 6, 12), round(0.8 + 0.2 / 6, 12)}


def test_every_pair_keeps_being_sampled():
    # Even when one pair has by far the largest gain, the others are drawn at the floor rate.
    ratings = np.array([1000.0, 1000.0, 400.0, 300.0])
    votes = np.array([[0, 0, 500, 500], [0, 0, 500, 500], [500, 500, 0, 500], [500, 500, 500, 0]])
    rng = np.random.default_rng(3)
    seen = set()
    for _ in range(600):
        choice = sample_pair(MODELS, rng, sampler="active", votes=votes, ratings=ratings, floor_share=0.2)
        seen.add(frozenset((choice.model_a, choice.model_b)))
    assert len(seen) == 6


def test_gain_is_the_exact_fall_of_the_overlapping_models_deviations():
    # Sherman-Morrison against recomputing the inverse with the vote added; weights by hand from the
    # Wald intervals of the votes so far.
    rng = np.random.default_rng(2)
    k = 5
    votes = rng.integers(0, 20, (k, k))
    votes = np.triu(votes, 1) + np.triu(votes, 1).T
    ratings = np.array([1150.0, 1040.0, 1030.0, 1000.0, 700.0])
    theta = ratings / RATING_SCALE

    def rating_sds(counts):
        info = np.zeros((k, k))
        for i, j in pair_list(k):
            p = 1 / (1 + math.exp(-(theta[i] - theta[j])))
            u = np.zeros(k)
            u[i], u[j] = 1, -1
            info += (counts[i, j] + 1.0) * p * (1 - p) * np.outer(u, u)
        cov = np.linalg.pinv(info)
        centred = np.eye(k) - 1 / k
        return np.sqrt(np.diag(centred @ cov @ centred))

    sd = rating_sds(votes)
    weights = np.zeros(k)
    for better, worse in zip(range(k - 1), range(1, k), strict=True):  # ratings are in order already
        if theta[better] - 1.96 * sd[better] <= theta[worse] + 1.96 * sd[worse]:
            weights[[better, worse]] += 1
    assert 0 < weights.sum() < 2 * (k - 1)  # some neighbours overlap, not all
    gains = active_gains(votes, ratings)
    for q, (i, j) in enumerate(pair_list(k)):
        more = votes.astype(float).copy()
        more[i, j] += 1
        more[j, i] += 1
        assert gains[q] == pytest.approx(weights @ (sd - rating_sds(more)), abs=1e-9)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: uniform_probabilities(1), "at least two models"),
        (lambda: active_gains(np.array([[0, 1], [2, 0]])), "symmetric"),
        (lambda: active_gains(np.zeros((2, 2)), np.array([1.0, np.nan])), "finite"),
        (lambda: active_probabilities(np.zeros((2, 2)), floor_share=0), "floor_share"),
        (lambda: choose_pair(["a", "b"], np.array([0.5]), np.random.default_rng(0), sampler="x"), "sampler"),
        (
            lambda: choose_pair(["a", "b"], np.array([0.5]), np.random.default_rng(0), sampler="uniform"),
            "sum to 1",
        ),
        (lambda: sample_pair(["a", "a"], np.random.default_rng(0)), "distinct"),
        (lambda: live_ratings(2, [(0, 0, "A", 1)]), "row 1: models 0 and 0"),
        (lambda: live_ratings(2, [(0, 1, "A", 1), (0, 2, "B", 1)]), "row 2: models 0 and 2"),
        (lambda: vote_matrix(2, [(0, 1, "model_a", 1)]), "row 1: vote 'model_a'"),
        (lambda: vote_matrix(2, [(0, 1, "A", -1)]), "0 or more"),
    ],
)
def test_bad_arguments_raise(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- live ratings and votes from an arena's battles ------------------------------------------------------

LOG10_3 = 400 * math.log10(3)


def test_live_ratings_by_hand_ties_half_and_both_bad_a_tie():
    # Model 0 against 1: 2 wins, 1 tie, 1 both-bad (a tie) = 3 of 4 with half wins: odds 3, a difference of
    # 400 log10 3 = 190.85 points, centred on 0. Model 2 never battled: it stands at the mean (0).
    rows = [(0, 1, "A", 1), (1, 0, "B", 1), (0, 1, "tie", 1), (1, 0, "both_bad", 1)]
    ratings = live_ratings(3, rows)
    assert ratings == pytest.approx([LOG10_3 / 2, -LOG10_3 / 2, 0.0], abs=1e-9)
    np.testing.assert_array_equal(vote_matrix(3, rows), [[0, 4, 0], [4, 0, 0], [0, 0, 0]])


def test_live_ratings_without_a_finite_estimate_stand_at_zero():
    # Model 0 only ever won: no finite rating exists for it; with it out, one model is left: nothing to rate.
    assert live_ratings(2, [(0, 1, "A", 5)]) == pytest.approx([0.0, 0.0])
    assert live_ratings(3, []) == pytest.approx([0.0, 0.0, 0.0])
    # Models 0 and 1 rated against each other; model 2 only lost: it is left at their mean.
    rows = [(0, 1, "A", 3), (0, 1, "B", 1), (2, 0, "B", 4)]
    assert live_ratings(3, rows) == pytest.approx([LOG10_3 / 2, -LOG10_3 / 2, 0.0], abs=1e-9)


def test_live_ratings_are_the_leaderboards_point_ratings():
    rng = np.random.default_rng(11)
    names = ["m0", "m1", "m2", "m3", "m4"]
    strength = np.array([1.2, 0.6, 0.5, 0.0, -0.8])
    frame_rows, outcome_rows = [], []
    for _ in range(600):
        a, b = rng.choice(5, size=2, replace=False)
        u = rng.random()
        p_a = 1 / (1 + math.exp(-(strength[a] - strength[b])))
        vote = "tie" if u < 0.1 else ("both_bad" if u < 0.15 else ("A" if rng.random() < p_a else "B"))
        winner = {"A": "model_a", "B": "model_b", "tie": "tie", "both_bad": "tie (bothbad)"}[vote]
        frame_rows.append((names[a], names[b], winner))
        outcome_rows.append((int(a), int(b), vote, 1))
    board = leaderboard_fit(
        pd.DataFrame(frame_rows, columns=["model_a", "model_b", "winner"]), bootstrap=0, vote_drop=False
    )
    expected = {row.model: row.rating - 1000.0 for row in board.models}
    ratings = live_ratings(5, outcome_rows)
    assert ratings == pytest.approx([expected[name] for name in names], abs=1e-9)


def _history(per_pair: dict[tuple[int, int], tuple[int, int, int]]) -> list[tuple[int, int, str, int]]:
    rows = []
    for (a, b), (wins, losses, ties) in per_pair.items():
        rows += [(a, b, "A", wins), (a, b, "B", losses), (a, b, "tie", ties)]
    return rows


# Four models, 0 well above 1 and 2, which are close, well above 3: 40 votes on every pair but the close
# one, which has had 70. Votes alone favour a pair with fewer votes; the ratings show that only 1 and 2
# still overlap.
CLOSE_PAIR_HISTORY = _history(
    {
        (0, 1): (36, 4, 0),
        (0, 2): (36, 4, 0),
        (0, 3): (39, 1, 0),
        (1, 2): (36, 32, 2),
        (1, 3): (36, 4, 0),
        (2, 3): (36, 4, 0),
    }
)


def test_live_ratings_point_the_active_sampler_at_the_pair_whose_intervals_overlap():
    votes = vote_matrix(4, CLOSE_PAIR_HISTORY)
    ratings = live_ratings(4, CLOSE_PAIR_HISTORY)
    assert ratings[0] > ratings[1] > ratings[2] > ratings[3]
    assert ratings[1] - ratings[2] < 20 and ratings[0] - ratings[1] > 300 and ratings[2] - ratings[3] > 300
    close = pair_list(4).index((1, 2))
    without = active_gains(votes)
    assert without[close] < without.max() - 1e-4  # votes alone: another pair first
    probabilities = active_probabilities(votes, ratings)
    assert int(np.argmax(probabilities)) == close
    assert probabilities[close] == pytest.approx(0.8 + 0.2 / 6)
