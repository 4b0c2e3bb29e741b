"""Workers report the queues they consume; a model worker that follows picks up a new endpoint's queue."""

from __future__ import annotations

import json
import time

import pytest

from config.celery import app as celery_app
from datasets_app.models import DatasetImport
from evaluation.services.endpoints import endpoint_create
from evaluation.services.workers import queues_consumed
from tests.integration.conftest import wait_for

pytestmark = pytest.mark.integration

REPORTS = {
    "TIMBANG_TEST_SHARED_CACHE": "1",
    "WORKER_REPORT_INTERVAL_S": "0.5",
    "WORKER_REPORT_STALE_S": "3",
}


@pytest.fixture
def broker():
    """Tasks sent from this process go to Redis, on empty queues."""
    assert celery_app.conf.broker_url.startswith("redis://")
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    with celery_app.connection_for_write() as connection:
        for queue in ("default", "models.idle", "gpu.new-model"):
            connection.default_channel.queue_purge(queue)
    yield
    celery_app.conf.task_always_eager = eager


@pytest.fixture
def shared_cache(settings):
    settings.CACHES = {"default": {"BACKEND": "config.cache.RedisCache", "LOCATION": settings.REDIS_URL}}
    settings.WORKER_REPORT_STALE_S = 3
    settings.CELERY_TASK_ALWAYS_EAGER = False


def test_a_following_model_worker_consumes_a_new_endpoints_queue_within_seconds(
    celery_worker_process, broker, shared_cache, tmp_path
):
    worker = celery_worker_process(
        queues="models.idle",
        pool="threads",
        concurrency=2,
        name="models-follow@test",
        extra_env={**REPORTS, "MODEL_QUEUES_FOLLOW": "1"},
    )
    wait_for(lambda: "models.idle" in queues_consumed(), timeout=15, message="the worker's first report")
    assert "gpu.new-model" not in queues_consumed()

    # An endpoint added after the worker started, with its own queue (an empty queue field names it).
    endpoint = endpoint_create(
        slug="New-Model", backend="openai", base_url="http://127.0.0.1:9/v1", model_id="m", queue=""
    )
    assert endpoint.queue == "gpu.new-model"
    consumed = wait_for(
        lambda: queues_consumed().get("gpu.new-model"), timeout=15, message="the new queue in a report"
    )
    assert consumed == ["models-follow@test"]

    # And it really reads that queue: a task sent there runs.
    upload = tmp_path / "one.jsonl"
    upload.write_text(
        json.dumps({"id": "p1", "category": "math", "language": "ind", "prompt": "Dua?"}) + "\n"
    )
    record = DatasetImport.objects.create(name="via-new-queue", file_format="jsonl", upload_path=str(upload))
    celery_app.send_task("datasets_app.dataset_import_run", args=[record.pk], queue="gpu.new-model")
    wait_for(
        lambda: DatasetImport.objects.get(pk=record.pk).status == "succeeded",
        timeout=30,
        message="the task on the new queue to run",
    )

    # A worker that stops takes its report with it.
    worker.stop()
    wait_for(lambda: "gpu.new-model" not in queues_consumed(), timeout=10, message="the report to go")


def test_a_worker_that_does_not_follow_reports_only_its_own_queues(
    celery_worker_process, broker, shared_cache
):
    celery_worker_process(queues="default", name="plain@test", extra_env=REPORTS)
    wait_for(lambda: queues_consumed().get("default"), timeout=15, message="the worker's report")
    endpoint_create(slug="other", backend="openai", base_url="http://127.0.0.1:9/v1", model_id="m", queue="")
    time.sleep(2)  # four report rounds
    assert queues_consumed().get("gpu.other") is None
