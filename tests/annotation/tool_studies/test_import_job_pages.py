"""The study import through the pages as a background job: upload, preview, Import starts the job, its page
shows the progress fragment with the shared Cancel / Run again controls, then a link to the project."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from analytics.services import project_alpha
from annotation.models import Annotation, Project, StudyImport
from datasets_app.models import Dataset
from tests.annotation.tool_studies import files

pytestmark = pytest.mark.django_db

MAPPING = {"prompt_field": "prompt", "response_field": ["answer"], "item_id_field": "item"}


@pytest.fixture(autouse=True)
def _uploads(settings, tmp_path):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    cache.clear()


def _preview_url(client, name: str) -> str:
    body = json.dumps(files.label_studio_rating_tasks()).encode()
    response = client.post(
        reverse("annotation:study_import"),
        {
            "tool": "label_studio",
            "name": name,
            "language": "ind",
            "file": SimpleUploadedFile("export.json", body),
        },
    )
    assert response.status_code == 302
    return response.url


def test_upload_preview_import_job_then_the_project_with_its_answers(
    role_client, django_capture_on_commit_callbacks
):
    client = role_client("project_manager")
    preview = _preview_url(client, "Studi latar")
    assert 'data-testid="study-import"' in client.get(preview).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(preview, {**MAPPING, "name": "Studi latar"})
    job = StudyImport.objects.get()
    assert started.status_code == 302
    assert started.url == reverse("annotation:study_import_detail", kwargs={"import_id": job.pk})
    page = client.get(started.url).content.decode()
    project = Project.objects.get(name="Studi latar")
    assert 'data-status="succeeded"' in page and 'data-testid="study-import-cancel"' not in page
    assert "4 items, 3 annotators, 11 answers imported." in page
    link = reverse("annotation:manage_detail", kwargs={"project_id": project.pk})
    assert f'href="{link}"' in page and 'data-testid="study-project-link"' in page
    assert client.get(link).status_code == 200
    assert Annotation.objects.filter(assignment__project=project).count() == 19
    # Interval alpha on the imported answers equals krippendorff.alpha on the file's values.
    units = ["p1", "p2", "p3", "p4"]
    matrix = np.array(
        [[files.RATINGS[c].get(u, np.nan) for u in units] for c in sorted(files.RATINGS)], dtype=float
    )
    rows = {r["criterion"]: r for r in project_alpha(project=project, level="interval", draws=0)}
    assert rows["quality"]["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval"), abs=1e-9
    )
    # The preview of an imported upload is gone: it cannot be imported twice.
    assert client.get(preview).status_code == 404


def test_the_page_cancels_a_queued_import_through_the_shared_controls_and_nothing_is_written(
    role_client, django_capture_on_commit_callbacks
):
    client = role_client("project_manager")
    preview = _preview_url(client, "Dibatalkan")
    with django_capture_on_commit_callbacks() as sent:
        started = client.post(preview, {**MAPPING, "name": "Dibatalkan"})
    job = StudyImport.objects.get()
    page = client.get(started.url).content.decode()
    cancel_url = reverse("annotation:study_import_cancel", kwargs={"import_id": job.pk})
    assert 'data-status="queued"' in page and 'hx-trigger="every 1s"' in page
    assert f'action="{cancel_url}"' in page and 'data-testid="study-import-progress"' in page
    # htmx polls the status fragment alone.
    fragment = client.get(started.url, HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<section id="study-import-status"') and "<h1>" not in fragment
    # While it waits, the preview of the same upload shows the import instead of a second one.
    assert client.get(preview).url == started.url
    page_id = client.get(started.url, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "Batalkan impor" in page_id

    cancelled = client.post(cancel_url, follow=True)
    for callback in sent:  # the worker's task arrives after the cancel and finds nothing to run
        callback()
    job.refresh_from_db()
    assert job.status == "cancelled" and job.attempts == 0
    assert not Dataset.objects.exists() and not Project.objects.exists()
    assert not Annotation.objects.exists()
    html = cancelled.content.decode()
    assert "Import cancelled." in html and 'data-testid="study-import-retry"' in html
    assert 'data-testid="study-import-cancelled"' in html

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("annotation:study_import_retry", kwargs={"import_id": job.pk}))
    job.refresh_from_db()
    assert job.status == "succeeded" and job.project.name == "Dibatalkan"


def test_a_failed_import_lists_its_problems_in_the_page_language(
    role_client, django_capture_on_commit_callbacks
):
    client = role_client("project_manager")
    preview = _preview_url(client, "Bentrok")
    with django_capture_on_commit_callbacks() as sent:
        started = client.post(preview, {**MAPPING, "name": "Bentrok"})
    Dataset.objects.create(name="Bentrok")  # taken while the import waited for a worker
    for callback in sent:
        callback()
    page = client.get(started.url, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert 'data-status="failed"' in page and 'data-testid="study-problems"' in page
    assert "Dataset dengan nama ini sudah ada; pilih nama lain." in page
    assert Project.objects.count() == 0
    # A failed import's upload can be previewed again, under another name.
    assert client.get(preview).status_code == 200


def test_only_project_managers_see_an_import(role_client):
    job = StudyImport.objects.create(tool="potato", name="x", upload_path="/nonexistent")
    url = reverse("annotation:study_import_detail", kwargs={"import_id": job.pk})
    assert role_client("researcher").get(url).status_code == 403
    assert role_client("project_manager").get(url).status_code == 200


def test_the_upload_page_lists_recent_imports_with_links(role_client, django_assert_max_num_queries):
    project = Project.objects.create(
        name="Proyek lama", kind="likert", dataset=Dataset.objects.create(name="d")
    )
    done = StudyImport.objects.create(
        tool="argilla", name="Lama", upload_path="/gone", status="succeeded", project=project
    )
    waiting = StudyImport.objects.create(tool="potato", name="Baru", upload_path="/x")
    client = role_client("project_manager")
    with django_assert_max_num_queries(12):
        page = client.get(reverse("annotation:study_import")).content.decode()
    assert 'data-testid="study-imports"' in page
    for job in (done, waiting):
        assert f'href="{reverse("annotation:study_import_detail", kwargs={"import_id": job.pk})}"' in page
    assert f'href="{reverse("annotation:manage_detail", kwargs={"project_id": project.pk})}"' in page
    assert "Argilla" in page and "Potato" in page
    assert page.index("Baru") < page.index("Lama")  # newest first
