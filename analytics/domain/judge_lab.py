"""Judge lab: when can an LLM judge stand in for people, and with what uncertainty.

Pure computations over the same frames as :mod:`analytics.domain.judge_agreement`:

* ``human``: one row per human vote, columns ``item``, ``annotator``, ``vote`` (A, B or tie);
* ``judge``: one row per judge output, columns ``item``, ``judge``, ``vote`` (A, B, tie or error),
  optional ``order`` (``ab``: response A was shown first, the default; ``ba``: B was shown first) and
  ``sample`` (the index of one of k sampled verdicts of the same item and order);
* ``items``: one row per item with whatever is known of it: ``category``, ``language``, ``register``,
  ``model_a``, ``model_b``, ``length_a``, ``length_b`` (characters, words or tokens: only their
  difference relative to their sum is used).

Estimators (each checked on hand-computed numbers in the tests):

* proportions with Wilson score intervals (:func:`proportion`);
* a judge's verdict per item from several outputs (orders and samples): the strict mode of its parsed
  verdicts, ``tie`` when the top count is shared (the rule :func:`~analytics.domain.judge_agreement.
  human_majority` applies to people), ``error`` when none parsed (:func:`item_verdicts`);
* position bias: the share of decisive verdicts that pick the response shown first, which an unbiased
  judge keeps near 1/2, and the existing consistency counts over items judged in both orders;
* length bias: win rate of response A against the binned relative length difference
  (len_a - len_b) / (len_a + len_b), a logistic regression of "A wins" on that difference (slope with a
  Wald interval; a positive slope means longer answers win), and the win rate of the longer answer
  (MT-bench's figure), each for the judge and for the human majority on the same items;
* self-preference: how often a judge picks the answer of its own model family over another family's,
  beside how often people pick it on the same items;
* agreement with people per slice (category, language, language with register) with Wilson intervals
  and the best judge per slice (:func:`judge_choice`);
* length-controlled win rates against a baseline, AlpacaEval-style (Dubois et al. 2024): per model a
  logistic GLM logit P(model wins) = theta_m + phi_m * tanh(delta / sd(delta)), where delta is the
  model's length minus the baseline's and sd is taken over every comparison; the length-controlled win
  rate is the prediction at delta = 0, sigmoid(theta_m), shown beside the raw win rate (ties count 1/2);
* calibration from k sampled verdicts per item: confidence = share of the modal verdict; against the
  human majority (items with a human tie left out): reliability bins, expected calibration error
  (ECE = sum over bins of n_b / n * |accuracy_b - confidence_b|), Brier score (mean of
  (confidence - correct)^2), per category;
* prediction-powered inference for a win rate (Angelopoulos et al. 2023, with the power-tuned lambda of
  PPI++, Angelopoulos, Duchi and Zrnic 2023; Boyeau et al. 2024 for model evaluation): judge labels f on
  N items without human labels and on the n items with human labels Y (per item the share of people who
  prefer the model, ties half):
  theta = mean_n(Y) + lambda * (mean_N(f) - mean_n(f)), var = lambda^2 var_N(f) / N + var_n(Y - lambda f) / n,
  lambda = cov_n(Y, f) / ((1 + n / N) var_n(f)) clipped to [0, 1]; beside it the human-only estimate
  (mean_n(Y), var_n(Y) / n), the judge-only estimate over all N + n items (biased when the judge is),
  and the effective number of human labels n * var(human-only) / var(PPI).

Intervals are normal-approximation (Wald) intervals unless named Wilson. Everything here is plain
numpy and pandas; pandas is imported where it is used so start-up does not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np

from analytics.domain.judge_agreement import (
    ERROR,
    TIE,
    VERDICTS,
    A,
    B,
    human_majority,
    position_consistency,
)
from evaluation.domain.language_tables import language_register

if TYPE_CHECKING:
    import pandas as pd

AB = "ab"
BA = "ba"
ORDERS = (AB, BA)

#: Edges of the relative length difference (len_a - len_b) / (len_a + len_b) for the length-bias curve.
LENGTH_BIN_EDGES = (-1.0, -0.5, -0.25, -0.1, 0.1, 0.25, 0.5, 1.0)
#: Reliability bins: equal-width bins of confidence over [0, 1].
CALIBRATION_BINS = 10
#: A logistic coefficient this large (odds multiplied by e^15 per unit) means the outcomes are separated.
SEPARATION_COEF = 15.0
#: Smallest number of samples per item a calibration needs (with 2, confidence is 1/2 or 1 only).
MIN_SAMPLES = 3


def z_value(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence!r}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def _sigmoid(x: np.ndarray | float) -> np.ndarray | float:
    return 1.0 / (1.0 + np.exp(-np.clip(np.asarray(x, dtype=np.float64), -500.0, 500.0)))


def _f(value: Any) -> float | None:
    """A plain float, or None for NaN / missing."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


# -- proportions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Proportion:
    """``k`` of ``n`` with a Wilson score interval; rate and bounds are None when n is 0."""

    k: float
    n: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None

    def as_dict(self, prefix: str = "") -> dict[str, Any]:
        return {
            f"{prefix}rate": self.rate,
            f"{prefix}ci95": [self.ci_low, self.ci_high] if self.rate is not None else None,
            f"{prefix}n": self.n,
        }


def proportion(k: float, n: int, *, confidence: float = 0.95) -> Proportion:
    """Wilson score interval for k successes out of n (k may hold halves for ties)."""
    if n <= 0:
        return Proportion(k=k, n=0, rate=None, ci_low=None, ci_high=None)
    if not 0 <= k <= n:
        raise ValueError(f"{k} successes out of {n} is not a proportion")
    z = z_value(confidence)
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return Proportion(k=k, n=n, rate=p, ci_low=max(0.0, centre - half), ci_high=min(1.0, centre + half))


# -- logistic regression ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogisticFit:
    """Coefficients, their standard errors (inverse Fisher information) and whether IRLS converged."""

    coef: np.ndarray
    se: np.ndarray
    converged: bool


