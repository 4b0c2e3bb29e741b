"""Time a large JSONL import through the production service and report peak memory.

    python bench/import_bench.py --lines 200000 [--responses 5] [--keep-file]

Uses the database the settings select (SQLite in var/ by default, PostgreSQL with
DATABASE_URL). Writes a synthetic file, imports it into a dataset named
``bench-import`` (replaced on each run, deleted afterwards), prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
# Query logging under DEBUG would keep the large INSERT statements in memory.
os.environ.setdefault("DEBUG", "false")

CATEGORIES = [
    "analysis",
    "brainstorming",
    "coding",
    "creative_writing",
    "logic",
    "math",
    "open_question",
    "safety",
    "summarization",
    "translation",
]


def write_file(path: Path, lines: int, responses: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for i in range(lines):
            record = {
                "id": f"b{i}",
                "category": CATEGORIES[i % len(CATEGORIES)],
                "language": ("ind", "sun", "jav")[i % 3],
                "prompt": f"Tuliskan penjelasan singkat tentang topik nomor {i} untuk pelajar SMA.",
                "responses": [
                    {
                        "model": f"model-{m}",
                        "text": f"Jawaban model {m} untuk topik {i}: " + "kalimat contoh " * 8,
                    }
                    for m in range(responses)
                ],
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--responses", type=int, default=5)
    parser.add_argument("--keep-file", action="store_true")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from datasets_app.models import Dataset
    from datasets_app.services import dataset_import

    call_command("migrate", verbosity=0)
    folder = Path(tempfile.mkdtemp(prefix="timbang-bench-"))
    path = folder / "bench.jsonl"
    write_file(path, args.lines, args.responses)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    result = dataset_import(path=path, name="bench-import", replace=True)
    seconds = time.perf_counter() - started
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    Dataset.objects.filter(name="bench-import").delete()
    report = {
        "lines": args.lines,
        "file_mb": round(path.stat().st_size / 2**20, 1),
        "database": connection.vendor,
        "counts": result.counts,
        "seconds": round(seconds, 2),
        "lines_per_s": round(args.lines / seconds),
        "peak_rss_mb": round(rss_after / 1024, 1),
        "rss_before_import_mb": round(rss_before / 1024, 1),
    }
    if not args.keep_file:
        path.unlink()
        folder.rmdir()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
