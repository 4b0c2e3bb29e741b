"""Background imports as jobs: redelivery after a dead worker, attempts, the stale sweep, cancel, clean-up."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from datasets_app import services
from datasets_app.jobs import JobRefused, jobs_requeue_stale
from datasets_app.models import Dataset, DatasetImport, Prompt
from datasets_app.services import IMPORT_JOB, dataset_import_cancel, dataset_import_queue
from datasets_app.tasks import dataset_import_run_task
from tests.datasets_app.services.test_dataset_import import prompt_rows, write_jsonl

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_heartbeats_of_other_tests():
    """Heartbeats live in the cache, which outlives each test's database."""
    cache.clear()


def queued(tmp_path, n=5, name="jobs") -> DatasetImport:
    upload = write_jsonl(tmp_path / "upload.jsonl", prompt_rows(n))
    return DatasetImport.objects.create(
        name=name, file_format="jsonl", upload_path=str(upload), task_id="first-delivery"
    )


def died_while_running(record: DatasetImport, *, attempts=1, started=None) -> DatasetImport:
    """The row as a worker killed mid-import leaves it: running, its transaction rolled back."""
    DatasetImport.objects.filter(pk=record.pk).update(
        status="running", attempts=attempts, started_at=started or timezone.now()
    )
    record.refresh_from_db()
    return record


def test_a_queued_import_runs_under_its_task_id_and_removes_its_upload(
    tmp_path, django_capture_on_commit_callbacks
):
    upload = write_jsonl(tmp_path / "u.jsonl", prompt_rows(4))
    with django_capture_on_commit_callbacks(execute=True):
        record = dataset_import_queue(
            upload_path=upload, name="queued", file_format="jsonl", kind=None, replace=False, user=None
        )
    record.refresh_from_db()
    assert (record.status, record.attempts, record.counts) == ("succeeded", 1, {"prompts": 4, "responses": 8})
    assert record.task_id and record.started_at and record.finished_at
    assert not upload.exists()


def test_a_redelivered_task_restarts_the_import_its_dead_delivery_left_running(tmp_path):
    record = died_while_running(queued(tmp_path, n=6))
    result = dataset_import_run_task.apply(args=[record.pk], task_id="first-delivery").get()
    record.refresh_from_db()
    assert result == "succeeded"
    assert (record.status, record.attempts) == ("succeeded", 2)
    # Every row once: the dead attempt's transaction left nothing behind.
    assert Prompt.objects.filter(dataset__name="jobs").count() == 6
    assert not (tmp_path / "upload.jsonl").exists()


def test_another_delivery_leaves_a_running_import_alone(tmp_path):
    record = died_while_running(queued(tmp_path))
    assert dataset_import_run_task.apply(args=[record.pk], task_id="a-duplicate").get() == "running"
    record.refresh_from_db()
    assert (record.status, record.attempts) == ("running", 1)
    assert (tmp_path / "upload.jsonl").exists()  # still needed by the delivery that runs it
    assert not Dataset.objects.filter(name="jobs").exists()