def logistic_fit(
    design: np.ndarray, y: np.ndarray, *, max_iter: int = 100, tol: float = 1e-10, ridge: float = 1e-9
) -> LogisticFit:
    """Maximum-likelihood logistic regression by iteratively reweighted least squares.

    ``y`` may hold fractions (a tie is 1/2): the binomial quasi-likelihood has the same score equations.
    A tiny ``ridge`` keeps a separable fit finite; its standard errors are then huge, as they should be.
    """
    x = np.asarray(design, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or len(x) != len(y):
        raise ValueError("the design needs one row per outcome")
    beta = np.zeros(x.shape[1])
    converged = False
    penalty = ridge * np.eye(x.shape[1])
    for _ in range(max_iter):
        p = _sigmoid(x @ beta)
        w = np.clip(p * (1 - p), 1e-12, None)
        information = x.T @ (x * w[:, None]) + penalty
        step = np.linalg.solve(information, x.T @ (y - p) - penalty @ beta)
        beta = beta + step
        if np.max(np.abs(step)) < tol:
            converged = True
            break
    p = _sigmoid(x @ beta)
    w = np.clip(p * (1 - p), 1e-12, None)
    covariance = np.linalg.inv(x.T @ (x * w[:, None]) + penalty)
    return LogisticFit(coef=beta, se=np.sqrt(np.diag(covariance)), converged=converged)


# -- verdicts per item ------------------------------------------------------------------------------


def item_verdicts(judge: pd.DataFrame) -> pd.DataFrame:
    """One verdict per (judge, item) from all its outputs (orders, samples): columns item, judge, vote,
    confidence (share of the parsed outputs that gave the top label), n_outputs, n_parsed.

    The verdict is the strict mode of the parsed outputs (A, B or tie), ``tie`` when the top count is
    shared, ``error`` when none parsed; computed column-wise from the counts per (judge, item)."""
    import pandas as pd

    columns = ["item", "judge", "vote", "confidence", "n_outputs", "n_parsed"]
    if judge.empty:
        return pd.DataFrame(columns=columns)
    keys = ["judge", "item"]
    outputs = judge.groupby(keys, sort=True).size().rename("n_outputs")
    parsed = judge.loc[judge["vote"].isin(VERDICTS)]
    counts = parsed.groupby([*keys, "vote"], sort=True).size().unstack("vote", fill_value=0)
    counts = counts.reindex(columns=list(VERDICTS), fill_value=0).reindex(outputs.index, fill_value=0)
    table = counts.to_numpy()
    n_parsed = table.sum(axis=1)
    top = table.max(axis=1)
    shared = (table == top[:, None]).sum(axis=1) > 1
    vote = np.asarray(VERDICTS, dtype=object)[table.argmax(axis=1)]
    vote = np.where(shared, TIE, vote)
    vote = np.where(n_parsed == 0, ERROR, vote)
    with np.errstate(invalid="ignore", divide="ignore"):
        confidence = np.where(n_parsed > 0, top / np.maximum(n_parsed, 1), np.nan)
    out = pd.DataFrame(
        {
            "item": outputs.index.get_level_values("item"),
            "judge": outputs.index.get_level_values("judge"),
            "vote": vote,
            "confidence": confidence,
            "n_outputs": outputs.to_numpy(),
            "n_parsed": n_parsed,
        }
    )
    return out[columns]


def human_preference(human: pd.DataFrame) -> pd.DataFrame:
    """Per item the share of people who prefer A (ties count 1/2) and the majority label: columns item,
    pref_a, majority, n_votes."""
    majority = human_majority(human)
    share = human.assign(score=human["vote"].map({A: 1.0, B: 0.0, TIE: 0.5})).groupby("item")["score"].mean()
    return majority.merge(share.rename("pref_a").reset_index(), on="item")


# -- position bias -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PositionBias:
    """``first``: decisive outputs that picked the response shown first (Wilson interval; 1/2 when the
    position does not matter); ``n_ties`` and ``n_errors`` outputs left out; ``consistency``: the
    consistent / biased_first / biased_second / error shares over items judged in both orders (None when
    none was)."""

    first: Proportion
    n_ties: int
    n_errors: int
    n_both_orders: int
    consistency: dict[str, float | None] | None


def position_bias(judge: pd.DataFrame, *, confidence: float = 0.95) -> PositionBias:
    """Position bias of one judge from its outputs (item, vote, optional order and sample)."""
    orders = judge["order"] if "order" in judge.columns else np.full(len(judge), AB)
    votes = judge["vote"].to_numpy()
    orders = np.asarray(orders)
    decisive = np.isin(votes, (A, B))
    picked_first = ((votes == A) & (orders == AB)) | ((votes == B) & (orders == BA))
    first = proportion(int(picked_first.sum()), int(decisive.sum()), confidence=confidence)
    consistency = None
    n_both = 0
    if "order" in judge.columns:
        first_sample = judge.sort_values([c for c in ("sample",) if c in judge.columns] or ["item"])
        first_sample = first_sample.drop_duplicates(["item", "order"])
        ab = first_sample.loc[first_sample["order"] == AB].set_index("item")["vote"]
        ba = first_sample.loc[first_sample["order"] == BA].set_index("item")["vote"]
        both = ab.index.intersection(ba.index)
        n_both = len(both)
        if n_both:
            consistency = position_consistency(list(ab.loc[both]), list(ba.loc[both])).shares
    return PositionBias(
        first=first,
        n_ties=int((votes == TIE).sum()),
        n_errors=int((~np.isin(votes, VERDICTS)).sum()),
        n_both_orders=n_both,
        consistency=consistency,
    )


# -- length bias -------------------------------------------------------------------------------------


def relative_length_difference(length_a: Any, length_b: Any) -> np.ndarray:
    """(len_a - len_b) / (len_a + len_b), in [-1, 1]; 0 when both are empty."""
    a = np.asarray(length_a, dtype=np.float64)
    b = np.asarray(length_b, dtype=np.float64)
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (a - b) / np.where(total > 0, total, 1.0), 0.0)


@dataclass(frozen=True)
class LengthBias:
    """Win rate of A by bin of relative length difference (rows: bin, low, high, centre, n, wins_a,
    win_rate_a, ci_low, ci_high), the logistic slope of "A wins" on the difference with its interval,
    and the win rate of the longer answer (items of equal length left out). ``n`` decisive verdicts were
    used; ``n_ties`` left out."""

    curve: list[dict[str, Any]]
    slope: float | None
    slope_ci: tuple[float, float] | None
    intercept: float | None
    longer_wins: Proportion
    n: int
    n_ties: int


