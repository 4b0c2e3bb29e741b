"""A 100 MB malformed file: a clear error naming where, nothing written, and memory that stays bounded."""

import tracemalloc

import pytest

from datasets_app.models import Dataset, Prompt
from datasets_app.services import ImportFailed, dataset_import

pytestmark = pytest.mark.django_db

MB = 1024 * 1024


def _peak_during(fn):
    tracemalloc.start()
    try:
        try:
            fn()
        except ImportFailed as exc:
            error = exc
        else:
            error = None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return error, peak


def test_one_100_mb_line_is_refused_without_reading_it_into_memory(tmp_path):
    path = tmp_path / "one-line.jsonl"
    with path.open("wb") as out:
        block = b"x" * MB
        for _ in range(100):
            out.write(block)
    error, peak = _peak_during(lambda: dataset_import(path=path, name="huge"))
    assert error is not None
    assert [(e.location, e.message) for e in error.errors] == [("line 1", "line is longer than 16 MiB")]
    # The reader holds at most one 16 MiB slice of the line at a time.
    assert peak < 40 * MB, f"peak {peak / MB:.1f} MiB"
    assert Dataset.objects.count() == 0 and Prompt.objects.count() == 0


def test_100_mb_of_broken_lines_lists_the_first_errors_and_counts_the_rest(tmp_path):
    path = tmp_path / "broken.jsonl"
    line = (
        b'{"id": "p", "category": "math", "language": "ind", "prompt": "' + b"a" * 1000 + b"\n"
    )  # never closed
    n_lines = (100 * MB) // len(line)
    with path.open("wb") as out:
        chunk = line * 1000
        for _ in range(n_lines // 1000):
            out.write(chunk)
    written = (n_lines // 1000) * 1000
    error, peak = _peak_during(lambda: dataset_import(path=path, name="broken"))
    assert error is not None
    assert error.total == written
    assert len(error.errors) == 50
    assert error.errors[0].location == "line 1" and "not valid JSON" in error.errors[0].message
    assert error.errors[-1].location == "line 50"
    assert peak < 40 * MB, f"peak {peak / MB:.1f} MiB"
    assert Dataset.objects.count() == 0


def test_a_large_malformed_upload_through_the_api_fails_its_import_with_a_clear_error(
    api_client_for, settings, tmp_path, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from datasets_app.models import DatasetImport

    settings.UPLOADS_DIR = tmp_path / "uploads"
    body = b"\x00\xff" * (10 * MB)  # 20 MiB of binary noise, no newline
    assert len(body) > settings.IMPORT_INLINE_MAX_BYTES  # read by a worker, not by the request
    upload = SimpleUploadedFile("noise.jsonl", body, content_type="application/octet-stream")
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client_for("project_manager").post(
            "/api/v1/datasets/import", {"file": upload, "name": "noise"}, format="multipart"
        )
    assert response.status_code == 202
    record = DatasetImport.objects.get(pk=response.json()["id"])
    assert record.status == "failed"
    assert record.errors[0]["location"] == "line 1"
    assert Dataset.objects.count() == 0
    # The stored upload is removed once the import has failed.
    assert not any((tmp_path / "uploads").iterdir())
