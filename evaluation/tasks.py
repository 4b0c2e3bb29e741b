"""Celery tasks of evaluation: a chunk id in, re-fetch, return early unless there is work, one service.

Chunks are sent with ``apply_async(queue=endpoint.queue)`` (``default`` or ``gpu.<slug>``). They are
acknowledged late and rejected when their worker dies, so a killed worker's chunk is delivered again; the
chunk's status makes that second delivery a no-op once the first one committed. Database hiccups are retried
with backoff; model-server errors are retried inside the backend and end as failed items, not failed tasks.
"""

from celery import shared_task
from django.db import InterfaceError, OperationalError

# The agreement-report task lives beside the dashboards; importing it here registers it with workers.
from evaluation import analytics_tasks  # noqa: F401
from evaluation.models import RunChunk
from evaluation.services import benchmark_chunk_process, generation_chunk_process, judge_chunk_process
from evaluation.services.runs import run_for_chunk

_COMMON = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": True,
    "retry_backoff_max": 120,
    "retry_jitter": True,
    "max_retries": 5,
    "soft_time_limit": 25 * 60,
    "time_limit": 26 * 60,
}


def _load(chunk_id: int):
    chunk = RunChunk.objects.select_related("endpoint").filter(pk=chunk_id).first()
    if chunk is None or chunk.status != RunChunk.Status.PENDING:
        return None, None
    run = run_for_chunk(chunk)
    if run is None or not run.is_active:
        return None, None
    return chunk, run


@shared_task(name="evaluation.generation_chunk", **_COMMON)
def generation_chunk(chunk_id: int) -> bool:
    chunk, run = _load(chunk_id)
    if chunk is None:
        return False
    return generation_chunk_process(chunk=chunk, run=run)


@shared_task(name="evaluation.judge_chunk", **_COMMON)
def judge_chunk(chunk_id: int) -> bool:
    chunk, run = _load(chunk_id)
    if chunk is None:
        return False
    return judge_chunk_process(chunk=chunk, run=run)


@shared_task(name="evaluation.benchmark_chunk", **_COMMON)
def benchmark_chunk(chunk_id: int) -> bool:
    chunk, run = _load(chunk_id)
    if chunk is None:
        return False
    return benchmark_chunk_process(chunk=chunk, run=run)


CHUNK_TASKS = {
    RunChunk.RunKind.GENERATION: generation_chunk,
    RunChunk.RunKind.JUDGE: judge_chunk,
    RunChunk.RunKind.BENCHMARK: benchmark_chunk,
}