def length_bias(
    votes: Sequence[str] | np.ndarray,
    length_a: Any,
    length_b: Any,
    *,
    edges: Sequence[float] = LENGTH_BIN_EDGES,
    confidence: float = 0.95,
) -> LengthBias:
    """Length bias of one set of verdicts (a judge's, or the human majority) on items with both lengths.

    Only decisive verdicts (A or B) count; ties and errors are left out (ties counted)."""
    votes = np.asarray(votes, dtype=object)
    diff = relative_length_difference(length_a, length_b)
    known = ~np.isnan(diff)
    decisive = known & np.isin(votes, (A, B))
    n_ties = int((known & (votes == TIE)).sum())
    x = diff[decisive]
    y = (votes[decisive] == A).astype(np.float64)
    curve = []
    for k in range(len(edges) - 1):
        low, high = edges[k], edges[k + 1]
        inside = (x >= low) & ((x < high) if k < len(edges) - 2 else (x <= high))
        share = proportion(float(y[inside].sum()), int(inside.sum()), confidence=confidence)
        curve.append(
            {
                "bin": k,
                "low": low,
                "high": high,
                "centre": float(x[inside].mean()) if inside.any() else (low + high) / 2,
                "n": share.n,
                "wins_a": int(share.k),
                "win_rate_a": share.rate,
                "ci_low": share.ci_low,
                "ci_high": share.ci_high,
            }
        )
    slope = slope_ci = intercept = None
    if len(x) >= 3 and np.ptp(x) > 0 and 0 < y.sum() < len(y):
        fit = logistic_fit(np.column_stack([np.ones_like(x), x]), y)
        z = z_value(confidence)
        intercept, slope = float(fit.coef[0]), float(fit.coef[1])
        slope_ci = (slope - z * float(fit.se[1]), slope + z * float(fit.se[1]))
    unequal = x != 0
    longer = ((x > 0) & (y == 1)) | ((x < 0) & (y == 0))
    return LengthBias(
        curve=curve,
        slope=slope,
        slope_ci=slope_ci,
        intercept=intercept,
        longer_wins=proportion(int(longer[unequal].sum()), int(unequal.sum()), confidence=confidence),
        n=len(x),
        n_ties=n_ties,
    )


# -- self-preference ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SelfPreference:
    """On items where exactly one answer comes from the judge's family: how often the judge picked it
    (``judge``) and how often people did (``human``, the majority, on the same items), decisive
    verdicts only."""

    family: str
    judge: Proportion
    human: Proportion

    @property
    def difference(self) -> float | None:
        if self.judge.rate is None or self.human.rate is None:
            return None
        return self.judge.rate - self.human.rate


def self_preference(
    verdicts: pd.DataFrame,
    items: pd.DataFrame,
    *,
    family: str,
    families: Mapping[str, str],
    human: pd.DataFrame | None = None,
    confidence: float = 0.95,
) -> SelfPreference:
    """``verdicts``: item, vote (one judge); ``items``: item, model_a, model_b; ``families``: model name ->
    family. ``human``: item, majority (optional)."""
    frame = items[["item", "model_a", "model_b"]].assign(
        fam_a=lambda f: f["model_a"].map(families), fam_b=lambda f: f["model_b"].map(families)
    )
    own_a = frame["fam_a"] == family
    own_b = frame["fam_b"] == family
    frame = frame.loc[own_a != own_b].assign(own=lambda f: np.where(f["fam_a"] == family, A, B))

    def rate(labels: pd.DataFrame, column: str) -> Proportion:
        merged = frame.merge(labels[["item", column]], on="item")
        decisive = merged.loc[merged[column].isin((A, B))]
        return proportion(
            int((decisive[column] == decisive["own"]).sum()), len(decisive), confidence=confidence
        )

    human_rate = rate(human, "majority") if human is not None else proportion(0, 0)
    return SelfPreference(family=family, judge=rate(verdicts, "vote"), human=human_rate)


# -- agreement per slice and judge choice -----------------------------------------------------------


def accuracy_by_slice(
    majority: pd.DataFrame,
    verdicts: pd.DataFrame,
    *,
    group: str | None = None,
    confidence: float = 0.95,
) -> list[dict[str, Any]]:
    """Accuracy of one judge's verdicts against the human majority (items with a human tie left out,
    parse errors left out and counted), per value of ``group`` (a column of ``majority``), with Wilson
    intervals. Rows: slice, n, n_correct, n_errors, accuracy, ci_low, ci_high."""
    merged = majority.loc[majority["majority"] != TIE].merge(verdicts[["item", "vote"]], on="item")
    keys = merged[group].fillna("").astype(str) if group else np.full(len(merged), "all")
    merged = merged.assign(slice=keys)
    rows = []
    for value, part in merged.groupby("slice", sort=True):
        valid = part.loc[part["vote"].isin(VERDICTS)]
        share = proportion(int((valid["vote"] == valid["majority"]).sum()), len(valid), confidence=confidence)
        rows.append(
            {
                "slice": str(value),
                "n": share.n,
                "n_correct": int(share.k),
                "n_errors": len(part) - len(valid),
                "accuracy": share.rate,
                "ci_low": share.ci_low,
                "ci_high": share.ci_high,
            }
        )
    return rows


def judge_choice(
    majority: pd.DataFrame,
    verdicts_by_judge: Mapping[str, pd.DataFrame],
    *,
    group: str | None,
    confidence: float = 0.95,
) -> list[dict[str, Any]]:
    """Per slice, every judge's accuracy with its Wilson interval; ``best`` marks the highest accuracy of
    the slice (more items break a tie) and ``clear`` says whether its lower bound is above every other
    judge's accuracy there (a rough reading that the lead is not noise)."""
    rows = [
        {"judge": name, **row}
        for name, verdicts in verdicts_by_judge.items()
        for row in accuracy_by_slice(majority, verdicts, group=group, confidence=confidence)
    ]
    by_slice: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_slice.setdefault(row["slice"], []).append(row)
    for part in by_slice.values():
        scored = [r for r in part if r["accuracy"] is not None]
        for row in part:
            row["best"] = False
            row["clear"] = False
        if not scored:
            continue
        top = max(scored, key=lambda r: (r["accuracy"], r["n"]))
        top["best"] = True
        others = [r["accuracy"] for r in scored if r is not top]
        top["clear"] = bool(others) and all(top["ci_low"] > other for other in others)
    return sorted(rows, key=lambda r: (r["slice"], r["judge"]))


# -- length-controlled win rates --------------------------------------------------------------------


@dataclass(frozen=True)
class ControlledWinRate:
    model: str
    n: int
    raw: float | None
    raw_ci: tuple[float, float] | None
    length_controlled: float | None
    lc_ci: tuple[float, float] | None
    length_coef: float | None
    #: The lengths alone split wins from losses: the fit has no finite optimum and no length-controlled rate.
    separated: bool = False


