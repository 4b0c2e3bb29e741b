"""Bradley-Terry ratings on vote sets whose maximum-likelihood answer is known in closed form."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analytics.domain.bradley_terry import bradley_terry


def _votes(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])


def test_two_models_strength_is_win_share():
    # x beats y 3 times of 4: the MLE has p_x / (p_x + p_y) = 3/4, so the ratings differ by
    # 400 log10(3) = 190.85 and sit symmetrically around 1000.
    votes = _votes([("x", "y", "A"), ("y", "x", "B"), ("x", "y", "A"), ("x", "y", "B")])
    table = bradley_terry(votes).ratings.set_index("model")
    assert table.loc["x", "strength"] == pytest.approx(0.75, abs=1e-8)
    assert table.loc["x", "rating"] - table.loc["y", "rating"] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert table["rating"].mean() == pytest.approx(1000.0)
    assert table.loc["x", "wins"] == 3 and table.loc["x", "games"] == 4


def test_ties_count_half_or_are_dropped():
    # x wins 2, ties 2: half wins give x 3 of 4 (same as above); dropping ties leaves x unbeaten,
    # for which no finite estimate exists.
    votes = _votes([("x", "y", "A"), ("x", "y", "A"), ("x", "y", "tie"), ("y", "x", "tie")])
    result = bradley_terry(votes)
    assert result.n_ties == 2
    assert result.ratings.set_index("model").loc["x", "strength"] == pytest.approx(0.75, abs=1e-8)
    with pytest.raises(ValueError, match="does not exist"):
        bradley_terry(votes, ties="drop")


def test_cycle_gives_equal_ratings():
    votes = _votes([("a", "b", "A"), ("b", "c", "A"), ("c", "a", "A")])
    ratings = bradley_terry(votes).ratings["rating"].to_numpy()
    np.testing.assert_allclose(ratings, 1000.0, atol=1e-6)


def test_fit_solves_the_likelihood_equations():
    # At the MLE every model's wins equal its expected wins: W_i = sum_j n_ij p_i / (p_i + p_j).
    rng = np.random.default_rng(0)
    models = ["m1", "m2", "m3", "m4"]
    rows = []
    for _ in range(200):
        i, j = rng.choice(4, size=2, replace=False)
        rows.append((models[i], models[j], rng.choice(["A", "B", "tie"], p=[0.5, 0.3, 0.2])))
    votes = _votes(rows)
    table = bradley_terry(votes).ratings.set_index("model")
    p = table["strength"]
    expected = dict.fromkeys(models, 0.0)
    for a, b, _ in rows:
        expected[a] += p[a] / (p[a] + p[b])
        expected[b] += p[b] / (p[a] + p[b])
    for model in models:
        assert table.loc[model, "wins"] == pytest.approx(expected[model], abs=1e-6)


def test_bootstrap_interval_is_seeded():
    votes = _votes(
        [("x", "y", "A")] * 6 + [("x", "y", "B")] * 3 + [("y", "z", "A")] * 5 + [("y", "z", "B")] * 4
    )
    first = bradley_terry(votes, draws=200, seed=3)
    second = bradley_terry(votes, draws=200, seed=3)
    pd.testing.assert_frame_equal(first.ratings, second.ratings)
    table = first.ratings.set_index("model")
    assert (table["ci_low"] <= table["rating"]).all() and (table["rating"] <= table["ci_high"]).all()
    assert first.draws == 200 and 0 <= first.n_failed_draws < 200


def test_bad_votes_are_rejected():
    with pytest.raises(ValueError, match="not A, B or tie"):
        bradley_terry(_votes([("x", "y", "left")]))
    with pytest.raises(ValueError, match="itself"):
        bradley_terry(_votes([("x", "x", "A")]))
    with pytest.raises(ValueError, match="missing column"):
        bradley_terry(pd.DataFrame({"model_a": ["x"]}))
