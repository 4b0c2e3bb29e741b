"""Inter-annotator agreement on long-format ratings: Krippendorff's alpha and its companions.

Ratings come as one row per (unit, coder, value); a missing rating is simply an absent row (or a null
value). Alpha is computed through the coincidence matrix exactly as Krippendorff defines it, so the point
estimate equals ``krippendorff.alpha(reliability_data=..., level_of_measurement=...)``; units with fewer
than two values cannot be paired and are dropped.

Why the code is shaped the way it is: alpha = 1 - (n - 1) * sum_u d_u / sum_{c,k} n_c n_k delta_ck, where
``d_u`` is unit u's own disagreement and ``n_c`` the number of pairable values equal to level c. Both sums
only depend on each unit's vector of value counts, and many units share the same vector (with five coders
and a 1-5 scale there are at most 126 of them). We therefore group units into *profiles* (identical count
vectors). A unit-resampling bootstrap draw is a vector of multinomial unit weights; summed per profile it
is a multinomial over profiles with probabilities proportional to their sizes, so a whole chunk of draws
reduces to a few matrix products. That is what makes 1,000 draws over 1,000,000 ratings take seconds.

The ordinal metric uses the values present in the data as the ordered categories, with category weights
from the pairable values, as the ``krippendorff`` package does: delta_ck = (M_k - M_c)^2 where M_c is the
mid-rank of category c (the number of pairable values below c plus half of those equal to c). So ordinal
alpha is interval alpha on mid-ranks; in a bootstrap draw the mid-ranks are recomputed from that draw.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

# pandas takes long to import: the functions that use it import it, so start-up (URL loading, a
# worker's boot) does not.
if TYPE_CHECKING:
    import pandas as pd

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")

NO_PAIRABLE_UNIT = "no pairable unit"
NO_VARIATION = "no variation"
NO_EXPECTED_DISAGREEMENT = "no expected disagreement"

GROUPING_COLUMNS: tuple[str, ...] = ("criterion", "category", "language", "register", "group")

# Cells (float64) one bootstrap chunk may hold at once: bounds memory whatever the data size.
_CHUNK_CELLS = 4_000_000
# Largest units x levels integer matrix we build to find identical units (profiles).
_PROFILE_CELLS = 5_000_000
# Largest profiles x levels matrix kept dense; beyond it products go through the sparse triplets.
_DENSE_CELLS = 4_000_000


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's alpha with the counts a reader needs to judge it.

    ``alpha`` is None exactly when ``undefined_reason`` says why: no unit with two values, or no
    variation among the pairable values (expected disagreement 0). Undefined is neither 1 nor NaN.
    """

    alpha: float | None
    level: str
    n_units: int
    n_coders: int
    n_pairable_values: int
    observed_disagreement: float | None
    expected_disagreement: float | None
    undefined_reason: str | None = None


@dataclass(frozen=True)
class AlphaBootstrap:
    """Percentile interval and tail probabilities from a seeded unit-resampling bootstrap.

    Draws in which alpha is undefined (a resample without variation) are left out of every figure and
    counted as ``draws - n_defined``. ``q_below[a]`` is the share of defined draws with alpha < a.
    """

    draws: int
    n_defined: int
    confidence: float
    ci: tuple[float, float] | None
    q_below: dict[float, float | None]
    alphas: np.ndarray = field(repr=False, compare=False)


@dataclass(frozen=True)
class ChanceCorrected:
    """A chance-corrected agreement coefficient (kappa, AC1) with its ingredients."""

    value: float | None
    observed_agreement: float | None
    expected_agreement: float | None
    n_units: int
    undefined_reason: str | None = None


def check_level(level: str) -> Level:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    return level  # type: ignore[return-value]


def _require_columns(data: pd.DataFrame, columns: Iterable[str]) -> None:
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise ValueError(f"missing column(s): {', '.join(missing)}")


def _numeric_values(values: np.ndarray, level: str) -> np.ndarray:
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{level} alpha needs numeric values") from exc
    if not np.isfinite(numbers).all():
        raise ValueError(f"{level} alpha needs finite values")
    return numbers


def _ratio_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """((a - b) / (a + b))^2, and 0 where a + b == 0 (as the krippendorff package does)."""
    total = a + b
    out = np.zeros(np.broadcast(a, b).shape)
    np.divide(a - b, total, out=out, where=total != 0)
    return out**2