def length_controlled_win_rates(
    battles: pd.DataFrame, *, baseline: str, confidence: float = 0.95
) -> list[ControlledWinRate]:
    """AlpacaEval-style length-controlled win rates of every model against ``baseline``.

    ``battles``: model_a, model_b, vote (A, B or tie; errors are left out), length_a, length_b. Rows with
    the baseline on one side count; the model's outcome is 1 for a win, 1/2 for a tie, 0 for a loss; delta
    is its length minus the baseline's, normalised by the standard deviation of delta over all such rows.
    The raw interval is Wilson's; the length-controlled one is the Wald interval of theta_m mapped through
    the sigmoid.
    """
    frame = battles.loc[battles["vote"].isin(VERDICTS)]
    frame = frame.loc[(frame["model_a"] == baseline) != (frame["model_b"] == baseline)]
    model_is_a = (frame["model_b"] == baseline).to_numpy()
    model = np.where(model_is_a, frame["model_a"], frame["model_b"])
    vote = frame["vote"].to_numpy()
    outcome = np.where(vote == TIE, 0.5, np.where((vote == A) == model_is_a, 1.0, 0.0))
    la = frame["length_a"].to_numpy(dtype=np.float64)
    lb = frame["length_b"].to_numpy(dtype=np.float64)
    delta = np.where(model_is_a, la - lb, lb - la)
    sd = float(np.std(delta)) if len(delta) else 0.0
    x = np.tanh(delta / sd) if sd > 0 else np.zeros_like(delta)
    z = z_value(confidence)
    out = []
    for name in sorted(set(model.tolist()), key=str):
        mine = model == name
        y, xm = outcome[mine], x[mine]
        raw = proportion(float(y.sum()), int(mine.sum()), confidence=confidence)
        lc = lc_ci = coef = None
        separated = False
        if 0 < y.sum() < len(y):
            with_length = np.ptp(xm) > 0
            design = np.column_stack([np.ones_like(xm), xm]) if with_length else np.ones((len(xm), 1))
            fit = logistic_fit(design, y)
            theta, se = float(fit.coef[0]), float(fit.se[0])
            if not fit.converged or np.max(np.abs(fit.coef)) > SEPARATION_COEF:
                separated = True
            else:
                lc = float(_sigmoid(theta))
                lc_ci = (float(_sigmoid(theta - z * se)), float(_sigmoid(theta + z * se)))
                coef = float(fit.coef[1]) if with_length else None
        elif len(y):
            lc = float(y.mean())  # all wins or all losses: no model to fit, no length to control for
        out.append(
            ControlledWinRate(
                model=str(name),
                n=raw.n,
                raw=raw.rate,
                raw_ci=(raw.ci_low, raw.ci_high) if raw.rate is not None else None,
                length_controlled=lc,
                lc_ci=lc_ci,
                length_coef=coef,
                separated=separated,
            )
        )
    return out


