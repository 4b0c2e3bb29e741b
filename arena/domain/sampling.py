"""Which two models battle next: uniform or active sampling, with the probability of the choice.

Every choice returns the pair and the probability with which that (unordered) pair was drawn, so a
battle's record tells how it was sampled and a later analysis can reweight by 1 / probability. The side
each model takes (A or B) is a fair coin on top. Randomness comes in as a ``numpy.random.Generator``.

- **uniform**: every unordered pair with probability 1 / P (P = k (k - 1) / 2 pairs).
- **active** (Chatbot Arena, Chiang et al. 2024, section 5: sample the pair whose next vote most reduces
  the width of the confidence intervals). The widths are those of each model's rating (relative to the
  mean, as the leaderboard anchors them). Their variances come from the Bradley-Terry Fisher information
  I = sum over pairs (n_uv + prior) p_uv (1 - p_uv) (e_u - e_v)(e_u - e_v)^T at the current ratings (p_uv
  the modelled chance that u beats v; ``prior`` pseudo-votes per pair keep I invertible on the contrasts
  before every pair has battled). One more vote on pair q adds w_q u_q u_q^T, and by the Sherman-Morrison
  formula the variance of a contrast c falls from c^T C c to
  c^T C c - w_q (c^T C u_q)^2 / (1 + w_q u_q^T C u_q), C = I^+. What matters for a ranking is the
  intervals that still overlap a neighbour's in the current order, so a model's fall of standard
  deviation counts once per overlapping neighbour (every model once when none overlaps). The pair with
  the largest gain is drawn with probability 1 - floor_share + floor_share / P; every pair keeps at least
  ``floor_share / P`` (the floor), so no pair is starved and every probability stays known and positive.

Live battles give the active sampler the votes per pair and the current ratings of the arena's voted
battles (``vote_matrix``, ``live_ratings``): the plain Bradley-Terry fit of the leaderboard (ties as half
wins, both-bad a tie; ``arena.domain.bradley_terry``), so the intervals it narrows are those the
leaderboard will show.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from arena.domain.battles import VOTES
from arena.domain.bradley_terry import A_WINS, B_WINS, ELO_SCALE, TIED, FitError, point_ratings

SAMPLERS = ("uniform", "active")
RATING_SCALE = ELO_SCALE  # rating points per unit of log-odds (the leaderboard's scale)
OUTCOME_OF_VOTE = {"A": A_WINS, "B": B_WINS, "tie": TIED, "both_bad": TIED}
DEFAULT_FLOOR_SHARE = 0.2
DEFAULT_PRIOR_VOTES = 1.0
Z95 = 1.959963984540054


@dataclass(frozen=True)
class PairChoice:
    model_a: str
    model_b: str
    probability: float  # of drawing this unordered pair
    sampler: str


def pair_list(k: int) -> list[tuple[int, int]]:
    """The unordered pairs (i < j) of k models, in a fixed order."""
    return [(i, j) for i in range(k) for j in range(i + 1, k)]


def uniform_probabilities(k: int) -> np.ndarray:
    _check_models(k)
    n_pairs = k * (k - 1) // 2
    return np.full(n_pairs, 1.0 / n_pairs)


def active_gains(
    votes: np.ndarray, ratings: np.ndarray | None = None, *, prior_votes: float = DEFAULT_PRIOR_VOTES
) -> np.ndarray:
    """Per pair (in ``pair_list`` order): the fall of the models' rating standard deviations (log-odds)
    if that pair got one more vote, each model's counted once per neighbour its interval overlaps."""
    votes = np.asarray(votes, dtype=float)
    k = len(votes)
    _check_models(k)
    if votes.shape != (k, k) or (votes < 0).any() or not np.allclose(votes, votes.T):
        raise ValueError("votes must be a symmetric k x k matrix of counts >= 0")
    if prior_votes <= 0:
        raise ValueError("prior_votes must be above 0")
    theta = np.zeros(k) if ratings is None else np.asarray(ratings, dtype=float) / RATING_SCALE
    if theta.shape != (k,) or not np.all(np.isfinite(theta)):
        raise ValueError("ratings must be k finite numbers")
    pairs = np.array(pair_list(k))
    i, j = pairs[:, 0], pairs[:, 1]
    p = 1.0 / (1.0 + np.exp(-(theta[i] - theta[j])))
    w = p * (1.0 - p)
    n = votes[i, j] + prior_votes
    u = np.zeros((k, len(pairs)))
    u[i, np.arange(len(pairs))] = 1.0
    u[j, np.arange(len(pairs))] = -1.0
    information = (u * (n * w)) @ u.T
    cov = np.linalg.pinv(information)
    # Each model's rating relative to the mean of all (how the leaderboard anchors them).
    contrasts = np.eye(k) - 1.0 / k
    variance = np.einsum("kc,kl,lc->c", contrasts, cov, contrasts)
    weights = _unresolved(theta, np.sqrt(variance))
    cu = contrasts.T @ cov @ u  # k x P: c^T C u_q
    leverage = np.einsum("kq,kl,lq->q", u, cov, u)  # u_q^T C u_q
    after = variance[:, None] - w[None, :] * cu**2 / (1.0 + w * leverage)[None, :]
    falls = np.sqrt(variance)[:, None] - np.sqrt(np.clip(after, 0.0, None))
    return weights @ falls


