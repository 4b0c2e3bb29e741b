"""Uniform and active pair sampling: probabilities, the floor, hand-checked gains, seeded choices."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.domain.sampling import (
    RATING_SCALE,
    active_gains,
    active_probabilities,
    choose_pair,
    pair_list,
    sample_pair,
    uniform_probabilities,
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
    ],
)
def test_bad_arguments_raise(call, message):
    with pytest.raises(ValueError, match=message):
        call()