# -- calibration -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    """Reliability bins (bin, low, high, n, confidence, accuracy), ECE, Brier score, mean confidence and
    accuracy over ``n`` items; ``by_category`` rows (category, n, ece, brier, confidence, accuracy);
    ``n_human_ties`` and ``n_unparsed`` items left out; ``samples`` the k seen (min, max)."""

    bins: list[dict[str, Any]]
    ece: float | None
    brier: float | None
    confidence: float | None
    accuracy: float | None
    n: int
    n_human_ties: int
    n_unparsed: int
    samples: tuple[int, int]
    by_category: list[dict[str, Any]] = field(default_factory=list)


def _calibration_figures(confidence: np.ndarray, correct: np.ndarray, n_bins: int) -> dict[str, Any]:
    n = len(confidence)
    if n == 0:
        return {"bins": [], "ece": None, "brier": None, "confidence": None, "accuracy": None, "n": 0}
    index = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    # A confidence exactly on an inner edge (0.5 with 10 bins) goes to the bin above, 1.0 to the last.
    bins = []
    ece = 0.0
    for b in range(n_bins):
        inside = index == b
        if not inside.any():
            continue
        conf_b = float(confidence[inside].mean())
        acc_b = float(correct[inside].mean())
        ece += inside.sum() / n * abs(acc_b - conf_b)
        bins.append(
            {
                "bin": b,
                "low": b / n_bins,
                "high": (b + 1) / n_bins,
                "n": int(inside.sum()),
                "confidence": conf_b,
                "accuracy": acc_b,
            }
        )
    return {
        "bins": bins,
        "ece": float(ece),
        "brier": float(np.mean((confidence - correct) ** 2)),
        "confidence": float(confidence.mean()),
        "accuracy": float(correct.mean()),
        "n": n,
    }


def calibration(
    judge: pd.DataFrame,
    majority: pd.DataFrame,
    *,
    category: str | None = None,
    n_bins: int = CALIBRATION_BINS,
) -> Calibration:
    """Calibration of one judge sampled k times per item against the human majority.

    ``judge``: item, vote (one row per sample and order); ``majority``: item, majority and, with
    ``category``, that column. The judge's verdict per item is the modal sampled verdict (a shared top is
    a tie), its confidence the share of parsed samples that gave it; it is correct when it equals the human
    majority. Items whose human majority is a tie, and items with no parsed sample, are left out."""
    verdicts = item_verdicts(judge.assign(judge="j"))
    merged = majority.merge(verdicts[["item", "vote", "confidence", "n_parsed"]], on="item")
    n_ties = int((merged["majority"] == TIE).sum())
    merged = merged.loc[merged["majority"] != TIE]
    unparsed = merged["n_parsed"] == 0
    merged = merged.loc[~unparsed]
    confidence = merged["confidence"].to_numpy(dtype=np.float64)
    correct = (merged["vote"] == merged["majority"]).to_numpy(dtype=np.float64)
    overall = _calibration_figures(confidence, correct, n_bins)
    rows = []
    if category is not None and category in merged.columns:
        for value, part in merged.groupby(merged[category].fillna("").astype(str), sort=True):
            figures = _calibration_figures(
                part["confidence"].to_numpy(dtype=np.float64),
                (part["vote"] == part["majority"]).to_numpy(dtype=np.float64),
                n_bins,
            )
            rows.append({"category": str(value), **{k: v for k, v in figures.items() if k != "bins"}})
    k = verdicts["n_outputs"]
    return Calibration(
        bins=overall["bins"],
        ece=overall["ece"],
        brier=overall["brier"],
        confidence=overall["confidence"],
        accuracy=overall["accuracy"],
        n=overall["n"],
        n_human_ties=n_ties,
        n_unparsed=int(unparsed.sum()),
        samples=(int(k.min()), int(k.max())) if len(k) else (0, 0),
        by_category=rows,
    )


# -- prediction-powered inference --------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    value: float | None
    ci_low: float | None
    ci_high: float | None
    se: float | None
    n: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.value,
            "ci95": [self.ci_low, self.ci_high] if self.value is not None else None,
            "se": self.se,
            "n": self.n,
        }


def _estimate(
    value: float, variance: float, n: int, z: float, bounds: tuple[float, float] | None = None
) -> Estimate:
    """A Wald interval, cut to ``bounds`` when the quantity cannot leave them (a win rate: 0 to 1)."""
    se = math.sqrt(max(variance, 0.0))
    low, high = value - z * se, value + z * se
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return Estimate(value=value, ci_low=low, ci_high=high, se=se, n=n)


@dataclass(frozen=True)
class PPIResult:
    """The prediction-powered estimate beside the human-only and judge-only ones.

    ``effective_n``: how many human labels the human-only estimate would need for the PPI standard
    error (n * var_human / var_ppi); ``gain``: effective_n / n; ``wider_than_human_only``: the PPI
    interval is wider than the human-only one (the judge did not help)."""

    ppi: Estimate
    human_only: Estimate
    judge_only: Estimate
    lam: float
    n_labeled: int
    n_unlabeled: int
    effective_n: float | None
    gain: float | None
    wider_than_human_only: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "ppi": self.ppi.as_dict(),
            "human_only": self.human_only.as_dict(),
            "judge_only": self.judge_only.as_dict(),
            "lambda": self.lam,
            "n_labeled": self.n_labeled,
            "n_unlabeled": self.n_unlabeled,
            "effective_n": self.effective_n,
            "gain": self.gain,
            "wider_than_human_only": self.wider_than_human_only,
        }


def ppi_mean(
    y_labeled: Any,
    f_labeled: Any,
    f_unlabeled: Any,
    *,
    confidence: float = 0.95,
    lam: float | None = None,
    bounds: tuple[float, float] | None = None,
) -> PPIResult:
    """Prediction-powered estimate of the mean of Y (PPI++ with power tuning unless ``lam`` is given).

    ``y_labeled`` and ``f_labeled``: the human label and the judge label on the n items people labelled;
    ``f_unlabeled``: the judge label on the N items they did not. Needs n >= 2. ``bounds``: the range the
    mean cannot leave (0 to 1 for a win rate); the intervals are cut to it."""
    y = np.asarray(y_labeled, dtype=np.float64)
    f = np.asarray(f_labeled, dtype=np.float64)
    g = np.asarray(f_unlabeled, dtype=np.float64)
    n, big_n = len(y), len(g)
    if len(f) != n:
        raise ValueError("the human and judge labels of the labelled items must align")
    if n < 2:
        raise ValueError("prediction-powered inference needs at least two human-labelled items")
    z = z_value(confidence)
    var_y = float(np.var(y, ddof=1))
    human = _estimate(float(y.mean()), var_y / n, n, z, bounds)
    every = np.concatenate([f, g])
    judge = _estimate(float(every.mean()), float(np.var(every, ddof=1)) / len(every), len(every), z, bounds)
    if big_n < 2:
        return PPIResult(human, human, judge, 0.0, n, big_n, float(n), 1.0, False)
    var_f = float(np.var(np.concatenate([f, g]), ddof=1))
    if lam is None:
        cov = float(np.cov(y, f, ddof=1)[0, 1])
        lam = cov / ((1 + n / big_n) * var_f) if var_f > 0 else 0.0
        lam = min(1.0, max(0.0, lam))
    value = float(y.mean() + lam * (g.mean() - f.mean()))
    variance = lam * lam * float(np.var(g, ddof=1)) / big_n + float(np.var(y - lam * f, ddof=1)) / n
    ppi = _estimate(value, variance, n + big_n, z, bounds)
    # The human labels a human-only estimate would need for the same standard error: var_y / n_eff = var.
    effective = var_y / variance if variance > 0 else None
    return PPIResult(
        ppi=ppi,
        human_only=human,
        judge_only=judge,
        lam=float(lam),
        n_labeled=n,
        n_unlabeled=big_n,
        effective_n=effective,
        gain=effective / n if effective is not None else None,
        wider_than_human_only=bool(ppi.se is not None and human.se is not None and ppi.se > human.se + 1e-15),
    )


def vote_score(votes: Any) -> np.ndarray:
    """A, B, tie as 1, 0, 1/2 (the preference for A); anything else NaN."""
    return (
        np.asarray([{A: 1.0, B: 0.0, TIE: 0.5}.get(v, np.nan) for v in np.asarray(votes, dtype=object)])
        if len(votes)
        else np.zeros(0)
    )


def win_rate_ppi(
    human: pd.DataFrame,
    verdicts: pd.DataFrame,
    items: pd.DataFrame | None = None,
    *,
    model_x: str | None = None,
    model_y: str | None = None,
    confidence: float = 0.95,
    lam: float | None = None,
) -> PPIResult:
    """Prediction-powered win rate of ``model_x`` over ``model_y`` (ties half) from one judge's verdicts
    on every item (item, vote; errors left out) and the human votes on the items people labelled.

    Without model names the comparison is response A over response B of every item. Items where the two
    models are the other way round are turned around."""
    frame = verdicts.loc[verdicts["vote"].isin(VERDICTS), ["item", "vote"]]
    flip = None
    if model_x is not None:
        if items is None or "model_a" not in items.columns:
            raise ValueError("a comparison of two models needs model_a and model_b per item")
        pair = items[["item", "model_a", "model_b"]]
        forward = (pair["model_a"] == model_x) & (pair["model_b"] == model_y)
        backward = (pair["model_a"] == model_y) & (pair["model_b"] == model_x)
        pair = pair.loc[forward | backward].assign(flip=backward[forward | backward])
        frame = frame.merge(pair[["item", "flip"]], on="item")
        flip = frame.set_index("item")["flip"]
    f_all = vote_score(frame["vote"])
    if flip is not None:
        f_all = np.where(frame["flip"].to_numpy(dtype=bool), 1.0 - f_all, f_all)
    f_by_item = dict(zip(frame["item"], f_all, strict=True))
    prefs = human_preference(human)
    prefs = prefs.loc[prefs["item"].isin(f_by_item)]
    y = prefs["pref_a"].to_numpy(dtype=np.float64)
    if flip is not None:
        y = np.where(flip.reindex(prefs["item"]).to_numpy(dtype=bool), 1.0 - y, y)
    labelled = set(prefs["item"])
    f_lab = np.asarray([f_by_item[i] for i in prefs["item"]], dtype=np.float64)
    f_unl = np.asarray([v for i, v in f_by_item.items() if i not in labelled], dtype=np.float64)
    return ppi_mean(y, f_lab, f_unl, confidence=confidence, lam=lam, bounds=(0.0, 1.0))


# -- the whole report ----------------------------------------------------------------------------------

#: The judges' majority verdict, a candidate of the judge choice when there are several judges.
ENSEMBLE = "ensemble"
ITEM_COLUMNS = ("category", "language", "register", "model_a", "model_b", "length_a", "length_b")
SLICES = ("category", "language", "language_register")


def _pair(low: float | None, high: float | None) -> list[float | None] | None:
    return None if low is None and high is None else [_f(low), _f(high)]


def _length_dict(bias: LengthBias) -> dict[str, Any]:
    return {
        "slope": _f(bias.slope),
        "slope_ci95": list(bias.slope_ci) if bias.slope_ci else None,
        "longer_win_rate": bias.longer_wins.rate,
        "longer_ci95": _pair(bias.longer_wins.ci_low, bias.longer_wins.ci_high),
        "n_unequal": bias.longer_wins.n,
        "n": bias.n,
        "n_ties": bias.n_ties,
        "curve": bias.curve,
    }


def _language_register(items: pd.DataFrame) -> pd.DataFrame:
    if "language" not in items.columns:
        return items
    language = items["language"].fillna("").astype(str)
    register = items["register"].fillna("").astype(str) if "register" in items.columns else None
    joined = [
        language_register(lang, "" if register is None else register.iloc[k])
        for k, lang in enumerate(language)
    ]
    return items.assign(language_register=joined)


def _ppi_human_subset(human: pd.DataFrame, share: float, seed: int) -> pd.DataFrame:
    items = np.array(sorted(human["item"].unique(), key=str), dtype=object)
    keep = max(2, int(round(share * len(items))))
    rng = np.random.default_rng(seed)
    chosen = set(rng.choice(items, size=min(keep, len(items)), replace=False).tolist())
    return human.loc[human["item"].isin(chosen)]


def lab_report(
    human: pd.DataFrame,
    judge: pd.DataFrame,
    items: pd.DataFrame | None = None,
    *,
    families: Mapping[str, str] | None = None,
    baseline: str | None = None,
    ppi_human_share: float | None = None,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Every judge-lab figure as JSON-ready values: the one function the command, the page and the API
    call.

    ``human``: item, annotator, vote; ``judge``: item, judge, vote, optional order and sample; ``items``:
    item and any of :data:`ITEM_COLUMNS`; ``families``: judge or model name -> model family.
    ``baseline``: the model the length-controlled win rates are against (default: the model in the most
    comparisons). ``ppi_human_share``: for the prediction-powered estimates, keep the human votes of only
    this share of items (seeded), as if people had labelled only those; the estimate from every human vote
    is reported beside it as ``human_all``.
    """
    import pandas as pd

    families = dict(families or {})
    notes: list[str] = []
    items = items if items is not None else pd.DataFrame({"item": human["item"].unique()})
    items = _language_register(items.drop_duplicates("item"))
    majority = human_majority(human).merge(items, on="item", how="left")
    verdicts = item_verdicts(judge)
    by_judge = {str(name): part for name, part in verdicts.groupby("judge", sort=True)}
    has_lengths = {"length_a", "length_b"} <= set(items.columns) and items["length_a"].notna().any()
    has_models = {"model_a", "model_b"} <= set(items.columns) and items["model_a"].notna().any()
    sampled = "sample" in judge.columns and judge["sample"].nunique() > 1

    judges: dict[str, Any] = {}
    for name, mine in by_judge.items():
        outputs = judge.loc[judge["judge"] == name]
        overall = accuracy_by_slice(majority, mine, confidence=confidence)
        position = position_bias(outputs, confidence=confidence)
        entry: dict[str, Any] = {
            "n_items": len(mine),
            "n_outputs": len(outputs),
            "family": families.get(name),
            "accuracy": overall[0] if overall else None,
            "position": {
                "first_position_rate": position.first.rate,
                "ci95": _pair(position.first.ci_low, position.first.ci_high),
                "n": position.first.n,
                "n_ties": position.n_ties,
                "n_errors": position.n_errors,
                "n_both_orders": position.n_both_orders,
                "consistency": position.consistency,
            },
            "length": None,
            "self_preference": None,
            "calibration": None,
        }
        if has_lengths:
            merged = mine.merge(items[["item", "length_a", "length_b"]], on="item").dropna(
                subset=["length_a", "length_b"]
            )
            entry["length"] = _length_dict(
                length_bias(merged["vote"], merged["length_a"], merged["length_b"])
            )
        if has_models and families.get(name):
            result = self_preference(
                mine, items, family=families[name], families=families, human=majority, confidence=confidence
            )
            entry["self_preference"] = {
                "family": result.family,
                "judge_rate": result.judge.rate,
                "judge_ci95": _pair(result.judge.ci_low, result.judge.ci_high),
                "human_rate": result.human.rate,
                "human_ci95": _pair(result.human.ci_low, result.human.ci_high),
                "difference": result.difference,
                "n": result.judge.n,
            }
        if "sample" in outputs.columns and outputs.groupby("item").size().min() >= MIN_SAMPLES:
            category = "category" if "category" in majority.columns else None
            cal = calibration(outputs[["item", "vote"]], majority, category=category)
            entry["calibration"] = {
                "ece": cal.ece,
                "brier": cal.brier,
                "confidence": cal.confidence,
                "accuracy": cal.accuracy,
                "n": cal.n,
                "n_human_ties": cal.n_human_ties,
                "n_unparsed": cal.n_unparsed,
                "samples": list(cal.samples),
                "bins": cal.bins,
                "by_category": cal.by_category,
            }
        judges[name] = entry
    if not sampled:
        notes.append(f"calibration needs at least {MIN_SAMPLES} sampled verdicts per item (a sample column)")
    if not has_lengths:
        notes.append("length bias and length-controlled win rates need length_a and length_b per item")
    if not (has_models and any(families.get(name) for name in by_judge)):
        notes.append("self-preference needs model_a, model_b and the model families of the judges")

    human_length = None
    if has_lengths:
        merged = majority.dropna(subset=["length_a", "length_b"])
        human_length = _length_dict(length_bias(merged["majority"], merged["length_a"], merged["length_b"]))

    # With several judges, their majority (per item, the most frequent of the judges' verdicts; a shared top
    # is a tie) competes in the choice too.
    candidates = dict(by_judge)
    if len(by_judge) >= 2 and ENSEMBLE not in candidates:
        candidates[ENSEMBLE] = item_verdicts(verdicts[["item", "vote"]].assign(judge=ENSEMBLE))
    choice = {"all": judge_choice(majority, candidates, group=None, confidence=confidence)}
    for column in SLICES:
        if column in majority.columns:
            choice[column] = judge_choice(majority, candidates, group=column, confidence=confidence)

    controlled = None
    if has_models and has_lengths:
        sides = items.dropna(subset=["model_a", "model_b"])
        counts = pd.concat([sides["model_a"], sides["model_b"]]).value_counts()
        base = baseline or (
            str(sorted(counts.index[counts == counts.max()], key=str)[0]) if len(counts) else None
        )
        if base is not None and base not in set(counts.index):
            raise ValueError(f"the baseline model {base!r} is in no comparison")
        rows = []
        sources = {f"judge:{name}": v[["item", "vote"]] for name, v in by_judge.items()}
        sources["human"] = majority[["item", "majority"]].rename(columns={"majority": "vote"})
        for source, votes in sources.items():
            battles = votes.merge(
                items[["item", "model_a", "model_b", "length_a", "length_b"]], on="item"
            ).dropna(subset=["model_a", "model_b", "length_a", "length_b"])
            for row in length_controlled_win_rates(battles, baseline=base, confidence=confidence):
                rows.append(
                    {
                        "source": source.removeprefix("judge:") if source != "human" else "human",
                        "kind": "human" if source == "human" else "judge",
                        "model": row.model,
                        "n": row.n,
                        "raw": row.raw,
                        "raw_ci95": list(row.raw_ci) if row.raw_ci else None,
                        "length_controlled": row.length_controlled,
                        "lc_ci95": list(row.lc_ci) if row.lc_ci else None,
                        "length_coef": row.length_coef,
                        "separated": row.separated,
                    }
                )
        controlled = {"baseline": base, "rows": rows}

    ppi_human = _ppi_human_subset(human, ppi_human_share, seed) if ppi_human_share else human
    if has_models:
        pairs = sorted(
            {
                tuple(sorted((str(a), str(b))))
                for a, b in zip(items["model_a"], items["model_b"], strict=True)
                if isinstance(a, str) and isinstance(b, str) and a != b
            }
        )
    else:
        pairs = [(None, None)]
    estimates = []
    for name, mine in by_judge.items():
        for x, y in pairs:
            try:
                result = win_rate_ppi(ppi_human, mine, items, model_x=x, model_y=y, confidence=confidence)
            except ValueError as exc:
                notes.append(f"{name}, {x or 'A'} over {y or 'B'}: {exc}")
                continue
            row = {"judge": name, "model_x": x or "A", "model_y": y or "B", **result.as_dict()}
            if ppi_human_share:
                everyone = win_rate_ppi(human, mine, items, model_x=x, model_y=y, confidence=confidence)
                row["human_all"] = everyone.human_only.as_dict()
            estimates.append(row)

    ratings = _ppi_ratings(ppi_human, by_judge, items, confidence, notes) if has_models else []

    return plain(
        {
            "confidence": confidence,
            "n_items": int(items["item"].nunique()),
            "n_human_items": int(human["item"].nunique()),
            "n_human_votes": len(human),
            "judges": judges,
            "human_length": human_length,
            "judge_choice": choice,
            "length_controlled": controlled,
            "ppi": estimates,
            "ppi_ratings": ratings,
            "ppi_human_share": ppi_human_share,
            "seed": seed,
            "notes": notes,
        }
    )


