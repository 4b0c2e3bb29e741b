"""Background jobs on a real worker through Redis: a worker killed with SIGKILL in the middle of an import
and of an export, then a new worker; the redelivered task runs the job again from a clean start."""

from __future__ import annotations

import json
import time
import zipfile
from datetime import timedelta

import numpy as np
import pyarrow.parquet as pq
import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.models import Annotation, AnnotatorGroup, Assignment, Project, Task
from annotation.services import rubric_defaults_ensure
from config.celery import app as celery_app
from datasets_app.jobs import job_heartbeat_at, jobs_requeue_stale
from datasets_app.models import Dataset, DatasetImport, Prompt, Response
from datasets_app.services import IMPORT_JOB
from exports.models import Export
from exports.services import ExportOptions, export_create, export_preview
from tests.integration.conftest import wait_for

pytestmark = pytest.mark.integration

# A restarted worker picks up the killed worker's unacknowledged task after this many seconds.
REDELIVER = {"CELERY_VISIBILITY_TIMEOUT": "2"}


@pytest.fixture
def broker():
    """Empty queues on Redis, and tasks sent there from this process."""
    assert celery_app.conf.broker_url.startswith("redis://")
    with celery_app.connection_for_write() as connection:
        connection.default_channel.queue_purge("default")
        connection.default_channel.client.delete("unacked", "unacked_index")
    yield


@pytest.fixture
def not_eager():
    """Tasks queued in this process (by the sweep) go to the broker, not run here (test settings)."""
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    yield
    celery_app.conf.task_always_eager = eager


def _status(model, pk):
    return model.objects.values_list("status", flat=True).get(pk=pk)


def test_an_import_killed_mid_way_runs_again_on_the_next_worker_and_keeps_every_row_once(
    celery_worker_process, broker, tmp_path
):
    n = 20_000
    upload = tmp_path / "big.jsonl"
    with upload.open("w", encoding="utf-8") as out:
        for i in range(n):
            row = {
                "id": f"p{i}",
                "category": "math",
                "language": "ind",
                "prompt": f"Berapa {i} ditambah {i}?",
                "responses": [
                    {"model": "alpha", "text": str(2 * i)},
                    {"model": "beta", "text": f"= {2 * i}"},
                ],
            }
            out.write(json.dumps(row) + "\n")
    record = DatasetImport.objects.create(
        name="killed-import", file_format="jsonl", upload_path=str(upload), task_id="import-delivery"
    )
    first = celery_worker_process()
    celery_app.send_task(
        "datasets_app.dataset_import_run", args=[record.pk], task_id=record.task_id, queue="default"
    )
    wait_for(
        lambda: _status(DatasetImport, record.pk) == "running", timeout=30, message="the import to start"
    )
    time.sleep(0.5)  # well inside the import: its batches are being written in one transaction
    first.kill()
    record.refresh_from_db()
    assert (record.status, record.attempts) == ("running", 1)
    assert not Dataset.objects.filter(name="killed-import").exists()  # the dead transaction was rolled back
    assert upload.exists()

    started = time.monotonic()
    celery_worker_process(extra_env=REDELIVER)
    wait_for(
        lambda: _status(DatasetImport, record.pk) not in ("queued", "running"),
        timeout=60,
        message="the import to finish on the new worker",
    )
    record.refresh_from_db()
    assert record.status == "succeeded", record.errors
    assert record.attempts == 2
    assert record.counts == {"prompts": n, "responses": 2 * n}
    prompts = Prompt.objects.filter(dataset__name="killed-import")
    assert prompts.count() == n == prompts.values("external_id").distinct().count()
    assert Response.objects.filter(prompt__dataset__name="killed-import").count() == 2 * n
    assert not upload.exists()
    print(f"import finished on the next worker in {time.monotonic() - started:.1f} s")


def _likert_project(n_items: int, n_responses: int = 3, n_annotators: int = 2) -> Project:
    """A closed likert project with every rating stored (bulk writes, seeded values)."""
    rng = np.random.default_rng(7)
    dataset = Dataset.objects.create(name="killed-export-data", license="cc-by-4.0")
    prompts = Prompt.objects.bulk_create(
        [
            Prompt(dataset=dataset, external_id=f"q{i}", category="math", language="ind", turns=[f"Soal {i}"])
            for i in range(n_items)
        ]
    )
    responses = Response.objects.bulk_create(
        [
            Response(prompt=p, model_name=f"model-{m}", turns=[f"Jawaban {m} untuk {p.external_id}"])
            for p in prompts
            for m in range(n_responses)
        ]
    )
    versions = rubric_defaults_ensure()
    criteria = ["relevance", "fluency"]
    project = Project.objects.create(
        name="killed-export",
        kind=Project.Kind.LIKERT,
        dataset=dataset,
        criteria=criteria,
        rubric_versions={c: versions.get(c, 1) for c in criteria},
        overlap=n_annotators,
        seed=7,
        status=Project.Status.CLOSED,
        n_tasks=n_items,
    )
    group = AnnotatorGroup.objects.create(project=project, name="g")
    users = [get_user_model().objects.create(username=f"rater-{a}") for a in range(n_annotators)]
    tasks = Task.objects.bulk_create(
        [
            Task(
                project=project,
                prompt=p,
                response_ids=[r.pk for r in responses[i * n_responses : (i + 1) * n_responses]],
            )
            for i, p in enumerate(prompts)
        ]
    )
    now = timezone.now()
    assignments = Assignment.objects.bulk_create(
        [
            Assignment(
                project=project,
                task=t,
                group=group,
                annotator=u,
                status=Assignment.Status.SUBMITTED,
                permutation=list(range(n_responses)),
                started_at=now,
                submitted_at=now,
            )
            for t in tasks
            for u in users
        ]
    )
    Annotation.objects.bulk_create(
        [
            Annotation(
                assignment=a,
                round=1,
                response_id=rid,
                criterion=c,
                value_int=int(rng.integers(1, 6)),
                rubric_version=1,
            )
            for a in assignments
            for rid in a.task.response_ids
            for c in criteria
        ],
        batch_size=5000,
    )
    return project


