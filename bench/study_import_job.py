"""Time a Label Studio study's import as the page runs it: what the request does, then the background job.

    python bench/study_import_job.py [--tasks 5000] [--annotators 3] [--keep]

Uses the database the settings select (PostgreSQL with DATABASE_URL). Writes a synthetic Label Studio JSON
export (a rating and a choices question answered by every annotator on every task), then times
``read_study`` plus the ``StudyImport`` row (the request: the page reads the file to preview it, and
queues the import) and ``study_import_run`` (what the worker runs, in one transaction). Deletes the
project, dataset and import afterwards unless ``--keep``. Prints one JSON object.
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
os.environ.setdefault("DEBUG", "false")


def write_export(path: Path, tasks: int, annotators: int) -> None:
    rows = []
    for n in range(1, tasks + 1):
        annotations = []
        for a in range(annotators):
            annotations.append(
                {
                    "id": n * 10 + a,
                    "completed_by": 100 + a,
                    "was_cancelled": False,
                    "result": [
                        {
                            "from_name": "quality",
                            "to_name": "answer",
                            "type": "rating",
                            "value": {"rating": 1 + (n * 7 + a * 3) % 5},
                        },
                        {
                            "from_name": "correct",
                            "to_name": "answer",
                            "type": "choices",
                            "value": {"choices": [("Benar", "Salah")[(n + a) % 3 == 0]]},
                        },
                    ],
                }
            )
        rows.append(
            {
                "id": n,
                "data": {
                    "prompt": f"Jelaskan topik nomor {n} dengan singkat.",
                    "answer": f"Jawaban untuk topik {n}: " + "kalimat contoh " * 12,
                },
                "annotations": annotations,
            }
        )
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import StudyImport
    from annotation.services import study_import_run
    from annotation.tool_files import read_study
    from datasets_app.jobs import new_task_id
    from datasets_app.models import Dataset

    call_command("migrate", verbosity=0)
    name = f"bench-study-{os.getpid()}"
    folder = Path(tempfile.mkdtemp(prefix="timbang-bench-"))
    path = folder / "export.json"
    write_export(path, args.tasks, args.annotators)
    size_mb = round(path.stat().st_size / 2**20, 1)

    started = time.perf_counter()
    study = read_study("label_studio", path, shown=path.name)
    job = StudyImport.objects.create(
        tool=study.tool,
        tool_version=study.tool_version,
        kind=study.kind,
        name=name,
        upload_path=str(path),
        original_filename=path.name,
        task_id=new_task_id(),
    )
    request_s = time.perf_counter() - started

    started = time.perf_counter()
    job = study_import_run(job=job, task_id=job.task_id)
    job_s = time.perf_counter() - started
    report = {
        "tasks": args.tasks,
        "annotators": args.annotators,
        "file_mb": size_mb,
        "database": connection.vendor,
        "status": job.status,
        "counts": job.counts,
        "request_read_and_queue_s": round(request_s, 2),
        "job_run_s": round(job_s, 2),
        "answers_per_s": round(job.counts.get("answers", 0) / job_s),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if not args.keep:
        if job.project is not None:
            job.project.delete()
        Dataset.objects.filter(name=name).delete()
        job.delete()
        path.unlink(missing_ok=True)  # removed by the job once imported
        folder.rmdir()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