def test_an_import_that_keeps_killing_its_worker_fails_after_its_attempts(
    tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.JOB_MAX_ATTEMPTS = 3
    record = died_while_running(queued(tmp_path), attempts=3)
    with django_capture_on_commit_callbacks(execute=True):
        result = dataset_import_run_task.apply(args=[record.pk], task_id="first-delivery").get()
    assert result == "failed"
    record.refresh_from_db()
    assert record.status == "failed"
    assert "stopped 3 time(s) before it finished" in record.errors[0]["message"]
    assert record.counts == {"n_errors": 1}
    assert not (tmp_path / "upload.jsonl").exists()
    assert not Dataset.objects.filter(name="jobs").exists()


def test_the_sweep_sends_a_stale_import_again_under_a_new_task_id(
    tmp_path, django_capture_on_commit_callbacks
):
    long_ago = timezone.now() - IMPORT_JOB.time_limit - timedelta(minutes=5)
    record = died_while_running(queued(tmp_path, n=3), started=long_ago)
    fresh = died_while_running(queued(tmp_path / "..", n=1, name="fresh"))  # within its time limit
    with django_capture_on_commit_callbacks(execute=True):
        done = jobs_requeue_stale(kind=IMPORT_JOB)
    assert done == {"sent": 1, "failed": 0, "cancelled": 0}
    record.refresh_from_db()
    fresh.refresh_from_db()
    assert record.task_id != "first-delivery"
    assert (record.status, record.attempts, record.counts) == ("succeeded", 2, {"prompts": 3, "responses": 6})
    assert fresh.status == "running"
    # The old message, redelivered later by the broker, finds the job in other hands and does nothing.
    assert dataset_import_run_task.apply(args=[record.pk], task_id="first-delivery").get() is None


def test_the_sweep_fails_a_stale_import_out_of_attempts_with_a_message(
    tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.JOB_MAX_ATTEMPTS = 2
    long_ago = timezone.now() - IMPORT_JOB.time_limit - timedelta(minutes=5)
    record = died_while_running(queued(tmp_path), attempts=2, started=long_ago)
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_requeue_stale(kind=IMPORT_JOB) == {"sent": 0, "failed": 1, "cancelled": 0}
    record.refresh_from_db()
    assert record.status == "failed" and record.finished_at
    message = record.errors[0]["message"]
    assert "stopped without finishing (attempt 2 of 2" in message and "gave up" in message
    assert not (tmp_path / "upload.jsonl").exists()


def test_cancelling_a_queued_import_ends_it_and_removes_the_upload(
    tmp_path, django_capture_on_commit_callbacks
):
    record = queued(tmp_path)
    with django_capture_on_commit_callbacks(execute=True):
        record = dataset_import_cancel(record=record)
    assert record.status == "cancelled"
    assert not (tmp_path / "upload.jsonl").exists()
    # Its message, still in the queue, does nothing.
    assert dataset_import_run_task.apply(args=[record.pk], task_id="first-delivery").get() is None
    assert not Dataset.objects.filter(name="jobs").exists()


def test_a_running_import_cancelled_stops_before_its_next_batch_and_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(services, "BATCH_SIZE", 10)
    record = queued(tmp_path, n=45)
    batches = []
    real_check = services.job_check

    def cancel_during_the_third_batch(*, kind, job):
        batches.append(job.pk)
        if len(batches) == 3:
            dataset_import_cancel(record=DatasetImport.objects.get(pk=job.pk))
        real_check(kind=kind, job=job)

    monkeypatch.setattr(services, "job_check", cancel_during_the_third_batch)
    assert dataset_import_run_task.apply(args=[record.pk], task_id="first-delivery").get() == "cancelled"
    record.refresh_from_db()
    assert record.status == "cancelled" and len(batches) == 3
    assert not Dataset.objects.filter(name="jobs").exists() and not Prompt.objects.exists()
    assert not (tmp_path / "upload.jsonl").exists()


def test_a_failed_import_removes_its_upload_and_refuses_a_cancel(tmp_path):
    upload = tmp_path / "bad.jsonl"
    upload.write_text('{"id": "p1", "language": "ind"}\n', encoding="utf-8")
    record = DatasetImport.objects.create(name="bad", file_format="jsonl", upload_path=str(upload))
    assert dataset_import_run_task.apply(args=[record.pk]).get() == "failed"
    assert not upload.exists()
    with pytest.raises(JobRefused, match="only a queued or running one can be cancelled"):
        dataset_import_cancel(record=record)


def test_cancel_api(api_client_for, tmp_path):
    record = queued(tmp_path)
    api = api_client_for("researcher")
    response = api.post(f"/api/v1/datasets/imports/{record.pk}/cancel")
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["attempts"]) == ("cancelled", 0)
    again = api.post(f"/api/v1/datasets/imports/{record.pk}/cancel")
    assert again.status_code == 409 and "cancelled" in again.json()["detail"]
    assert api.post("/api/v1/datasets/imports/999999/cancel").status_code == 404
    assert api_client_for("annotator").post(f"/api/v1/datasets/imports/{record.pk}/cancel").status_code == 403