def _ppi_ratings(
    human: pd.DataFrame,
    by_judge: Mapping[str, pd.DataFrame],
    items: pd.DataFrame,
    confidence: float,
    notes: list[str],
) -> list[dict[str, Any]]:
    """Prediction-powered Bradley-Terry ratings per judge over every model comparison (three models or
    more; with two the win rate says it all)."""
    prefs = human_preference(human)[["item", "pref_a"]].rename(columns={"pref_a": "y"})
    pairs = items[["item", "model_a", "model_b"]].dropna()
    pairs = pairs.loc[pairs["model_a"] != pairs["model_b"]]
    if len(set(pairs["model_a"]) | set(pairs["model_b"])) < 3:
        return []
    out = []
    for name, verdicts in by_judge.items():
        frame = verdicts.loc[verdicts["vote"].isin(VERDICTS), ["item", "vote"]].merge(pairs, on="item")
        frame = frame.assign(f=vote_score(frame["vote"]))
        labelled = frame.merge(prefs, on="item")
        unlabelled = frame.loc[~frame["item"].isin(labelled["item"])]
        try:
            result = bradley_terry_ppi(labelled, unlabelled)
        except (ValueError, np.linalg.LinAlgError) as exc:
            notes.append(f"{name}, ratings: {exc}")
            continue
        if not all(np.isfinite(v).all() for v in (result.ppi, result.ppi_se, result.human, result.human_se)):
            notes.append(f"{name}, ratings: no finite fit (a model never wins or never loses)")
            continue
        out.append(
            {
                "judge": name,
                "lambda": result.lam,
                "n_labeled": result.n_labeled,
                "n_unlabeled": result.n_unlabeled,
                "rows": sorted(result.rows(confidence), key=lambda r: -r["ppi"]),
            }
        )
    return out