def _unresolved(theta: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Per model, how many of its neighbours in the current order its 95 % interval still overlaps (every
    model counts once when none overlaps)."""
    order = np.argsort(-theta, kind="stable")
    weights = np.zeros(len(theta))
    for better, worse in zip(order[:-1], order[1:], strict=True):
        if theta[better] - Z95 * sd[better] <= theta[worse] + Z95 * sd[worse]:
            weights[better] += 1.0
            weights[worse] += 1.0
    return weights if weights.any() else np.ones(len(theta))


def active_probabilities(
    votes: np.ndarray,
    ratings: np.ndarray | None = None,
    *,
    floor_share: float = DEFAULT_FLOOR_SHARE,
    prior_votes: float = DEFAULT_PRIOR_VOTES,
) -> np.ndarray:
    """The active sampler's probability of each pair (``pair_list`` order); they sum to 1."""
    if not 0 < floor_share <= 1:
        raise ValueError("floor_share must be in (0, 1]")
    gains = active_gains(votes, ratings, prior_votes=prior_votes)
    probabilities = np.full(len(gains), floor_share / len(gains))
    probabilities[int(np.argmax(gains))] += 1.0 - floor_share
    return probabilities


def choose_pair(
    models: Sequence[str], probabilities: np.ndarray, rng: np.random.Generator, *, sampler: str
) -> PairChoice:
    """Draw a pair by ``probabilities`` (``pair_list`` order), then which model is A by a fair coin."""
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(SAMPLERS)}")
    k = len(models)
    pairs = pair_list(k)
    if len(set(models)) != k:
        raise ValueError("model names must be distinct")
    if len(probabilities) != len(pairs) or not math.isclose(float(np.sum(probabilities)), 1.0, abs_tol=1e-9):
        raise ValueError("probabilities must give one value per pair and sum to 1")
    index = int(rng.choice(len(pairs), p=probabilities))
    first, second = pairs[index]
    if rng.random() < 0.5:
        first, second = second, first
    return PairChoice(
        model_a=models[first],
        model_b=models[second],
        probability=float(probabilities[index]),
        sampler=sampler,
    )


def sample_pair(
    models: Sequence[str],
    rng: np.random.Generator,
    *,
    sampler: str = "uniform",
    votes: np.ndarray | None = None,
    ratings: np.ndarray | None = None,
    floor_share: float = DEFAULT_FLOOR_SHARE,
) -> PairChoice:
    """The next pair for ``models`` (votes per pair and ratings in the same order, for ``active``)."""
    k = len(models)
    if sampler == "uniform":
        probabilities = uniform_probabilities(k)
    elif sampler == "active":
        probabilities = active_probabilities(
            np.zeros((k, k)) if votes is None else votes, ratings, floor_share=floor_share
        )
    else:
        raise ValueError(f"sampler must be one of {', '.join(SAMPLERS)}")
    return choose_pair(models, probabilities, rng, sampler=sampler)


def _outcome_counts(k: int, outcomes: Iterable[tuple[int, int, str, int]]) -> tuple[np.ndarray, ...]:
    """(a, b, counts R x 3) from rows (index of model A, index of model B, vote, number of battles)."""
    rows = list(outcomes)
    a = np.zeros(len(rows), dtype=np.int64)
    b = np.zeros(len(rows), dtype=np.int64)
    counts = np.zeros((len(rows), 3))
    for n, (first, second, vote, number) in enumerate(rows):
        if not (0 <= first < k and 0 <= second < k) or first == second:
            raise ValueError(
                f"outcome row {n + 1}: models {first} and {second} are not two of the {k} models"
            )
        if vote not in VOTES:
            raise ValueError(f"outcome row {n + 1}: vote {vote!r} is not one of {', '.join(VOTES)}")
        if number < 0:
            raise ValueError(f"outcome row {n + 1}: a count of battles must be 0 or more")
        a[n], b[n] = first, second
        counts[n, OUTCOME_OF_VOTE[vote]] += number
    return a, b, counts


def vote_matrix(k: int, outcomes: Iterable[tuple[int, int, str, int]]) -> np.ndarray:
    """Battles per unordered pair (symmetric k x k) from rows (index of A, index of B, vote, count)."""
    a, b, counts = _outcome_counts(k, outcomes)
    votes = np.zeros((k, k))
    np.add.at(votes, (a, b), counts.sum(axis=1))
    return votes + votes.T


def live_ratings(k: int, outcomes: Iterable[tuple[int, int, str, int]]) -> np.ndarray:
    """The active sampler's current ratings (rating points) of k models from voted battles given as rows
    (index of A, index of B, vote, count): the leaderboard's plain Bradley-Terry fit, ties as half wins.
    A model the fit cannot rate yet (no battles, never lost, never won) stands at the mean of the rated
    ones; all stand at 0 while fewer than two can be rated or the fit has no finite estimate, which is
    what the sampler assumes without ratings."""
    a, b, counts = _outcome_counts(k, outcomes)
    try:
        ratings = point_ratings(a, b, counts, k)
    except FitError:
        return np.zeros(k)
    return np.where(np.isfinite(ratings), ratings, 0.0)


def _check_models(k: int) -> None:
    if k < 2:
        raise ValueError("sampling needs at least two models")
