"""One job-control surface: the same page views and API operations cancel, retry and read every kind of
background job (imports, exports, flag recomputations), by the kinds' own routes or by name under /jobs/."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import translation

from annotation.models import FlagRecompute, Project
from datasets_app.job_control import JobControl, job_control, job_control_register, job_controls
from datasets_app.models import DatasetImport
from exports.models import Export
from exports.services import ExportOptions, export_create
from tests.annotation.conftest import build_translation_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_heartbeats_of_other_tests():
    cache.clear()


@pytest.fixture
def exports_dir(tmp_path, settings):
    settings.EXPORTS_DIR = tmp_path / "exports"
    settings.EXPORTS_DIR.mkdir()
    return settings.EXPORTS_DIR


def _import(status="queued") -> DatasetImport:
    return DatasetImport.objects.create(
        name="job-import", file_format="jsonl", upload_path="x", status=status
    )


def test_every_controlled_kind_is_registered_once_the_urls_are_loaded(client):
    client.get("/")  # loads the URL configuration, which registers the kinds
    assert {"import", "export", "flag-recompute", "study-import"} <= set(job_controls())
    with pytest.raises(ValueError, match="registered already"):
        job_control_register(
            JobControl(**{**job_control("export").__dict__, "testid": "other"})  # same name, another control
        )


def test_the_jobs_routes_cancel_and_retry_any_kind_by_its_name(role_client, likert_project, exports_dir):
    client = role_client("researcher")
    record = export_create(project=likert_project, options=ExportOptions(bootstrap_draws=0), queue=False)

    answer = client.get(reverse("api-job-detail", kwargs={"job": "export", "job_id": record.pk}))
    assert answer.status_code == 200 and answer.json()["status"] == "queued"
    # The kind's own route answers the same.
    assert client.get(reverse("api-export-detail", kwargs={"export_id": record.pk})).json() == answer.json()

    answer = client.post(reverse("api-job-cancel", kwargs={"job": "export", "job_id": record.pk}))
    assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
    again = client.post(reverse("api-job-cancel", kwargs={"job": "export", "job_id": record.pk}))
    assert again.status_code == 409 and "detail" in again.json()

    answer = client.post(reverse("api-job-retry", kwargs={"job": "export", "job_id": record.pk}))
    assert answer.status_code == 202 and answer.json()["status"] in ("queued", "running", "succeeded")

    queued = _import()
    answer = client.post(reverse("api-job-cancel", kwargs={"job": "import", "job_id": queued.pk}))
    assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
    # An import has no retry; an unknown kind or row is 404.
    assert (
        client.post(reverse("api-job-retry", kwargs={"job": "import", "job_id": queued.pk})).status_code
        == 404
    )
    assert client.get(reverse("api-job-detail", kwargs={"job": "robot", "job_id": 1})).status_code == 404
    assert (
        client.get(reverse("api-job-detail", kwargs={"job": "export", "job_id": 999999})).status_code == 404
    )


def test_each_kind_keeps_its_roles_on_the_jobs_routes(role_client):
    project = Project.objects.create(
        name="flags", kind="translation", dataset=build_translation_dataset(n_units=1)
    )
    recompute = FlagRecompute.objects.create(project=project, status="failed")
    url = reverse("api-job-detail", kwargs={"job": "flag-recompute", "job_id": recompute.pk})
    assert role_client("researcher").get(url).status_code == 403  # recomputations are the managers'
    assert role_client("project_manager").get(url).status_code == 200
    assert (
        role_client("annotator")
        .get(reverse("api-job-detail", kwargs={"job": "import", "job_id": _import().pk}))
        .status_code
        == 403
    )
    assert (
        role_client("researcher")
        .get(reverse("api-job-detail", kwargs={"job": "import", "job_id": _import().pk}))
        .status_code
        == 200
    )


def test_the_import_page_cancels_a_queued_import_in_both_languages(role_client):
    client = role_client("researcher")
    record = _import()
    page = client.get(reverse("datasets:import_detail", kwargs={"import_id": record.pk})).content.decode()
    cancel_url = reverse("datasets:import_cancel", kwargs={"import_id": record.pk})
    assert (
        f'action="{cancel_url}"' in page and 'data-testid="import-cancel"' in page and "Cancel import" in page
    )
    with translation.override("id"):
        page_id = client.get(
            reverse("datasets:import_detail", kwargs={"import_id": record.pk}), HTTP_ACCEPT_LANGUAGE="id"
        ).content.decode()
    assert "Batalkan impor" in page_id

    response = client.post(cancel_url, follow=True)
    record.refresh_from_db()
    assert record.status == "cancelled"
    assert "Import cancelled." in response.content.decode()
    assert 'data-testid="import-cancel"' not in response.content.decode()  # nothing left to cancel

    response = client.post(cancel_url, follow=True)
    assert "Only a queued or running import can be cancelled." in response.content.decode()
    assert role_client("annotator").post(cancel_url).status_code == 403


def test_a_running_export_shows_that_it_is_being_cancelled(role_client, likert_project, exports_dir):
    client = role_client("researcher")
    record = export_create(project=likert_project, options=ExportOptions(bootstrap_draws=0), queue=False)
    Export.objects.filter(pk=record.pk).update(status="running")
    detail = reverse("exports:export_detail", kwargs={"export_id": record.pk})
    assert 'data-testid="export-cancel"' in client.get(detail).content.decode()
    response = client.post(reverse("exports:export_cancel", kwargs={"export_id": record.pk}), follow=True)
    text = response.content.decode()
    assert "The export stops at its next step and removes its files." in text
    assert 'data-testid="export-cancelling"' in text and 'data-testid="export-cancel"' not in text
