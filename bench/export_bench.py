"""Export benchmark: long-format Likert ratings -> preference pairs -> Hugging Face dataset folder.

    python bench/export_bench.py --ratings 1000000
    python bench/export_bench.py --ratings 1000000 --source database

Synthesises prompts x responses x criteria x annotators ratings (50,000 x 5 x 2 x 2 for one million).

``--source synthetic`` (default) runs the ``scores`` strategy on the DataFrames, splits train/test, renders
the card and streams the parquet files. ``seconds`` covers conversion, split, card and writing, not the
synthesis; ``peak_rss_mb`` is the process peak, synthesis included (``peak_rss_after_synthesis_mb`` is the
peak before the export starts).

``--source database`` stores the same data as a closed likert project (prompts, responses, tasks,
submitted assignments and one annotation row per rating, written with ``bulk_create``) in the database
the settings select (``DATABASE_URL``; without it a SQLite file in the temporary folder), then times the
real export service (``export_create`` + ``export_run``: paged reads through the preferences family's selectors, pairs,
alpha with its bootstrap, split, card, parquet). The project is built by a child process, so the peak
memory reported is the export's own (plus Django); an existing complete bench project is reused unless
``--fresh``. ``seconds_by_stage`` splits the time by the export's progress stages.

Prints one JSON object. Targets (DESIGN.md §9): under 15 s, under 1.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

# Run as a script from the repository root: make the project packages importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from exports.domain.dataset_card import CardInput, counts_by, render_dataset_card  # noqa: E402
from exports.domain.preference_pairs import PairConfig, build_preference_pairs  # noqa: E402
from exports.domain.splits import split_pairs  # noqa: E402
from exports.writers import write_hf_folder  # noqa: E402

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
        help="'database': store a project in the database, then time the export service reading it",
    )
    parser.add_argument("--fresh", action="store_true", help="database: rebuild the bench project")
    parser.add_argument("--draws", type=int, default=1000, help="database: bootstrap draws for the card")
    parser.add_argument("--zip", action="store_true", help="database: also zip the folder (timed)")
    parser.add_argument("--setup-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    per_item = args.responses * len(CRITERIA) * args.annotators
    if args.ratings < per_item:
        parser.error(f"--ratings must be at least {per_item}")
    if args.source == "database":
        return database_main(args, per_item)

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
        splits, _ = split_pairs(result.pairs, seed=args.seed, test_size=0.1)
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


# --- --source database ----------------------------------------------------------------------------------


def django_setup() -> str:
    """Settings for a run outside manage.py: the local settings, no query log, a bench SQLite by default."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    # Query logging under DEBUG would keep every statement in memory.
    os.environ["DEBUG"] = "false"
    os.environ.setdefault(
        "DATABASE_URL", f"sqlite:///{Path(tempfile.gettempdir()) / 'timbang-export-bench.sqlite3'}"
    )
    import django

    django.setup()
    from django.db import connection

    return connection.vendor


def bench_project_name(n_ratings: int) -> str:
    return f"bench-export-{n_ratings}"


