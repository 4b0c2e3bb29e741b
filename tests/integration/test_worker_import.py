"""End to end through Redis and a real worker process: a background dataset import."""

import json

import pytest

from config.celery import app as celery_app
from datasets_app.models import Dataset, DatasetImport, Prompt
from tests.datasets_app.services.test_dataset_import import prompt_rows
from tests.integration.conftest import wait_for

pytestmark = pytest.mark.integration


def test_background_import_runs_on_a_real_worker(celery_worker_process, tmp_path, make_user):
    assert celery_app.conf.broker_url.startswith("redis://")
    upload = tmp_path / "upload.jsonl"
    upload.write_text("\n".join(json.dumps(r) for r in prompt_rows(25)))
    record = DatasetImport.objects.create(
        name="via-worker",
        file_format="jsonl",
        upload_path=str(upload),
        created_by=make_user("project_manager"),
    )
    celery_worker_process()
    celery_app.send_task("datasets_app.dataset_import_run", args=[record.pk], queue="default")

    def finished():
        record.refresh_from_db()
        return record.status in ("succeeded", "failed")

    wait_for(finished, timeout=60, message="the import to finish")
    assert record.status == "succeeded", record.errors
    assert record.counts == {"prompts": 25, "responses": 50}
    assert Prompt.objects.filter(dataset=Dataset.objects.get(name="via-worker")).count() == 25
    assert not upload.exists()


def test_a_redelivered_import_task_does_nothing_twice(celery_worker_process, tmp_path):
    upload = tmp_path / "upload.jsonl"
    upload.write_text("\n".join(json.dumps(r) for r in prompt_rows(3)))
    record = DatasetImport.objects.create(name="twice", file_format="jsonl", upload_path=str(upload))
    celery_worker_process(concurrency=2)
    for _ in range(2):
        celery_app.send_task("datasets_app.dataset_import_run", args=[record.pk], queue="default")

    def finished():
        record.refresh_from_db()
        return record.status == "succeeded"

    wait_for(finished, timeout=60, message="the import to finish")
    assert Dataset.objects.filter(name="twice").count() == 1
    assert Prompt.objects.filter(dataset__name="twice").count() == 3
