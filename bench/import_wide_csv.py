"""What an API upload of a very wide CSV costs the web process: time and memory of the request alone.

    python bench/import_wide_csv.py [--columns 1000000] [--inline-max-bytes N]

Writes a CSV with ``--columns`` columns (a header and one row; none of them ours, so the file is refused
with an error report), builds the multipart request first, then times the request through
``POST /api/v1/datasets/import`` in this process and reads the process's peak and current resident memory
before and after. ``--inline-max-bytes`` sets IMPORT_INLINE_MAX_BYTES for the run: a value above the file's
size makes the request check the file itself (how every upload without ``background`` was handled before),
the default hands it to a worker. Uses the database the settings select; prints one JSON object.
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


def rss_mb() -> float:
    """Current resident memory of this process."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_csv(path: Path, columns: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write(",".join(f"c{i}" for i in range(columns)) + "\n")
        out.write(",".join("x" for _ in range(columns)) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, default=1_000_000)
    parser.add_argument("--inline-max-bytes", type=int, default=None)
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command
    from django.db import connection
    from rest_framework.test import APIRequestFactory, force_authenticate

    from datasets_app.api import DatasetImportApi
    from datasets_app.models import DatasetImport

    if args.inline_max_bytes is not None:
        settings.IMPORT_INLINE_MAX_BYTES = args.inline_max_bytes
    call_command("migrate", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench-import-wide")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])

    folder = Path(tempfile.mkdtemp(prefix="timbang-bench-"))
    path = folder / "wide.csv"
    write_csv(path, args.columns)
    upload = SimpleUploadedFile("wide.csv", path.read_bytes(), content_type="text/csv")
    request = APIRequestFactory().post(
        "/api/v1/datasets/import",
        {"file": upload, "name": "bench-wide", "kind": "prompts"},
        format="multipart",
    )
    force_authenticate(request, user=user)
    view = DatasetImportApi.as_view()
    del upload

    rss_before, peak_before = rss_mb(), peak_mb()
    started = time.perf_counter()
    response = view(request)
    response.render()
    seconds = time.perf_counter() - started
    rss_after, peak_after = rss_mb(), peak_mb()
    body = json.loads(response.content)
    DatasetImport.objects.filter(name="bench-wide").delete()
    print(
        json.dumps(
            {
                "columns": args.columns,
                "file_mb": round(path.stat().st_size / 2**20, 1),
                "inline_max_bytes": settings.IMPORT_INLINE_MAX_BYTES,
                "database": connection.vendor,
                "status": response.status_code,
                "answer_bytes": len(response.content),
                "n_errors": body.get("n_errors"),
                "import_status": body.get("status"),
                "web_seconds": round(seconds, 3),
                "web_rss_growth_mb": round(rss_after - rss_before, 1),
                "web_peak_growth_mb": round(peak_after - peak_before, 1),
            }
        )
    )
    path.unlink()
    folder.rmdir()


if __name__ == "__main__":
    main()
