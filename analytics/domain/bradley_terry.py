"""Bradley-Terry ratings of models from pairwise votes, with a seeded bootstrap interval.

P(i beats j) = p_i / (p_i + p_j). Strengths are fitted by maximum likelihood with Hunter's (2004) MM
iteration p_i <- W_i / sum_j n_ij / (p_i + p_j), where W_i counts i's wins and n_ij the comparisons of i
and j. A tie counts as half a win for each side (the comparison stays in n_ij) unless ``ties="drop"``.

The maximum-likelihood estimate exists only when the "has won at least half a game against" graph is
strongly connected: a model that never wins (or never loses) would have strength 0 (or infinity). Such
data raise ValueError; in the bootstrap such resamples are skipped and counted.

Ratings are reported on an Elo-like scale, 400 * log10(p_i) centred so that the mean rating is 1000.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from analytics.domain.judge_agreement import TIE, A, B

# pandas takes long to import: the functions that use it import it, so start-up (URL loading, a
# worker's boot) does not.
if TYPE_CHECKING:
    import pandas as pd

ELO_SCALE = 400.0
ELO_CENTRE = 1000.0


@dataclass(frozen=True)
class BradleyTerry:
    """Fitted ratings: one row per model (model, rating, strength, wins, games[, ci_low, ci_high]).

    ``strength`` sums to 1 over models; ``wins`` includes half wins for ties (a float), ``games`` is a
    whole number of comparisons; ``n_failed_draws`` is
    the number of bootstrap resamples whose estimate did not exist.
    """

    ratings: pd.DataFrame
    n_votes: int
    n_ties: int
    draws: int = 0
    n_failed_draws: int = 0


def _tally(votes: pd.DataFrame, models: list[str], ties: str) -> tuple[np.ndarray, np.ndarray]:
    """Win matrix W[i, j] (wins of i over j, ties split) from model_a, model_b, winner columns."""
    index = {m: k for k, m in enumerate(models)}
    i = votes["model_a"].map(index).to_numpy()
    j = votes["model_b"].map(index).to_numpy()
    winner = votes["winner"].to_numpy()
    k = len(models)
    wins = np.zeros((k, k))
    np.add.at(wins, (i[winner == A], j[winner == A]), 1.0)
    np.add.at(wins, (j[winner == B], i[winner == B]), 1.0)
    if ties == "half":
        np.add.at(wins, (i[winner == TIE], j[winner == TIE]), 0.5)
        np.add.at(wins, (j[winner == TIE], i[winner == TIE]), 0.5)
    return wins, wins + wins.T


def _strongly_connected(wins: np.ndarray) -> bool:
    reach = (wins > 0) | np.eye(len(wins), dtype=bool)
    for _ in range(int(np.ceil(np.log2(max(len(wins), 2)))) + 1):
        reach = reach | ((reach.astype(np.int64) @ reach.astype(np.int64)) > 0)
    return bool(reach.all())


def _fit(wins: np.ndarray, games: np.ndarray, *, max_iter: int, tol: float) -> np.ndarray | None:
    """MM iteration; returns strengths summing to 1, or None when the estimate does not exist."""
    if not _strongly_connected(wins):
        return None
    total_wins = wins.sum(axis=1)
    p = np.full(len(wins), 1.0 / len(wins))
    for _ in range(max_iter):
        denominator = (games / (p[:, None] + p[None, :])).sum(axis=1)
        updated = total_wins / denominator
        updated /= updated.sum()
        if np.max(np.abs(np.log(updated) - np.log(p))) < tol:
            return updated
        p = updated
    return p


def _to_rating(strength: np.ndarray) -> np.ndarray:
    log_p = np.log10(strength)
    return ELO_SCALE * (log_p - log_p.mean()) + ELO_CENTRE


def bradley_terry(
    votes: pd.DataFrame,
    *,
    ties: str = "half",
    draws: int = 0,
    seed: int | np.random.Generator = 0,
    confidence: float = 0.95,
    max_iter: int = 10_000,
    tol: float = 1e-10,
) -> BradleyTerry:
    """Fit ratings from votes with columns model_a, model_b, winner (A, B or tie).

    With ``draws`` > 0 the votes are resampled with replacement that many times (seeded) and each
    model's percentile interval of the rating is added as ci_low / ci_high.
    """
    import pandas as pd

    if ties not in ("half", "drop"):
        raise ValueError("ties must be 'half' or 'drop'")
    missing = [c for c in ("model_a", "model_b", "winner") if c not in votes.columns]
    if missing:
        raise ValueError(f"missing column(s): {', '.join(missing)}")
    bad = ~votes["winner"].isin([A, B, TIE])
    if bad.any():
        raise ValueError(f"winner {votes.loc[bad, 'winner'].iloc[0]!r} is not A, B or tie")
    if (votes["model_a"] == votes["model_b"]).any():
        raise ValueError("a vote compares a model with itself")
    n_ties = int((votes["winner"] == TIE).sum())
    used = votes.loc[votes["winner"] != TIE] if ties == "drop" else votes
    models = sorted(set(used["model_a"]) | set(used["model_b"]), key=str)
    if len(models) < 2:
        raise ValueError("Bradley-Terry needs votes between at least two models")
    wins, games = _tally(used, models, ties)
    strength = _fit(wins, games, max_iter=max_iter, tol=tol)
    if strength is None:
        raise ValueError(
            "the Bradley-Terry estimate does not exist: some group of models never wins (or never loses) "
            "against the others"
        )
    table = pd.DataFrame(
        {
            "model": models,
            "rating": _to_rating(strength),
            "strength": strength,
            "wins": wins.sum(axis=1),
            "games": np.rint(games.sum(axis=1)).astype(np.int64),  # a tie adds half to each side: whole
        }
    )
    failed = 0
    if draws > 0:
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        samples = np.full((draws, len(models)), np.nan)
        rows = used.reset_index(drop=True)
        for d in range(draws):
            picked = rows.iloc[rng.integers(0, len(rows), size=len(rows))]
            w, g = _tally(picked, models, ties)
            fitted = _fit(w, g, max_iter=max_iter, tol=tol) if (g.sum(axis=1) > 0).all() else None
            if fitted is None:
                failed += 1
                continue
            samples[d] = _to_rating(fitted)
        good = samples[~np.isnan(samples).any(axis=1)]
        tail = (1.0 - confidence) / 2.0
        if len(good):
            table["ci_low"] = np.quantile(good, tail, axis=0)
            table["ci_high"] = np.quantile(good, 1.0 - tail, axis=0)
        else:
            table["ci_low"] = table["ci_high"] = np.nan
    table = table.sort_values("rating", ascending=False, kind="stable").reset_index(drop=True)
    return BradleyTerry(ratings=table, n_votes=len(used), n_ties=n_ties, draws=draws, n_failed_draws=failed)
