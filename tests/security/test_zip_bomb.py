"""A zipped "Hugging Face folder" of 1 MB that unpacks to 1 GB is refused through the import API, quickly and
with flat memory.

The bomb is built here by streaming 1 GiB of zeros through the compressor, so the test never holds more
than one chunk of it. The upload runs in a child process on a fresh database, so the peak memory measured
(``ru_maxrss``) is the import's own, not whatever the test session reached before.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

MiB = 1024 * 1024
GiB = 1024 * MiB
BOMB_UNPACKED = GiB


def build_bomb(path: Path, *, unpacked: int = BOMB_UNPACKED, member: str = "bomb/data/train.jsonl") -> Path:
    """A zip holding one member of ``unpacked`` zero bytes, written chunk by chunk."""
    chunk = bytes(MiB)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        with archive.open(member, "w", force_zip64=True) as out:
            for _ in range(unpacked // MiB):
                out.write(chunk)
    return path


def _child(zip_path: str, uploads: str) -> None:
    """Run in a child process: one import of ``zip_path`` through the API on a fresh in-memory database."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    os.environ["DATABASE_URL"] = "sqlite://:memory:"
    import django

    django.setup()
    from django.conf import settings
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.db import connection
    from django.test.utils import setup_test_environment
    from rest_framework.test import APIClient

    from tests.factories import UserFactory

    setup_test_environment()
    connection.creation.create_test_db(verbosity=0)
    settings.UPLOADS_DIR = Path(uploads)
    api = APIClient()
    api.force_authenticate(UserFactory(roles=["project_manager"]))
    upload = SimpleUploadedFile("bomb.zip", Path(zip_path).read_bytes(), content_type="application/zip")
    api.get("/api/v1/datasets/")  # load the URL configuration and views before measuring
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started = time.monotonic()
    response = api.post("/api/v1/datasets/import", {"file": upload, "name": "bomb"}, format="multipart")
    seconds = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    from datasets_app.models import Dataset

    print(
        json.dumps(
            {
                "status": response.status_code,
                "body": response.json() if response.status_code < 500 else None,
                "seconds": seconds,
                "rss_before": before,
                "rss_peak": peak,
                "datasets": Dataset.objects.count(),
            }
        )
    )


def run_child(zip_path: Path, uploads: Path, *, timeout: float = 300) -> dict:
    completed = subprocess.run(
        [sys.executable, "-m", "tests.security.test_zip_bomb", str(zip_path), str(uploads)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(300)
def test_a_1_mb_zip_that_unpacks_to_1_gb_is_refused_quickly_with_flat_memory(tmp_path):
    bomb = build_bomb(tmp_path / "bomb.zip")
    assert bomb.stat().st_size < 2 * MiB
    uploads = tmp_path / "uploads"

    outcome = run_child(bomb, uploads)

    assert outcome["status"] == 400, outcome
    detail = outcome["body"]["detail"]
    assert detail.startswith("file: bomb.zip "), detail
    assert "unpack" in detail and "limit" in detail, detail
    assert outcome["datasets"] == 0
    # Refused from the zip's directory: nothing is unpacked, nothing is left behind.
    assert not uploads.exists() or list(uploads.iterdir()) == []
    grown = outcome["rss_peak"] - outcome["rss_before"]
    assert grown < 64 * MiB, f"the import grew the process by {grown / MiB:.0f} MiB"
    assert outcome["seconds"] < 5, outcome["seconds"]


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
