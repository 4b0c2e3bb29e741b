"""Export benchmark: long-format Likert ratings -> preference pairs -> Hugging Face dataset folder.

    python bench/export_bench.py --ratings 1000000

Synthesises prompts x responses x criteria x annotators ratings (50,000 x 5 x 2 x 2 for one million),
runs the ``scores`` strategy, splits train/test, renders the card and streams the parquet files, then
prints one JSON object. ``seconds`` covers conversion, split, card and writing, not the synthesis;
``peak_rss_mb`` is the process peak, synthesis included (``peak_rss_after_synthesis_mb`` is the peak
before the export starts). Targets (DESIGN.md §9): under 15 s, under 1.5 GB.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

# Run as a script from the repository root: make the project packages importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from datasets_app.domain.dataset_card import CardInput, counts_by, render_dataset_card  # noqa: E402
from datasets_app.domain.preference_pairs import PairConfig, build_preference_pairs  # noqa: E402
from datasets_app.domain.splits import split_pairs  # noqa: E402
from datasets_app.export_writers import write_hf_folder  # noqa: E402

CATEGORIES = ("Math", "Coding", "Safety", "Culture", "Health", "Law", "Creative", "Chat")
LANGUAGES = ("ind", "jav", "sun", "mad", "min")
CRITERIA = ("relevance", "fluency")
WORDS = (
    "saya kamu dia kami mereka rumah sekolah pasar makan minum pergi datang baik buruk besar kecil air api "
    "tanah langit hujan panas dingin hari malam pagi sore kota desa jalan buku surat kerja uang harga murah "
    "mahal sehat sakit dokter obat guru murid belajar menulis membaca bertanya menjawab karena tetapi jika"
).split()


def synthesise(n_items: int, n_responses: int, n_annotators: int, seed: int) -> tuple[pd.DataFrame, ...]:
    """Items, responses and ratings shaped like a likert project's export selectors will return."""
    rng = np.random.default_rng(seed)
    words = np.array(WORDS, dtype=object)
    item_ids = np.arange(n_items)
    items = pd.DataFrame(
        {
            "item_id": item_ids,
            "prompt": [
                [
                    {
                        "role": "user",
                        "content": f"Pertanyaan {i}: " + " ".join(words[rng.integers(0, len(words), 12)]),
                    }
                ]
                for i in item_ids
            ],
            "category": rng.choice(np.array(CATEGORIES, dtype=object), n_items),
            "language": rng.choice(np.array(LANGUAGES, dtype=object), n_items),
            "register": "",
            "dataset_id": 1,
            "project_id": 1,
        }
    )
    response_ids = np.arange(n_items * n_responses)
    models = np.array([f"model-{k}" for k in range(n_responses)], dtype=object)
    word_ids = rng.integers(0, len(words), (len(response_ids), 40))
    responses = pd.DataFrame(
        {
            "response_id": response_ids,
            "item_id": response_ids // n_responses,
            "model_name": models[response_ids % n_responses],
            "messages": [[{"role": "assistant", "content": " ".join(words[row])}] for row in word_ids],
        }
    )
    per_response = len(CRITERIA) * n_annotators
    rated = np.repeat(response_ids, per_response)
    ratings = pd.DataFrame(
        {
            "item_id": rated // n_responses,
            "annotator": np.tile(np.arange(n_annotators), len(response_ids) * len(CRITERIA)),
            "response_id": rated,
            "criterion": np.tile(
                np.repeat(np.array(CRITERIA, dtype=object), n_annotators), len(response_ids)
            ),
            "value": rng.integers(1, 6, len(rated)),
        }
    )
    return items, responses, ratings


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratings", type=int, default=1_000_000, help="number of long-format ratings")
    parser.add_argument("--responses", type=int, default=5, help="responses per prompt")
    parser.add_argument("--annotators", type=int, default=2, help="annotators per response")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="folder to write (default: a temporary folder, removed)")
    parser.add_argument(
        "--source",
        choices=("synthetic", "database"),
        default="synthetic",
        help="where ratings come from; 'database' (chunked reads through the selectors) is not available yet",
    )
    args = parser.parse_args(argv)
    if args.source == "database":
        parser.error("--source database is not available yet")
    per_item = args.responses * len(CRITERIA) * args.annotators
    if args.ratings < per_item:
        parser.error(f"--ratings must be at least {per_item}")

    started = time.perf_counter()
    items, responses, ratings = synthesise(
        args.ratings // per_item, args.responses, args.annotators, args.seed
    )
    synthesis_seconds = time.perf_counter() - started
    synthesis_peak = peak_rss_mb()

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.out or Path(scratch) / "export"
        t0 = time.perf_counter()
        config = PairConfig(strategy="scores", weights={"relevance": 1.0, "fluency": 1.0})
        result = build_preference_pairs(items, responses, ratings=ratings, config=config)
        t1 = time.perf_counter()
        splits = split_pairs(result.pairs, seed=args.seed, test_size=0.1)
        card = render_dataset_card(
            CardInput(
                pretty_name="Synthetic export benchmark",
                license="cc-by-4.0",
                languages=LANGUAGES,
                split_rows={name: len(frame) for name, frame in splits.items()},
                parameters=config.as_dict(),
                pair_counts=result.counts.as_dict(),
                category_counts=counts_by(splits, "category"),
                language_counts=counts_by(splits, "language"),
            )
        )
        t2 = time.perf_counter()
        rows = write_hf_folder(folder, splits, card, overwrite=args.out is not None)
        t3 = time.perf_counter()
        parquet_bytes = sum(p.stat().st_size for p in (folder / "data").glob("*.parquet"))

    print(
        json.dumps(
            {
                "ratings": len(ratings),
                "items": len(items),
                "responses": len(responses),
                "pairs_out": result.counts.pairs_out,
                "ties_dropped": result.counts.ties_dropped,
                "split_rows": rows,
                "seconds": round(t3 - t0, 3),
                "seconds_pairs": round(t1 - t0, 3),
                "seconds_split_and_card": round(t2 - t1, 3),
                "seconds_write": round(t3 - t2, 3),
                "seconds_synthesis": round(synthesis_seconds, 3),
                "peak_rss_mb": round(peak_rss_mb(), 1),
                "peak_rss_after_synthesis_mb": round(synthesis_peak, 1),
                "parquet_mb": round(parquet_bytes / 2**20, 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
