"""Celery tasks of evaluation: a chunk id in, re-fetch, return early unless there is work, one service.

Chunks are sent with ``apply_async(queue=endpoint.queue)`` (``default`` or ``gpu.<slug>``). They are
acknowledged late and rejected when their worker dies, so a killed worker's chunk is delivered again; the
chunk's status makes that second delivery a no-op once the first one committed. Database hiccups are retried
with backoff; model-server errors are retried inside the backend and end as failed items, not failed tasks.
A periodic task sends again the chunks whose tasks the broker lost (a Redis restarted without persistence).
"""

from datetime import timedelta

from celery import current_app, shared_task, signals
from django.conf import settings
from django.db import InterfaceError, OperationalError
from kombu.exceptions import ChannelError

from annotation.models import Project
from evaluation.models import ModelEndpoint, RunChunk
from evaluation.selectors import model_queues
from evaluation.services import benchmark_chunk_process, generation_chunk_process, judge_chunk_process
from evaluation.services.runs import (
    chunks_requeue_lost,
    run_for_chunk,
    run_settle_after_redelivery,
    runs_finish_settled,
)
from evaluation.services.span_prefill import SPAN_PREFILL_TASK, span_prefill_run
from evaluation.services.workers import QueueReporter

_COMMON = {
    "ignore_result": True,
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
    if chunk is None:
        return None, None
    if chunk.status != RunChunk.Status.PENDING:
        run_settle_after_redelivery(chunk=chunk)
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


def broker_queue_size(queue: str) -> int | None:
    """Tasks waiting in ``queue`` on the broker; 0 for a queue the broker does not know, None when it cannot
    be asked."""
    try:
        with current_app.connection_for_read() as connection:
            connection.ensure_connection(max_retries=2, timeout=5)
            return connection.default_channel.queue_declare(queue=queue, passive=True).message_count
    except ChannelError:
        return 0  # Redis drops a list once it is empty: no such queue means nothing waits in it
    except Exception:  # noqa: BLE001 - an unreachable broker means "unknown": send nothing
        return None


@shared_task(name=SPAN_PREFILL_TASK, **_COMMON)
def span_prefill(project_id: int, endpoint_id: int, lang: str = "en") -> bool:
    """Pre-fill the error spans of an MQM or ESA project with a model (safe to run again)."""
    project = Project.objects.filter(pk=project_id).first()
    endpoint = ModelEndpoint.objects.filter(pk=endpoint_id).first()
    if project is None or endpoint is None or project.status == Project.Status.CLOSED:
        return False
    span_prefill_run(project=project, endpoint=endpoint, lang=lang)
    return True


@shared_task(name="evaluation.chunks_requeue_lost", ignore_result=True, soft_time_limit=120, time_limit=180)
def chunks_requeue_lost_task() -> int:
    """Periodic (beat): finish the runs whose chunks are all done, and send again the pending chunks of
    active runs whose tasks the broker lost."""
    runs_finish_settled()
    return chunks_requeue_lost(
        queue_size=broker_queue_size,
        # No attempt of a chunk task outlives its hard time limit.
        running_limit=timedelta(seconds=_COMMON["time_limit"]),
        lost_after=timedelta(seconds=settings.RUN_CHUNK_LOST_AFTER_S),
    )


_reporter: QueueReporter | None = None


@signals.worker_ready.connect
def _report_queues(sender, **_kwargs) -> None:
    """Once the worker consumes, report its queues (and follow new model queues with MODEL_QUEUES_FOLLOW)."""
    global _reporter
    consumer = sender

    def consuming() -> list[str]:
        task_consumer = consumer.task_consumer
        return [queue.name for queue in task_consumer.queues] if task_consumer else []

    def add(queue: str) -> None:
        consumer.call_soon(consumer.add_task_queue, queue)

    def wanted() -> list[str]:
        return model_queues(configured=settings.MODEL_QUEUES)

    _reporter = QueueReporter(
        hostname=consumer.hostname,
        consuming=consuming,
        add=add,
        wanted=wanted if settings.MODEL_QUEUES_FOLLOW else None,
        interval_s=settings.WORKER_REPORT_INTERVAL_S,
    )
    _reporter.start()


@signals.worker_ready.connect
def _warm_model_clients(sender, **_kwargs) -> None:
    """A worker that takes model chunks (a ``gpu.<name>`` queue, or ``default``, where an endpoint may send
    them) loads the HTTP client of the model backends and its certificate checks before it takes work: a
    run's first chunk on a new worker then waits for the model only, not for about 0.35 s of that."""
    task_consumer = sender.task_consumer
    queues = [queue.name for queue in task_consumer.queues] if task_consumer else []
    if any(name == "default" or name.startswith("gpu.") for name in queues):
        from evaluation.inference.openai_backend import tls_context

        tls_context()


@signals.worker_shutdown.connect
def _forget_queues(**_kwargs) -> None:
    if _reporter is not None:
        _reporter.stop()
