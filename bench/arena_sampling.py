"""Arena sampling benchmark: votes needed until the leaderboard separates every neighbour of the true ranking.

    python bench/arena_sampling.py [--models 8] [--gap 35] [--seeds 3] [--check-every 250]
                                   [--draws 100] [--max-votes 40000] [--tie-share 0.1]

Simulates an arena with known strengths: ``--models`` models whose true ratings are ``--gap`` points
apart (on the leaderboard's scale, 400 log10 odds). Each vote: the sampler (``arena.domain.sampling``)
picks a pair, the outcome is drawn from the Bradley-Terry probabilities with a share of ties. Every
``--check-every`` votes the leaderboard (``analytics.domain.leaderboard.leaderboard_fit``, ties as half
wins, ``--draws`` bootstrap draws) is fitted; the run stops when, for every neighbour pair of the true
ranking, the better model's lower bound is above the worse model's upper bound (non-overlapping 95 %
intervals in the true order). The active sampler gets the latest fitted ratings at each check and the
votes per pair after every vote. The same seeds serve both samplers.

Prints one JSON object: per sampler the votes needed for each seed (null: not reached by --max-votes),
their median, and the seconds taken.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analytics.domain.leaderboard import LeaderboardError, leaderboard_fit  # noqa: E402
from arena.domain.sampling import (  # noqa: E402
    RATING_SCALE,
    active_probabilities,
    choose_pair,
    uniform_probabilities,
)


def separated(board, names: list[str]) -> bool:
    """Every neighbour of the true order (names, best first) separated by non-overlapping intervals."""
    by = {row.model: row for row in board.models}
    for better, worse in zip(names, names[1:], strict=False):
        first, second = by.get(better), by.get(worse)
        if first is None or second is None or first.ci95 is None or second.ci95 is None:
            return False
        if not first.ci95[0] > second.ci95[1]:
            return False
    return True


def simulate(
    sampler: str,
    *,
    models: int,
    gap: float,
    seed: int,
    check_every: int,
    draws: int,
    max_votes: int,
    tie_share: float,
) -> int | None:
    rng = np.random.default_rng(seed)
    names = [f"m{i}" for i in range(models)]  # true order, best first
    true_theta = -np.arange(models) * gap / RATING_SCALE
    votes = np.zeros((models, models))
    ratings: np.ndarray | None = None
    rows: list[tuple[str, str, str]] = []
    index = {m: i for i, m in enumerate(names)}
    while len(rows) < max_votes:
        if sampler == "uniform":
            probabilities = uniform_probabilities(models)
        else:
            probabilities = active_probabilities(votes, ratings)
        choice = choose_pair(names, probabilities, rng, sampler=sampler)
        a, b = index[choice.model_a], index[choice.model_b]
        p_a = 1 / (1 + np.exp(-(true_theta[a] - true_theta[b])))
        u = rng.random()
        if u < tie_share:
            winner = "tie"
        elif u < tie_share + (1 - tie_share) * p_a:
            winner = "model_a"
        else:
            winner = "model_b"
        rows.append((choice.model_a, choice.model_b, winner))
        votes[a, b] += 1
        votes[b, a] += 1
        if len(rows) % check_every == 0:
            battles = pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])
            try:
                board = leaderboard_fit(battles, bootstrap=draws, seed=seed, vote_drop=False, groups=())
            except LeaderboardError:
                continue
            if separated(board, names):
                return len(rows)
            fitted = {row.model: row.rating for row in board.models}
            if all(fitted.get(m) is not None for m in names):
                ratings = np.array([fitted[m] for m in names])
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--gap", type=float, default=35.0, help="rating points between true neighbours")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--check-every", type=int, default=250)
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--max-votes", type=int, default=40_000)
    parser.add_argument("--tie-share", type=float, default=0.1)
    args = parser.parse_args()
    out: dict = {
        "models": args.models,
        "gap_rating_points": args.gap,
        "check_every": args.check_every,
        "bootstrap_draws": args.draws,
        "max_votes": args.max_votes,
        "tie_share": args.tie_share,
    }
    for sampler in ("uniform", "active"):
        started = time.perf_counter()
        needed = [
            simulate(
                sampler,
                models=args.models,
                gap=args.gap,
                seed=seed,
                check_every=args.check_every,
                draws=args.draws,
                max_votes=args.max_votes,
                tie_share=args.tie_share,
            )
            for seed in range(args.seeds)
        ]
        reached = [n for n in needed if n is not None]
        out[sampler] = {
            "votes_needed": needed,
            "median": statistics.median(reached) if len(reached) == len(needed) else None,
            "seconds": round(time.perf_counter() - started, 2),
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
