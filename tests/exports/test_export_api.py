"""Export API: preview, create (worker, eager here), status, download; researchers and managers only."""

from __future__ import annotations

import io
import zipfile

import pytest

from exports.models import Export

pytestmark = pytest.mark.django_db


@pytest.fixture
def exports_dir(settings, tmp_path):
    settings.EXPORTS_DIR = tmp_path / "exports"
    return settings.EXPORTS_DIR


def test_annotators_get_403_everywhere(api_client_for, likert_project):
    api = api_client_for("annotator")
    body = {"project": likert_project.pk}
    assert api.get("/api/v1/exports/").status_code == 403
    assert api.post("/api/v1/exports/preview", body, format="json").status_code == 403
    assert api.post("/api/v1/exports/create", body, format="json").status_code == 403
    record = Export.objects.create(project=likert_project)
    assert api.get(f"/api/v1/exports/{record.pk}").status_code == 403
    assert api.get(f"/api/v1/exports/{record.pk}/download").status_code == 403


def test_anonymous_gets_401_or_403(client, likert_project):
    assert client.get("/api/v1/exports/").status_code in (401, 403)


def test_preview_counts_without_writing(api_client_for, likert_project, exports_dir):
    api = api_client_for("researcher")
    response = api.post(
        "/api/v1/exports/preview", {"project": likert_project.pk, "min_margin": 2}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["pairs"]["pairs_out"] == 4
    assert response.json()["split_rows"] == {"train": 4}
    assert Export.objects.count() == 0 and not exports_dir.exists()


def test_create_status_and_download(
    api_client_for, likert_project, exports_dir, django_capture_on_commit_callbacks
):
    api = api_client_for("project_manager")
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/v1/exports/create",
            {"project": likert_project.pk, "format": "trl-messages", "split": "none", "provenance": "crowd"},
            format="json",
        )
    assert response.status_code == 202
    created = response.json()
    assert created["format"] == "trl-messages" and created["strategy"] == "scores"
    assert created["options"]["provenance"] == "crowd"
    status = api.get(f"/api/v1/exports/{created['id']}").json()
    assert status["status"] == "succeeded" and status["progress"] == 100
    assert status["counts"]["split_rows"] == {"train": 6}
    assert status["download_url"] == f"/api/v1/exports/{created['id']}/download"
    download = api.get(status["download_url"])
    assert download.status_code == 200
    assert download["Content-Disposition"].startswith('attachment; filename="likert-export-project-export-')
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    assert archive.namelist() == ["README.md", "data/train-00000-of-00001.parquet"]
    listed = api.get(f"/api/v1/exports/?project={likert_project.pk}").json()
    assert [e["id"] for e in listed["results"]] == [created["id"]]


def test_bad_input_is_400_with_field_errors(api_client_for, likert_project, pairwise_project):
    api = api_client_for("researcher")
    response = api.post(
        "/api/v1/exports/create", {"project": likert_project.pk, "split": "test=2"}, format="json"
    )
    assert response.status_code == 400 and "split" in response.json()
    response = api.post(
        "/api/v1/exports/create", {"project": likert_project.pk, "provenance": "robots"}, format="json"
    )
    assert response.status_code == 400 and "provenance" in response.json()
    response = api.post(
        "/api/v1/exports/create", {"project": pairwise_project.pk, "strategy": "best_vs_rest"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "strategy": "a pairwise project exports with pairwise_majority, not best_vs_rest"
    }
    # The API answers in English whatever the client's language (the export page translates).
    response = api.post(
        "/api/v1/exports/create",
        {"project": likert_project.pk, "strategy": "pairwise_majority"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="id",
    )
    assert response.json()["errors"] == {
        "strategy": "a likert project exports with scores or best_vs_rest, not pairwise_majority"
    }
    assert api.post("/api/v1/exports/create", {"project": 987654}, format="json").status_code == 404
    assert Export.objects.count() == 0


def test_download_before_the_export_finished_is_404(api_client_for, likert_project):
    api = api_client_for("researcher")
    record = Export.objects.create(project=likert_project)
    assert api.get(f"/api/v1/exports/{record.pk}").json()["download_url"] is None
    assert api.get(f"/api/v1/exports/{record.pk}/download").status_code == 404