def test_an_export_killed_mid_way_runs_again_on_the_next_worker_with_complete_files(
    celery_worker_process, broker, tmp_path
):
    exports_dir = tmp_path / "var" / "exports"
    project = _likert_project(n_items=2500)
    # The agreement step (a 10,000-draw bootstrap) is long enough to catch the worker inside it.
    options = ExportOptions(bootstrap_draws=10_000, test_size=0.1, seed=3)
    record = export_create(project=project, options=options, queue=False)
    expected = export_preview(project=project, options=options)
    worker_env = {"TIMBANG_VAR_DIR": str(tmp_path / "var")}
    first = celery_worker_process(extra_env=worker_env)
    celery_app.send_task("datasets_app.export_run", args=[record.pk], task_id=record.task_id, queue="default")

    def inside_agreement():
        return Export.objects.filter(pk=record.pk, stage="computing agreement").exists()

    wait_for(inside_agreement, timeout=60, interval=0.05, message="the export to reach its agreement step")
    first.kill()
    record.refresh_from_db()
    assert (record.status, record.progress, record.attempts) == ("running", 2, 1)

    started = time.monotonic()
    celery_worker_process(extra_env={**worker_env, **REDELIVER})
    wait_for(
        lambda: _status(Export, record.pk) not in ("queued", "running"),
        timeout=90,
        message="the export to finish on the new worker",
    )
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    assert (record.progress, record.attempts) == (100, 2)
    assert record.counts["pairs"] == expected["pairs"]
    assert record.counts["split_rows"] == expected["split_rows"]
    folder = exports_dir / f"export-{record.pk}"
    assert record.folder_path == str(folder)
    for split, n in expected["split_rows"].items():
        assert pq.read_table(folder / "data" / f"{split}-00000-of-00001.parquet").num_rows == n
    with zipfile.ZipFile(record.zip_path) as archive:
        assert archive.testzip() is None
        files_in_folder = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        assert sorted(archive.namelist()) == files_in_folder
    assert "README.md" in files_in_folder
    print(f"export finished on the next worker in {time.monotonic() - started:.1f} s")


def test_an_import_whose_worker_was_killed_is_requeued_by_the_sweep_once_its_heartbeat_stops(
    celery_worker_process, broker, not_eager, tmp_path, settings
):
    """The broker keeps the killed worker's message for hours (its visibility timeout); the heartbeat
    tells the sweep within seconds that nothing runs the import any more."""
    # The worker and this test share the cache the heartbeat is kept in.
    settings.CACHES = {"default": {"BACKEND": "config.cache.RedisCache", "LOCATION": settings.REDIS_URL}}
    settings.JOB_HEARTBEAT_TIMEOUT_S = 2
    beats = {
        "TIMBANG_TEST_SHARED_CACHE": "1",
        "JOB_HEARTBEAT_INTERVAL_S": "0.5",
        "JOB_HEARTBEAT_TIMEOUT_S": "2",
    }
    n = 20_000  # long enough that the kill lands inside the import, on a fast machine too
    upload = tmp_path / "beats.jsonl"
    with upload.open("w", encoding="utf-8") as out:
        for i in range(n):
            row = {
                "id": f"p{i}",
                "category": "math",
                "language": "ind",
                "prompt": f"Berapa {i} kali dua?",
                "responses": [
                    {"model": "alpha", "text": str(2 * i)},
                    {"model": "beta", "text": f"= {2 * i}"},
                ],
            }
            out.write(json.dumps(row) + "\n")
    record = DatasetImport.objects.create(
        name="heartbeat-import", file_format="jsonl", upload_path=str(upload), task_id="killed-delivery"
    )
    first = celery_worker_process(extra_env=beats)
    celery_app.send_task(
        "datasets_app.dataset_import_run", args=[record.pk], task_id=record.task_id, queue="default"
    )
    wait_for(
        lambda: _status(DatasetImport, record.pk) == "running", timeout=30, message="the import to start"
    )
    record.refresh_from_db()
    wait_for(
        lambda: job_heartbeat_at(kind=IMPORT_JOB, job=record),
        timeout=10,
        interval=0.05,
        message="a heartbeat",
    )
    first.kill()
    killed_at = timezone.now()
    assert _status(DatasetImport, record.pk) == "running"
    assert jobs_requeue_stale(kind=IMPORT_JOB)["sent"] == 0  # heard from a moment ago

    # The import's time limit is hours away; its heartbeat is two seconds old.
    done = wait_for(
        lambda: jobs_requeue_stale(kind=IMPORT_JOB)["sent"], timeout=10, interval=0.5, message="the sweep"
    )
    recovered_after = (timezone.now() - killed_at).total_seconds()
    assert done == 1
    record.refresh_from_db()
    assert record.status == "queued" and record.task_id != "killed-delivery"
    assert killed_at - timedelta(seconds=3) < record.worker_stopped_at <= killed_at

    celery_worker_process(extra_env=beats)
    wait_for(
        lambda: _status(DatasetImport, record.pk) not in ("queued", "running"),
        timeout=60,
        message="the requeued import to finish",
    )
    record.refresh_from_db()
    assert (record.status, record.attempts, record.counts) == (
        "succeeded",
        2,
        {"prompts": n, "responses": 2 * n},
    )
    assert Prompt.objects.filter(dataset__name="heartbeat-import").count() == n
    print(f"the sweep requeued the import {recovered_after:.1f} s after its worker was killed")