def database_setup(args: argparse.Namespace, per_item: int) -> dict:
    """Write the synthetic project into the database with bulk_create; returns counts and seconds."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.models import Annotation, AnnotatorGroup, Assignment, Project, Task
    from annotation.services import rubric_defaults_ensure
    from datasets_app.models import Dataset, Prompt, Response

    name = bench_project_name(args.ratings)
    started = time.perf_counter()
    for old in Project.objects.filter(name=name):
        Annotation.objects.filter(assignment__project=old)._raw_delete(old._state.db)
        Assignment.objects.filter(project=old)._raw_delete(old._state.db)
        old.delete()
    Dataset.objects.filter(name=name).delete()
    items, responses, ratings = synthesise(
        args.ratings // per_item, args.responses, args.annotators, args.seed
    )
    batch = 5_000
    with transaction.atomic():
        dataset = Dataset.objects.create(name=name, license="cc-by-4.0", source="bench/export_bench.py")
        prompts = Prompt.objects.bulk_create(
            [
                Prompt(
                    dataset=dataset,
                    external_id=f"b{row.item_id}",
                    category=row.category,
                    language=row.language,
                    turns=[row.prompt[0]["content"]],
                )
                for row in items.itertuples(index=False)
            ],
            batch_size=batch,
        )
        prompt_pk = np.array([p.pk for p in prompts], dtype=np.int64)
        created = Response.objects.bulk_create(
            [
                Response(
                    prompt_id=int(prompt_pk[row.item_id]),
                    model_name=row.model_name,
                    turns=[row.messages[0]["content"]],
                )
                for row in responses.itertuples(index=False)
            ],
            batch_size=batch,
        )
        response_pk = np.array([r.pk for r in created], dtype=np.int64)
    versions = rubric_defaults_ensure()
    users = [
        get_user_model().objects.get_or_create(username=f"bench-annotator-{a}")[0]
        for a in range(args.annotators)
    ]
    now = timezone.now()
    rng = np.random.default_rng(args.seed)
    with transaction.atomic():
        project = Project.objects.create(
            name=name,
            kind=Project.Kind.LIKERT,
            dataset=dataset,
            criteria=list(CRITERIA),
            rubric_versions={c: versions.get(c, 1) for c in CRITERIA},
            overlap=args.annotators,
            seed=args.seed,
            status=Project.Status.CLOSED,
            n_tasks=len(items),
        )
        group = AnnotatorGroup.objects.create(project=project, name="bench")
        per_prompt = response_pk.reshape(len(items), args.responses)
        tasks = Task.objects.bulk_create(
            [
                Task(project=project, prompt_id=int(prompt_pk[i]), response_ids=per_prompt[i].tolist())
                for i in range(len(items))
            ],
            batch_size=batch,
        )
        task_pk = np.array([t.pk for t in tasks], dtype=np.int64)
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    project=project,
                    task_id=int(task_pk[i]),
                    group=group,
                    annotator=users[a],
                    status=Assignment.Status.SUBMITTED,
                    permutation=rng.permutation(args.responses).tolist(),
                    started_at=now,
                    submitted_at=now,
                    seconds_on_task=30.0,
                )
                for i in range(len(items))
                for a in range(args.annotators)
            ],
            batch_size=batch,
        )
    assignment_pk = np.array([a.pk for a in assignments], dtype=np.int64).reshape(len(items), args.annotators)
    item_idx = ratings["item_id"].to_numpy()
    annotator_idx = ratings["annotator"].to_numpy()
    rows = pd.DataFrame(
        {
            "assignment": assignment_pk[item_idx, annotator_idx],
            "response": response_pk[ratings["response_id"].to_numpy()],
            "criterion": ratings["criterion"].to_numpy(),
            "value": ratings["value"].to_numpy(),
        }
    )
    for start in range(0, len(rows), 100_000):
        part = rows.iloc[start : start + 100_000]
        with transaction.atomic():
            Annotation.objects.bulk_create(
                [
                    Annotation(
                        assignment_id=int(a),
                        round=1,
                        response_id=int(r),
                        criterion=c,
                        value_int=int(v),
                        rubric_version=1,
                    )
                    for a, r, c, v in part.itertuples(index=False)
                ],
                batch_size=batch,
            )
    # What autovacuum (PostgreSQL) would do soon after a bulk load: planner statistics for the new rows.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return {
        "project_id": project.pk,
        "prompts": len(prompt_pk),
        "responses": len(response_pk),
        "assignments": int(assignment_pk.size),
        "ratings": len(rows),
        "seconds_setup": round(time.perf_counter() - started, 1),
    }


def database_main(args: argparse.Namespace, per_item: int) -> int:
    vendor = django_setup()
    from annotation.models import Annotation, Project
    from exports import services as export_services
    from exports.options import ExportOptions
    from exports.services import export_create, export_run

    if args.setup_only:
        print(json.dumps(database_setup(args, per_item)))
        return 0
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    name = bench_project_name(args.ratings)
    expected = (args.ratings // per_item) * per_item
    project = Project.objects.filter(name=name).first()
    setup: dict | None = None
    if (
        args.fresh
        or project is None
        or Annotation.objects.filter(assignment__project=project).count() != expected
    ):
        # A child process builds the project, so this process's peak memory is the export's alone.
        command = [
            sys.executable,
            __file__,
            "--source",
            "database",
            "--setup-only",
            "--ratings",
            str(args.ratings),
            "--responses",
            str(args.responses),
            "--annotators",
            str(args.annotators),
            "--seed",
            str(args.seed),
        ]
        done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            return done.returncode
        setup = json.loads(done.stdout.strip().splitlines()[-1])
        project = Project.objects.get(name=name)

    marks: list[tuple[str, float]] = []
    progress = export_services._progress

    def timed_progress(record, percent: int, stage: str) -> None:
        marks.append((stage, time.perf_counter()))
        progress(record, percent, stage)

    export_services._progress = timed_progress
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.out or Path(scratch) / "export"
        rss_before = peak_rss_mb()
        t0 = time.perf_counter()
        marks.append(("create and start", t0))
        record = export_create(
            project=project,
            options=ExportOptions(test_size=0.1, seed=args.seed, bootstrap_draws=args.draws, zip=args.zip),
            out_dir=folder,
            queue=False,
        )
        record = export_run(export=record)
        seconds = time.perf_counter() - t0
        marks.append(("end", time.perf_counter()))
        if record.status != "succeeded":
            sys.stderr.write(f"export failed: {record.error}\n")
            return 1
        parquet_bytes = sum(p.stat().st_size for p in (Path(record.folder_path) / "data").glob("*.parquet"))
    stages: dict[str, float] = {}
    for (stage, at), (_, after) in zip(marks, marks[1:], strict=False):
        stages[stage] = round(stages.get(stage, 0.0) + after - at, 3)
    counts = record.counts
    print(
        json.dumps(
            {
                "source": "database",
                "database": vendor,
                "ratings": expected,
                "pairs_out": counts["pairs"]["pairs_out"],
                "rows_out": sum(counts["split_rows"].values()),
                "split_rows": counts["split_rows"],
                "seconds": round(seconds, 3),
                "seconds_by_stage": stages,
                "bootstrap_draws": args.draws,
                "zip": args.zip,
                "peak_rss_mb": round(peak_rss_mb(), 1),
                "rss_before_export_mb": round(rss_before, 1),
                "parquet_mb": round(parquet_bytes / 2**20, 1),
                "load_average": [round(x, 2) for x in os.getloadavg()],
                "cpu_count": os.cpu_count(),
                "setup": setup,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