class _CountMatrix:
    """Profiles x levels matrix of value counts; dense when small, otherwise products via triplets.

    Both products return draws x something arrays so callers never transpose: ``totals(W)`` is W @ A
    (weighted level totals per draw), ``per_row_moments(X)`` gives X @ A.T and (X * X) @ A.T (for each
    draw, each profile's sum of a per-level quantity and of its square).
    """

    def __init__(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape: tuple[int, int]) -> None:
        order = np.lexsort((cols, rows))
        self.rows, self.cols, self.vals = rows[order], cols[order], vals[order].astype(np.float64)
        self.shape = shape
        n_rows, n_cols = shape
        self.nnz = len(self.rows)
        self.all_ones = bool(np.all(self.vals == 1.0))
        self.dense: np.ndarray | None = None
        if n_rows * n_cols <= _DENSE_CELLS:
            self.dense = np.zeros(shape)
            self.dense[self.rows, self.cols] = self.vals
        else:
            # Every row and column is non-empty by construction, so reduceat segments are never empty.
            self.row_starts = np.flatnonzero(np.r_[True, self.rows[1:] != self.rows[:-1]])
            by_col = np.lexsort((self.rows, self.cols))
            self.c_rows, self.c_vals = self.rows[by_col], self.vals[by_col]
            c_cols = self.cols[by_col]
            self.col_starts = np.flatnonzero(np.r_[True, c_cols[1:] != c_cols[:-1]])

    @property
    def cells_per_draw(self) -> int:
        return self.shape[1] if self.dense is not None else self.nnz

    def totals(self, weights: np.ndarray) -> np.ndarray:
        if self.dense is not None:
            return weights @ self.dense
        gathered = weights[:, self.c_rows]
        return np.add.reduceat(gathered if self.all_ones else gathered * self.c_vals, self.col_starts, axis=1)

    def per_row_moments(self, per_level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """X @ A.T and (X * X) @ A.T, sharing one gather on the sparse path."""
        if self.dense is not None:
            return per_level @ self.dense.T, (per_level * per_level) @ self.dense.T
        gathered = per_level[:, self.cols]
        weighted = gathered if self.all_ones else gathered * self.vals
        first = np.add.reduceat(weighted, self.row_starts, axis=1)
        weighted *= gathered
        return first, np.add.reduceat(weighted, self.row_starts, axis=1)


class Reliability:
    """Ratings prepared once for alpha and its bootstrap.

    Build it with :meth:`from_long`; :meth:`alpha` gives the point estimate and :meth:`bootstrap` the
    seeded interval. Preparing is the only pass over the raw rows; everything after works on profiles.
    """

    def __init__(
        self,
        *,
        level: Level,
        level_values: np.ndarray,
        counts: _CountMatrix,
        multiplicity: np.ndarray,
        unit_profile: np.ndarray,
        unit_labels: np.ndarray,
        n_coders: int,
    ) -> None:
        self.level = level
        self.level_values = level_values
        self.counts = counts
        self.multiplicity = multiplicity.astype(np.float64)
        self.unit_profile = unit_profile
        self.unit_labels = unit_labels
        self.n_units = len(unit_labels)
        self.n_coders = n_coders
        rows, vals = counts.rows, counts.vals
        n_profiles = counts.shape[0]
        self.m = np.bincount(rows, weights=vals, minlength=n_profiles)
        self.n_pairable_values = int(round(float(self.multiplicity @ self.m)))
        self._stats = self._profile_stats()

    # -- construction -------------------------------------------------------------------------------

    @classmethod
    def from_long(
        cls,
        data: pd.DataFrame,
        level: str = "interval",
        *,
        unit: str = "unit",
        coder: str = "coder",
        value: str = "value",
    ) -> Reliability:
        """Prepare long-format ratings; one row per (unit, coder), null values count as missing.

        Raises ValueError when a coder rated a unit twice (the reliability matrix has one cell per
        coder and unit) or when a non-nominal level meets non-numeric values.
        """
        import pandas as pd

        level = check_level(level)
        _require_columns(data, (unit, coder, value))
        frame = data.loc[data[value].notna(), [unit, coder, value]]
        duplicated = frame.duplicated([unit, coder])
        if duplicated.any():
            first = frame.loc[duplicated].iloc[0]
            raise ValueError(f"coder {first[coder]!r} rated unit {first[unit]!r} more than once")
        unit_codes, unit_uniques = pd.factorize(frame[unit])
        sizes = np.bincount(unit_codes) if len(unit_codes) else np.zeros(0, dtype=np.int64)
        keep = sizes[unit_codes] >= 2
        raw_values = frame[value].to_numpy()[keep]
        n_coders = int(frame[coder][keep].nunique())
        kept_codes, units = np.unique(unit_codes[keep], return_inverse=True)
        unit_labels = np.asarray(unit_uniques, dtype=object)[kept_codes]
        n_units = len(unit_labels)

        if level == "nominal":
            try:
                numeric = _numeric_values(raw_values, level)
            except ValueError:
                codes, uniques = pd.factorize(raw_values)
                level_values = np.asarray(uniques, dtype=object)
            else:
                level_values, codes = np.unique(numeric, return_inverse=True)
        else:
            level_values, codes = np.unique(_numeric_values(raw_values, level), return_inverse=True)
        n_levels = len(level_values)
        codes = codes.astype(np.int64)
        units = units.astype(np.int64)

        if n_units == 0:
            rows = cols = vals = np.zeros(0, dtype=np.int64)
            multiplicity = unit_profile = np.zeros(0, dtype=np.int64)
            n_profiles = 0
        elif n_units * n_levels <= _PROFILE_CELLS:
            per_unit = np.bincount(units * n_levels + codes, minlength=n_units * n_levels)
            per_unit = per_unit.reshape(n_units, n_levels)
            profiles, unit_profile, multiplicity = _unique_rows(per_unit)
            n_profiles = len(profiles)
            rows, cols = np.nonzero(profiles)
            vals = profiles[rows, cols]
        else:
            # Too many distinct values to look for identical units: each unit is its own profile.
            keys, vals = np.unique(units * n_levels + codes, return_counts=True)
            rows, cols = keys // n_levels, keys % n_levels
            n_profiles = n_units
            multiplicity = np.ones(n_units, dtype=np.int64)
            unit_profile = np.arange(n_units)
        counts = _CountMatrix(rows, cols, vals, (n_profiles, n_levels))
        return cls(
            level=level,
            level_values=level_values,
            counts=counts,
            multiplicity=multiplicity,
            unit_profile=unit_profile,
            unit_labels=unit_labels,
            n_coders=n_coders,
        )

    def _profile_stats(self) -> dict[str, np.ndarray]:
        """Per-profile quantities that do not change between bootstrap draws."""
        rows, cols, vals = self.counts.rows, self.counts.cols, self.counts.vals
        n_profiles = self.counts.shape[0]
        m = self.m
        if n_profiles == 0:
            return {}
        stats: dict[str, np.ndarray] = {}
        if self.level == "nominal":
            same = np.bincount(rows, weights=vals * vals, minlength=n_profiles)
            stats["d"] = (m * m - same) / (m - 1)
        elif self.level == "interval":
            x = self.level_values.astype(np.float64)
            stats["d"] = _within_unit_disagreement(rows, x[cols], vals, m)
            centre = float(np.sum(self.multiplicity[rows] * vals * x[cols]) / (self.multiplicity @ m))
            xc = x[cols] - centre
            stats["s1"] = np.bincount(rows, weights=vals * xc, minlength=n_profiles)
            stats["s2"] = np.bincount(rows, weights=vals * xc * xc, minlength=n_profiles)
        elif self.level == "ratio":
            x = self.level_values.astype(np.float64)
            stats["d"] = _ratio_within_unit(rows, cols, vals, x, m, n_profiles)
        return stats

    # -- point estimate -----------------------------------------------------------------------------

    def alpha(self) -> AlphaResult:
        """Point estimate of alpha, equal to the ``krippendorff`` package's to rounding."""
        if self.n_units == 0:
            return self._result(None, None, None, NO_PAIRABLE_UNIT)
        w = self.multiplicity
        n = float(w @ self.m)
        totals = self.counts.totals(w[None, :])[0]
        if np.count_nonzero(totals) < 2:
            return self._result(None, 0.0, 0.0, NO_VARIATION)
        rows, cols, vals = self.counts.rows, self.counts.cols, self.counts.vals
        if self.level == "nominal":
            observed = float(w @ self._stats["d"])
            expected = n * n - float(totals @ totals)
        elif self.level == "ratio":
            observed = float(w @ self._stats["d"])
            expected = float(_ratio_expected(totals[None, :], self.level_values.astype(np.float64))[0])
        else:
            if self.level == "interval":
                x = self.level_values.astype(np.float64)
            else:
                x = np.cumsum(totals) - totals / 2.0
            observed = float(w @ _within_unit_disagreement(rows, x[cols], vals, self.m))
            mean = float(totals @ x) / n
            expected = 2.0 * n * float(totals @ (x - mean) ** 2)
        if expected <= 0:
            return self._result(None, observed / n, 0.0, NO_EXPECTED_DISAGREEMENT)
        alpha = 1.0 - (n - 1.0) * observed / expected
        return self._result(alpha, observed / n, expected / (n * (n - 1.0)), None)

    def _result(
        self, alpha: float | None, observed: float | None, expected: float | None, reason: str | None
    ) -> AlphaResult:
        return AlphaResult(
            alpha=alpha,
            level=self.level,
            n_units=self.n_units,
            n_coders=self.n_coders,
            n_pairable_values=self.n_pairable_values,
            observed_disagreement=observed,
            expected_disagreement=expected,
            undefined_reason=reason,
        )

    # -- bootstrap ----------------------------------------------------------------------------------

    def bootstrap(
        self,
        *,
        draws: int = 1000,
        seed: int | np.random.Generator = 0,
        alpha_min: Sequence[float] = (),
        confidence: float = 0.95,
    ) -> AlphaBootstrap:
        """Resample pairable units with replacement ``draws`` times and recompute alpha each time.

        The same seed (or a Generator in the same state) and the same data give the same draws. The
        interval is the percentile interval of the defined draws.
        """
        if draws < 0:
            raise ValueError("draws must be >= 0")
        if not 0 < confidence < 1:
            raise ValueError("confidence must lie between 0 and 1")
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        alphas = np.full(draws, np.nan)
        if self.n_units > 0 and draws > 0:
            n_profiles = self.counts.shape[0]
            use_multinomial = n_profiles * 6 < self.n_units
            per_draw = n_profiles + self.counts.cells_per_draw + (0 if use_multinomial else self.n_units)
            if self.level == "ratio":
                per_draw += min(self.counts.shape[1] ** 2, _CHUNK_CELLS // 4)
            chunk = max(1, min(draws, _CHUNK_CELLS // max(per_draw, 1)))
            for start in range(0, draws, chunk):
                size = min(chunk, draws - start)
                weights = self._draw_weights(rng, size, use_multinomial)
                alphas[start : start + size] = self._alpha_for_weights(weights)
        defined = alphas[~np.isnan(alphas)]
        ci: tuple[float, float] | None = None
        if len(defined):
            tail = (1.0 - confidence) / 2.0
            lo, hi = np.quantile(defined, [tail, 1.0 - tail])
            ci = (float(lo), float(hi))
        q_below = {float(a): (float(np.mean(defined < a)) if len(defined) else None) for a in alpha_min}
        return AlphaBootstrap(
            draws=draws,
            n_defined=int(len(defined)),
            confidence=confidence,
            ci=ci,
            q_below=q_below,
            alphas=alphas,
        )

    def weighted_alpha(self, unit_weights: np.ndarray) -> np.ndarray:
        """Alpha of data in which pairable unit i appears ``unit_weights[..., i]`` times.

        Columns follow :attr:`unit_labels`. A bootstrap draw is such a weight vector; this lets a caller
        (or a test) evaluate any chosen resample. Returns NaN where alpha is undefined.
        """
        weights = np.atleast_2d(np.asarray(unit_weights, dtype=np.float64))
        if weights.shape[1] != self.n_units:
            raise ValueError(f"expected {self.n_units} unit weights per row, got {weights.shape[1]}")
        n_profiles = self.counts.shape[0]
        per_profile = np.zeros((weights.shape[0], n_profiles))
        for row, unit_row in zip(per_profile, weights, strict=True):
            row += np.bincount(self.unit_profile, weights=unit_row, minlength=n_profiles)
        return self._alpha_for_weights(per_profile)

    def _draw_weights(self, rng: np.random.Generator, size: int, use_multinomial: bool) -> np.ndarray:
        """Profile weights of ``size`` draws, each a resample of all pairable units with replacement."""
        n_profiles = self.counts.shape[0]
        if use_multinomial:
            probabilities = self.multiplicity / self.n_units
            return rng.multinomial(self.n_units, probabilities, size=size).astype(np.float64)
        picked = rng.integers(0, self.n_units, size=(size, self.n_units))
        flat = self.unit_profile[picked] + (np.arange(size, dtype=np.int64) * n_profiles)[:, None]
        return np.bincount(flat.ravel(), minlength=size * n_profiles).reshape(size, n_profiles).astype(float)

    def _alpha_for_weights(self, weights: np.ndarray) -> np.ndarray:
        """Alpha for each row of profile weights; NaN where that resample's alpha is undefined."""
        # An all-zero weight row (possible through weighted_alpha) divides by zero; it ends up NaN.
        with np.errstate(divide="ignore", invalid="ignore"):
            n = weights @ self.m
            if self.level == "interval":
                observed = weights @ self._stats["d"]
                t1 = weights @ self._stats["s1"]
                t2 = weights @ self._stats["s2"]
                expected = 2.0 * (n * t2 - t1 * t1)
                undefined = expected <= 1e-10 * 2.0 * n * t2
            else:
                totals = self.counts.totals(weights)
                undefined = np.count_nonzero(totals, axis=1) < 2
                if self.level == "nominal":
                    observed = weights @ self._stats["d"]
                    expected = n * n - np.einsum("ij,ij->i", totals, totals)
                elif self.level == "ratio":
                    observed = weights @ self._stats["d"]
                    expected = _ratio_expected(totals, self.level_values.astype(np.float64))
                else:
                    ranks = np.cumsum(totals, axis=1) - totals / 2.0
                    ranks -= (np.einsum("ij,ij->i", totals, ranks) / n)[:, None]
                    s1, s2 = self.counts.per_row_moments(ranks)
                    spread = 2.0 * (self.m * s2 - s1 * s1) / (self.m - 1.0)
                    observed = np.einsum("ij,ij->i", weights, spread)
                    expected = 2.0 * n * np.einsum("ij,ij->i", totals, ranks * ranks)
                undefined |= expected <= 0
            alphas = 1.0 - (n - 1.0) * observed / expected
        alphas[undefined] = np.nan
        return alphas


def _unique_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of a small-integer matrix, each row's index among them, and how often each occurs."""
    n_cols = matrix.shape[1]
    base = int(matrix.max()) + 1
    if n_cols * math.log2(max(base, 2)) < 62:
        powers = base ** np.arange(n_cols, dtype=np.int64)
        keys = matrix.astype(np.int64) @ powers
        _, first, inverse, counts = np.unique(
            keys, return_index=True, return_inverse=True, return_counts=True
        )
        return matrix[first], inverse, counts
    rows, inverse, counts = np.unique(matrix, axis=0, return_inverse=True, return_counts=True)
    return rows, inverse.ravel(), counts


def _within_unit_disagreement(rows: np.ndarray, x: np.ndarray, vals: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Sum over ordered pairs of a profile's values of (x_i - x_j)^2, over (m - 1); two-pass for accuracy.

    sum_{i != j} (x_i - x_j)^2 = 2 m sum_i (x_i - mean)^2.
    """
    n_profiles = len(m)
    mean = np.bincount(rows, weights=vals * x, minlength=n_profiles) / m
    spread = np.bincount(rows, weights=vals * (x - mean[rows]) ** 2, minlength=n_profiles)
    return 2.0 * m * spread / (m - 1.0)


def _ratio_within_unit(
    rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, x: np.ndarray, m: np.ndarray, n_profiles: int
) -> np.ndarray:
    """Each profile's sum over value pairs of n_c n_k delta_ck / (m - 1) for the ratio metric."""
    row_len = np.bincount(rows, minlength=n_profiles)
    row_start = np.cumsum(row_len) - row_len
    repeat = row_len[rows]
    first = np.repeat(np.arange(len(rows)), repeat)
    block_start = np.repeat(np.cumsum(repeat) - repeat, repeat)
    second = row_start[rows[first]] + (np.arange(len(first)) - block_start)
    pair = vals[first] * vals[second] * _ratio_distance(x[cols[first]], x[cols[second]])
    return np.bincount(rows[first], weights=pair, minlength=n_profiles) / (m - 1.0)


def _ratio_expected(totals: np.ndarray, x: np.ndarray) -> np.ndarray:
    """sum_{c,k} n_c n_k delta_ck per row of level totals, in column blocks to bound memory."""
    n_levels = len(x)
    block = max(1, min(n_levels, _CHUNK_CELLS // 4 // max(n_levels, 1)))
    out = np.zeros(totals.shape[0])
    for start in range(0, n_levels, block):
        stop = min(n_levels, start + block)
        delta = _ratio_distance(x[:, None], x[None, start:stop])
        out += np.einsum("ij,ij->i", totals @ delta, totals[:, start:stop])
    return out


# -- convenience wrappers ---------------------------------------------------------------------------


def krippendorff_alpha(
    data: pd.DataFrame,
    level: str = "interval",
    *,
    unit: str = "unit",
    coder: str = "coder",
    value: str = "value",
) -> AlphaResult:
    """Krippendorff's alpha of long-format ratings at the given level of measurement."""
    return Reliability.from_long(data, level, unit=unit, coder=coder, value=value).alpha()


def alpha_bootstrap(
    data: pd.DataFrame,
    level: str = "interval",
    *,
    draws: int = 1000,
    seed: int | np.random.Generator = 0,
    alpha_min: Sequence[float] = (),
    confidence: float = 0.95,
    unit: str = "unit",
    coder: str = "coder",
    value: str = "value",
) -> AlphaBootstrap:
    """Seeded unit-resampling bootstrap of alpha; see :meth:`Reliability.bootstrap`."""
    prepared = Reliability.from_long(data, level, unit=unit, coder=coder, value=value)
    return prepared.bootstrap(draws=draws, seed=seed, alpha_min=alpha_min, confidence=confidence)


def reliability_matrix_to_long(
    matrix: Sequence[Sequence[object]] | np.ndarray,
    *,
    coders: Sequence[object] | None = None,
    units: Sequence[object] | None = None,
) -> pd.DataFrame:
    """Turn a coders x units reliability matrix (None/NaN = missing) into unit, coder, value rows."""
    import pandas as pd

    table = pd.DataFrame(list(matrix) if not isinstance(matrix, np.ndarray) else matrix)
    if coders is not None:
        table.index = list(coders)
    if units is not None:
        table.columns = list(units)
    long = table.rename_axis(index="coder", columns="unit").stack(future_stack=True).rename("value")
    long = long.reset_index()[["unit", "coder", "value"]]
    return long.loc[long["value"].notna()].reset_index(drop=True)


# -- raw agreement and chance-corrected coefficients ------------------------------------------------


def _category_counts(data: pd.DataFrame, unit: str, value: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unit index, category index, count) triplets over units with at least one value."""
    import pandas as pd

    frame = data.loc[data[value].notna(), [unit, value]]
    unit_codes, _ = pd.factorize(frame[unit])
    values = frame[value].to_numpy()
    try:
        _, cat_codes = np.unique(_numeric_values(values, "nominal"), return_inverse=True)
    except ValueError:
        cat_codes, _ = pd.factorize(values)
    n_cats = int(cat_codes.max()) + 1 if len(cat_codes) else 0
    keys, counts = np.unique(unit_codes.astype(np.int64) * max(n_cats, 1) + cat_codes, return_counts=True)
    return keys // max(n_cats, 1), keys % max(n_cats, 1), counts.astype(np.float64)


def percent_agreement(data: pd.DataFrame, *, unit: str = "unit", value: str = "value") -> float | None:
    """Mean over pairable units of the share of agreeing pairs of values (exact equality).

    Each unit counts once whatever its number of values (Gwet's p_a); None when no unit has two values.
    """
    _require_columns(data, (unit, value))
    units, _, counts = _category_counts(data, unit, value)
    if len(units) == 0:
        return None
    m = np.bincount(units, weights=counts)
    same = np.bincount(units, weights=counts * (counts - 1.0), minlength=len(m))
    pairable = m >= 2
    if not pairable.any():
        return None
    return float(np.mean(same[pairable] / (m[pairable] * (m[pairable] - 1.0))))


def gwet_ac1(
    data: pd.DataFrame, *, unit: str = "unit", value: str = "value", n_categories: int | None = None
) -> ChanceCorrected:
    """Gwet's AC1 for nominal ratings by any number of raters with missing values (Gwet 2008, 2014).

    p_a is :func:`percent_agreement` (over units with two or more values); pi_c is the mean over all
    units with at least one value of the share of the unit's values in category c; p_e = sum_c pi_c
    (1 - pi_c) / (Q - 1) with Q the number of categories (those observed unless ``n_categories``).
    """
    _require_columns(data, (unit, value))
    units, cats, counts = _category_counts(data, unit, value)
    if len(units) == 0:
        return ChanceCorrected(None, None, None, 0, NO_PAIRABLE_UNIT)
    m = np.bincount(units, weights=counts)
    pairable = int(np.count_nonzero(m >= 2))
    observed = percent_agreement(data, unit=unit, value=value)
    if observed is None:
        return ChanceCorrected(None, None, None, 0, NO_PAIRABLE_UNIT)
    q = n_categories if n_categories is not None else int(cats.max()) + 1
    if q < 2:
        return ChanceCorrected(None, observed, None, pairable, NO_VARIATION)
    pi = np.bincount(cats, weights=counts / m[units], minlength=q) / len(m)
    expected = float(np.sum(pi * (1.0 - pi)) / (q - 1))
    return ChanceCorrected((observed - expected) / (1.0 - expected), observed, expected, pairable)


def cohen_kappa(
    data: pd.DataFrame,
    *,
    coders: tuple[object, object] | None = None,
    unit: str = "unit",
    coder: str = "coder",
    value: str = "value",
) -> ChanceCorrected:
    """Cohen's kappa of two coders over the units both rated (nominal, unweighted).

    With ``coders=None`` the data must hold exactly two coders. Undefined when chance agreement is 1
    (both coders used one and the same category throughout).
    """
    import pandas as pd

    _require_columns(data, (unit, coder, value))
    frame = data.loc[data[value].notna()]
    if coders is None:
        present = list(pd.unique(frame[coder]))
        if len(present) != 2:
            raise ValueError(f"Cohen's kappa needs exactly two coders, found {len(present)}")
        coders = (present[0], present[1])
    table = frame.loc[frame[coder].isin(coders)].pivot(index=unit, columns=coder, values=value)
    table = table.dropna()
    if table.empty or any(c not in table.columns for c in coders):
        return ChanceCorrected(None, None, None, 0, NO_PAIRABLE_UNIT)
    a, b = table[coders[0]].to_numpy(), table[coders[1]].to_numpy()
    observed = float(np.mean(a == b))
    pa = pd.Series(a).value_counts(normalize=True)
    pb = pd.Series(b).value_counts(normalize=True)
    expected = float((pa * pb.reindex(pa.index, fill_value=0.0)).sum())
    if expected >= 1.0:
        return ChanceCorrected(None, observed, expected, len(table), NO_VARIATION)
    return ChanceCorrected((observed - expected) / (1.0 - expected), observed, expected, len(table))


def fleiss_kappa(data: pd.DataFrame, *, unit: str = "unit", value: str = "value") -> ChanceCorrected:
    """Fleiss' kappa; every unit must carry the same number (>= 2) of values.

    Raises ValueError otherwise: Fleiss' formula has no answer for unequal numbers of ratings, and
    Krippendorff's alpha or Gwet's AC1 are the coefficients to use then.
    """
    _require_columns(data, (unit, value))
    units, cats, counts = _category_counts(data, unit, value)
    if len(units) == 0:
        return ChanceCorrected(None, None, None, 0, NO_PAIRABLE_UNIT)
    m = np.bincount(units, weights=counts)
    raters = np.unique(m)
    if len(raters) != 1 or raters[0] < 2:
        found = ", ".join(str(int(r)) for r in raters[:5])
        raise ValueError(
            f"Fleiss' kappa needs the same number (>= 2) of ratings for every unit, found {found}; "
            "use Krippendorff's alpha or Gwet's AC1"
        )
    k = float(raters[0])
    n_units = len(m)
    same = np.bincount(units, weights=counts * (counts - 1.0), minlength=n_units)
    observed = float(np.mean(same / (k * (k - 1.0))))
    p = np.bincount(cats, weights=counts) / (n_units * k)
    expected = float(np.sum(p * p))
    if expected >= 1.0:
        return ChanceCorrected(None, observed, expected, n_units, NO_VARIATION)
    return ChanceCorrected((observed - expected) / (1.0 - expected), observed, expected, n_units)


NOT_TWO_CODERS = "not two coders"
UNEQUAL_RATINGS = "unequal numbers of ratings per unit"


@dataclass(frozen=True)
class Kappas:
    """Cohen's kappa (when exactly two coders rated) and Fleiss' kappa (when every unit has the same number of
    ratings), unweighted: values are compared as categories. Each is ``None`` with its reason otherwise."""

    cohen: float | None
    cohen_reason: str | None
    fleiss: float | None
    fleiss_reason: str | None


def kappas(data: pd.DataFrame, *, unit: str = "unit", coder: str = "coder", value: str = "value") -> Kappas:
    """Both kappas of one set of ratings, each where its design holds (see :class:`Kappas`)."""
    _require_columns(data, (unit, coder, value))
    rated = data.loc[data[value].notna()]
    if rated[coder].nunique() == 2:
        cohen = cohen_kappa(rated, unit=unit, coder=coder, value=value)
        cohen_value, cohen_reason = cohen.value, cohen.undefined_reason
    else:
        cohen_value, cohen_reason = None, NOT_TWO_CODERS
    try:
        fleiss = fleiss_kappa(rated, unit=unit, value=value)
    except ValueError:
        fleiss_value, fleiss_reason = None, UNEQUAL_RATINGS
    else:
        fleiss_value, fleiss_reason = fleiss.value, fleiss.undefined_reason
    return Kappas(cohen_value, cohen_reason, fleiss_value, fleiss_reason)


# -- breakdowns, outliers, groups -------------------------------------------------------------------


def leave_one_out_alpha(
    data: pd.DataFrame,
    level: str = "interval",
    *,
    unit: str = "unit",
    coder: str = "coder",
    value: str = "value",
) -> pd.DataFrame:
    """Alpha recomputed without each coder in turn, to spot coders who pull agreement down.

    Columns: coder, alpha (without that coder), delta (that alpha minus alpha with everyone; positive
    means agreement rises without the coder), n_units, n_pairable_values, undefined_reason. Sorted with
    the largest delta first; delta is None where either alpha is undefined.
    """
    import pandas as pd

    _require_columns(data, (unit, coder, value))
    frame = data.loc[data[value].notna(), [unit, coder, value]]
    everyone = krippendorff_alpha(frame, level, unit=unit, coder=coder, value=value)
    # Units and coders as integer codes, found once: alpha depends on which ratings share a unit, not on
    # the units' names, and each coder's alpha then works on integers instead of text.
    unit_codes, _ = pd.factorize(frame[unit])
    coder_codes, coder_names = pd.factorize(frame[coder], sort=True)
    coded = pd.DataFrame({"unit": unit_codes, "coder": coder_codes, "value": frame[value].to_numpy()})
    rows = []
    for index, name in enumerate(coder_names):
        result = krippendorff_alpha(coded.loc[coded["coder"].to_numpy() != index], level)
        delta = None
        if result.alpha is not None and everyone.alpha is not None:
            delta = result.alpha - everyone.alpha
        rows.append(
            {
                "coder": name,
                "alpha": result.alpha,
                "delta": delta,
                "n_units": result.n_units,
                "n_pairable_values": result.n_pairable_values,
                "undefined_reason": result.undefined_reason,
            }
        )
    table = pd.DataFrame(
        rows, columns=["coder", "alpha", "delta", "n_units", "n_pairable_values", "undefined_reason"]
    )
    order = table["delta"].astype(float).fillna(-np.inf).sort_values(ascending=False, kind="stable").index
    return table.loc[order].reset_index(drop=True)


def alpha_by(
    data: pd.DataFrame,
    level: str,
    by: Sequence[str],
    *,
    bootstrap: int = 0,
    seed: int = 0,
    alpha_min: Sequence[float] = (),
    unit: str = "unit",
    coder: str = "coder",
    value: str = "value",
) -> pd.DataFrame:
    """One row per combination of the ``by`` columns: alpha, counts, and (with bootstrap) ci_low/ci_high.

    Each group is bootstrapped with its own Generator seeded from ``seed`` so results do not depend on
    which other groups exist.
    """
    import pandas as pd

    _require_columns(data, (*by, unit, coder, value))
    rows = []
    groups = data.groupby(list(by), sort=True, dropna=False) if by else [((), data)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        prepared = Reliability.from_long(group, level, unit=unit, coder=coder, value=value)
        result = prepared.alpha()
        row = dict(zip(by, key, strict=True))
        row.update(
            alpha=result.alpha,
            n_units=result.n_units,
            n_coders=result.n_coders,
            n_pairable_values=result.n_pairable_values,
            undefined_reason=result.undefined_reason,
        )
        if bootstrap:
            boot = prepared.bootstrap(draws=bootstrap, seed=seed, alpha_min=alpha_min)
            row["ci_low"], row["ci_high"] = boot.ci if boot.ci else (None, None)
            for threshold, q in boot.q_below.items():
                row[f"q_below_{threshold:g}"] = q
        rows.append(row)
    return pd.DataFrame(rows)


def alpha_breakdowns(
    data: pd.DataFrame,
    level: str,
    *,
    dimensions: Sequence[str] | None = None,
    within: Sequence[str] = ("criterion",),
    unit: str = "unit",
    coder: str = "coder",
    value: str = "value",
) -> pd.DataFrame:
    """Tidy table of alpha per value of each grouping dimension (separately), inside each ``within`` group.

    ``dimensions`` defaults to the columns of :data:`GROUPING_COLUMNS` present in the data (other than
    those in ``within``). Columns: the ``within`` columns present, dimension, group (the dimension's
    value), alpha, n_units, n_coders, n_pairable_values, undefined_reason.
    """
    import pandas as pd

    inside = [c for c in within if c in data.columns]
    if dimensions is None:
        dimensions = [c for c in GROUPING_COLUMNS if c in data.columns and c not in inside]
    frames = []
    for dimension in dimensions:
        table = alpha_by(data, level, [*inside, dimension], unit=unit, coder=coder, value=value)
        table = table.rename(columns={dimension: "group"})
        table.insert(len(inside), "dimension", dimension)
        frames.append(table)
    columns = [*inside, "dimension", "group", "alpha", "n_units", "n_coders", "n_pairable_values"]
    if not frames:
        return pd.DataFrame(columns=[*columns, "undefined_reason"])
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class BetweenGroups:
    """Agreement between two annotator groups that rated the same units.

    ``alpha_means`` treats each group's per-unit mean as one coder; ``alpha_pooled`` is alpha over all
    coders of both groups. ``pearson_r`` and ``mean_offset`` (mean of first group's unit means minus
    the second's) use the ``n_shared_units`` units that both groups rated.
    """

    groups: tuple[object, object]
    alpha_means: AlphaResult
    alpha_pooled: AlphaResult
    pearson_r: float | None
    mean_offset: float | None
    n_shared_units: int


def between_group_agreement(
    data: pd.DataFrame,
    level: str = "interval",
    *,
    group: str = "group",
    groups: tuple[object, object] | None = None,
    unit: str = "unit",
    coder: str = "coder",
    value: str = "value",
) -> BetweenGroups:
    """Compare two annotator groups on the units they both rated (IndoPref's two groups).

    Group means are not categories, so ``level`` must be interval, ratio or ordinal; the pooled alpha
    uses the same level. A coder id is qualified by its group in the pooled data.
    """
    import pandas as pd

    level = check_level(level)
    if level == "nominal":
        raise ValueError("between-group alpha averages ratings per group; use interval, ratio or ordinal")
    _require_columns(data, (group, unit, coder, value))
    frame = data.loc[data[value].notna(), [group, unit, coder, value]].copy()
    frame[value] = _numeric_values(frame[value].to_numpy(), level)
    if groups is None:
        present = sorted(pd.unique(frame[group]), key=str)
        if len(present) != 2:
            raise ValueError(f"between-group agreement needs exactly two groups, found {len(present)}")
        groups = (present[0], present[1])
    frame = frame.loc[frame[group].isin(groups)]
    means = frame.groupby([unit, group], sort=False)[value].mean().rename("value").reset_index()
    means = means.rename(columns={group: "coder", unit: "unit"})
    alpha_means = krippendorff_alpha(means, level)
    pooled = frame.assign(_coder=frame[group].astype(str) + "/" + frame[coder].astype(str))
    alpha_pooled = krippendorff_alpha(pooled, level, unit=unit, coder="_coder", value=value)
    wide = means.pivot(index="unit", columns="coder", values="value").dropna()
    shared = len(wide)
    r = offset = None
    if shared:
        a, b = wide[groups[0]].to_numpy(), wide[groups[1]].to_numpy()
        offset = float(np.mean(a - b))
        if shared >= 2 and np.std(a) > 0 and np.std(b) > 0:
            r = float(np.corrcoef(a, b)[0, 1])
    return BetweenGroups(groups, alpha_means, alpha_pooled, r, offset, shared)
