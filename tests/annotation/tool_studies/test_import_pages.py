"""The study import pages: upload with the tool chosen, preview with fields, import; problems listed whole."""

from __future__ import annotations

import json
import shutil

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Annotation, Project, StudyImport
from datasets_app.models import Dataset
from tests.annotation.tool_studies import files

pytestmark = pytest.mark.django_db


def _upload(client, tool: str, name: str, content: bytes, filename: str):
    return client.post(
        reverse("annotation:study_import"),
        {"tool": tool, "name": name, "language": "sun", "file": SimpleUploadedFile(filename, content)},
    )


def test_label_studio_upload_preview_and_import(
    role_client, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    client = role_client("project_manager")
    body = json.dumps(files.label_studio_rating_tasks()).encode()
    response = _upload(client, "label_studio", "Studi halaman", body, "export.json")
    assert response.status_code == 302
    preview = client.get(response.url)
    page = preview.content.decode()
    assert preview.status_code == 200
    assert 'data-testid="n-answers">11<' in page and "Label Studio 1.13 JSON export" in page
    assert '<option value="answer" selected>' in page  # the response field found
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(
            response.url,
            {
                "prompt_field": "prompt",
                "response_field": ["answer"],
                "item_id_field": "item",
                "name": "Studi halaman",
            },
        )
    job = StudyImport.objects.get()
    assert done.status_code == 302 and done.url == reverse("annotation:study_import_detail", args=[job.pk])
    project = Project.objects.get(name="Studi halaman")
    page = client.get(done.url).content.decode()
    assert 'data-status="succeeded"' in page
    assert f'href="{reverse("annotation:manage_detail", args=[project.pk])}"' in page
    assert project.dataset.prompts.first().language == "sun"
    assert Annotation.objects.filter(assignment__project=project).count() == 19
    # The upload is gone once imported.
    assert client.get(response.url).status_code == 404


def test_zipped_potato_folder_through_the_page(
    role_client, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    files.write_potato(tmp_path / "annotation_output")
    archive = shutil.make_archive(str(tmp_path / "out"), "zip", tmp_path, "annotation_output")
    client = role_client("project_manager")
    with open(archive, "rb") as f:
        response = _upload(client, "potato", "Potato", f.read(), "annotation_output.zip")
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(response.url, {"prompt_field": "", "item_id_field": "", "name": "Potato"})
    assert done.status_code == 302
    assert Project.objects.get(name="Potato").assignments.count() == 11


def test_bad_file_shows_every_problem_and_writes_nothing(role_client, settings, tmp_path):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    tasks = files.label_studio_rating_tasks()
    tasks[0]["annotations"][1]["result"][0]["value"]["rating"] = -2
    tasks[3]["annotations"][0]["completed_by"] = ""
    client = role_client("project_manager")
    response = _upload(client, "label_studio", "Rusak", json.dumps(tasks).encode(), "rusak.json")
    preview = client.get(response.url)
    page = preview.content.decode()
    assert preview.status_code == 400
    assert "2 problems. Nothing was written." in page
    assert "result[0].value.rating" in page and "task 1 annotation 112" in page and "completed_by" in page
    assert 'data-testid="study-confirm"' not in page
    posted = client.post(
        response.url, {"prompt_field": "prompt", "response_field": ["answer"], "name": "Rusak"}
    )
    assert posted.status_code == 400 and not Project.objects.exists()


def test_indonesian_page_and_roles(role_client, client):
    page = role_client("project_manager").get(reverse("annotation:study_import"), HTTP_ACCEPT_LANGUAGE="id")
    assert page.status_code == 200
    assert role_client("annotator").get(reverse("annotation:study_import")).status_code == 403


def test_a_taken_name_is_said_on_the_page_and_nothing_is_written(role_client, settings, tmp_path):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    Dataset.objects.create(name="Sudah ada")
    client = role_client("project_manager")
    body = json.dumps(files.label_studio_rating_tasks()).encode()
    response = _upload(client, "label_studio", "Sudah ada", body, "export.json")
    posted = client.post(
        response.url,
        {"prompt_field": "prompt", "response_field": ["answer"], "name": "Sudah ada"},
        HTTP_ACCEPT_LANGUAGE="id",
    )
    assert posted.status_code == 400
    assert "Dataset dengan nama ini sudah ada; pilih nama lain." in posted.content.decode()
    assert not Project.objects.exists()
