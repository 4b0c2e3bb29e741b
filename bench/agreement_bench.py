"""Agreement benchmark: Krippendorff's alpha with a 1,000-draw bootstrap on a million ratings.

    python bench/agreement_bench.py --ratings 1000000 [--draws 1000] [--seed 0] [--level ordinal]

Synthesises long-format Likert ratings (units x coders, values 1..scale, a true score per unit plus
noise), then times

* ours: preparing the long DataFrame, the point estimate and the seeded bootstrap (``seconds_*``);
* ``krippendorff.alpha`` once on the equivalent coders x units matrix (matrix building not timed);
* ``krippendorff.alpha`` x draws, estimated from a timed sample of calls on resampled matrices, which is
  what a naive bootstrap with the package would cost.

Memory: ``peak_traced_mb`` is the tracemalloc peak of a second run of ours (numpy reports its buffers
to tracemalloc); ``peak_rss_mb`` is the whole process's peak, synthesis and the package calls included.
Prints one JSON object. Target (DESIGN.md §9): seconds, not minutes, on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd

# Run as a script from the repository root: make the project packages importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analytics.domain.agreement import LEVELS, Reliability  # noqa: E402


def synthesise(
    n_ratings: int, n_coders: int, scale: int, missing: float, seed: int, *, continuous: bool = False
) -> tuple[pd.DataFrame, np.ndarray]:
    """Long ratings and the same data as a coders x units matrix (NaN = missing)."""
    rng = np.random.default_rng(seed)
    n_units = n_ratings // n_coders
    truth = rng.normal((scale + 1) / 2, scale / 4, size=n_units)
    noisy = truth[None, :] + rng.normal(0, 0.8, size=(n_coders, n_units))
    matrix = noisy.round(2) if continuous else np.clip(np.rint(noisy), 1, scale)
    if missing:
        matrix[rng.random(matrix.shape) < missing] = np.nan
    coder, unit = np.nonzero(~np.isnan(matrix))
    long = pd.DataFrame(
        {"unit": unit.astype(np.int64), "coder": coder.astype(np.int64), "value": matrix[coder, unit]}
    ).sort_values(["unit", "coder"], kind="stable", ignore_index=True)
    return long, matrix


def time_ours(long: pd.DataFrame, level: str, draws: int, seed: int) -> dict[str, object]:
    start = time.perf_counter()
    prepared = Reliability.from_long(long, level)
    prepared_at = time.perf_counter()
    result = prepared.alpha()
    alpha_at = time.perf_counter()
    boot = prepared.bootstrap(draws=draws, seed=seed, alpha_min=[0.667, 0.8])
    end = time.perf_counter()
    return {
        "alpha": result.alpha,
        "ci95": list(boot.ci) if boot.ci else None,
        "q_below": {f"{k:g}": v for k, v in boot.q_below.items()},
        "n_profiles": int(prepared.counts.shape[0]),
        "seconds_prepare": round(prepared_at - start, 3),
        "seconds_alpha": round(alpha_at - prepared_at, 4),
        "seconds_bootstrap": round(end - alpha_at, 3),
        "seconds_total": round(end - start, 3),
    }


def time_package(matrix: np.ndarray, level: str, draws: int, sample: int, seed: int) -> dict[str, object]:
    start = time.perf_counter()
    value = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    once = time.perf_counter() - start
    rng = np.random.default_rng(seed)
    pairable = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    start = time.perf_counter()
    for _ in range(sample):
        resampled = pairable[:, rng.integers(0, pairable.shape[1], size=pairable.shape[1])]
        krippendorff.alpha(reliability_data=resampled, level_of_measurement=level)
    per_call = (time.perf_counter() - start) / sample
    return {
        "krippendorff_alpha": float(value),
        "krippendorff_seconds_once": round(once, 3),
        "krippendorff_sample_calls": sample,
        "krippendorff_seconds_per_resampled_call": round(per_call, 3),
        f"krippendorff_x{draws}_seconds_estimated": round(per_call * draws, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratings", type=int, default=1_000_000)
    parser.add_argument("--coders", type=int, default=5)
    parser.add_argument("--scale", type=int, default=5)
    parser.add_argument("--missing", type=float, default=0.0, help="share of ratings removed at random")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--level", choices=LEVELS, default="ordinal")
    parser.add_argument("--package-sample", type=int, default=5, help="timed krippendorff calls")
    parser.add_argument(
        "--continuous",
        action="store_true",
        help="decimal values (hundreds of distinct levels); the package is not timed: it would need "
        "a units x values x values array",
    )
    args = parser.parse_args()

    long, matrix = synthesise(
        args.ratings, args.coders, args.scale, args.missing, args.seed, continuous=args.continuous
    )
    report: dict[str, object] = {
        "ratings": len(long),
        "units": int(matrix.shape[1]),
        "coders": args.coders,
        "scale": args.scale,
        "level": args.level,
        "continuous": args.continuous,
        "draws": args.draws,
        "seed": args.seed,
        "cpu_count": os.cpu_count(),
    }
    report.update(time_ours(long, args.level, args.draws, args.seed))
    tracemalloc.start()
    time_ours(long, args.level, args.draws, args.seed)
    report["peak_traced_mb"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
    tracemalloc.stop()
    if not args.continuous:
        report.update(time_package(matrix, args.level, args.draws, args.package_sample, args.seed))
        report["alpha_abs_difference"] = abs(report["alpha"] - report["krippendorff_alpha"])
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
