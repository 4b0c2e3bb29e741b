"""The Bradley-Terry fit shared by the arena's live sampler and the leaderboard (``analytics.domain.leaderboard``).

One implementation of the maximum-likelihood fit, below both of its users: the leaderboard builds its
design (distinct outcomes, style features, Davidson ties) and calls ``fit`` / ``fit_batch``; the arena's
active sampler calls ``point_ratings`` on the folded vote counts of its battles before every pair choice.

Model. Distinct outcomes are rows (a, b, z) with counts of A wins, B wins and ties. The linear predictor is
``d = theta_a - theta_b + gamma . z``. With ties as half wins P(A beats B) = 1 / (1 + exp(-d)); with
Davidson's model P(A) = e^{d/2} / D, P(B) = e^{-d/2} / D, P(tie) = nu / D, D = e^{d/2} + e^{-d/2} + nu.
theta_0 is fixed at 0 (the other strengths are relative to it); ``ELO_SCALE * theta`` is on the rating
scale (a rating difference is 400 log10 of the odds of winning).

Fit. Newton's method with step halving on the concave log-likelihood; ``fit_batch`` runs it for many count
vectors (bootstrap resamples) at once. A finite estimate exists only where the "won or tied against"
graph of the fitted models is strongly connected (``components``, ``rated_component``); ``FitError`` says
in one line why a fit has none.

No Django here: plain numpy values in and out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ELO_SCALE = 400.0 / math.log(10.0)  # rating points per unit of log-odds

# Outcome columns of the folded counts.
A_WINS, B_WINS, TIED = 0, 1, 2

_MAX_NEWTON = 100
_MAX_THETA = 60.0  # |log-odds| beyond this (about 10,000 rating points) means no finite estimate
_STEP_TOL = 1e-10


class FitError(ValueError):
    """No finite maximum-likelihood estimate (or parameters that cannot be told apart), in one line."""


# --- the fit ----------------------------------------------------------------------------------------


@dataclass
class Design:
    """Distinct outcomes: rows (a, b, z) with counts of A wins, B wins and ties (R x 3)."""

    a: np.ndarray
    b: np.ndarray
    z: np.ndarray  # R x F
    counts: np.ndarray  # R x 3 (float)
    k: int  # models in the fit
    davidson: bool

    @property
    def n_params(self) -> int:
        # theta_1..theta_{k-1} (theta_0 = 0), gamma, and log(nu) for Davidson
        return self.k - 1 + self.z.shape[1] + (1 if self.davidson else 0)

    def entries(self) -> tuple[np.ndarray, np.ndarray]:
        """Sparse rows of the design of d: column indices and values (a trash column for theta_0)."""
        f = self.z.shape[1]
        trash = self.n_params
        cols = np.empty((len(self.a), 2 + f), dtype=np.int64)
        vals = np.empty((len(self.a), 2 + f))
        cols[:, 0] = np.where(self.a == 0, trash, self.a - 1)
        cols[:, 1] = np.where(self.b == 0, trash, self.b - 1)
        vals[:, 0] = 1.0
        vals[:, 1] = -1.0
        cols[:, 2:] = np.arange(self.k - 1, self.k - 1 + f)
        vals[:, 2:] = self.z
        return cols, vals


def split_params(design: Design, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    k, f = design.k, design.z.shape[1]
    theta = np.concatenate(([0.0], beta[: k - 1]))
    gamma = beta[k - 1 : k - 1 + f]
    log_nu = float(beta[-1]) if design.davidson else 0.0
    return theta, gamma, log_nu


def predictor(design: Design, beta: np.ndarray) -> np.ndarray:
    theta, gamma, _ = split_params(design, beta)
    return theta[design.a] - theta[design.b] + design.z @ gamma


def _loglik(design: Design, beta: np.ndarray, counts: np.ndarray) -> float:
    d = predictor(design, beta)
    n_a, n_b, n_t = counts[:, A_WINS], counts[:, B_WINS], counts[:, TIED]
    if design.davidson:
        log_nu = beta[-1]
        log_d = np.logaddexp(np.logaddexp(d / 2, -d / 2), log_nu)
        return float(np.sum(n_a * d / 2 - n_b * d / 2 + n_t * log_nu - (n_a + n_b + n_t) * log_d))
    wins = n_a + n_t / 2
    losses = n_b + n_t / 2
    return float(-np.sum(wins * np.logaddexp(0.0, -d) + losses * np.logaddexp(0.0, d)))


def _row_derivatives(
    design: Design, beta: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Per row: dl/dd, d2l/dd2, and for Davidson dl/dlog_nu, d2l/dd dlog_nu, d2l/dlog_nu2."""
    d = predictor(design, beta)
    n_a, n_b, n_t = counts[:, A_WINS], counts[:, B_WINS], counts[:, TIED]
    n = n_a + n_b + n_t
    if not design.davidson:
        p = 1.0 / (1.0 + np.exp(-d))
        return n_a + n_t / 2 - n * p, -n * p * (1 - p), None, None, None
    log_nu = beta[-1]
    log_d = np.logaddexp(np.logaddexp(d / 2, -d / 2), log_nu)
    p_a, p_b, p_t = np.exp(d / 2 - log_d), np.exp(-d / 2 - log_d), np.exp(log_nu - log_d)
    g_d = (n_a - n_b) / 2 - n * (p_a - p_b) / 2
    h_dd = -n * ((p_a + p_b) / 4 - (p_a - p_b) ** 2 / 4)
    g_l = n_t - n * p_t
    h_dl = n * (p_a - p_b) * p_t / 2
    h_ll = -n * p_t * (1 - p_t)
    return g_d, h_dd, g_l, h_dl, h_ll


