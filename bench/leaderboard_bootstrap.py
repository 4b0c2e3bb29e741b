"""Leaderboard benchmark: the bootstrap of 100,000 battles x 1,000 draws.

    python bench/leaderboard_bootstrap.py [--battles 100000] [--models 20] [--draws 1000] [--seed 0]
                                          [--ties half|davidson] [--style-control length,bold]

Synthesises battles between ``--models`` models with normally distributed strengths (15 % ties, 5 %
both-bad; with --style-control, answer lengths and bold counts that sway the vote), then times
``analytics.domain.leaderboard.leaderboard_fit`` three ways: the point fit alone (no bootstrap, no
vote-drop search), the fit with the bootstrap, and the vote-drop search. Target (issue 32): the
bootstrap of 100,000 battles x 1,000 draws in under 10 s.

Without style control the battles fold into at most 3 k (k - 1) distinct outcomes, so each draw is one
multinomial draw and one Newton fit over those; with style control nearly every battle is distinct and a
draw costs the number of battles.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analytics.domain.leaderboard import leaderboard_fit  # noqa: E402


def synthesise(n: int, k: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strengths = rng.normal(0, 0.7, k)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    length_a, length_b = rng.integers(20, 1500, n), rng.integers(20, 1500, n)
    bold_a, bold_b = rng.poisson(1.5, n), rng.poisson(1.5, n)
    d = strengths[a] - strengths[b] + 0.4 * (length_a - length_b) / (length_a + length_b)
    p_a = 1 / (1 + np.exp(-d))
    u = rng.random(n)
    decided = 0.8
    winner = np.where(
        u < decided * p_a,
        "model_a",
        np.where(u < decided, "model_b", np.where(u < 0.95, "tie", "tie (bothbad)")),
    )
    names = np.array([f"model-{i:02d}" for i in range(k)])
    return pd.DataFrame(
        {
            "model_a": names[a],
            "model_b": names[b],
            "winner": winner,
            "length_a": length_a,
            "length_b": length_b,
            "bold_a": bold_a,
            "bold_b": bold_b,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--battles", type=int, default=100_000)
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ties", choices=("half", "davidson"), default="half")
    parser.add_argument("--style-control", default="")
    args = parser.parse_args()
    features = [f for f in args.style_control.split(",") if f]
    battles = synthesise(args.battles, args.models, args.seed)
    common = {"ties": args.ties, "style_features": features, "seed": args.seed, "groups": ()}

    started = time.perf_counter()
    leaderboard_fit(battles, bootstrap=0, vote_drop=False, **common)
    point = time.perf_counter() - started

    started = time.perf_counter()
    board = leaderboard_fit(battles, bootstrap=args.draws, vote_drop=False, **common)
    with_bootstrap = time.perf_counter() - started

    started = time.perf_counter()
    dropped = leaderboard_fit(battles, bootstrap=0, vote_drop=True, **common)
    vote_drop = time.perf_counter() - started - point

    print(
        json.dumps(
            {
                "battles": args.battles,
                "models": args.models,
                "draws": args.draws,
                "ties": args.ties,
                "style_control": features,
                "seconds_point_fit": round(point, 3),
                "seconds_with_bootstrap": round(with_bootstrap, 3),
                "seconds_bootstrap_only": round(with_bootstrap - point, 3),
                "seconds_vote_drop": round(vote_drop, 3),
                "failed_draws": board.n_failed_draws,
                "top": board.models[0].model,
                "top_ci95": [round(x, 2) for x in board.models[0].ci95],
                "vote_drop_votes": dropped.vote_drop.votes_removed if dropped.vote_drop else None,
                "cpu_count": os.cpu_count(),
            }
        )
    )


if __name__ == "__main__":
    main()