def plain(value: Any) -> Any:
    """JSON-ready: numpy scalars become Python numbers, NaN and infinities None, tuples lists."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# -- prediction-powered Bradley-Terry ratings --------------------------------------------------------------

#: Ratings on the Elo-like scale of :mod:`analytics.domain.bradley_terry`: 400 log10 odds, mean 1000.
ELO_PER_NAT = 400.0 / math.log(10.0)


@dataclass(frozen=True)
class PPIRatings:
    """Bradley-Terry ratings of ``models`` (400 log10 odds, centred on 1000) with standard errors: the
    prediction-powered fit, the human-only fit (lambda = 0) and the judge-only fit (the judge's labels on
    every item), with the lambda used and the item counts."""

    models: list[str]
    ppi: np.ndarray
    ppi_se: np.ndarray
    human: np.ndarray
    human_se: np.ndarray
    judge: np.ndarray
    judge_se: np.ndarray
    lam: float
    n_labeled: int
    n_unlabeled: int

    def rows(self, confidence: float = 0.95) -> list[dict[str, Any]]:
        z = z_value(confidence)
        out = []
        for k, model in enumerate(self.models):
            row: dict[str, Any] = {"model": model}
            for name, value, se in (
                ("ppi", self.ppi, self.ppi_se),
                ("human_only", self.human, self.human_se),
                ("judge_only", self.judge, self.judge_se),
            ):
                row[name] = float(value[k])
                row[f"{name}_ci95"] = [float(value[k] - z * se[k]), float(value[k] + z * se[k])]
            out.append(row)
        return out


def _bt_design(model_a: np.ndarray, model_b: np.ndarray, models: list[str]) -> np.ndarray:
    """Rows e_a - e_b without the first model's column (its strength is fixed at 0)."""
    index = {m: k for k, m in enumerate(models)}
    x = np.zeros((len(model_a), len(models)))
    x[np.arange(len(model_a)), [index[m] for m in model_a]] += 1.0
    x[np.arange(len(model_b)), [index[m] for m in model_b]] -= 1.0
    return x[:, 1:]


