"""A large upload is checked by a worker: the web request only stores it and queues the import.

The probe: ``POST /api/v1/datasets/import`` with a CSV of a million columns made the web process read the
file and build its error report in the request (9 s, +174 MiB). Above IMPORT_INLINE_MAX_BYTES an upload is
imported as with ``background=true``: 202 with the import record, its errors on the record once a worker has
read it. (The figures of the web process are measured by ``bench/import_wide_csv.py``.)
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app import api as api_module
from datasets_app import services
from datasets_app.models import Dataset, DatasetImport

pytestmark = pytest.mark.django_db

URL = "/api/v1/datasets/import"
COLUMNS = 20_000


def _wide_csv() -> SimpleUploadedFile:
    header = ",".join(f"c{i}" for i in range(COLUMNS))
    row = ",".join("x" for _ in range(COLUMNS))
    return SimpleUploadedFile("wide.csv", f"{header}\n{row}\n".encode(), content_type="text/csv")


def test_a_large_upload_is_read_by_the_worker_not_the_request(
    api_client_for, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.IMPORT_INLINE_MAX_BYTES = 64 * 1024
    upload = _wide_csv()
    assert upload.size > settings.IMPORT_INLINE_MAX_BYTES
    api = api_client_for("researcher")

    # Who reads the file: the request (the API view's import) or the worker (the queued import's run).
    calls: list[str] = []
    real_import = services.dataset_import
    for module, caller in ((api_module, "request"), (services, "worker")):
        monkeypatch.setattr(
            module, "dataset_import", lambda caller=caller, **kw: calls.append(caller) or real_import(**kw)
        )
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = api.post(URL, {"file": upload, "name": "wide", "kind": "prompts"}, format="multipart")
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "queued" and calls == []
    record = DatasetImport.objects.get(pk=response.json()["id"])
    assert record.status == "queued" and record.errors == []

    for callback in queued:  # the worker (eager Celery) takes the queued import
        callback()
    record.refresh_from_db()
    assert calls == ["worker"]
    assert record.status == "failed" and record.errors
    assert len(str(record.errors)) < 5_000  # the report names a few columns, not twenty thousand
    assert not Dataset.objects.filter(name="wide").exists()


def test_a_small_upload_is_still_answered_in_the_request(api_client_for, settings):
    settings.IMPORT_INLINE_MAX_BYTES = 64 * 1024
    body = b"id,category,language,prompt\np1,math,ind,Berapa 2 + 2?\n"
    api = api_client_for("researcher")
    response = api.post(
        URL,
        {"file": SimpleUploadedFile("small.csv", body, content_type="text/csv"), "name": "small"},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    assert response.json()["prompts"] == 1


def test_the_import_page_refuses_to_preview_a_file_wider_than_it_can_map(role_client, settings):
    settings.IMPORT_PREVIEW_MAX_COLUMNS = 1000
    client = role_client("researcher")
    uploaded = client.post(
        reverse("datasets:import_upload"), {"file": _wide_csv(), "name": "wide"}, follow=True
    )
    assert uploaded.status_code == 400
    assert b"more than 1000 columns" in uploaded.content
    assert not DatasetImport.objects.exists()
    in_indonesian = client.post(
        reverse("datasets:import_upload"),
        {"file": _wide_csv(), "name": "wide"},
        follow=True,
        HTTP_ACCEPT_LANGUAGE="id",
    )
    assert "lebih dari 1000 kolom, terlalu banyak untuk dipratinjau" in in_indonesian.content.decode()


def test_a_large_upload_read_by_the_worker_keeps_its_description_and_license(
    api_client_for, settings, django_capture_on_commit_callbacks
):
    settings.IMPORT_INLINE_MAX_BYTES = 16
    body = b"id,category,language,prompt\np1,math,ind,Berapa 2 + 2?\np2,math,ind,Berapa 3 + 3?\n"
    upload = SimpleUploadedFile("small.csv", body, content_type="text/csv")
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client_for("researcher").post(
            URL,
            {"file": upload, "name": "kept", "description": "Soal hitung", "license": "CC-BY-4.0"},
            format="multipart",
        )
    assert response.status_code == 202
    dataset = Dataset.objects.get(name="kept")
    assert (dataset.description, dataset.license, dataset.prompts.count()) == ("Soal hitung", "CC-BY-4.0", 2)
