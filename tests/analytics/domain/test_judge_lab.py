"""Judge lab estimators on hand-computed numbers (the arithmetic is written out beside each check)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analytics.domain import judge_lab as jl


def test_wilson_interval_by_hand():
    # p = .8, z = 1.959964: centre = (.8 + z²/20) / (1 + z²/10) = .716745; half = z * sqrt(.016 + z²/400) /
    # (1 + z²/10) = .226582.
    share = jl.proportion(8, 10)
    assert share.rate == 0.8
    assert share.ci_low == pytest.approx(0.490162, abs=1e-6)
    assert share.ci_high == pytest.approx(0.943318, abs=1e-6)
    assert jl.proportion(0, 0).rate is None
    with pytest.raises(ValueError):
        jl.proportion(3, 2)


def test_logistic_fit_two_groups_is_closed_form():
    # Saturated two-group model: logit(1/4) = -log 3 at x = -1/2, logit(3/4) = log 3 at x = 1/2, so the slope
    # is 2 log 3 and the intercept 0; var(logit p̂) = 1 / (n p (1 - p)) = 4/3 per group, var(slope) = 8/3.
    x = np.array([-0.5] * 4 + [0.5] * 4)
    y = np.array([1, 0, 0, 0, 1, 1, 1, 0], dtype=float)
    fit = jl.logistic_fit(np.column_stack([np.ones(8), x]), y)
    assert fit.converged
    assert fit.coef[0] == pytest.approx(0.0, abs=1e-7)
    assert fit.coef[1] == pytest.approx(2 * math.log(3), rel=1e-7)
    assert fit.se[1] == pytest.approx(math.sqrt(8 / 3), rel=1e-6)


def test_item_verdicts_take_the_strict_mode():
    judge = pd.DataFrame(
        {
            "item": ["a"] * 3 + ["b"] * 3 + ["c"] * 2 + ["d"] * 2,
            "judge": "j",
            "vote": ["A", "A", "B", "A", "B", "tie", "error", "error", "B", "error"],
        }
    )
    out = jl.item_verdicts(judge).set_index("item")
    assert out.loc["a", "vote"] == "A" and out.loc["a", "confidence"] == pytest.approx(2 / 3)
    assert out.loc["b", "vote"] == "tie" and out.loc["b", "confidence"] == pytest.approx(1 / 3)
    assert out.loc["c", "vote"] == "error" and np.isnan(out.loc["c", "confidence"])
    # One parsed output of two: that verdict, confidence 1 over the parsed ones.
    assert out.loc["d", "vote"] == "B" and out.loc["d", "n_parsed"] == 1


def test_position_bias_counts_the_first_shown():
    # ab rows: A picked = first (items 1, 2, 3), B picked = second (item 4); ba rows: B picked = first (items
    # 1, 2), A = second (items 3, 5); one tie, one error. Decisive 8, first 5.
    judge = pd.DataFrame(
        {
            "item": ["1", "2", "3", "4", "5", "1", "2", "3", "4", "5"],
            "vote": ["A", "A", "A", "B", "tie", "B", "B", "A", "error", "A"],
            "order": ["ab"] * 5 + ["ba"] * 5,
        }
    )
    bias = jl.position_bias(judge)
    assert (bias.first.k, bias.first.n) == (5, 8)
    assert bias.n_ties == 1 and bias.n_errors == 1
    assert bias.n_both_orders == 5
    # Items: 1 A/B -> biased first; 2 A/B -> first; 3 A/A consistent; 4 B/error -> error; 5 tie/A: first
    # score 0, second (A shown second picked) -1 -> biased second.
    assert bias.consistency == {
        "consistent": 0.2,
        "biased_first": 0.4,
        "biased_second": 0.2,
        "error": 0.2,
    }


def test_length_bias_curve_slope_and_longer_share():
    # Relative differences: (1 - 3) / 4 = -1/2 four times (A won once), (3 - 1) / 4 = 1/2 four times (A won
    # three times): the same two groups as the closed-form logistic test, so the slope is 2 log 3.
    votes = ["A", "B", "B", "B", "A", "A", "A", "B", "tie"]
    length_a = [1, 1, 1, 1, 3, 3, 3, 3, 2]
    length_b = [3, 3, 3, 3, 1, 1, 1, 1, 2]
    bias = jl.length_bias(votes, length_a, length_b)
    assert bias.n == 8 and bias.n_ties == 1
    assert bias.slope == pytest.approx(2 * math.log(3), rel=1e-6)
    half = 1.959964 * math.sqrt(8 / 3)
    assert bias.slope_ci == pytest.approx((2 * math.log(3) - half, 2 * math.log(3) + half), rel=1e-5)
    # The longer answer won 3 (A longer, A won) + 3 (B longer, B won) of 8.
    assert (bias.longer_wins.k, bias.longer_wins.n) == (6, 8)
    by_bin = {row["bin"]: row for row in bias.curve}
    assert (by_bin[1]["n"], by_bin[1]["wins_a"]) == (4, 1)  # [-0.5, -0.25)
    assert (by_bin[6]["n"], by_bin[6]["wins_a"]) == (4, 3)  # [0.5, 1]
    assert sum(row["n"] for row in bias.curve) == 8


def test_length_bias_without_variation_has_no_slope():
    bias = jl.length_bias(["A", "B", "A"], [5, 5, 5], [5, 5, 5])
    assert bias.slope is None and bias.longer_wins.n == 0


def test_self_preference_against_people_on_the_same_items():
    items = pd.DataFrame(
        {
            "item": ["1", "2", "3", "4", "5"],
            "model_a": ["gpt-x", "llama-1", "gpt-y", "llama-1", "gpt-x"],
            "model_b": ["llama-1", "gpt-y", "llama-2", "llama-2", "gpt-y"],
        }
    )
    families = {"gpt-x": "gpt", "gpt-y": "gpt", "llama-1": "llama", "llama-2": "llama"}
    verdicts = pd.DataFrame({"item": ["1", "2", "3", "4", "5"], "vote": ["A", "B", "B", "A", "A"]})
    human = pd.DataFrame({"item": ["1", "2", "3", "4", "5"], "majority": ["B", "B", "tie", "A", "A"]})
    # Items with one gpt answer: 1 (A), 2 (B), 3 (A); the judge picks it on 1 and 2 of 3; people pick it on
    # 2 of 2 decisive (item 3 is a human tie). Items 4 and 5 have no or two gpt answers.
    result = jl.self_preference(verdicts, items, family="gpt", families=families, human=human)
    assert (result.judge.k, result.judge.n) == (2, 3)
    assert (result.human.k, result.human.n) == (1, 2)
    assert result.difference == pytest.approx(2 / 3 - 1 / 2)


def test_judge_choice_marks_the_best_per_slice():
    majority = pd.DataFrame(
        {
            "item": [str(i) for i in range(6)],
            "majority": ["A", "B", "A", "B", "A", "tie"],
            "language": ["ind", "ind", "ind", "jav", "jav", "jav"],
        }
    )
    good = pd.DataFrame({"item": majority["item"], "vote": ["A", "B", "A", "B", "B", "A"]})
    poor = pd.DataFrame({"item": majority["item"], "vote": ["B", "B", "error", "B", "A", "A"]})
    rows = jl.judge_choice(majority, {"good": good, "poor": poor}, group="language")
    table = {(r["slice"], r["judge"]): r for r in rows}
    assert (table["ind", "good"]["n_correct"], table["ind", "good"]["n"]) == (3, 3)
    assert (
        table["ind", "poor"]["n_correct"],
        table["ind", "poor"]["n"],
        table["ind", "poor"]["n_errors"],
    ) == (
        1,
        2,
        1,
    )
    assert table["ind", "good"]["best"] and not table["ind", "poor"]["best"]
    # jav: good 1/2, poor 2/2 (the tie item left out).
    assert table["jav", "poor"]["best"] and table["jav", "poor"]["accuracy"] == 1.0
    # Wilson lower bound of 3/3 is .4385, below 1/2: not a clear lead.
    assert not table["ind", "good"]["clear"]


def test_length_controlled_win_rate_by_hand():
    # delta = +10 four times (3 wins) and -10 four times (2 wins): sd(delta) = 10, x = tanh(±1). The
    # saturated fit gives theta = mean of the two groups' logits = (log 3 + 0) / 2, so the length-controlled
    # win rate is sigmoid(log(3) / 2) = .633975 against a raw 5/8.
    battles = pd.DataFrame(
        {
            "model_a": ["m"] * 4 + ["base"] * 4,
            "model_b": ["base"] * 4 + ["m"] * 4,
            "vote": ["A", "A", "A", "B", "B", "B", "A", "A"],
            "length_a": [20] * 4 + [20] * 4,
            "length_b": [10] * 4 + [10] * 4,
        }
    )
    (row,) = jl.length_controlled_win_rates(battles, baseline="base")
    assert row.model == "m" and row.n == 8
    assert row.raw == pytest.approx(5 / 8)
    assert row.length_controlled == pytest.approx(1 / (1 + math.exp(-math.log(3) / 2)), rel=1e-6)
    # Per group var(logit p̂) = 1 / (n p (1 - p)): 4/3 (3 of 4) and 1 (2 of 4); theta is their mean, so
    # var(theta) = (4/3 + 1) / 4.
    se = math.sqrt((4 / 3 + 1) / 4)
    theta = math.log(3) / 2
    sig = lambda v: 1 / (1 + math.exp(-v))  # noqa: E731
    assert row.lc_ci == pytest.approx((sig(theta - 1.959964 * se), sig(theta + 1.959964 * se)), rel=1e-5)


def test_length_controlled_equals_raw_when_lengths_match():
    battles = pd.DataFrame(
        {
            "model_a": ["m"] * 4,
            "model_b": ["base"] * 4,
            "vote": ["A", "A", "tie", "B"],
            "length_a": [5] * 4,
            "length_b": [5] * 4,
        }
    )
    (row,) = jl.length_controlled_win_rates(battles, baseline="base")
    assert row.raw == pytest.approx(2.5 / 4)
    assert row.length_controlled == pytest.approx(2.5 / 4, rel=1e-6)
    assert row.length_coef is None


def test_calibration_by_hand():
    # Items (k = 3): 1 AAA vs A -> conf 1, right; 2 AAB vs A -> 2/3 right; 3 BBA vs A -> 2/3 wrong;
    # 4 A,B,tie -> tie, 1/3, vs B wrong; 5: human tie, left out.
    # Bins: 9 {1: acc 1}, 6 {2/3, 2/3: acc 1/2}, 3 {1/3: acc 0}. ECE = 2/4 * 1/6 + 1/4 * 1/3 = 1/6.
    # Brier = (0 + 1/9 + 4/9 + 1/9) / 4 = 1/6.
    judge = pd.DataFrame(
        {
            "item": [i for i in "12345" for _ in range(3)],
            "vote": ["A", "A", "A", "A", "A", "B", "B", "B", "A", "A", "B", "tie", "A", "A", "A"],
        }
    )
    majority = pd.DataFrame(
        {
            "item": list("12345"),
            "majority": ["A", "A", "A", "B", "tie"],
            "category": ["x", "x", "y", "y", "y"],
        }
    )
    result = jl.calibration(judge, majority, category="category")
    assert result.n == 4 and result.n_human_ties == 1 and result.samples == (3, 3)
    assert result.ece == pytest.approx(1 / 6)
    assert result.brier == pytest.approx(1 / 6)
    assert result.accuracy == 0.5
    assert [(b["bin"], b["n"]) for b in result.bins] == [(3, 1), (6, 2), (9, 1)]
    by = {row["category"]: row for row in result.by_category}
    # x: conf 1 right, 2/3 right -> bins 9 (gap 0), 6 (gap 1/3): ECE 1/6; Brier (0 + 1/9) / 2.
    assert by["x"]["ece"] == pytest.approx(1 / 6) and by["x"]["brier"] == pytest.approx(1 / 18)
    # y: 2/3 wrong, 1/3 wrong -> ECE (2/3 + 1/3) / 2 = 1/2; Brier (4/9 + 1/9) / 2 = 5/18.
    assert by["y"]["ece"] == pytest.approx(1 / 2) and by["y"]["brier"] == pytest.approx(5 / 18)


def test_ppi_with_lambda_one_by_hand():
    # Classic PPI: theta = mean(Y) + mean(g) - mean(f) = .75 + .75 - .5 = 1; var = var(g)/N + var(Y - f)/n =
    # .25/4 + .25/4 = .125. Human-only: var(Y)/n = .25/4; the judge made the interval wider here.
    result = jl.ppi_mean([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1], lam=1.0)
    assert result.ppi.value == pytest.approx(1.0)
    assert result.ppi.se == pytest.approx(math.sqrt(0.125))
    assert result.human_only.value == 0.75 and result.human_only.se == pytest.approx(0.25)
    assert result.judge_only.value == pytest.approx(5 / 8)
    assert result.wider_than_human_only
    assert result.effective_n == pytest.approx(2.0)  # .25 / .125


def test_ppi_power_tuning_by_hand():
    # cov(Y, f) = .5 / 3 = 1/6; var(f) over all 8 judge labels = (5 (3/8)² + 3 (5/8)²) / 7 = 15/56;
    # lambda = (1/6) / ((1 + 4/4) 15/56) = 14/45.
    result = jl.ppi_mean([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1])
    assert result.lam == pytest.approx(14 / 45)
    assert result.ppi.value == pytest.approx(0.75 + 14 / 45 * (0.75 - 0.5))


def test_ppi_without_unlabelled_items_is_human_only():
    result = jl.ppi_mean([1, 0, 1], [1, 0, 1], [])
    assert result.ppi == result.human_only and result.lam == 0.0


def test_ppi_needs_two_human_items():
    with pytest.raises(ValueError, match="at least two"):
        jl.ppi_mean([1], [1], [0, 1])


def test_win_rate_ppi_turns_reversed_pairs_around():
    items = pd.DataFrame(
        {"item": list("12345"), "model_a": ["x", "y", "x", "y", "x"], "model_b": ["y", "x", "y", "x", "z"]}
    )
    verdicts = pd.DataFrame({"item": list("12345"), "vote": ["A", "A", "B", "B", "A"]})
    # Human votes on items 1 and 2 only: 1 -> A (x), A (x), 2 -> B, tie (x then half).
    human = pd.DataFrame(
        {"item": ["1", "1", "2", "2"], "annotator": ["p", "q", "p", "q"], "vote": ["A", "A", "B", "tie"]}
    )
    result = jl.win_rate_ppi(human, verdicts, items, model_x="x", model_y="y", lam=1.0)
    # Judge for x: item 1 1, item 2 0 (A = y), item 3 0, item 4 1 (B = x). Y: 1, .75. Item 5 not x vs y.
    assert result.n_labeled == 2 and result.n_unlabeled == 2
    assert result.human_only.value == pytest.approx(0.875)
    assert result.ppi.value == pytest.approx(0.875 + (0.5 - 0.5))


def test_win_rate_intervals_stay_within_zero_and_one():
    result = jl.ppi_mean([1, 0, 0], [1, 1, 1], [1, 1], bounds=(0.0, 1.0))
    for estimate in (result.ppi, result.human_only, result.judge_only):
        assert 0.0 <= estimate.ci_low <= estimate.value <= estimate.ci_high <= 1.0
    # Unbounded, the same human-only interval reaches below 0: 1/3 - 1.96 * sqrt((1/3) / 3) < 0.
    assert jl.ppi_mean([1, 0, 0], [1, 1, 1], [1, 1]).human_only.ci_low < 0


def test_length_controlled_rate_is_undefined_when_length_separates_wins():
    # The model wins exactly when it is the longer answer: no finite fit, no length-controlled rate.
    battles = pd.DataFrame(
        {
            "model_a": ["m"] * 6,
            "model_b": ["base"] * 6,
            "vote": ["A", "A", "A", "B", "B", "B"],
            "length_a": [30, 40, 50, 5, 6, 7],
            "length_b": [10] * 6,
        }
    )
    (row,) = jl.length_controlled_win_rates(battles, baseline="base")
    assert row.separated and row.length_controlled is None and row.lc_ci is None
    assert row.raw == 0.5


def _comparisons(rng, n):
    models = np.array(["a", "b", "c"])
    first = rng.integers(0, 3, n)
    second = (first + rng.integers(1, 3, n)) % 3
    y = rng.choice([0.0, 0.5, 1.0], n, p=[0.3, 0.2, 0.5])
    return pd.DataFrame({"model_a": models[first], "model_b": models[second], "y": y})


def _winners(frame, column):
    return frame.assign(winner=frame[column].map({1.0: "A", 0.0: "B", 0.5: "tie"}))


def test_bradley_terry_ppi_without_the_judge_is_the_human_fit():
    from analytics.domain.bradley_terry import bradley_terry

    rng = np.random.default_rng(4)
    labelled = _comparisons(rng, 60).assign(f=lambda f: rng.choice([0.0, 0.5, 1.0], len(f)))
    unlabelled = _comparisons(rng, 200).rename(columns={"y": "f"})
    result = jl.bradley_terry_ppi(labelled, unlabelled, lam=0.0)
    expected = bradley_terry(_winners(labelled, "y")).ratings.set_index("model")["rating"]
    assert result.ppi == pytest.approx([expected[m] for m in result.models], rel=1e-7)
    assert result.human == pytest.approx(result.ppi, rel=1e-9)


def test_bradley_terry_ppi_with_a_perfect_judge_on_the_labelled_items_is_the_judges_fit_elsewhere():
    from analytics.domain.bradley_terry import bradley_terry

    rng = np.random.default_rng(5)
    labelled = _comparisons(rng, 40).assign(f=lambda f: f["y"])
    unlabelled = _comparisons(rng, 150).rename(columns={"y": "f"})
    # lambda = 1: L_N(f) + L_n(y) - L_n(f), and f = y on the labelled items, leaves the judge's fit on the others.
    result = jl.bradley_terry_ppi(labelled, unlabelled, lam=1.0)
    expected = bradley_terry(_winners(unlabelled, "f")).ratings.set_index("model")["rating"]
    assert result.ppi == pytest.approx([expected[m] for m in result.models], rel=1e-7)
    # The judge-only fit uses every judge label, labelled items too.
    everything = pd.concat([labelled[["model_a", "model_b", "f"]], unlabelled], ignore_index=True)
    judge = bradley_terry(_winners(everything, "f")).ratings.set_index("model")["rating"]
    assert result.judge == pytest.approx([judge[m] for m in result.models], rel=1e-7)


def test_the_majority_of_several_judges_competes_in_the_choice():
    human = pd.DataFrame({"item": ["1", "2", "3"], "annotator": "p", "vote": ["A", "B", "A"]})
    # Item 1: A, A, B -> A (right); item 2: B, A, B -> B (right); item 3: A, B, tie -> tie (wrong).
    judge = pd.DataFrame(
        {
            "item": ["1", "2", "3"] * 3,
            "judge": ["x"] * 3 + ["y"] * 3 + ["z"] * 3,
            "vote": ["A", "B", "A", "A", "A", "B", "B", "B", "tie"],
        }
    )
    report = jl.lab_report(human, judge)
    rows = {r["judge"]: r for r in report["judge_choice"]["all"]}
    assert set(rows) == {"x", "y", "z", "ensemble"}
    assert (rows["ensemble"]["n_correct"], rows["ensemble"]["n"]) == (2, 3)
    assert rows["x"]["accuracy"] == 1.0 and rows["x"]["best"]
    assert "ensemble" not in report["judges"]  # the bias report is per judge
