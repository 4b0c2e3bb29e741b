"""Property tests: our alpha equals the krippendorff package on random data with missing values."""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analytics.domain.agreement import Reliability, alpha_bootstrap, reliability_matrix_to_long

LEVELS = ("nominal", "ordinal", "interval", "ratio")
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def reliability_matrices(draw: st.DrawFn) -> np.ndarray:
    """Coders x units with missing cells; small integer scales or non-negative decimals."""
    n_coders = draw(st.integers(2, 5))
    n_units = draw(st.integers(1, 12))
    if draw(st.booleans()):
        cell = st.integers(1, draw(st.integers(2, 6))).map(float)
    else:
        cell = st.floats(0, 20, allow_nan=False).map(lambda x: round(x, 1))
    cells = draw(
        st.lists(st.one_of(st.none(), cell), min_size=n_coders * n_units, max_size=n_coders * n_units)
    )
    return np.array([np.nan if c is None else c for c in cells], dtype=float).reshape(n_coders, n_units)


def _package_alpha(matrix: np.ndarray, level: str) -> float | None:
    """krippendorff.alpha, with its refusals and NaN (no variation) mapped to None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
        except ValueError:
            return None
    return None if np.isnan(value) else float(value)


@FAST
@given(matrix=reliability_matrices(), level=st.sampled_from(LEVELS))
def test_alpha_equals_krippendorff_package(matrix, level):
    ours = Reliability.from_long(reliability_matrix_to_long(matrix), level).alpha()
    expected = _package_alpha(matrix, level)
    if expected is None:
        assert ours.alpha is None and ours.undefined_reason is not None
    else:
        assert ours.alpha is not None
        assert abs(ours.alpha - expected) <= 1e-9


@FAST
@given(matrix=reliability_matrices(), level=st.sampled_from(LEVELS), data=st.data())
def test_resample_weights_equal_package_on_copied_units(matrix, level, data):
    prepared = Reliability.from_long(reliability_matrix_to_long(matrix), level)
    if prepared.n_units == 0:
        return
    weights = np.array(
        data.draw(st.lists(st.integers(0, 3), min_size=prepared.n_units, max_size=prepared.n_units))
    )
    copied = [
        matrix[:, int(unit)] for unit, w in zip(prepared.unit_labels, weights, strict=True) for _ in range(w)
    ]
    expected = _package_alpha(np.array(copied).T, level) if copied else None
    ours = prepared.weighted_alpha(weights)[0]
    if expected is None:
        assert np.isnan(ours)
    else:
        assert abs(ours - expected) <= 1e-9


@settings(max_examples=25, deadline=None)
@given(matrix=reliability_matrices(), level=st.sampled_from(LEVELS), seed=st.integers(0, 2**32 - 1))
def test_bootstrap_is_reproducible(matrix, level, seed):
    data = reliability_matrix_to_long(matrix)
    first = alpha_bootstrap(data, level, draws=50, seed=seed, alpha_min=[0.5])
    second = alpha_bootstrap(data, level, draws=50, seed=seed, alpha_min=[0.5])
    np.testing.assert_array_equal(first.alphas, second.alphas)
    assert first.ci == second.ci
    assert first.q_below == second.q_below
