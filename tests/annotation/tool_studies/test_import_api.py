"""``POST /api/v1/studies/import``: the same import as the page and the command."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.models import Annotation, Project
from tests.annotation.tool_studies import files

pytestmark = pytest.mark.django_db
URL = "/api/v1/studies/import"


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _file(tasks, name="export.json"):
    return SimpleUploadedFile(name, json.dumps(tasks).encode(), content_type="application/json")


def test_import_dry_run_and_fields(make_user, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.UPLOADS_DIR = tmp_path
    client = _client(make_user("project_manager"))
    dry = client.post(
        URL,
        {
            "tool": "label_studio",
            "name": "X",
            "dry_run": "true",
            "file": _file(files.label_studio_rating_tasks()),
        },
    )
    assert dry.status_code == 200 and dry.json()["n_answers"] == 11 and not Project.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        made = client.post(
            URL,
            {
                "tool": "label_studio",
                "name": "Studi API",
                "prompt_field": "prompt",
                "response_field": ["answer"],
                "item_id_field": "item",
                "file": _file(files.label_studio_rating_tasks()),
            },
        )
    # The import is a background job: 202 with its URL; the fields of the synchronous answer are kept.
    assert made.status_code == 202, made.content
    queued = made.json()
    assert made["Location"] == queued["url"] == f"/api/v1/studies/imports/{queued['id']}"
    assert queued["name"] == "Studi API" and queued["tool"] == "label_studio" and queued["kind"] == "likert"
    body = client.get(queued["url"]).json()
    assert body["status"] == "succeeded" and body["errors"] == [] and body["progress"] is None
    assert body["kind"] == "likert" and body["counts"]["answers"] == 11
    assert body["tool_version"] == "Label Studio 1.13 JSON export"
    project = Project.objects.get(pk=body["project"])
    assert body["dataset"] == project.dataset_id and body["criteria"] == {
        "quality": "quality",
        "correct": "correct",
    }
    assert project.dataset.prompts.filter(external_id="p3").exists()
    # The same row answers on the jobs route by the kind's name.
    assert client.get(f"/api/v1/jobs/study-import/{queued['id']}").json() == body
    assert list(tmp_path.iterdir()) == []  # the upload is not kept once imported


def test_a_queued_import_is_cancelled_through_the_api_and_writes_nothing(make_user, settings, tmp_path):
    settings.UPLOADS_DIR = tmp_path
    client = _client(make_user("project_manager"))
    made = client.post(
        URL, {"tool": "label_studio", "name": "Batal", "file": _file(files.label_studio_rating_tasks())}
    )
    assert made.status_code == 202 and made.json()["status"] == "queued"  # no commit: no worker yet
    cancelled = client.post(made.json()["url"] + "/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert client.post(made.json()["url"] + "/cancel").status_code == 409
    assert not Project.objects.exists()


def test_bad_file_is_400_with_every_problem(make_user, settings, tmp_path):
    settings.UPLOADS_DIR = tmp_path
    tasks = files.label_studio_pairwise_tasks()
    tasks[1]["annotations"][0]["result"][0]["value"]["selected"] = "middle"
    response = _client(make_user("project_manager")).post(
        URL, {"tool": "label_studio", "name": "X", "file": _file(tasks)}
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "file": "export.json",
            "record": "task 2 annotation 31",
            "field": "result[0].value.selected",
            "message": "Expected 'left' or 'right'; got 'middle'.",
        }
    ]
    assert not Annotation.objects.exists()


def test_only_project_managers(make_user):
    response = _client(make_user("researcher")).post(URL, {"tool": "potato", "name": "X"})
    assert response.status_code == 403
