"""Exports as background jobs: redelivery after a dead worker, the stale sweep, cancel, retry, clean-up,
and the buttons and API operations that cancel and retry."""

from __future__ import annotations

import zipfile
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from datasets_app.jobs import JobRefused, job_heartbeat_touch, jobs_requeue_stale
from exports import services as export_services
from exports.models import Export
from exports.services import EXPORT_JOB, ExportOptions, export_cancel, export_create, export_retry
from exports.tasks import export_run_task

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_heartbeats_of_other_tests():
    """Heartbeats live in the cache, which outlives each test's database."""
    cache.clear()


@pytest.fixture
def exports_dir(tmp_path, settings):
    settings.EXPORTS_DIR = tmp_path / "exports"
    settings.EXPORTS_DIR.mkdir()
    return settings.EXPORTS_DIR


def created(project, **options) -> Export:
    """An export recorded as a request records it; its task not run yet."""
    return export_create(project=project, options=ExportOptions(bootstrap_draws=50, **options), queue=False)


def died_while_running(record: Export, folder, *, attempts=1, started=None) -> Export:
    """What a worker killed at 15% leaves: a running row and a half-written folder and zip."""
    Export.objects.filter(pk=record.pk).update(
        status="running",
        attempts=attempts,
        progress=15,
        stage="reading ratings",
        started_at=started or timezone.now(),
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "half-written.parquet").write_bytes(b"PAR1")
    folder.with_name(folder.name + ".zip").write_bytes(b"PK")
    record.refresh_from_db()
    return record


def test_a_redelivered_task_restarts_the_export_from_a_clean_folder(likert_project, exports_dir):
    record = created(likert_project)
    folder = exports_dir / f"export-{record.pk}"
    record = died_while_running(record, folder)
    assert export_run_task.apply(args=[record.pk], task_id=record.task_id).get() == "succeeded"
    record.refresh_from_db()
    assert (record.status, record.progress, record.attempts) == ("succeeded", 100, 2)
    assert not (folder / "half-written.parquet").exists()
    assert record.counts["split_rows"] == {"train": 6}
    names = set(zipfile.ZipFile(record.zip_path).namelist())
    assert "README.md" in names and not any("half-written" in n for n in names)


def test_another_delivery_leaves_a_running_export_alone(likert_project, exports_dir):
    record = created(likert_project)
    folder = exports_dir / f"export-{record.pk}"
    record = died_while_running(record, folder)
    assert export_run_task.apply(args=[record.pk], task_id="someone-else").get() == "running"
    record.refresh_from_db()
    assert (record.status, record.progress) == ("running", 15)
    assert (folder / "half-written.parquet").exists()


def test_the_sweep_sends_a_stale_export_again_and_then_gives_up(
    likert_project, exports_dir, settings, django_capture_on_commit_callbacks
):
    settings.JOB_MAX_ATTEMPTS = 2
    long_ago = timezone.now() - EXPORT_JOB.time_limit - timedelta(minutes=2)
    first = created(likert_project)
    died_while_running(first, exports_dir / f"export-{first.pk}", started=long_ago)
    second = created(likert_project)
    second_folder = exports_dir / f"export-{second.pk}"
    died_while_running(second, second_folder, attempts=2, started=long_ago)
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_requeue_stale(kind=EXPORT_JOB) == {"sent": 1, "failed": 1, "cancelled": 0}
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, first.attempts, first.counts["split_rows"]) == ("succeeded", 2, {"train": 6})
    assert not (exports_dir / f"export-{first.pk}" / "half-written.parquet").exists()
    assert second.status == "failed"
    assert second.error.startswith("the worker running this export stopped without finishing (attempt 2 of 2")
    assert not second_folder.exists() and not second_folder.with_name(second_folder.name + ".zip").exists()


