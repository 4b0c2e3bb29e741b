"""Krippendorff's alpha and the other agreement coefficients on hand-checked examples."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pandas as pd
import pytest

from analytics.domain.agreement import (
    NO_PAIRABLE_UNIT,
    NO_VARIATION,
    NOT_TWO_CODERS,
    UNEQUAL_RATINGS,
    Reliability,
    alpha_bootstrap,
    alpha_breakdowns,
    alpha_by,
    between_group_agreement,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    kappas,
    krippendorff_alpha,
    leave_one_out_alpha,
    percent_agreement,
    reliability_matrix_to_long,
)

nan = math.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers x 12 units,
# values 1-5, missing values; the paper reports alpha 0.743 (nominal), 0.815 (ordinal), 0.849 (interval)
# and 0.797 (ratio). Unit 12 has a single value and is not pairable.
PAPER_MATRIX = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]

# Section A: binary data, two observers, ten units.
BINARY = [[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]]

# Section B: nominal data, two observers (Ben, Gerry), twelve units.
BEN_GERRY = [list("aabbdcccedda"), list("babbbccceddd")]


@pytest.fixture
def paper() -> pd.DataFrame:
    return reliability_matrix_to_long(PAPER_MATRIX, coders=["A", "B", "C", "D"])


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_paper_example_matches_published_alpha_and_package(paper, level, published):
    result = krippendorff_alpha(paper, level)
    assert round(result.alpha, 3) == published
    expected = krippendorff.alpha(reliability_data=np.array(PAPER_MATRIX, float), level_of_measurement=level)
    assert result.alpha == pytest.approx(expected, abs=1e-9)
    # 11 pairable units (unit 12 has one value), 40 pairable values, 4 observers.
    assert (result.n_units, result.n_pairable_values, result.n_coders) == (11, 40, 4)
    assert result.undefined_reason is None


def test_paper_example_nominal_disagreements(paper):
    # The paper's coincidence matrix: n = 40, 8 of the 40 pairable values sit off the diagonal, and
    # n_c = 9, 13, 10, 5, 3, so sum_{c != k} n_c n_k = 1600 - 384 = 1216.
    # D_o = 8/40 = 0.2, D_e = 1216 / (40 * 39); alpha = 1 - 39 * 8 / 1216 = 0.743.
    result = krippendorff_alpha(paper, "nominal")
    assert result.observed_disagreement == pytest.approx(0.2)
    assert result.expected_disagreement == pytest.approx(1216 / 1560)
    assert result.alpha == pytest.approx(1 - 39 * 8 / 1216)


def test_binary_two_observers():
    # Coincidences: o_00 = 10, o_11 = 2, o_01 = o_10 = 4; n_0 = 14, n_1 = 6, n = 20.
    # alpha = 1 - (n - 1) o_01 / (n_0 n_1) = 1 - 19 * 4 / 84 = 8 / 84 = 0.095.
    result = krippendorff_alpha(reliability_matrix_to_long(BINARY), "nominal")
    assert result.alpha == pytest.approx(8 / 84, abs=1e-12)
    assert round(result.alpha, 3) == 0.095


def test_nominal_two_observers_ben_gerry():
    # Three disagreeing units (a/b, d/b, a/d) give 6 off-diagonal coincidences; n = 24 with
    # n_a = 4, n_b = 6, n_c = 6, n_d = 6, n_e = 2, so sum_{c != k} n_c n_k = 576 - 128 = 448.
    # alpha = 1 - 23 * 6 / 448 = 310 / 448 = 0.692.
    result = krippendorff_alpha(reliability_matrix_to_long(BEN_GERRY), "nominal")
    assert result.alpha == pytest.approx(310 / 448, abs=1e-12)
    assert round(result.alpha, 3) == 0.692


def test_string_values_are_nominal_categories():
    data = reliability_matrix_to_long(BEN_GERRY)
    assert data["value"].map(type).eq(str).all()
    assert krippendorff_alpha(data, "nominal").alpha == pytest.approx(0.6919642857, abs=1e-9)
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha(data, "interval")


def test_no_variation_is_undefined_not_one():
    data = reliability_matrix_to_long([[3, 3, 3], [3, 3, nan]])
    result = krippendorff_alpha(data, "interval")
    assert result.alpha is None
    assert result.undefined_reason == NO_VARIATION
    assert (result.n_units, result.n_pairable_values) == (2, 4)


def test_variation_only_in_unpairable_units_is_still_no_variation():
    # Unit 3 holds the only 5, but alone, so the pairable values are all 3 (krippendorff returns NaN).
    data = reliability_matrix_to_long([[3, 3, 5], [3, 3, nan]])
    assert krippendorff_alpha(data, "ordinal").undefined_reason == NO_VARIATION


def test_no_pairable_unit():
    data = reliability_matrix_to_long([[1, nan], [nan, 2]])
    result = krippendorff_alpha(data, "nominal")
    assert result.alpha is None
    assert result.undefined_reason == NO_PAIRABLE_UNIT
    assert (result.n_units, result.n_coders, result.n_pairable_values) == (0, 0, 0)
    boot = alpha_bootstrap(data, "nominal", draws=10)
    assert boot.ci is None and boot.n_defined == 0


def test_coder_rating_a_unit_twice_is_rejected():
    data = pd.DataFrame({"unit": [1, 1, 1], "coder": ["x", "x", "y"], "value": [1, 2, 1]})
    with pytest.raises(ValueError, match="more than once"):
        krippendorff_alpha(data, "nominal")


def test_unknown_level_is_rejected(paper):
    with pytest.raises(ValueError, match="level must be one of"):
        krippendorff_alpha(paper, "cardinal")


def test_custom_column_names(paper):
    renamed = paper.rename(columns={"unit": "item", "coder": "rater", "value": "score"})
    result = krippendorff_alpha(renamed, "interval", unit="item", coder="rater", value="score")
    assert round(result.alpha, 3) == 0.849


# -- bootstrap --------------------------------------------------------------------------------------


def test_bootstrap_same_seed_same_draws(paper):
    first = alpha_bootstrap(paper, "ordinal", draws=300, seed=7, alpha_min=[0.8])
    second = alpha_bootstrap(paper, "ordinal", draws=300, seed=7, alpha_min=[0.8])
    other = alpha_bootstrap(paper, "ordinal", draws=300, seed=8, alpha_min=[0.8])
    np.testing.assert_array_equal(first.alphas, second.alphas)
    assert first.ci == second.ci and first.q_below == second.q_below
    assert not np.array_equal(first.alphas, other.alphas, equal_nan=True)
    from_generator = alpha_bootstrap(paper, "ordinal", draws=300, seed=np.random.default_rng(7))
    np.testing.assert_array_equal(first.alphas, from_generator.alphas)


def test_bootstrap_q_below_and_interval_are_read_from_the_draws(paper):
    boot = alpha_bootstrap(paper, "interval", draws=500, seed=1, alpha_min=[0.5, 0.8, 0.9])
    defined = boot.alphas[~np.isnan(boot.alphas)]
    assert boot.n_defined == len(defined)
    for threshold in (0.5, 0.8, 0.9):
        assert boot.q_below[threshold] == pytest.approx(np.mean(defined < threshold))
    assert boot.ci == pytest.approx(tuple(np.quantile(defined, [0.025, 0.975])))
    assert boot.ci[0] <= 0.849 <= boot.ci[1]


def test_bootstrap_leaves_out_resamples_without_variation():
    # Two units [1, 1] and [2, 2]: a resample holding one unit twice has no variation (undefined);
    # a resample holding both has D_o = 0 and alpha = 1. About half the draws are each.
    data = reliability_matrix_to_long([[1, 2], [1, 2]])
    boot = alpha_bootstrap(data, "interval", draws=200, seed=3)
    defined = boot.alphas[~np.isnan(boot.alphas)]
    assert 0 < boot.n_defined < 200
    assert np.all(defined == pytest.approx(1.0))
    assert boot.ci == pytest.approx((1.0, 1.0))


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_weighted_alpha_equals_package_on_replicated_units(paper, level):
    # A bootstrap draw is a vector of unit multiplicities; alpha of that vector must equal alpha of the
    # data set in which each unit is copied that many times.
    prepared = Reliability.from_long(paper, level)
    weights = np.array([2, 0, 1, 3, 1, 0, 2, 1, 1, 4, 1])
    matrix = np.array(PAPER_MATRIX, float)
    columns = [
        matrix[:, int(u)] for u, w in zip(prepared.unit_labels, weights, strict=True) for _ in range(w)
    ]
    expected = krippendorff.alpha(reliability_data=np.array(columns).T, level_of_measurement=level)
    assert prepared.weighted_alpha(weights)[0] == pytest.approx(expected, abs=1e-9)


def _naive_bootstrap(data: pd.DataFrame, level: str, draws: int, seed: int) -> np.ndarray:
    """Resample units and call krippendorff.alpha: slow, obviously right."""
    matrix = data.pivot(index="coder", columns="unit", values="value").to_numpy(float)
    matrix = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(draws):
        picked = matrix[:, rng.integers(0, matrix.shape[1], size=matrix.shape[1])]
        with np.errstate(all="ignore"):
            out.append(krippendorff.alpha(reliability_data=picked, level_of_measurement=level))
    return np.array(out)


@pytest.mark.parametrize(
    ("n_units", "values", "level"),
    [(120, 2, "nominal"), (40, 5, "interval"), (60, 5, "ordinal")],  # profile multinomial / unit paths
)
def test_bootstrap_distribution_matches_naive_resampling(n_units, values, level):
    rng = np.random.default_rng(11)
    truth = rng.integers(1, values + 1, size=n_units)
    noise = rng.random((3, n_units)) < 0.3
    matrix = np.where(noise, rng.integers(1, values + 1, size=(3, n_units)), truth).astype(float)
    matrix[rng.random((3, n_units)) < 0.1] = nan
    data = reliability_matrix_to_long(matrix)
    ours = alpha_bootstrap(data, level, draws=600, seed=5).alphas
    naive = _naive_bootstrap(data, level, draws=600, seed=6)
    ours, naive = ours[~np.isnan(ours)], naive[~np.isnan(naive)]
    assert abs(ours.mean() - naive.mean()) < 0.02
    assert 0.8 < ours.std() / naive.std() < 1.25


def test_bootstrap_on_many_distinct_float_values():
    # Interval alpha on decimals: nearly every unit is its own profile, so draws go through unit indices.
    # (The krippendorff package builds a units x values x values array, so keep its input small.)
    rng = np.random.default_rng(2)
    truth = rng.normal(size=300)
    matrix = (truth + rng.normal(scale=0.5, size=(4, 300))).round(1)
    data = reliability_matrix_to_long(matrix)
    prepared = Reliability.from_long(data, "interval")
    assert prepared.counts.shape[0] > 250
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    assert prepared.alpha().alpha == pytest.approx(expected, abs=1e-9)
    boot = prepared.bootstrap(draws=400, seed=0)
    assert boot.n_defined == 400
    assert boot.ci[0] < expected < boot.ci[1]
    # True alpha is 1 / (1 + 0.25) = 0.8; 300 units pin it down to about +-0.05.
    assert boot.ci[1] - boot.ci[0] < 0.12


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_sparse_paths_give_the_same_alpha_and_draws(paper, level, monkeypatch):
    # Large data (many units x many distinct values) skip the search for identical units and keep the
    # count matrix as triplets. Force those paths on small data: same alpha, same bootstrap draws.
    dense = Reliability.from_long(paper, level)
    monkeypatch.setattr("analytics.domain.agreement._PROFILE_CELLS", 0)
    monkeypatch.setattr("analytics.domain.agreement._DENSE_CELLS", 0)
    sparse = Reliability.from_long(paper, level)
    assert sparse.counts.dense is None and sparse.counts.shape[0] == sparse.n_units == 11
    assert dense.counts.dense is not None and dense.counts.shape[0] < 11
    assert sparse.alpha().alpha == pytest.approx(dense.alpha().alpha, abs=1e-12)
    weights = np.array([2, 0, 1, 3, 1, 0, 2, 1, 1, 4, 1])
    assert sparse.weighted_alpha(weights)[0] == pytest.approx(dense.weighted_alpha(weights)[0], abs=1e-9)
    # 11 units and at least 2 profiles: both draw unit indices, so the same seed gives the same resamples.
    np.testing.assert_allclose(
        sparse.bootstrap(draws=200, seed=4).alphas, dense.bootstrap(draws=200, seed=4).alphas, atol=1e-9
    )


# -- raw agreement and chance-corrected coefficients --------------------------------------------------


def test_percent_agreement_and_ac1_with_missing_values():
    # u1 = (a, a, b): 1 agreeing pair of 3; u2 = (a, a): 1 of 1; u3 = (b) is not pairable.
    # p_a = (1/3 + 1) / 2 = 2/3.
    # pi_a = (2/3 + 1 + 0) / 3 = 5/9, pi_b = 4/9 (all three units); p_e = 2 * 5/9 * 4/9 / (2 - 1) = 40/81.
    # AC1 = (54/81 - 40/81) / (41/81) = 14/41.
    data = pd.DataFrame(
        {"unit": ["u1", "u1", "u1", "u2", "u2", "u3"], "coder": [1, 2, 3, 1, 2, 1], "value": list("aabaab")}
    )
    assert percent_agreement(data) == pytest.approx(2 / 3)
    ac1 = gwet_ac1(data)
    assert ac1.observed_agreement == pytest.approx(2 / 3)
    assert ac1.expected_agreement == pytest.approx(40 / 81)
    assert ac1.value == pytest.approx(14 / 41)
    assert ac1.n_units == 2


def test_ben_gerry_kappa_ac1_fleiss():
    data = reliability_matrix_to_long(BEN_GERRY, coders=["Ben", "Gerry"])
    # 9 of 12 units agree.
    assert percent_agreement(data) == pytest.approx(0.75)
    # Cohen: Ben's shares a 3, b 2, c 3, d 3, e 1 (of 12), Gerry's a 1, b 4, c 3, d 3, e 1;
    # p_e = (3 + 8 + 9 + 9 + 1) / 144 = 30/144; kappa = (0.75 - 30/144) / (1 - 30/144) = 13/19.
    kappa = cohen_kappa(data)
    assert kappa.expected_agreement == pytest.approx(30 / 144)
    assert kappa.value == pytest.approx(13 / 19)
    # AC1: pi = (4, 6, 6, 6, 2) / 24, p_e = (1 - 128/576) / 4 = 7/36; AC1 = (3/4 - 7/36) / (29/36) = 20/29.
    assert gwet_ac1(data).value == pytest.approx(20 / 29)
    # Fleiss with two raters: P = 0.75, P_e = 128/576 = 2/9; kappa = (3/4 - 2/9) / (7/9) = 19/28.
    assert fleiss_kappa(data).value == pytest.approx(19 / 28)


def test_fleiss_kappa_published_example():
    # Fleiss (1971) as tabulated on Wikipedia: 10 subjects, 14 raters, 5 categories; kappa = 0.210.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    rows = []
    for subject, counts in enumerate(table):
        values = [category for category, n in enumerate(counts, start=1) for _ in range(n)]
        rows += [(subject, rater, value) for rater, value in enumerate(values)]
    data = pd.DataFrame(rows, columns=["unit", "coder", "value"])
    result = fleiss_kappa(data)
    assert round(result.observed_agreement, 3) == 0.378
    assert round(result.expected_agreement, 3) == 0.213
    assert round(result.value, 3) == 0.210


def test_fleiss_kappa_refuses_unequal_numbers_of_ratings(paper):
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa(paper)


def test_cohen_kappa_needs_two_coders(paper):
    with pytest.raises(ValueError, match="exactly two coders"):
        cohen_kappa(paper)
    # Naming two coders uses the units both rated: A and B share units 1-9 and disagree on unit 6 only.
    kappa = cohen_kappa(paper, coders=("A", "B"))
    assert kappa.n_units == 9
    assert kappa.observed_agreement == pytest.approx(8 / 9)


# -- leave-one-out, breakdowns, groups ----------------------------------------------------------------


def test_leave_one_out_finds_the_outlier():
    # c1 and c2 agree on all four units; c3 disagrees on two.
    # All three: u1 (a,a,b) and u3 (b,b,a) each add 4 mismatching ordered pairs / (3 - 1) = 2;
    # n = 12, n_a = n_b = 6: alpha = 1 - 11 * 4 / 72 = 28/72.
    # Without c3: perfect agreement, alpha = 1. Without c1 (or c2): two of four units disagree,
    # n = 8, n_a = n_b = 4: alpha = 1 - 7 * 4 / 32 = 0.125.
    data = reliability_matrix_to_long([list("aabb"), list("aabb"), list("baab")], coders=["c1", "c2", "c3"])
    assert krippendorff_alpha(data, "nominal").alpha == pytest.approx(28 / 72)
    table = leave_one_out_alpha(data, "nominal")
    assert list(table["coder"]) == ["c3", "c1", "c2"]
    assert list(table["alpha"]) == pytest.approx([1.0, 0.125, 0.125])
    assert list(table["delta"]) == pytest.approx([1 - 28 / 72, 0.125 - 28 / 72, 0.125 - 28 / 72])


def _two_groups() -> pd.DataFrame:
    ratings = {
        "u1": {"x": 1, "y": 3, "z": 3, "w": 3},
        "u2": {"x": 4, "y": 4, "z": 5, "w": 5},
        "u3": {"x": 2, "y": 2, "z": 2, "w": 4},
    }
    rows = [
        (unit, coder, value, "g1" if coder in "xy" else "g2")
        for unit, by_coder in ratings.items()
        for coder, value in by_coder.items()
    ]
    return pd.DataFrame(rows, columns=["unit", "coder", "value", "group"])


def test_between_groups_on_hand_checked_example():
    result = between_group_agreement(_two_groups(), "interval")
    # Group means: g1 = (2, 4, 2), g2 = (3, 5, 3): r = 1, offset g1 - g2 = -1.
    assert result.groups == ("g1", "g2")
    assert result.pearson_r == pytest.approx(1.0)
    assert result.mean_offset == pytest.approx(-1.0)
    assert result.n_shared_units == 3
    # Means as two coders: each unit adds 2 * 1^2 / 1 = 2, so sum d_u = 6; n = 6 values (2,3,4,5,2,3),
    # sum of squared deviations 67 - 19^2/6 = 41/6, D_e numerator 2 * 6 * 41/6 = 82.
    # alpha = 1 - 5 * 6 / 82 = 52/82.
    assert result.alpha_means.alpha == pytest.approx(52 / 82)
    # Pooled: d = 8 + 8/3 + 8 = 56/3 over n = 12 values with sum of squares 138 - 38^2/12 = 53/3,
    # D_e numerator 2 * 12 * 53/3 = 424; alpha = 1 - 11 * (56/3) / 424.
    assert result.alpha_pooled.alpha == pytest.approx(1 - 11 * (56 / 3) / 424)


def test_between_groups_refuses_nominal_and_other_group_counts():
    with pytest.raises(ValueError, match="interval"):
        between_group_agreement(_two_groups(), "nominal")
    three = pd.concat([_two_groups(), pd.DataFrame([("u1", "v", 2, "g3")], columns=_two_groups().columns)])
    with pytest.raises(ValueError, match="exactly two groups"):
        between_group_agreement(three, "interval")


def test_breakdowns_are_tidy():
    data = _two_groups().assign(category=lambda f: np.where(f["unit"] == "u2", "math", "chat"))
    table = alpha_breakdowns(data, "interval")
    assert list(table["dimension"]) == ["category", "category", "group", "group"]
    by_group = table.loc[table["dimension"] == "group"].set_index("group")
    # g1: units (1,3), (4,4), (2,2): sum d_u = 8, n = 6, squared deviations 50 - 16^2/6 = 22/3,
    # alpha = 1 - 5 * 8 / (2 * 6 * 22/3) = 1 - 40/88. g2 gives the same numbers.
    assert by_group.loc["g1", "alpha"] == pytest.approx(1 - 40 / 88)
    assert by_group.loc["g2", "alpha"] == pytest.approx(1 - 40 / 88)
    # The "math" category holds one unit whose four values are 4, 4, 5, 5.
    math_row = table.loc[(table["dimension"] == "category") & (table["group"] == "math")].iloc[0]
    assert math_row["n_units"] == 1 and math_row["n_pairable_values"] == 4


def test_alpha_by_with_bootstrap_columns(paper):
    data = pd.concat([paper.assign(criterion="relevance"), paper.assign(criterion="fluency")])
    table = alpha_by(data, "interval", ["criterion"], bootstrap=100, seed=1, alpha_min=[0.8])
    assert list(table["criterion"]) == ["fluency", "relevance"]
    assert list(table["alpha"]) == pytest.approx([0.8491071428571428] * 2)
    # Each group is bootstrapped from the same seed, so identical data give identical intervals.
    assert table.loc[0, "ci_low"] == table.loc[1, "ci_low"]
    assert "q_below_0.8" in table.columns


def test_kappas_where_each_design_holds():
    three = pd.DataFrame(
        [
            (u, c, v)
            for u, values in {"u1": "aaa", "u2": "aab", "u3": "bbb"}.items()
            for c, v in zip("xyz", values, strict=True)
        ],
        columns=["unit", "coder", "value"],
    )
    # Fleiss by hand: P_i = 1, 1/3, 1 -> 7/9; p = (5/9, 4/9), P_e = 41/81; kappa = (63 - 41) / 40 = 0.55.
    result = kappas(three)
    assert result.fleiss == pytest.approx(0.55)
    assert (result.cohen, result.cohen_reason) == (None, NOT_TWO_CODERS)
    uneven = three.drop(index=0)  # u1 has two ratings, the others three
    assert (kappas(uneven).fleiss, kappas(uneven).fleiss_reason) == (None, UNEQUAL_RATINGS)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_leave_one_out_equals_alpha_recomputed_on_the_ratings_without_each_coder(level):
    rng = np.random.default_rng(3)
    rows = [
        {"unit": f"u{u}", "coder": f"c{c}", "value": int(rng.integers(1, 6))}
        for u in range(40)
        for c in range(5)
        if rng.random() < 0.8
    ]
    frame = pd.DataFrame(rows)
    table = leave_one_out_alpha(frame, level).set_index("coder")
    for name in sorted(frame["coder"].unique()):
        without = krippendorff_alpha(frame.loc[frame["coder"] != name], level)
        assert table.loc[name, "alpha"] == pytest.approx(without.alpha, abs=1e-12)
        assert table.loc[name, "n_units"] == without.n_units
