"""A SeaExam-shaped multiple-choice benchmark run with a real model, in completion and in cloze mode.

    python bench/seaexam_modes.py [--model smollm2-135m-instruct] [--seed 1] [--k-shot 3] [--threads 2] \
        [--temperature 0]

In a fresh folder (``TIMBANG_VAR_DIR``, SQLite): migrate, load 3 solved example questions and 10 test
questions (Indonesian, four options A-D, written for this script), register a ``llamacpp`` endpoint over the
GGUF model (in-process, no server), then run ``manage.py benchmark_run --inline`` once with
``--mode completion`` (3-shot, answer read from the first line) and once with ``--mode cloze`` (3-shot, option
texts scored per token). Prints one JSON object: per mode the accuracy overall, per prompt template, the
refusals and ambiguous answers, the seconds taken and every item's template, prediction and key.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from io import StringIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHOTS = [
    ("s1", "Ibu kota provinsi Jawa Barat adalah ...", ["Semarang", "Bandung", "Surabaya", "Serang"], "B"),
    ("s2", "Tempe dibuat dari ...", ["kedelai", "beras", "jagung", "singkong"], "A"),
    (
        "s3",
        "Lagu kebangsaan Indonesia berjudul ...",
        ["Garuda Pancasila", "Halo-Halo Bandung", "Indonesia Raya", "Tanah Airku"],
        "C",
    ),
]
TESTS = [
    (
        "q1",
        "Ibu kota negara Indonesia sebelum dipindahkan adalah ...",
        ["Jakarta", "Medan", "Makassar", "Bandung"],
        "A",
    ),
    ("q2", "Angklung adalah alat musik yang terbuat dari ...", ["logam", "kayu jati", "bambu", "kulit"], "C"),
    (
        "q3",
        "Hari kemerdekaan Indonesia diperingati setiap tanggal ...",
        ["1 Juni", "28 Oktober", "10 November", "17 Agustus"],
        "D",
    ),
    (
        "q4",
        "Pulau terbesar yang seluruhnya termasuk wilayah Indonesia adalah ...",
        ["Jawa", "Sumatra", "Bali", "Madura"],
        "B",
    ),
    ("q5", "Rendang adalah masakan khas dari daerah ...", ["Sumatra Barat", "Bali", "Papua", "Maluku"], "A"),
    ("q6", "Candi Borobudur terletak di provinsi ...", ["Bali", "Jawa Timur", "Jawa Tengah", "Banten"], "C"),
    ("q7", "Mata uang resmi Indonesia adalah ...", ["ringgit", "rupiah", "baht", "peso"], "B"),
    ("q8", "Dasar negara Indonesia adalah ...", ["Pancasila", "Bhinneka", "Sumpah Pemuda", "Trisakti"], "A"),
    (
        "q9",
        "Komodo hidup di pulau yang terletak di provinsi ...",
        ["Aceh", "Kalimantan Barat", "Riau", "Nusa Tenggara Timur"],
        "D",
    ),
    (
        "q10",
        "Batik diakui UNESCO sebagai warisan budaya dari ...",
        ["Thailand", "Indonesia", "Jepang", "Mesir"],
        "B",
    ),
]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="known model name or GGUF path")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--k-shot", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--modes", default="completion,cloze")
    parser.add_argument("--temperature", type=float, default=0.0, help="0: greedy, as exams are scored")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    var = Path(tempfile.mkdtemp(prefix="timbang-seaexam-"))
    for name in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"):
        os.environ.pop(name, None)
    os.environ["TIMBANG_VAR_DIR"] = str(var)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
    import django

    django.setup()
    from django.core.management import call_command

    from datasets_app.models import Dataset, Question
    from evaluation.models import ModelEndpoint

    call_command("migrate", verbosity=0)
    dataset = Dataset.objects.create(name="seaexam-id-sample", kind=Dataset.Kind.QUESTIONS)
    for split, rows in (("shot", SHOTS), ("test", TESTS)):
        for external_id, text, options, answer in rows:
            Question.objects.create(
                dataset=dataset,
                external_id=external_id,
                category="pengetahuan umum",
                language="ind",
                text=text,
                choices=dict(zip("ABCD", options, strict=True)),
                answer_key=answer,
                meta={"split": split},
            )
    ModelEndpoint.objects.create(
        slug="smollm2",
        backend=ModelEndpoint.Backend.LLAMACPP,
        model_id=args.model,
        backend_options={"n_threads": args.threads, "n_ctx": 2048},
    )
    report: dict = {
        "model": args.model,
        "seed": args.seed,
        "k_shot": args.k_shot,
        "temperature": args.temperature,
        "n_test": len(TESTS),
    }
    for mode in args.modes.split(","):
        out = StringIO()
        started = time.perf_counter()
        call_command(
            "benchmark_run",
            *("--task", "mcq", "--endpoint", "smollm2", "--dataset", str(dataset.pk), "--mode", mode),
            *("--k-shot", str(args.k_shot), "--shot-split", "shot", "--eval-split", "test"),
            *("--seed", str(args.seed), "--max-tokens", "8", "--temperature", str(args.temperature)),
            *("--inline", "--json"),
            stdout=out,
        )
        run = json.loads(out.getvalue())
        from evaluation.models import BenchmarkResult

        items = [
            {
                "q": r.question.external_id,
                "template": r.variant,
                "prediction": r.prediction,
                "key": r.reference,
                "rule": r.raw.get("rule"),
                "output": r.raw.get("output"),
            }
            for r in BenchmarkResult.objects.filter(benchmark_run_id=run["run"])
            .select_related("question")
            .order_by("question__external_id")
        ]
        tables = run.get("tables", {})
        report[mode] = {
            "status": run["status"],
            "error": run["error"],
            "seconds": round(time.perf_counter() - started, 1),
            "accuracy": (tables.get("overall") or [{}])[0].get("accuracy"),
            "n_refusals": tables.get("n_refusals"),
            "n_ambiguous": tables.get("n_ambiguous"),
            "by_template": {
                row["variant"]: {"n": row["n"], "n_correct": row["n_correct"], "accuracy": row["accuracy"]}
                for row in tables.get("by", {}).get("variant", [])
            },
            "items": items,
        }
    print(json.dumps(report, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
