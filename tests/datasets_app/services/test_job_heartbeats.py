"""Heartbeats of background jobs: the sweep recovers a job whose worker stopped beating long before the
task's time limit, a cancel ends such a job at once, and the import's page says what happened."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from datasets_app.jobs import (
    job_cancel,
    job_heartbeat,
    job_heartbeat_at,
    job_heartbeat_touch,
    jobs_requeue_stale,
)
from datasets_app.models import DatasetImport
from datasets_app.services import IMPORT_JOB
from datasets_app.tasks import dataset_import_run_task
from tests.datasets_app.services.test_dataset_import import prompt_rows, write_jsonl

pytestmark = pytest.mark.django_db

TIMEOUT = timedelta(seconds=90)


@pytest.fixture(autouse=True)
def no_heartbeats(settings):
    settings.JOB_HEARTBEAT_TIMEOUT_S = TIMEOUT.total_seconds()
    settings.JOB_MAX_ATTEMPTS = 3
    cache.clear()
    yield
    cache.clear()


def running(tmp_path, *, attempts=1, heard_at=None, name="beats", task_id="the-delivery") -> DatasetImport:
    """A running import started ten seconds before its worker was last heard from at ``heard_at``."""
    heard_at = heard_at or timezone.now()
    upload = write_jsonl(tmp_path / f"{name}.jsonl", prompt_rows(3))
    record = DatasetImport.objects.create(
        name=name,
        file_format="jsonl",
        upload_path=str(upload),
        task_id=task_id,
        status="running",
        attempts=attempts,
        started_at=heard_at - timedelta(seconds=10),
    )
    job_heartbeat_touch(kind=IMPORT_JOB, job=record, now=heard_at)
    return record


def _hhmm(moment) -> str:
    return f"{timezone.localtime(moment):%H:%M}"


def test_the_sweep_requeues_an_import_whose_heartbeat_stopped_long_before_its_time_limit(
    tmp_path, django_capture_on_commit_callbacks
):
    heard = timezone.now()
    record = running(tmp_path, heard_at=heard)
    assert IMPORT_JOB.time_limit > timedelta(hours=3)
    with django_capture_on_commit_callbacks(execute=False) as sent:
        assert jobs_requeue_stale(kind=IMPORT_JOB, now=heard + TIMEOUT) == {
            "sent": 0,
            "failed": 0,
            "cancelled": 0,
        }
    assert not sent
    with django_capture_on_commit_callbacks(execute=False) as sent:
        done = jobs_requeue_stale(kind=IMPORT_JOB, now=heard + TIMEOUT + timedelta(seconds=1))
    assert done == {"sent": 1, "failed": 0, "cancelled": 0} and len(sent) == 1
    record.refresh_from_db()
    assert (record.status, record.attempts, record.worker_stopped_at) == ("queued", 1, heard)
    assert record.task_id != "the-delivery"
    # The new delivery runs it; the dead one's message, redelivered by the broker later, does nothing.
    assert dataset_import_run_task.apply(args=[record.pk], task_id=record.task_id).get() == "succeeded"
    assert dataset_import_run_task.apply(args=[record.pk], task_id="the-delivery").get() is None
    record.refresh_from_db()
    assert (record.status, record.attempts, record.counts) == ("succeeded", 2, {"prompts": 3, "responses": 6})


def test_a_live_heartbeat_keeps_a_long_import_from_the_sweep(tmp_path):
    heard = timezone.now()
    record = running(tmp_path, heard_at=heard)
    DatasetImport.objects.filter(pk=record.pk).update(started_at=heard - timedelta(hours=2))
    assert jobs_requeue_stale(kind=IMPORT_JOB, now=heard + timedelta(seconds=30))["sent"] == 0
    record.refresh_from_db()
    assert (record.status, record.worker_stopped_at) == ("running", None)


def test_a_heartbeat_lost_with_the_cache_counts_from_when_the_sweep_first_missed_it(tmp_path):
    heard = timezone.now()
    record = running(tmp_path, heard_at=heard)
    cache.clear()
    later = heard + timedelta(minutes=10)
    assert jobs_requeue_stale(kind=IMPORT_JOB, now=later)["sent"] == 0
    assert jobs_requeue_stale(kind=IMPORT_JOB, now=later + TIMEOUT)["sent"] == 0
    assert jobs_requeue_stale(kind=IMPORT_JOB, now=later + TIMEOUT + timedelta(seconds=1))["sent"] == 1
    record.refresh_from_db()
    # Last heard from when its attempt began: the heartbeats in between are gone.
    assert (record.status, record.worker_stopped_at) == ("queued", record.started_at)


def test_the_sweep_fails_an_import_out_of_attempts_saying_the_worker_stopped(
    tmp_path, django_capture_on_commit_callbacks
):
    heard = timezone.now()
    record = running(tmp_path, attempts=3, heard_at=heard)
    with django_capture_on_commit_callbacks(execute=True):
        done = jobs_requeue_stale(kind=IMPORT_JOB, now=heard + timedelta(minutes=2))
    assert done == {"sent": 0, "failed": 1, "cancelled": 0}
    record.refresh_from_db()
    assert (record.status, record.worker_stopped_at) == ("failed", heard)
    message = record.errors[0]["message"]
    assert "stopped without finishing (attempt 3 of 3, last heard from" in message and "gave up" in message
    assert not (tmp_path / "beats.jsonl").exists()


def test_the_running_task_beats_its_heartbeat_until_it_ends(tmp_path, settings):
    settings.JOB_HEARTBEAT_INTERVAL_S = 0.05
    record = running(tmp_path, heard_at=timezone.now() - timedelta(minutes=5))
    before = job_heartbeat_at(kind=IMPORT_JOB, job=record)
    with job_heartbeat(kind=IMPORT_JOB, job=record):
        time.sleep(0.3)
        during = job_heartbeat_at(kind=IMPORT_JOB, job=record)
        assert during > before + timedelta(minutes=4)
        time.sleep(0.2)
        assert job_heartbeat_at(kind=IMPORT_JOB, job=record) > during
    ended = job_heartbeat_at(kind=IMPORT_JOB, job=record)
    time.sleep(0.2)
    assert job_heartbeat_at(kind=IMPORT_JOB, job=record) == ended


def test_an_import_beats_its_heartbeat_as_it_runs(tmp_path, settings):
    record = DatasetImport.objects.create(
        name="live",
        file_format="jsonl",
        upload_path=str(write_jsonl(tmp_path / "live.jsonl", prompt_rows(2))),
        task_id="live-delivery",
    )
    assert dataset_import_run_task.apply(args=[record.pk], task_id="live-delivery").get() == "succeeded"
    record.refresh_from_db()
    beat = job_heartbeat_at(kind=IMPORT_JOB, job=record)
    assert beat is not None and record.started_at <= beat <= record.finished_at


def test_cancel_ends_at_once_an_import_whose_worker_stopped(
    tmp_path, api_client_for, django_capture_on_commit_callbacks
):
    heard = timezone.now() - timedelta(minutes=3)
    record = running(tmp_path, heard_at=heard)
    api = api_client_for("project_manager")
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(reverse("api-dataset-import-cancel", args=[record.pk]))
    assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
    record.refresh_from_db()
    assert (record.status, record.cancel_requested, record.worker_stopped_at) == ("cancelled", False, heard)
    assert record.finished_at is not None
    assert not (tmp_path / "beats.jsonl").exists()


def test_cancel_asks_an_import_with_a_live_worker_to_stop(tmp_path):
    heard = timezone.now()
    record = running(tmp_path, heard_at=heard)
    job_cancel(kind=IMPORT_JOB, job_id=record.pk, now=heard + timedelta(seconds=30))
    record.refresh_from_db()
    assert (record.status, record.cancel_requested, record.worker_stopped_at) == ("running", True, None)
    # Should its worker stop before it acts on the request, the sweep ends it cancelled.
    assert jobs_requeue_stale(kind=IMPORT_JOB, now=heard + timedelta(minutes=2))["cancelled"] == 1
    record.refresh_from_db()
    assert (record.status, record.worker_stopped_at) == ("cancelled", heard)


@pytest.mark.parametrize(
    ("language", "requeued", "failed"),
    [
        (
            "en",
            "The worker stopped at {t}; requeued (attempt 2 of 3).",
            "Failed: the worker stopped responding at {t}.",
        ),
        (
            "id",
            "Worker berhenti pada pukul {t}; dimasukkan ke antrean lagi (percobaan 2 dari 3).",
            "Gagal: worker berhenti merespons pada pukul {t}.",
        ),
    ],
)
def test_the_import_page_shows_the_recovery(tmp_path, role_client, language, requeued, failed):
    heard = timezone.now() - timedelta(minutes=3)
    again = running(tmp_path, heard_at=heard, name="again", task_id="again-delivery")
    stuck = running(tmp_path, heard_at=heard, name="stuck", task_id="stuck-delivery", attempts=3)
    assert jobs_requeue_stale(kind=IMPORT_JOB) == {"sent": 1, "failed": 1, "cancelled": 0}
    client = role_client("researcher")
    client.cookies["django_language"] = language

    def page(record) -> str:
        url = reverse("datasets:import_detail", args=[record.pk])
        return client.get(url, HTTP_ACCEPT_LANGUAGE=language).content.decode()

    assert requeued.format(t=_hhmm(heard)) in page(again)
    assert failed.format(t=_hhmm(heard)) in page(stuck)
    # Taken by the new delivery, the page still says why it runs again.
    dataset_import_run_task.apply(args=[again.pk], task_id=DatasetImport.objects.get(pk=again.pk).task_id)
    assert requeued.format(t=_hhmm(heard)) in page(again)
