"""Redis restart during a run: the run resumes.

A private Redis (never the shared one) is the broker of a real Celery worker and of this process. A
generation run is started against a slow stub model server, Redis is killed with SIGKILL in the middle
of the run and started again on the same port a moment later. The worker reconnects by itself.

- With an append-only file (how docker-compose.yml runs Redis) the queued chunk tasks survive and the
  worker simply carries on.
- Without persistence every queued task is gone; the periodic ``evaluation.chunks_requeue_lost`` task
  (sent here the way beat sends it) finds the pending chunks whose queue is empty and sends them again.

Either way the run ends ``succeeded`` with every item done exactly once.
"""

from __future__ import annotations

import time
from collections import Counter

import pytest
from django.utils import timezone
from kombu import pools as kombu_pools

from config.celery import app as celery_app
from datasets_app.models import Response
from evaluation.models import GenerationRun, RunChunk
from evaluation.services import generation_run_start
from evaluation.tasks import broker_queue_size, chunks_requeue_lost_task
from tests.evaluation.inference.openai_stub_server import StubOpenAIServer
from tests.evaluation.services.builders import make_endpoint, make_prompt_dataset
from tests.integration.conftest import wait_for
from tests.integration.private_servers import PrivateRedis

pytestmark = pytest.mark.integration

N_PROMPTS = 24
CHUNK_SIZE = 2
N_CHUNKS = N_PROMPTS // CHUNK_SIZE
QUEUE = "gpu.stub"


def _reset_connections() -> None:
    """Forget this process's broker and result-store connections: the next use connects to the configured URL.

    kombu keeps producer pools in a process-wide registry keyed by connection: they go too, or a later test
    sending to the same URL would get a pool whose connections were closed here."""
    if celery_app._pool is not None:
        celery_app._pool.force_close_all()
    kombu_pools.reset()
    celery_app._pool = None
    celery_app.amqp._producer_pool = None
    vars(celery_app._local).pop("backend", None)


@pytest.fixture(params=[True, False], ids=["append-only-file", "no-persistence"])
def redis(request):
    """A private Redis as the broker and result backend of this process (a worker gets its URL)."""
    server = PrivateRedis(appendonly=request.param).start()
    keys = ("broker_url", "result_backend", "task_always_eager")
    saved = {key: celery_app.conf[key] for key in keys}
    celery_app.conf.update(broker_url=server.url, result_backend=server.url, task_always_eager=False)
    _reset_connections()
    yield server
    celery_app.conf.update(saved)
    _reset_connections()
    server.close()


@pytest.fixture
def model_server():
    stub = StubOpenAIServer().start()
    stub.delay_s = 0.5  # every request takes half a second, so the worker is almost always inside a chunk
    yield stub
    stub.stop()


def test_a_run_resumes_after_redis_is_killed_and_restarted(celery_worker_process, redis, model_server):
    worker = celery_worker_process(
        queues=f"default,{QUEUE}",
        concurrency=2,
        # A chunk sent 3 s ago that has not started and is no longer queued counts as lost.
        extra_env={"REDIS_URL": redis.url, "RUN_CHUNK_LOST_AFTER_S": "3"},
    )
    dataset = make_prompt_dataset(n_prompts=N_PROMPTS, two_turn_first=False)
    endpoint = make_endpoint(model_server, "stub", queue=QUEUE)
    run = generation_run_start(dataset=dataset, endpoints=[endpoint], options={"chunk_size": CHUNK_SIZE})
    chunks = RunChunk.objects.filter(run_kind="generation", run_id=run.pk)

    def some_done_and_busy() -> bool:
        run.refresh_from_db()
        return run.n_done >= 4 and model_server.in_flight > 0

    wait_for(some_done_and_busy, timeout=60, message="two chunks done and more in flight")
    redis.kill()
    killed_at = timezone.now()
    time.sleep(2)  # the outage: the worker loses its connection and keeps trying
    redis.start()

    pending = chunks.filter(status="pending").count()
    assert pending > 0
    if redis.appendonly:
        # The queued chunk tasks survived the restart; the worker takes them up once it reconnects.
        assert broker_queue_size(QUEUE) > 0
    else:
        # Every queued task is gone: without the sweep below the run would stay "running" for ever.
        assert broker_queue_size(QUEUE) == 0

    last_sweep = 0.0

    def finished() -> bool:
        nonlocal last_sweep
        run.refresh_from_db()
        if run.status != "running":
            return True
        if not redis.appendonly and time.monotonic() - last_sweep > 2:
            chunks_requeue_lost_task.apply_async()  # what beat sends every minute
            last_sweep = time.monotonic()
        return False

    wait_for(finished, timeout=90, interval=0.5, message="the run to finish after the restart")

    assert (run.status, run.n_done, run.n_failed, run.n_total) == ("succeeded", N_PROMPTS, 0, N_PROMPTS)
    per_prompt = Counter(Response.objects.filter(generation_run=run).values_list("prompt_id", flat=True))
    assert len(per_prompt) == N_PROMPTS and set(per_prompt.values()) == {1}
    assert chunks.filter(status="done").count() == N_CHUNKS
    assert sum(chunks.values_list("n_done", flat=True)) == N_PROMPTS
    resent = chunks.filter(queued_at__gt=killed_at).count()
    if redis.appendonly:
        assert resent == 0
    else:
        # The chunks whose tasks Redis lost; one still running at the kill committed by itself.
        assert 0 < resent <= pending
    worker.log.seek(0)
    assert "Connected to redis" in worker.log.read().split("Connection to broker lost", 1)[1]
    assert GenerationRun.objects.get(pk=run.pk).finished_at is not None