def _bt_fit(
    parts: Sequence[tuple[np.ndarray, np.ndarray, float]],
    dim: int,
    *,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> tuple[np.ndarray, np.ndarray]:
    """Minimise sum of weight * mean logistic loss over ``parts`` (design, outcome, weight) by Newton's
    method; the Hessian does not depend on the outcomes, so for weights summing the designs' Hessians
    positively the problem is convex. Returns the coefficients and the Hessian at them."""
    beta = np.zeros(dim)
    hessian = np.eye(dim)
    for _ in range(max_iter):
        gradient = np.zeros(dim)
        hessian = np.zeros((dim, dim))
        for x, y, weight in parts:
            if weight == 0 or not len(x):
                continue
            p = _sigmoid(x @ beta)
            gradient += weight * x.T @ (p - y) / len(x)
            hessian += weight * (x.T * (p * (1 - p))) @ x / len(x)
        step = np.linalg.solve(hessian + 1e-10 * np.eye(dim), gradient)
        beta = beta - step
        if np.max(np.abs(step)) < tol:
            break
    return beta, hessian


def _bt_gradients(x: np.ndarray, y: np.ndarray, beta: np.ndarray) -> np.ndarray:
    return (_sigmoid(x @ beta) - y)[:, None] * x


def _centred(beta: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ratings with the first model at 0, then centred on their mean and put on the Elo-like scale."""
    k = len(beta) + 1
    full = np.concatenate([[0.0], beta])
    # Map from the free coefficients to the centred full vector: C = (I - 11'/k) [0; I].
    embed = np.vstack([np.zeros((1, k - 1)), np.eye(k - 1)])
    centre = np.eye(k) - np.full((k, k), 1.0 / k)
    transform = centre @ embed
    ratings = ELO_PER_NAT * (centre @ full) + 1000.0
    se = ELO_PER_NAT * np.sqrt(np.clip(np.diag(transform @ covariance @ transform.T), 0.0, None))
    return ratings, se


def bradley_terry_ppi(
    labeled: pd.DataFrame, unlabeled: pd.DataFrame, *, lam: float | None = None
) -> PPIRatings:
    """Prediction-powered Bradley-Terry ratings (PPI++ for an M-estimator, the logistic loss of the model
    comparisons; Boyeau et al. 2024 use it for Chatbot-Arena-style ratings).

    ``labeled``: model_a, model_b, y (people's preference for model_a: the share of votes, ties half) and f
    (the judge's: 1, 1/2 or 0) on the n items people labelled; ``unlabeled``: model_a, model_b, f on the N
    items they did not. The estimate minimises
    lambda * L_N(f) + L_n(y) - lambda * L_n(f) (mean losses); its covariance is the sandwich
    H^-1 (lambda^2 var_N(grad f) / N + var_n(grad y - lambda grad f) / n) H^-1. Without ``lam`` it is tuned to
    minimise the trace of that covariance (clipped to [0, 1]). Ties count half a win, as in
    :func:`analytics.domain.bradley_terry.bradley_terry`, whose ratings the human-only fit reproduces."""
    models = sorted(
        set(labeled["model_a"])
        | set(labeled["model_b"])
        | set(unlabeled["model_a"])
        | set(unlabeled["model_b"]),
        key=str,
    )
    if len(models) < 2:
        raise ValueError("Bradley-Terry ratings need comparisons between at least two models")
    n, big_n = len(labeled), len(unlabeled)
    if n < 2:
        raise ValueError("prediction-powered inference needs at least two human-labelled items")
    dim = len(models) - 1
    xl = _bt_design(labeled["model_a"].to_numpy(), labeled["model_b"].to_numpy(), models)
    xu = _bt_design(unlabeled["model_a"].to_numpy(), unlabeled["model_b"].to_numpy(), models)
    y = labeled["y"].to_numpy(dtype=np.float64)
    fl = labeled["f"].to_numpy(dtype=np.float64)
    fu = unlabeled["f"].to_numpy(dtype=np.float64)

    def covariance(beta: np.ndarray, hessian: np.ndarray, weight: float) -> np.ndarray:
        inverse = np.linalg.pinv(hessian)
        gy, gl = _bt_gradients(xl, y, beta), _bt_gradients(xl, fl, beta)
        middle = np.cov((gy - weight * gl).T, ddof=1).reshape(dim, dim) / n
        if big_n >= 2 and weight:
            gu = _bt_gradients(xu, fu, beta)
            middle = middle + weight * weight * np.cov(gu.T, ddof=1).reshape(dim, dim) / big_n
        return inverse @ middle @ inverse

    human_beta, human_h = _bt_fit([(xl, y, 1.0)], dim)
    human_cov = covariance(human_beta, human_h, 0.0)
    x_all, f_all = np.vstack([xl, xu]), np.concatenate([fl, fu])
    judge_beta, judge_h = _bt_fit([(x_all, f_all, 1.0)], dim)
    inverse = np.linalg.pinv(judge_h)
    judge_cov = (
        inverse
        @ (np.cov(_bt_gradients(x_all, f_all, judge_beta).T, ddof=1).reshape(dim, dim) / len(x_all))
        @ inverse
    )
    if big_n < 2:
        lam = 0.0
    elif lam is None:
        # PPI++'s trace-optimal lambda at the human-only estimate (a consistent first step).
        inverse = np.linalg.pinv(human_h)
        gy, gl = _bt_gradients(xl, y, human_beta), _bt_gradients(xl, fl, human_beta)
        gu = _bt_gradients(xu, fu, human_beta)
        cross = ((gy - gy.mean(0)).T @ (gl - gl.mean(0))) / (n - 1)
        var_f = np.cov(np.vstack([gl, gu]).T, ddof=1).reshape(dim, dim)
        numerator = np.trace(inverse @ (cross + cross.T) @ inverse)
        denominator = 2 * (1 + n / big_n) * np.trace(inverse @ var_f @ inverse)
        lam = float(min(1.0, max(0.0, numerator / denominator))) if denominator > 0 else 0.0
    parts = [(xu, fu, lam), (xl, y, 1.0), (xl, fl, -lam)]
    ppi_beta, ppi_h = _bt_fit(parts, dim)
    ppi_cov = covariance(ppi_beta, ppi_h, lam)
    ppi, ppi_se = _centred(ppi_beta, ppi_cov)
    human, human_se = _centred(human_beta, human_cov)
    judge, judge_se = _centred(judge_beta, judge_cov)
    return PPIRatings(
        models=[str(m) for m in models],
        ppi=ppi,
        ppi_se=ppi_se,
        human=human,
        human_se=human_se,
        judge=judge,
        judge_se=judge_se,
        lam=float(lam),
        n_labeled=n,
        n_unlabeled=big_n,
    )
