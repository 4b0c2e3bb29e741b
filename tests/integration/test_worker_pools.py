"""The two worker pools of scripts/serve on Redis: an export is not held up by a long judge run.

The workers are started with the options scripts/serve gives them: the default worker on `default` (with
the beat scheduler), the model worker on the queues `manage.py model_queues` prints, one task at a time.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest

from annotation import services as annotation_services
from config.celery import app as celery_app
from evaluation.models import JudgeRun
from evaluation.services import judge_run_start
from exports.models import Export
from exports.services import ExportOptions, export_create
from tests.conftest import REPO_ROOT
from tests.evaluation.inference.openai_stub_server import StubOpenAIServer
from tests.evaluation.services.builders import fair_judge, make_endpoint, make_pair_dataset
from tests.exports.conftest import build_dataset, drain, likert_plan
from tests.integration import conftest as integration
from tests.integration.conftest import wait_for

pytestmark = pytest.mark.integration

# Each judge request takes this long; a chunk of 4 pairs in both orders takes 12 s, the run 36 s.
REPLY_DELAY_S = 1.5
N_PAIRS = 12
CHUNK_SIZE = 4


@pytest.fixture
def slow_judge():
    stub = StubOpenAIServer().start()
    stub.responder = lambda body: dataclasses.replace(fair_judge(body), delay_s=REPLY_DELAY_S)
    yield stub
    stub.stop()


@pytest.fixture
def broker():
    """Tasks sent to Redis from this process, on empty queues."""
    assert celery_app.conf.broker_url.startswith("redis://")
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    with celery_app.connection_for_write() as connection:
        for queue in ("default", "gpu.slow-judge"):
            connection.default_channel.queue_purge(queue)
    yield
    celery_app.conf.task_always_eager = eager


def _model_queues() -> str:
    """What scripts/serve passes to the model worker's -Q: `manage.py model_queues` on the same database."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": integration.test_database_url(),
    }
    env.pop("MODEL_QUEUES", None)
    done = subprocess.run(
        [sys.executable, "manage.py", "model_queues", "--required"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _likert_project(make_user):
    dataset = build_dataset()
    project = annotation_services.project_create(
        dataset=dataset,
        name="export beside a judge run",
        kind="likert",
        groups=["Kelompok A"],
        overlap=2,
        criteria=["relevance", "fluency"],
        best_pick="required",
        seed=7,
    )
    group = project.groups.get()
    users = [make_user("annotator", username=f"pool-rater-{i}") for i in range(2)]
    for user in users:
        annotation_services.project_member_add(project=project, user=user, group=group)
    annotation_services.project_activate(project=project)
    for index, user in enumerate(users):
        assert drain(project, user, likert_plan(index)) == 2
    return project


def test_an_export_finishes_while_a_judge_run_works_on_the_model_worker(
    celery_worker_process, broker, slow_judge, make_user, tmp_path
):
    endpoint = make_endpoint(slow_judge, "slow-judge", queue="gpu.slow-judge", max_concurrency=1)
    make_endpoint(slow_judge, "on-default")  # served by the default worker: not a model queue
    queues = _model_queues()
    assert queues == "gpu.slow-judge"

    var = tmp_path / "var"
    celery_worker_process(
        name="default@%h",
        queues="default",
        concurrency=2,
        beat_schedule=str(tmp_path / "celerybeat-schedule"),
        extra_env={"TIMBANG_VAR_DIR": str(var)},
    )
    celery_worker_process(name="models@%h", queues=queues, concurrency=1, prefetch_multiplier=1)

    project = _likert_project(make_user)
    pairs = make_pair_dataset(n_prompts=N_PAIRS, name="pairs-for-a-slow-judge")
    judge = judge_run_start(
        judge_kind="pairwise", endpoint=endpoint, dataset=pairs, options={"chunk_size": CHUNK_SIZE}
    )
    wait_for(lambda: slow_judge.in_flight > 0, timeout=60, message="the judge run's first request")

    export = export_create(project=project, options=ExportOptions(kind="raw-jsonl"))
    export = wait_for(
        lambda: Export.objects.filter(pk=export.pk, status__in=["succeeded", "failed"]).first(),
        timeout=120,
        message="the export to finish",
    )
    judge.refresh_from_db()
    assert export.status == "succeeded", export.error
    # Workers shared by both queues would all be inside a judge chunk when the export is sent, and take it
    # only once a chunk has committed; the default worker takes it at once, before the first chunk ends.
    assert (judge.status, judge.n_done) == ("running", 0)
    assert (var / "exports").exists()

    judge = wait_for(
        lambda: JudgeRun.objects.filter(pk=judge.pk, status__in=["succeeded", "failed"]).first(),
        timeout=180,
        message="the judge run to finish on the model worker",
    )
    assert (judge.status, judge.n_done, judge.n_total) == ("succeeded", N_PAIRS, N_PAIRS)
    # One model process takes one chunk at a time: never more than one request in flight.
    assert slow_judge.max_in_flight == 1