def test_a_running_export_cancelled_stops_at_its_next_step_and_removes_its_files(
    likert_project, exports_dir, monkeypatch
):
    record = created(likert_project)
    stages = []
    real_check = export_services.job_check

    def cancel_while_writing(*, kind, job, **updates):
        stages.append(updates["stage"])
        if updates["stage"] == "zipping":
            export_cancel(export=Export.objects.get(pk=job.pk))
        real_check(kind=kind, job=job, **updates)

    monkeypatch.setattr(export_services, "job_check", cancel_while_writing)
    assert export_run_task.apply(args=[record.pk], task_id=record.task_id).get() == "cancelled"
    record.refresh_from_db()
    assert record.status == "cancelled" and record.finished_at
    assert stages[-1] == "zipping" and "writing parquet files" in stages
    assert not any(exports_dir.iterdir())  # the written folder is gone with the export


def test_a_failed_export_leaves_no_files_and_can_be_retried(
    likert_project, exports_dir, monkeypatch, django_capture_on_commit_callbacks
):
    record = created(likert_project)
    real_zip = export_services.zip_folder

    def disk_full(folder, target):
        target.write_bytes(b"PK-partial")
        raise OSError("No space left on device")

    monkeypatch.setattr(export_services, "zip_folder", disk_full)
    assert export_run_task.apply(args=[record.pk], task_id=record.task_id).get() == "failed"
    record.refresh_from_db()
    assert record.error == "No space left on device"
    assert not any(exports_dir.iterdir())

    monkeypatch.setattr(export_services, "zip_folder", real_zip)
    with django_capture_on_commit_callbacks(execute=True):
        export_retry(export=record)
    record.refresh_from_db()
    assert (record.status, record.error, record.attempts) == ("succeeded", "", 1)
    assert zipfile.ZipFile(record.zip_path).testzip() is None


def test_cancel_and_retry_are_refused_in_the_wrong_state(
    likert_project, exports_dir, django_capture_on_commit_callbacks
):
    record = created(likert_project)
    with pytest.raises(JobRefused, match="only a failed or cancelled one can be retried"):
        export_retry(export=record)
    with django_capture_on_commit_callbacks(execute=True):
        assert export_cancel(export=record).status == "cancelled"
    # The queued message finds it cancelled and does nothing.
    assert export_run_task.apply(args=[record.pk], task_id=record.task_id).get() is None
    with pytest.raises(JobRefused, match="only a queued or running one can be cancelled"):
        export_cancel(export=record)


def test_detail_page_shows_cancel_while_active_and_retry_once_cancelled(
    role_client, likert_project, exports_dir, django_capture_on_commit_callbacks
):
    record = created(likert_project)
    client = role_client("researcher")
    page = client.get(reverse("exports:export_detail", args=[record.pk])).content.decode()
    assert 'data-testid="export-cancel"' in page and "csrfmiddlewaretoken" in page
    assert 'data-testid="export-retry"' not in page
    response = client.post(reverse("exports:export_cancel", args=[record.pk]))
    assert response.status_code == 302
    record.refresh_from_db()
    assert record.status == "cancelled"
    page = client.get(reverse("exports:export_detail", args=[record.pk])).content.decode()
    assert 'data-testid="export-retry"' in page and 'data-testid="export-cancel"' not in page
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("exports:export_retry", args=[record.pk]))
    record.refresh_from_db()
    assert record.status == "succeeded"
    assert client.get(reverse("exports:export_cancel", args=[record.pk])).status_code == 405


def test_annotators_cannot_cancel_or_retry(role_client, likert_project, exports_dir):
    record = created(likert_project)
    client = role_client("annotator")
    assert client.post(reverse("exports:export_cancel", args=[record.pk])).status_code == 403
    assert client.post(reverse("exports:export_retry", args=[record.pk])).status_code == 403
    record.refresh_from_db()
    assert record.status == "queued"


def test_cancel_and_retry_api(
    api_client_for, likert_project, exports_dir, django_capture_on_commit_callbacks
):
    record = created(likert_project)
    api = api_client_for("project_manager")
    assert api.post(f"/api/v1/exports/{record.pk}/retry").status_code == 409
    response = api.post(f"/api/v1/exports/{record.pk}/cancel")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/v1/exports/{record.pk}/retry")
    assert response.status_code == 202 and response.json()["status"] == "queued"
    body = api.get(f"/api/v1/exports/{record.pk}").json()
    assert (body["status"], body["attempts"], body["cancel_requested"]) == ("succeeded", 1, False)
    assert api.post(f"/api/v1/exports/{record.pk}/cancel").status_code == 409
    assert api.post("/api/v1/exports/999999/cancel").status_code == 404
    assert api_client_for("annotator").post(f"/api/v1/exports/{record.pk}/cancel").status_code == 403


