"""Coverage of the prediction-powered win-rate interval on simulated data with a known truth.

    python bench/ppi_coverage.py [--simulations 1000] [--labelled 200] [--unlabelled 2000] [--seed 0]

Each simulation draws items whose true human preference Y (1: model X wins, 1/2: tie, 0: it loses) has
mean ``truth``, and an LLM judge label f for every item: equal to Y with probability ``accuracy``,
otherwise a wrong label drawn from the other two (so the judge is biased: its mean is not the truth).
People label ``--labelled`` items, the judge all of them plus ``--unlabelled`` more. For every scenario
(a good judge, a mediocre one, a useless one) it counts how often each 95% interval (PPI, human-only,
judge-only) covers the truth and reports the mean widths. Calls the same
``analytics.domain.judge_lab.ppi_mean`` the lab uses.

``bradley_terry`` does the same for prediction-powered Bradley-Terry ratings of four models
(``bradley_terry_ppi``; ``--bt-simulations`` runs, default 1,000): comparisons of random model pairs whose
expected human preference is the Bradley-Terry probability (ties drawn so that a tie counts half without
moving the expectation), so the true ratings are known; coverage is over every model's rating.

Prints one JSON object; exits 1 when the win-rate PPI coverage of a scenario is outside 93-97% or the good
judge's PPI interval is not narrower than the human-only one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analytics.domain.judge_lab import ELO_PER_NAT, bradley_terry_ppi, ppi_mean  # noqa: E402

# Shares of loss, tie and win among people; the truth is their mean (ties half).
HUMAN_SHARES = (0.3, 0.15, 0.55)
SCENARIOS = {"good_judge": 0.85, "mediocre_judge": 0.6, "useless_judge": 1 / 3}
VALUES = np.array([0.0, 0.5, 1.0])


def _simulate(rng: np.random.Generator, n: int, accuracy: float) -> tuple[np.ndarray, np.ndarray]:
    y_index = rng.choice(3, size=n, p=HUMAN_SHARES)
    right = rng.random(n) < accuracy
    shift = rng.integers(1, 3, size=n)  # a wrong label: one of the two others, at random
    f_index = np.where(right, y_index, (y_index + shift) % 3)
    return VALUES[y_index], VALUES[f_index]


def run(simulations: int, labelled: int, unlabelled: int, seed: int) -> dict:
    truth = float(np.dot(HUMAN_SHARES, VALUES))
    out: dict = {
        "simulations": simulations,
        "labelled": labelled,
        "unlabelled": unlabelled,
        "seed": seed,
        "truth": truth,
        "scenarios": {},
    }
    for name, accuracy in SCENARIOS.items():
        rng = np.random.default_rng([seed, round(accuracy * 1000)])
        covered = {"ppi": 0, "human_only": 0, "judge_only": 0}
        widths: dict[str, list[float]] = {key: [] for key in covered}
        lambdas = []
        for _ in range(simulations):
            y, f = _simulate(rng, labelled, accuracy)
            _, g = _simulate(rng, unlabelled, accuracy)
            result = ppi_mean(y, f, g)
            lambdas.append(result.lam)
            for key, estimate in (
                ("ppi", result.ppi),
                ("human_only", result.human_only),
                ("judge_only", result.judge_only),
            ):
                covered[key] += estimate.ci_low <= truth <= estimate.ci_high
                widths[key].append(estimate.ci_high - estimate.ci_low)
        out["scenarios"][name] = {
            "judge_accuracy": accuracy,
            "coverage": {key: value / simulations for key, value in covered.items()},
            "mean_width": {key: float(np.mean(value)) for key, value in widths.items()},
            "mean_lambda": float(np.mean(lambdas)),
        }
    good = out["scenarios"]["good_judge"]["mean_width"]
    out["ok"] = (
        all(0.93 <= s["coverage"]["ppi"] <= 0.97 for s in out["scenarios"].values())
        and good["ppi"] < good["human_only"]
    )
    return out


# Bradley-Terry strengths (natural log odds) of four models; the judge's accuracy per scenario.
BT_STRENGTHS = np.array([0.0, 0.5, 1.0, -0.5])
BT_SCENARIOS = {"good_judge": 0.85, "useless_judge": 1 / 3}


def _bt_comparisons(rng: np.random.Generator, n: int, accuracy: float):
    import pandas as pd

    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    p = 1.0 / (1.0 + np.exp(-(BT_STRENGTHS[a] - BT_STRENGTHS[b])))
    tie = 0.4 * np.minimum(p, 1 - p)  # P(tie); wins p - tie/2: the expected preference stays p
    u = rng.random(n)
    y = np.where(u < p - tie / 2, 1.0, np.where(u < p + tie / 2, 0.5, 0.0))
    f = np.where(rng.random(n) < accuracy, y, rng.choice(VALUES, n))
    names = np.array(["m0", "m1", "m2", "m3"])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "y": y, "f": f})


def run_bradley_terry(simulations: int, labelled: int, unlabelled: int, seed: int, scenarios=None) -> dict:
    truth = ELO_PER_NAT * (BT_STRENGTHS - BT_STRENGTHS.mean()) + 1000.0
    out: dict = {"simulations": simulations, "truth": truth.round(2).tolist(), "scenarios": {}}
    for name, accuracy in (scenarios or BT_SCENARIOS).items():
        rng = np.random.default_rng([seed, 7, round(accuracy * 1000)])
        covered = {"ppi": 0.0, "human_only": 0.0, "judge_only": 0.0}
        widths: dict[str, list[float]] = {key: [] for key in covered}
        for _ in range(simulations):
            labelled_rows = _bt_comparisons(rng, labelled, accuracy)
            result = bradley_terry_ppi(
                labelled_rows, _bt_comparisons(rng, unlabelled, accuracy).drop(columns="y")
            )
            for key, value, se in (
                ("ppi", result.ppi, result.ppi_se),
                ("human_only", result.human, result.human_se),
                ("judge_only", result.judge, result.judge_se),
            ):
                covered[key] += float(np.mean(np.abs(value - truth) <= 1.959964 * se))
                widths[key].append(float(np.mean(2 * 1.959964 * se)))
        out["scenarios"][name] = {
            "judge_accuracy": accuracy,
            "coverage": {key: value / simulations for key, value in covered.items()},
            "mean_width": {key: float(np.mean(value)) for key, value in widths.items()},
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--labelled", type=int, default=200)
    parser.add_argument("--unlabelled", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bt-simulations", type=int, default=1000, help="0: leave Bradley-Terry out")
    args = parser.parse_args()
    started = time.perf_counter()
    result = run(args.simulations, args.labelled, args.unlabelled, args.seed)
    if args.bt_simulations:
        result["bradley_terry"] = run_bradley_terry(
            args.bt_simulations, args.labelled, args.unlabelled, args.seed
        )
    result["seconds"] = round(time.perf_counter() - started, 2)
    print(json.dumps(result, indent=2))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
