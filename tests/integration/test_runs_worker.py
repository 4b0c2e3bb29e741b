"""Runs on a real Celery worker process through Redis, including a worker killed in the middle of a run."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from config.celery import app as celery_app
from datasets_app.models import Response
from evaluation.models import GenerationRun, JudgeRun, Judgment, PairVerdict, RunChunk
from evaluation.services import generation_run_start, judge_run_start
from tests.evaluation.inference.openai_stub_server import Reply, StubOpenAIServer, completion_body
from tests.evaluation.services.builders import (
    fair_judge,
    make_endpoint,
    make_pair_dataset,
    make_prompt_dataset,
)
from tests.integration.conftest import wait_for

pytestmark = pytest.mark.integration


@pytest.fixture
def server():
    stub = StubOpenAIServer().start()
    yield stub
    stub.stop()


@pytest.fixture
def broker():
    """Send tasks to Redis from this process (test settings run them eagerly otherwise), on empty queues."""
    assert celery_app.conf.broker_url.startswith("redis://")
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    with celery_app.connection_for_write() as connection:
        for queue in ("default", "gpu.stub"):
            connection.default_channel.queue_purge(queue)
    yield
    celery_app.conf.task_always_eager = eager


def _finished(model, pk):
    def check():
        run = model.objects.get(pk=pk)
        return run if run.status in ("succeeded", "failed", "cancelled") else None

    return check


def test_generation_and_judge_runs_complete_on_a_worker(celery_worker_process, broker, server):
    server.responder = lambda body: (
        fair_judge(body)
        if "[Response 1]" in body["messages"][-1]["content"]
        else Reply(body=completion_body("jawaban"))
    )
    celery_worker_process(queues="default,gpu.stub", concurrency=2)
    dataset = make_prompt_dataset(n_prompts=5)
    gpu_model = make_endpoint(server, "stub", queue="gpu.stub")
    cpu_model = make_endpoint(server, "other")

    run = generation_run_start(dataset=dataset, endpoints=[gpu_model, cpu_model], options={"chunk_size": 2})
    run = wait_for(_finished(GenerationRun, run.pk), timeout=60, message="the generation run")
    assert (run.status, run.n_done, run.n_failed, run.n_total) == ("succeeded", 10, 0, 10)
    assert Response.objects.filter(generation_run=run).count() == 10

    pairs = make_pair_dataset(n_prompts=3, name="pairs-on-worker")
    judge = judge_run_start(
        judge_kind="pairwise", endpoint=gpu_model, dataset=pairs, options={"chunk_size": 2}
    )
    judge = wait_for(_finished(JudgeRun, judge.pk), timeout=60, message="the judge run")
    assert (judge.status, judge.n_done) == ("succeeded", 3)
    assert Judgment.objects.filter(judge_run=judge).count() == 6
    assert set(PairVerdict.objects.filter(judge_run=judge).values_list("verdict", "consistency")) == {
        ("A", "consistent")
    }


@pytest.mark.parametrize(("pool", "concurrency"), [("prefork", 1), ("threads", 3)])
def test_a_worker_killed_mid_run_loses_nothing_and_duplicates_nothing(
    celery_worker_process, broker, server, pool, concurrency
):
    server.delay_s = 0.4  # every request takes 0.4 s, so the worker is almost always inside a chunk
    dataset = make_prompt_dataset(n_prompts=40, two_turn_first=False)
    endpoint = make_endpoint(server, "stub", queue="gpu.stub")
    first = celery_worker_process(queues="gpu.stub", concurrency=concurrency, pool=pool)

    run = generation_run_start(dataset=dataset, endpoints=[endpoint], options={"chunk_size": 4})

    def some_done_and_busy():
        run.refresh_from_db()
        return run.n_done >= 8 and server.in_flight > 0

    wait_for(some_done_and_busy, timeout=60, message="two chunks done and a third in flight")
    first.kill()
    run.refresh_from_db()
    assert run.status == "running" and run.n_done < 40

    # A short visibility timeout makes Redis hand the killed worker's unacknowledged chunk out again.
    celery_worker_process(
        queues="gpu.stub", concurrency=concurrency, pool=pool, extra_env={"CELERY_VISIBILITY_TIMEOUT": "2"}
    )
    try:
        run = wait_for(
            _finished(GenerationRun, run.pk), timeout=180, message="the run to finish after the kill"
        )
    except AssertionError as exc:  # say where the run stands, so a failure on a busy machine can be read
        chunks = RunChunk.objects.filter(run_kind="generation", run_id=run.pk).order_by("index")
        states = [(c.index, c.status, c.attempts, c.started_at, c.queued_at) for c in chunks]
        run.refresh_from_db()
        raise AssertionError(f"{exc}; run {run.status} {run.n_done}/{run.n_total}; chunks {states}") from exc

    assert (run.status, run.n_done, run.n_failed, run.n_total) == ("succeeded", 40, 0, 40)
    per_prompt = Counter(Response.objects.filter(generation_run=run).values_list("prompt_id", flat=True))
    assert len(per_prompt) == 40 and set(per_prompt.values()) == {1}
    chunks = RunChunk.objects.filter(run_kind="generation", run_id=run.pk)
    assert chunks.filter(status="done").count() == 10
    # The chunk that was in flight when the worker died was delivered again.
    assert max(chunks.values_list("attempts", flat=True)) >= 2
    assert json.dumps(run.config)  # config is stored as plain JSON


def test_a_threads_worker_runs_several_chunks_at_once_within_one_bound(celery_worker_process, broker, server):
    """Chunks on threads of one process share the endpoint's backend: while one chunk commits, the others
    keep the model server at ``max_concurrency`` requests, and never above."""
    server.delay_s = 0.2
    dataset = make_prompt_dataset(n_prompts=24, two_turn_first=False)
    endpoint = make_endpoint(server, "stub", queue="gpu.stub", max_concurrency=4)
    celery_worker_process(queues="gpu.stub", concurrency=4, pool="threads")

    run = generation_run_start(dataset=dataset, endpoints=[endpoint], options={"chunk_size": 2})
    run = wait_for(_finished(GenerationRun, run.pk), timeout=60, message="the generation run")

    assert (run.status, run.n_done, run.n_failed, run.n_total) == ("succeeded", 24, 0, 24)
    per_prompt = Counter(Response.objects.filter(generation_run=run).values_list("prompt_id", flat=True))
    assert len(per_prompt) == 24 and set(per_prompt.values()) == {1}
    # Chunks of 2 items: 4 in flight means at least two chunks were in flight at once.
    assert server.max_in_flight == 4