def _gradient_hessian(
    design: Design, beta: np.ndarray, counts: np.ndarray, entries: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    cols, vals = entries
    size = design.n_params + 1  # with the trash column
    g_d, h_dd, g_l, h_dl, h_ll = _row_derivatives(design, beta, counts)
    grad = np.bincount(cols.ravel(), weights=(g_d[:, None] * vals).ravel(), minlength=size)
    # Model block from the two +1/-1 entries of each row; style blocks by dense products (z is R x F).
    hess = np.zeros(size * size)
    for p in range(2):
        for q in range(2):
            hess += np.bincount(
                cols[:, p] * size + cols[:, q], weights=h_dd * vals[:, p] * vals[:, q], minlength=size * size
            )
    hess = hess.reshape(size, size)
    f = design.z.shape[1]
    if f:
        first = design.k - 1
        hz = h_dd[:, None] * design.z
        hess[first : first + f, first : first + f] = design.z.T @ hz
        for j in range(f):
            cross = np.bincount(cols[:, 0], weights=hz[:, j], minlength=size) - np.bincount(
                cols[:, 1], weights=hz[:, j], minlength=size
            )
            cross[first : first + f] = 0.0
            hess[first + j, :first] = cross[:first]
            hess[:first, first + j] = cross[:first]
    if design.davidson:
        last = design.n_params - 1
        assert g_l is not None and h_dl is not None and h_ll is not None
        grad[last] = g_l.sum()
        cross = np.bincount(cols.ravel(), weights=(h_dl[:, None] * vals).ravel(), minlength=size)
        hess[last, :] += cross
        hess[:, last] += cross
        hess[last, last] = h_ll.sum()
    return grad[:-1], hess[:-1, :-1]


def fit(
    design: Design, counts: np.ndarray, start: np.ndarray | None = None, *, hessian: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    """The maximum-likelihood beta and (unless ``hessian`` is false) the Hessian there; FitError
    when there is no finite one."""
    entries = design.entries()
    beta = np.zeros(design.n_params) if start is None else start.copy()
    current = _loglik(design, beta, counts)
    for _ in range(_MAX_NEWTON):
        grad, hess = _gradient_hessian(design, beta, counts, entries)
        try:
            step = np.linalg.solve(-hess, grad)
        except np.linalg.LinAlgError as exc:
            raise FitError(
                "the model cannot be fitted: some parameters cannot be told apart (style features that move "
                "together, or too few battles)"
            ) from exc
        t = 1.0
        while True:
            trial = beta + t * step
            value = _loglik(design, trial, counts)
            if value >= current - 1e-12 * max(1.0, abs(current)) or t < 1e-8:
                break
            t /= 2
        beta, current = trial, value
        if not np.all(np.isfinite(beta)) or np.max(np.abs(beta[: design.k - 1]), initial=0.0) > _MAX_THETA:
            raise FitError("no finite estimate: a model's wins or losses separate it from the rest")
        if np.max(np.abs(t * step)) < _STEP_TOL:
            break
    else:
        raise FitError("the fit did not converge (the data nearly separate some models)")
    if not hessian:
        return beta, None
    _, hess = _gradient_hessian(design, beta, counts, entries)
    return beta, hess


def connected_batch(design: Design, counts: np.ndarray) -> np.ndarray:
    """Per draw (counts B x R x 3): is the "won or tied against" graph strongly connected?"""
    n_draws, k = len(counts), design.k
    forward = (counts[:, :, A_WINS] + counts[:, :, TIED]) > 0
    backward = (counts[:, :, B_WINS] + counts[:, :, TIED]) > 0
    edge = np.zeros((n_draws, k, k), dtype=bool)
    draw = np.repeat(np.arange(n_draws)[:, None], len(design.a), axis=1)
    edge[draw[forward], design.a[np.nonzero(forward)[1]], design.b[np.nonzero(forward)[1]]] = True
    edge[draw[backward], design.b[np.nonzero(backward)[1]], design.a[np.nonzero(backward)[1]]] = True
    reach = (edge | np.eye(k, dtype=bool)[None]).astype(np.float64)
    for _ in range(max(1, math.ceil(math.log2(max(k, 2)))) + 1):
        reach = np.minimum(reach @ reach, 1.0)
    return (reach > 0).all(axis=(1, 2))


def _batch_loglik(design: Design, beta: np.ndarray, counts: np.ndarray) -> np.ndarray:
    d = _batch_predictor(design, beta)
    n_a, n_b, n_t = counts[:, :, A_WINS], counts[:, :, B_WINS], counts[:, :, TIED]
    if design.davidson:
        log_nu = beta[:, -1:]
        log_d = np.logaddexp(np.logaddexp(d / 2, -d / 2), log_nu)
        return np.sum(n_a * d / 2 - n_b * d / 2 + n_t * log_nu - (n_a + n_b + n_t) * log_d, axis=1)
    return -np.sum((n_a + n_t / 2) * np.logaddexp(0.0, -d) + (n_b + n_t / 2) * np.logaddexp(0.0, d), axis=1)


def _batch_predictor(design: Design, beta: np.ndarray) -> np.ndarray:
    k, f = design.k, design.z.shape[1]
    theta = np.concatenate([np.zeros((len(beta), 1)), beta[:, : k - 1]], axis=1)
    d = theta[:, design.a] - theta[:, design.b]
    if f:
        d = d + beta[:, k - 1 : k - 1 + f] @ design.z.T
    return d


def fit_batch(design: Design, counts: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Maximum-likelihood betas of many resamples at once (counts B x R x 3), Newton's method with step
    halving per resample; a row of NaN where a resample has no finite estimate."""
    n_draws, k, f = len(counts), design.k, design.z.shape[1]
    n_params = design.n_params
    beta = np.repeat(start[None, :], n_draws, axis=0)
    failed = np.zeros(n_draws, dtype=bool)
    current = _batch_loglik(design, beta, counts)
    n_a, n_b, n_t = counts[:, :, A_WINS], counts[:, :, B_WINS], counts[:, :, TIED]
    n = n_a + n_b + n_t
    draw = np.arange(n_draws)[:, None]
    pair_index = (draw * k * k + design.a[None, :] * k + design.b[None, :]).ravel()
    index_a = (draw * k + design.a[None, :]).ravel()
    index_b = (draw * k + design.b[None, :]).ravel()

    def by_model(weights: np.ndarray) -> np.ndarray:
        """Per draw and model: the sum of ``weights`` over rows where it is A, minus where it is B."""
        size = n_draws * k
        plus = np.bincount(index_a, weights=weights.ravel(), minlength=size)
        minus = np.bincount(index_b, weights=weights.ravel(), minlength=size)
        return (plus - minus).reshape(n_draws, k)

    for _ in range(_MAX_NEWTON):
        d = _batch_predictor(design, beta)
        if design.davidson:
            log_nu = beta[:, -1:]
            log_d = np.logaddexp(np.logaddexp(d / 2, -d / 2), log_nu)
            p_a, p_b, p_t = np.exp(d / 2 - log_d), np.exp(-d / 2 - log_d), np.exp(log_nu - log_d)
            g_d = (n_a - n_b) / 2 - n * (p_a - p_b) / 2
            h_dd = -n * ((p_a + p_b) / 4 - (p_a - p_b) ** 2 / 4)
        else:
            p = 1.0 / (1.0 + np.exp(-d))
            g_d = n_a + n_t / 2 - n * p
            h_dd = -n * p * (1 - p)
        grad = np.zeros((n_draws, n_params))
        hess = np.zeros((n_draws, n_params, n_params))
        # theta block: sum over rows of h (e_a - e_b)(e_a - e_b)^T, gathered per ordered pair
        pairs = np.bincount(pair_index, weights=h_dd.ravel(), minlength=n_draws * k * k).reshape(
            n_draws, k, k
        )
        both = pairs + pairs.transpose(0, 2, 1)
        block = -both
        block[:, np.arange(k), np.arange(k)] = both.sum(axis=2)
        hess[:, : k - 1, : k - 1] = block[:, 1:, 1:]
        grad[:, : k - 1] = by_model(g_d)[:, 1:]
        if f:
            grad[:, k - 1 : k - 1 + f] = g_d @ design.z
            hess[:, k - 1 : k - 1 + f, k - 1 : k - 1 + f] = np.einsum(
                "br,rf,rg->bfg", h_dd, design.z, design.z
            )
            for j in range(f):
                cross = by_model(h_dd * design.z[None, :, j])
                hess[:, : k - 1, k - 1 + j] = cross[:, 1:]
                hess[:, k - 1 + j, : k - 1] = cross[:, 1:]
        if design.davidson:
            last = n_params - 1
            h_dl = n * (p_a - p_b) * p_t / 2
            grad[:, last] = (n_t - n * p_t).sum(axis=1)
            hess[:, last, last] = (-n * p_t * (1 - p_t)).sum(axis=1)
            cross = by_model(h_dl)
            hess[:, last, : k - 1] = cross[:, 1:]
            hess[:, : k - 1, last] = cross[:, 1:]
            if f:
                style_cross = h_dl @ design.z
                hess[:, last, k - 1 : k - 1 + f] = style_cross
                hess[:, k - 1 : k - 1 + f, last] = style_cross
        live = ~failed
        step = np.zeros_like(beta)
        try:
            step[live] = np.linalg.solve(-hess[live], grad[live][:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:
            for i in np.flatnonzero(live):
                try:
                    step[i] = np.linalg.solve(-hess[i], grad[i])
                except np.linalg.LinAlgError:
                    failed[i] = True
        t = np.ones(n_draws)
        trial = beta + step
        value = _batch_loglik(design, trial, counts)
        worse = (value < current - 1e-12 * np.maximum(1.0, np.abs(current))) & ~failed
        while worse.any() and t[worse].min() >= 1e-8:
            t[worse] /= 2
            trial[worse] = beta[worse] + t[worse, None] * step[worse]
            value[worse] = _batch_loglik(design, trial[worse], counts[worse])
            worse = (value < current - 1e-12 * np.maximum(1.0, np.abs(current))) & ~failed
        moved = t[:, None] * step
        beta, current = trial, value
        bad = ~np.all(np.isfinite(beta), axis=1) | (
            np.max(np.abs(beta[:, : k - 1]), axis=1, initial=0.0) > _MAX_THETA
        )
        failed |= bad
        if np.all((np.max(np.abs(moved), axis=1) < _STEP_TOL) | failed):
            break
    else:
        failed |= np.max(np.abs(moved), axis=1) >= _STEP_TOL
    beta[failed] = np.nan
    return beta


# --- distinct outcomes and when a finite estimate exists ------------------------------------------


def fold(a: np.ndarray, b: np.ndarray, z: np.ndarray, outcome: np.ndarray) -> tuple[np.ndarray, ...]:
    """Distinct (a, b, z) rows and their outcome counts (R x 3)."""
    if z.shape[1] == 0:
        width = int(max(a.max(initial=0), b.max(initial=0))) + 1
        pairs, inverse = np.unique(a * width + b, return_inverse=True)
        counts = np.zeros((len(pairs), 3))
        np.add.at(counts, (inverse.ravel(), outcome), 1.0)
        return pairs // width, pairs % width, np.zeros((len(pairs), 0)), counts
    keys = np.column_stack([a.astype(float), b.astype(float), z])
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    counts = np.zeros((len(unique), 3))
    np.add.at(counts, (inverse, outcome), 1.0)
    return unique[:, 0].astype(np.int64), unique[:, 1].astype(np.int64), unique[:, 2:], counts


def beaten_graph(a: np.ndarray, b: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """edge[i, j]: i won or tied against j at least once."""
    edge = np.zeros((k, k), dtype=bool)
    forward = (counts[:, A_WINS] + counts[:, TIED]) > 0
    backward = (counts[:, B_WINS] + counts[:, TIED]) > 0
    edge[a[forward], b[forward]] = True
    edge[b[backward], a[backward]] = True
    return edge


def components(edge: np.ndarray) -> list[np.ndarray]:
    """Strongly connected components (as index arrays) of a small graph, by transitive closure."""
    k = len(edge)
    reach = edge | np.eye(k, dtype=bool)
    for _ in range(max(1, math.ceil(math.log2(max(k, 2)))) + 1):
        reach = reach | ((reach.astype(np.int64) @ reach.astype(np.int64)) > 0)
    mutual = reach & reach.T
    seen = np.zeros(k, dtype=bool)
    out = []
    for i in range(k):
        if not seen[i]:
            members = np.flatnonzero(mutual[i])
            seen[members] = True
            out.append(members)
    return out


def connected(a: np.ndarray, b: np.ndarray, counts: np.ndarray, k: int) -> bool:
    return len(components(beaten_graph(a, b, counts, k))) == 1


def rated_component(a: np.ndarray, b: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """The models that can be rated together: the strongly connected group of the "won or tied against"
    graph with the most battles inside it (then the most models, then the lowest index); empty when no
    group of two or more models has a battle inside it."""
    groups = components(beaten_graph(a, b, counts, k))
    battles_in = [int(counts[np.isin(a, c) & np.isin(b, c)].sum()) if len(c) > 1 else 0 for c in groups]
    best = max(range(len(groups)), key=lambda i: (battles_in[i], len(groups[i]), -groups[i][0]))
    return groups[best] if battles_in[best] > 0 else np.array([], dtype=np.int64)


def point_ratings(a: np.ndarray, b: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """Plain Bradley-Terry ratings of k models (ties as half wins, no style features, no intervals) from
    outcome rows (a, b) with counts (R x 3: A wins, B wins, ties), in rating points relative to the mean of
    the rated models. NaN for a model outside ``rated_component`` (all NaN when fewer than two are rated).
    FitError when the rated models have no finite estimate the fit can reach."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    counts = np.asarray(counts, dtype=float).reshape(len(a), 3)
    out = np.full(k, np.nan)
    if len(a) == 0:
        return out
    rated = rated_component(a, b, counts, k)
    if len(rated) < 2:
        return out
    position = np.full(k, -1, dtype=np.int64)
    position[rated] = np.arange(len(rated))
    inside = (position[a] >= 0) & (position[b] >= 0)
    design = Design(
        a=position[a[inside]],
        b=position[b[inside]],
        z=np.zeros((int(inside.sum()), 0)),
        counts=counts[inside],
        k=len(rated),
        davidson=False,
    )
    beta, _ = fit(design, design.counts, hessian=False)
    theta, _, _ = split_params(design, beta)
    out[rated] = ELO_SCALE * (theta - theta.mean())
    return out
