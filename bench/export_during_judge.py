"""How long an export waits while the demo's judge run works: start one, time it to its end.

    TIMBANG_VAR_DIR=var python bench/export_during_judge.py [--timeout 1200] [--kind raw-jsonl]

Run it against a demo that `scripts/demo` started (same ``TIMBANG_VAR_DIR``, so the same SQLite database
and filesystem broker, or the same ``DATABASE_URL``/``REDIS_URL``), while the demo's judge run is queued or
running. It records an export of the demo's pairwise project as the researcher ``peneliti``, queues it on
the worker exactly as the export page does (``export_create``), and polls the row until it has finished.

Prints one JSON object: ``seconds`` (from queueing the export to its end, ``null`` when it had not ended
within ``--timeout``), the export's final status and, for the judge run, its status and progress when the
export started and when it ended (a judge run still running at the end means the export did not wait
for it). ``--report EXPORT_ID`` starts nothing and prints the queue wait of an export made earlier (one the
script stopped waiting for at ``--timeout``). Exit code 2 when there is no demo or no active judge run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

# Run as a script from the repository root: make the project packages importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402

from annotation.models import Project  # noqa: E402
from demo.services import PAIRWISE_PROJECT  # noqa: E402
from evaluation.models import ACTIVE_STATUSES, JudgeRun  # noqa: E402
from exports.models import Export  # noqa: E402
from exports.options import ExportOptions  # noqa: E402
from exports.services import export_create  # noqa: E402

FINISHED = {Export.Status.SUCCEEDED, Export.Status.FAILED, Export.Status.CANCELLED}


def _judge_state(run: JudgeRun) -> dict:
    run.refresh_from_db()
    return {"status": run.status, "n_done": run.n_done, "n_failed": run.n_failed, "n_total": run.n_total}


def _report(export_id: int) -> int:
    """The queue wait and run time of an earlier export (one the script had stopped waiting for)."""
    export = Export.objects.filter(pk=export_id).first()
    if export is None:
        print(f"no export {export_id}", file=sys.stderr)
        return 2

    def since_queued(moment):
        return round((moment - export.created_at).total_seconds(), 2) if moment else None

    run = JudgeRun.objects.filter(annotation_project=export.project).order_by("-pk").first()
    print(
        json.dumps(
            {
                "export_id": export.pk,
                "export_kind": export.kind,
                "export_status": export.status,
                "queued_to_started_s": since_queued(export.started_at),
                "queued_to_finished_s": since_queued(export.finished_at),
                "judge_run_now": _judge_state(run) if run else None,
                "judge_run_finished_at": run.finished_at.isoformat() if run and run.finished_at else None,
                "export_finished_at": export.finished_at.isoformat() if export.finished_at else None,
            }
        )
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds to wait for the export")
    parser.add_argument(
        "--kind", default="raw-jsonl", help="export kind (default raw-jsonl; hf: the dataset)"
    )
    parser.add_argument(
        "--report", type=int, metavar="EXPORT_ID", help="start nothing: the timings of an export made earlier"
    )
    args = parser.parse_args()
    if args.report is not None:
        return _report(args.report)

    project = Project.objects.filter(name=PAIRWISE_PROJECT).first()
    judge = JudgeRun.objects.filter(annotation_project=project, status__in=ACTIVE_STATUSES).first()
    if project is None or judge is None:
        print("no demo with an active judge run: start scripts/demo first", file=sys.stderr)
        return 2
    user = get_user_model().objects.filter(username="peneliti").first()
    judge_at_start = _judge_state(judge)

    started = time.monotonic()
    export = export_create(project=project, options=ExportOptions(kind=args.kind), user=user)
    seconds = None
    while time.monotonic() - started < args.timeout:
        export.refresh_from_db()
        if export.status in FINISHED:
            seconds = round(time.monotonic() - started, 2)
            break
        time.sleep(0.5)
    export.refresh_from_db()
    print(
        json.dumps(
            {
                "broker": settings.CELERY_BROKER_URL.split("://")[0],
                "export_id": export.pk,
                "export_kind": export.kind,
                "export_status": export.status,
                "seconds": seconds,
                "timeout_s": args.timeout,
                "judge_run_at_export_start": judge_at_start,
                "judge_run_at_export_end": _judge_state(judge),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