def test_a_restart_after_the_files_were_written_still_cleans_its_own_folder(likert_project, exports_dir):
    record = created(likert_project)
    folder = exports_dir / f"export-{record.pk}"
    # Killed while zipping: the row already names its (own) folder.
    Export.objects.filter(pk=record.pk).update(folder_path=str(folder))
    record = died_while_running(record, folder)
    assert export_run_task.apply(args=[record.pk], task_id=record.task_id).get() == "succeeded"
    assert not (folder / "half-written.parquet").exists()


def test_the_sweep_fails_a_stale_command_export_instead_of_sending_it_to_a_worker(
    likert_project, exports_dir, tmp_path, django_capture_on_commit_callbacks
):
    out = tmp_path / "my-export"
    record = export_create(
        project=likert_project, options=ExportOptions(bootstrap_draws=50), out_dir=out, queue=False
    )
    long_ago = timezone.now() - EXPORT_JOB.time_limit - timedelta(minutes=2)
    died_while_running(record, out, started=long_ago)
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_requeue_stale(kind=EXPORT_JOB) == {"sent": 0, "failed": 1, "cancelled": 0}
    record.refresh_from_db()
    assert record.status == "failed"
    assert record.error.startswith("the process running this export stopped without finishing")
    assert (out / "half-written.parquet").exists()  # the command's folder is the user's to clear


def test_an_attempt_whose_export_was_handed_on_stops_and_leaves_the_row_and_files_alone(
    likert_project, exports_dir, monkeypatch
):
    record = created(likert_project)
    real_check = export_services.job_check

    def handed_on_while_writing(*, kind, job, **updates):
        if updates["stage"] == "zipping":
            Export.objects.filter(pk=job.pk).update(task_id="the-next-delivery")
        real_check(kind=kind, job=job, **updates)

    monkeypatch.setattr(export_services, "job_check", handed_on_while_writing)
    assert export_run_task.apply(args=[record.pk], task_id=record.task_id).get() == "running"
    record.refresh_from_db()
    assert (record.status, record.task_id, record.finished_at) == ("running", "the-next-delivery", None)
    assert (exports_dir / f"export-{record.pk}" / "README.md").exists()


def test_an_export_whose_worker_stopped_beating_is_requeued_then_its_page_says_so(
    role_client, likert_project, exports_dir, settings, django_capture_on_commit_callbacks
):
    settings.JOB_HEARTBEAT_TIMEOUT_S = 90
    settings.JOB_MAX_ATTEMPTS = 3
    record = created(likert_project)
    heard = timezone.now() - timedelta(minutes=2)  # an hour inside the export's time limit
    died_while_running(record, exports_dir / f"export-{record.pk}", started=heard - timedelta(seconds=5))
    job_heartbeat_touch(kind=EXPORT_JOB, job=record, now=heard)
    with django_capture_on_commit_callbacks(execute=False):
        assert jobs_requeue_stale(kind=EXPORT_JOB) == {"sent": 1, "failed": 0, "cancelled": 0}
    client = role_client("researcher")
    client.cookies["django_language"] = "id"
    page = client.get(reverse("exports:export_detail", args=[record.pk]), HTTP_ACCEPT_LANGUAGE="id")
    expected = f"Worker berhenti pada pukul {timezone.localtime(heard):%H:%M}; dimasukkan ke antrean lagi"
    assert f"{expected} (percobaan 2 dari 3)." in page.content.decode()
    record.refresh_from_db()
    assert export_run_task.apply(args=[record.pk], task_id=record.task_id).get() == "succeeded"
    assert not (exports_dir / f"export-{record.pk}" / "half-written.parquet").exists()
