"""What every run kind shares: planning into chunks, queueing, committing a chunk, finishing, cancelling,
and sending again the chunks a broker lost.

A chunk is processed in two steps. First the model calls, outside any transaction (they take seconds to
minutes). Then one transaction locks the chunk row and, only if the chunk is still pending, inserts its
result rows (ignoring rows whose unique key already exists), marks it done and adds its counts to the run
with ``F()`` expressions; the run is finished by a guarded ``UPDATE`` once ``done + failed == total``. A
chunk delivered twice (a worker killed after the commit but before acknowledging the message, or two
workers racing after a visibility timeout, or a chunk sent again by ``chunks_requeue_lost`` after the broker
dropped its task) therefore writes and counts nothing the second time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.core.cache import cache
from django.db import models, transaction
from django.db.models import Case, Exists, F, OuterRef, Q, Subquery, Sum, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.domain.echo import clipped
from accounts.events import RUN_FINISHED, event_emit
from accounts.refusals import Refused
from datasets_app.jobs import heartbeat_stopped_at, heartbeat_timeout, heartbeating, task_send
from evaluation.domain.presets import PRESETS, presets_of
from evaluation.inference.base import BackendConfigError
from evaluation.models import (
    ACTIVE_STATUSES,
    BenchmarkRun,
    GenerationRun,
    JudgeRun,
    ModelEndpoint,
    RunChunk,
    RunStatus,
)

logger = logging.getLogger(__name__)

DEFAULT_CHUNK_SIZE = 16
MAX_CHUNK_ERRORS = 20
# A chunk sent this long ago that has not started while its queue is empty was dropped by the broker.
CHUNK_LOST_AFTER = timedelta(minutes=10)

# The chunk task of each run kind, by name (the tasks module imports this one, never the reverse).
CHUNK_TASK_NAMES = {
    RunChunk.RunKind.GENERATION: "evaluation.generation_chunk",
    RunChunk.RunKind.JUDGE: "evaluation.judge_chunk",
    RunChunk.RunKind.BENCHMARK: "evaluation.benchmark_chunk",
}

RUN_MODELS: dict[str, type[models.Model]] = {
    RunChunk.RunKind.GENERATION: GenerationRun,
    RunChunk.RunKind.JUDGE: JudgeRun,
    RunChunk.RunKind.BENCHMARK: BenchmarkRun,
}


class RunConfigError(Refused, ValueError):
    """A run cannot start as configured (unknown option, no items source, wrong endpoint kind); a message
    may hold ``%(name)s`` placeholders with their values as keywords (``accounts.refusals.Refused``)."""


@dataclass
class ItemOutcome:
    """What a chunk produced for one item: unsaved rows to insert, or an error (the item failed)."""

    key: str
    rows: list[models.Model] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


ComputeFn = Callable[..., list[ItemOutcome]]
ExistingKeysFn = Callable[[models.Model, list[dict[str, Any]]], set[str]]


def run_kind_of(run: models.Model) -> str:
    return run.kind


def chunked(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def check_chunk_size(value: Any) -> int:
    size = DEFAULT_CHUNK_SIZE if value is None else value
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 1000:
        raise RunConfigError(
            gettext_noop("chunk_size must be an integer in 1..1000, got %(value)s"), value=repr(value)
        )
    return size


def check_preset(value: Any, *, kind: str) -> str:
    """The id of a preset of run kind ``kind``; anything else is refused, naming the presets there are."""
    preset = PRESETS.get(value) if isinstance(value, str) else None
    if preset is None or preset.kind != kind:
        raise RunConfigError(
            gettext_noop("unknown preset %(value)s for a %(kind)s run (presets: %(known)s)"),
            value=clipped(repr(value)),
            kind=kind,
            known=", ".join(p.id for p in presets_of(kind)),
        )
    return preset.id


def chunks_create(
    *,
    run: models.Model,
    endpoint: ModelEndpoint,
    items: Sequence[dict[str, Any]],
    chunk_size: int,
    first_index: int = 0,
) -> list[RunChunk]:
    """Chunk rows for ``items`` of ``run`` served by ``endpoint`` (one queue per chunk)."""
    chunks = [
        RunChunk(run_kind=run.kind, run_id=run.pk, index=first_index + n, endpoint=endpoint, items=list(part))
        for n, part in enumerate(chunked(list(items), chunk_size))
    ]
    return RunChunk.objects.bulk_create(chunks)


def _send_on_commit(chunks: Sequence[RunChunk], *, now: datetime) -> None:
    """Record the send time of ``chunks`` and send their tasks once the transaction commits."""
    RunChunk.objects.filter(pk__in=[c.pk for c in chunks]).update(queued_at=now)
    sends = [(CHUNK_TASK_NAMES[c.run_kind], c.pk, c.endpoint.queue) for c in chunks]

    def send() -> None:
        for name, chunk_id, queue in sends:
            task_send(name, args=[chunk_id], queue=queue)

    transaction.on_commit(send)


def chunks_enqueue(run: models.Model) -> None:
    """Queue every pending chunk of ``run`` on its endpoint's queue, once the transaction commits."""
    pending = list(
        RunChunk.objects.filter(run_kind=run.kind, run_id=run.pk, status=RunChunk.Status.PENDING)
        .select_related("endpoint")
        .only("pk", "run_kind", "endpoint__queue")
    )
    _send_on_commit(pending, now=timezone.now())


def chunk_heartbeat_key(chunk_id: int, attempt: int) -> str:
    """The heartbeat of a chunk's attempt (``datasets_app.jobs.heartbeating``)."""
    return f"jobs:heartbeat:evaluation.runchunk:{chunk_id}:{attempt}"


# A pending chunk whose task began after it was last sent: running, or its worker died under it.
STARTED_SINCE_SENT = Q(started_at__isnull=False) & (
    Q(queued_at__isnull=True) | Q(started_at__gte=F("queued_at"))
)


def _lost(chunk: RunChunk, *, now: datetime, lost_after: timedelta) -> bool:
    """A chunk whose task has not begun since it was sent, sent longer than ``lost_after`` ago."""
    return chunk.queued_at is None or chunk.queued_at < now - lost_after


def chunks_requeue_lost(
    *,
    queue_size: Callable[[str], int | None],
    running_limit: timedelta,
    lost_after: timedelta = CHUNK_LOST_AFTER,
    now: datetime | None = None,
) -> int:
    """Send again the pending chunks of active runs whose task the broker no longer holds, or whose worker
    stopped under them. Returns how many.

    A chunk whose task began counts as lost once its heartbeat is older than ``JOB_HEARTBEAT_TIMEOUT_S``,
    or it began more than ``running_limit`` (the task's hard time limit) ago without committing, whatever
    its queue holds: its worker was killed, and the broker keeps the unacknowledged task for its visibility
    timeout. The chunk notes when its worker was last heard from (``worker_stopped_at``).

    A broker that restarts without persistence (or is flushed, or fails over) drops the queued tasks and
    the unacknowledged ones; their chunks would stay pending and the run would never finish. A chunk not
    begun since it was sent counts as lost when its queue is empty and its task was sent more than
    ``lost_after`` ago. The empty queue is what tells a lost task from one still waiting behind others, so
    a long backlog is never sent twice; ``queue_size`` answers it (``None``: unknown, nothing is sent).
    Should a task be sent twice anyway (one taken from the queue in the moment of the check), the chunk's
    status makes the later delivery a no-op.
    """
    now = now or timezone.now()
    of_active_runs = Q()
    for kind, model in RUN_MODELS.items():
        of_active_runs |= Q(
            run_kind=kind, run_id__in=model.objects.filter(status__in=ACTIVE_STATUSES).values("pk")
        )
    pending = RunChunk.objects.filter(of_active_runs, status=RunChunk.Status.PENDING)
    fields = ("pk", "run_kind", "attempts", "queued_at", "started_at", "endpoint__queue")
    stopped: dict[int, datetime] = {}
    lost: list[RunChunk] = []
    timeout = heartbeat_timeout()
    for chunk in pending.filter(STARTED_SINCE_SENT).select_related("endpoint").only(*fields):
        at = heartbeat_stopped_at(
            key=chunk_heartbeat_key(chunk.pk, chunk.attempts),
            started_at=chunk.started_at,
            now=now,
            timeout=timeout,
            limit=running_limit,
        )
        if at is not None:
            stopped[chunk.pk] = at
            lost.append(chunk)
    waiting = pending.exclude(STARTED_SINCE_SENT)
    queues = sorted(set(waiting.values_list("endpoint__queue", flat=True)))
    empty = [queue for queue in queues if queue_size(queue) == 0]
    if empty:
        lost += [
            chunk
            for chunk in waiting.filter(endpoint__queue__in=empty).select_related("endpoint").only(*fields)
            if _lost(chunk, now=now, lost_after=lost_after)
        ]
    if not lost:
        return 0
    with transaction.atomic():
        # A chunk that was done in the meantime is left out.
        still = set(
            RunChunk.objects.filter(pk__in=[c.pk for c in lost], status=RunChunk.Status.PENDING)
            .select_for_update()
            .values_list("pk", flat=True)
        )
        lost = [chunk for chunk in lost if chunk.pk in still]
        for chunk in lost:
            if chunk.pk in stopped:
                RunChunk.objects.filter(pk=chunk.pk).update(worker_stopped_at=stopped[chunk.pk])
        if lost:
            _send_on_commit(lost, now=now)
    if lost:
        logger.warning(
            "sent %d pending chunk(s) again (%d whose worker stopped) on the queue(s) %s",
            len(lost),
            sum(chunk.pk in stopped for chunk in lost),
            ", ".join(sorted({chunk.endpoint.queue for chunk in lost})),
        )
    return len(lost)


def run_launch(*, run: models.Model, n_total: int) -> None:
    """Record the item count and queue the chunks; a run without items finishes at once."""
    model = type(run)
    if n_total == 0:
        now = timezone.now()
        model.objects.filter(pk=run.pk).update(
            n_total=0, status=RunStatus.SUCCEEDED, started_at=now, finished_at=now
        )
        run.refresh_from_db()
        run_finished_emit(run)
        return
    model.objects.filter(pk=run.pk).update(n_total=n_total)
    run.n_total = n_total
    chunks_enqueue(run)


# How often a running chunk looks for its stop signal, and how long the signal is kept.
CHUNK_STOP_POLL_S = 0.5
CHUNK_STOP_TTL_S = 24 * 3600


def chunk_stop_key(run: models.Model, chunk_id: int) -> str:
    """The stop signal of a chunk. It names the run's kind, id and creation time too, so a signal left in
    the cache by a database since recreated (whose ids start again) never stops another run's chunk."""
    return f"evaluation:chunk-stop:{run.kind}:{run.pk}:{run.created_at.timestamp():.6f}:{chunk_id}"


def chunks_signal_stop(run: models.Model, chunk_ids: Iterable[int]) -> None:
    """Tell the workers running these chunks of ``run`` to send no further request (``chunk_stop_watch``)."""
    keys = {chunk_stop_key(run, pk): 1 for pk in chunk_ids}
    if keys:
        cache.set_many(keys, CHUNK_STOP_TTL_S)


@contextmanager
def chunk_stop_watch(
    run: models.Model, chunk_id: int, *, poll_s: float | None = None
) -> Iterator[threading.Event]:
    """An event set within ``poll_s`` of the chunk's stop signal (its run cancelled, or the chunk replaced
    by a Retry), for the backend to check between requests. A thread of its own reads the shared cache,
    never the database, and ends with the block."""
    poll_s = CHUNK_STOP_POLL_S if poll_s is None else poll_s
    event = threading.Event()
    done = threading.Event()
    key = chunk_stop_key(run, chunk_id)

    def watch() -> None:
        while not done.wait(poll_s):
            try:
                if cache.get(key):
                    event.set()
                    return
            except Exception:  # a cache outage must not end the chunk: it runs on as before stops existed
                logger.warning("cannot read the stop signal of chunk %s", chunk_id, exc_info=True)

    if cache.get(key):
        event.set()
    thread = threading.Thread(target=watch, name=f"stop watch chunk {chunk_id}", daemon=True)
    thread.start()
    try:
        yield event
    finally:
        done.set()
        thread.join(timeout=5)


def run_cancel(*, run: models.Model) -> bool:
    """Stop a queued or running run. Chunks not yet started return early; chunks running send no further
    request once they see the stop signal (within ``CHUNK_STOP_POLL_S``), keep what came back, and leave the
    rest not done. False when the run had already ended."""
    model = type(run)
    updated = model.objects.filter(pk=run.pk, status__in=ACTIVE_STATUSES).update(
        status=RunStatus.CANCELLED, finished_at=timezone.now()
    )
    if updated:
        pending = RunChunk.objects.filter(run_kind=run.kind, run_id=run.pk, status=RunChunk.Status.PENDING)
        chunk_ids = list(pending.values_list("pk", flat=True))
        transaction.on_commit(lambda: chunks_signal_stop(run, chunk_ids))
    run.refresh_from_db()
    return bool(updated)


def run_not_done(*, run: models.Model, existing_keys: ExistingKeysFn) -> int:
    """How many of an ended run's items have no result (failed, cancelled or never reached)."""
    items = [
        item
        for chunk_items in RunChunk.objects.filter(run_kind=run.kind, run_id=run.pk).values_list(
            "items", flat=True
        )
        for item in chunk_items
    ]
    return len(items) - len(existing_keys(run, items))


def run_retry(*, run: models.Model, existing_keys: ExistingKeysFn) -> int:
    """Queue again the items of an ended run that have no result: those that failed, and those a cancel
    left unsent. Returns how many; 0 when every item has its result (nothing is queued).

    The earlier chunks are closed with the counts of the results they have (their failures are sent again,
    so they no longer count) and told to stop, in case one is still finishing a request; the run goes back
    to queued with new chunks for the rest, on the endpoint each item had. A chunk still pending from
    before is closed too, so its task, if delivered later, does nothing."""
    model = type(run)
    now = timezone.now()
    with transaction.atomic():
        locked = model.objects.select_for_update().get(pk=run.pk)
        if locked.status in ACTIVE_STATUSES:
            raise RunConfigError(gettext_noop("This run is still running; cancel it first to retry it."))
        chunks = list(
            RunChunk.objects.select_for_update()
            .filter(run_kind=run.kind, run_id=run.pk)
            .select_related("endpoint")
            .order_by("index")
        )
        have = existing_keys(locked, [item for chunk in chunks for item in chunk.items])
        missing: dict[int, tuple[ModelEndpoint, list[dict[str, Any]]]] = {}
        for chunk in chunks:
            left = [item for item in chunk.items if item["key"] not in have]
            if left:
                missing.setdefault(chunk.endpoint_id, (chunk.endpoint, []))[1].extend(left)
        n_missing = sum(len(items) for _, items in missing.values())
        if not n_missing:
            return 0
        for chunk in chunks:
            n_have = sum(item["key"] in have for item in chunk.items)
            if (chunk.status, chunk.n_done, chunk.n_failed) != (RunChunk.Status.DONE, n_have, 0):
                RunChunk.objects.filter(pk=chunk.pk).update(
                    status=RunChunk.Status.DONE,
                    n_done=n_have,
                    n_failed=0,
                    finished_at=Coalesce(F("finished_at"), Value(now)),
                )
        stale = [chunk.pk for chunk in chunks if chunk.status == RunChunk.Status.PENDING]
        chunk_size = check_chunk_size(locked.config.get("chunk_size"))
        first_index = (chunks[-1].index + 1) if chunks else 0
        for endpoint, items in missing.values():
            created = chunks_create(
                run=locked, endpoint=endpoint, items=items, chunk_size=chunk_size, first_index=first_index
            )
            first_index += len(created)
        model.objects.filter(pk=run.pk).update(
            status=RunStatus.QUEUED,
            error="",
            finished_at=None,
            n_done=len(have),
            n_failed=0,
        )
        run.refresh_from_db()
        chunks_enqueue(run)
        transaction.on_commit(lambda: chunks_signal_stop(locked, stale))
    logger.info("%s: %d item(s) without a result queued again", run, n_missing)
    return n_missing


def run_finished_emit(run: models.Model) -> None:
    """Tell listeners (``accounts.events``) that ``run`` ended, with its status as stored now."""
    project_id = getattr(run, "project_id", None) or getattr(run, "annotation_project_id", None)
    event_emit(
        name=RUN_FINISHED,
        project_id=project_id,
        data={"run": run.pk, "kind": run.kind, "status": run.status, "project": project_id},
    )


def run_fail(*, run: models.Model, error: str) -> None:
    """End an active run as failed (a configuration error that every further chunk would hit too)."""
    failed = (
        type(run)
        .objects.filter(pk=run.pk, status__in=ACTIVE_STATUSES)
        .update(status=RunStatus.FAILED, error=error[:4000], finished_at=timezone.now())
    )
    if failed:
        run_finished_emit(type(run).objects.get(pk=run.pk))


def _mark_running(run: models.Model) -> None:
    if run.status != RunStatus.QUEUED:
        return
    type(run).objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, started_at=timezone.now()
    )


def _chunk_sum(run_kind: str, field_name: str) -> Coalesce:
    """``SUM(field)`` over the chunks of the run row being updated: its progress, from the chunk rows."""
    total = (
        RunChunk.objects.filter(run_kind=run_kind, run_id=OuterRef("pk"))
        .order_by()
        .values("run_id")
        .annotate(total=Sum(field_name))
        .values("total")
    )
    return Coalesce(Subquery(total), 0)


def run_progress_refresh(*, model: type[models.Model], run_id: int) -> None:
    """Copy the run's counts from its chunk rows (one statement; recomputed, never incremented).

    Ended runs are left alone, except cancelled ones (their chunks in flight still commit), so a refresh
    computed from an older snapshot never overwrites the counts a finished run was closed with."""
    kind = model.kind
    model.objects.filter(pk=run_id, status__in=[*ACTIVE_STATUSES, RunStatus.CANCELLED]).update(
        n_done=_chunk_sum(kind, "n_done"), n_failed=_chunk_sum(kind, "n_failed")
    )


class ProgressThrottle:
    """When this process last refreshed a run's counts, so a run's row is written at most every
    ``interval_s`` seconds by this process however many chunks it commits."""

    def __init__(self, interval_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_s
        self._clock = clock
        self._last: dict[tuple[str, int], float] = {}
        self._lock = threading.Lock()

    def due(self, key: tuple[str, int]) -> bool:
        now = self._clock()
        with self._lock:
            if now - self._last.get(key, float("-inf")) < self.interval_s:
                return False
            if len(self._last) > 1000:
                self._last.clear()
            self._last[key] = now
            return True

    def clear(self) -> None:
        with self._lock:
            self._last.clear()


PROGRESS_REFRESH_INTERVAL_S = 1.0
progress_throttle = ProgressThrottle(PROGRESS_REFRESH_INTERVAL_S)


def run_finish_if_complete(*, model: type[models.Model], run_id: int) -> bool:
    """Finish a running run that has no pending chunk left, with counts summed from its chunks.

    Called after a chunk's transaction has committed: of two chunks committing at the same time, the one
    that commits last sees both done, so the run is finished exactly once (the ``UPDATE`` is guarded by
    the status) and never left running. Returns whether this call finished it."""
    kind = model.kind
    pending = RunChunk.objects.filter(run_kind=kind, run_id=OuterRef("pk"), status=RunChunk.Status.PENDING)
    any_done = RunChunk.objects.filter(run_kind=kind, run_id=OuterRef("pk"), n_done__gt=0)
    any_failed = RunChunk.objects.filter(run_kind=kind, run_id=OuterRef("pk"), n_failed__gt=0)
    finished = (
        model.objects.filter(pk=run_id, status=RunStatus.RUNNING)
        .filter(~Exists(pending))
        .update(
            n_done=_chunk_sum(kind, "n_done"),
            n_failed=_chunk_sum(kind, "n_failed"),
            status=Case(
                When(Exists(any_done), then=Value(RunStatus.SUCCEEDED)),
                When(Exists(any_failed), then=Value(RunStatus.FAILED)),
                default=Value(RunStatus.SUCCEEDED),
            ),
            finished_at=timezone.now(),
        )
    )
    if finished:
        run = model.objects.get(pk=run_id)
        if run.n_failed:
            errors = (
                RunChunk.objects.filter(run_kind=run.kind, run_id=run_id)
                .exclude(errors=[])
                .values_list("errors", flat=True)[:1]
            )
            first = next((chunk_errors[0] for chunk_errors in errors if chunk_errors), None)
            message = f"{run.n_failed} of {run.n_total} item(s) failed"
            if first:
                message += f"; first error: {first.get('key')}: {first.get('error')}"
            model.objects.filter(pk=run_id).update(error=message[:4000])
        run_finished_emit(run)
    return bool(finished)


def run_after_chunk(*, model: type[models.Model], run_id: int, force_refresh: bool = False) -> None:
    """After a chunk committed (or a redelivery found it done): finish the run if that was its last
    chunk, else refresh its progress counts when this process has not done so for a while."""
    # The plain probe first: the finishing UPDATE costs more to build and is needed once per run.
    pending = RunChunk.objects.filter(run_kind=model.kind, run_id=run_id, status=RunChunk.Status.PENDING)
    if not pending.exists() and run_finish_if_complete(model=model, run_id=run_id):
        return
    if force_refresh or progress_throttle.due((model.kind, run_id)):
        run_progress_refresh(model=model, run_id=run_id)


def run_settle_after_redelivery(*, chunk: RunChunk) -> None:
    """A chunk task delivered again after its chunk committed: the first delivery may have died between
    the commit and finishing the run, so finish it (or refresh its counts) now."""
    run_after_chunk(model=RUN_MODELS[chunk.run_kind], run_id=chunk.run_id, force_refresh=True)


def runs_finish_settled() -> int:
    """Finish the running runs whose chunks are all done (their last chunk's worker died right after its
    commit and the broker did not deliver the task again). Returns how many were finished."""
    finished = 0
    for model in RUN_MODELS.values():
        pending = RunChunk.objects.filter(
            run_kind=model.kind, run_id=OuterRef("pk"), status=RunChunk.Status.PENDING
        )
        settled = model.objects.filter(status=RunStatus.RUNNING).filter(~Exists(pending))
        for run_id in settled.values_list("pk", flat=True):
            finished += run_finish_if_complete(model=model, run_id=run_id)
    return finished


def chunk_commit(
    *, chunk: RunChunk, run: models.Model, outcomes: Sequence[ItemOutcome], n_already_done: int
) -> bool:
    """Write a chunk's results and its counts, exactly once. False when the chunk had already been done.

    The run's row is not written inside the chunk's transaction: the counts live on the chunk row, and the
    run takes their sum after the commit (``run_after_chunk``), so chunks committing side by side never
    wait on one run row."""
    model = type(run)
    n_done = n_already_done + sum(1 for o in outcomes if o.ok)
    n_failed = sum(1 for o in outcomes if not o.ok)
    errors = [{"key": o.key, "error": o.error} for o in outcomes if not o.ok][:MAX_CHUNK_ERRORS]
    with transaction.atomic():
        locked = (
            RunChunk.objects.select_for_update().filter(pk=chunk.pk).values_list("status", flat=True).first()
        )
        if locked != RunChunk.Status.PENDING:
            return False
        rows_by_model: dict[type[models.Model], list[models.Model]] = {}
        for outcome in outcomes:
            if outcome.ok:
                for row in outcome.rows:
                    rows_by_model.setdefault(type(row), []).append(row)
        for row_model, rows in rows_by_model.items():
            row_model.objects.bulk_create(rows, ignore_conflicts=True)
        RunChunk.objects.filter(pk=chunk.pk).update(
            status=RunChunk.Status.DONE,
            n_done=n_done,
            n_failed=n_failed,
            errors=errors,
            finished_at=timezone.now(),
        )
    run_after_chunk(model=model, run_id=run.pk)
    return True


def chunk_results_write(*, chunk: RunChunk, outcomes: Sequence[ItemOutcome]) -> bool:
    """Write the result rows of items a chunk has finished so far, while the rest are still computing, so
    the run's progress (counted from its result rows) moves item by item. False when the chunk is no
    longer pending (another delivery committed it: its rows are there already).

    Only rows are written, never counts: the chunk's counts are set once, by ``chunk_commit``, which inserts
    the same rows again (ignored as conflicts on their unique keys). A delivery that dies after a partial
    write leaves finished items that the next delivery skips and counts as already done.
    """
    rows_by_model: dict[type[models.Model], list[models.Model]] = {}
    for outcome in outcomes:
        if outcome.ok:
            for row in outcome.rows:
                rows_by_model.setdefault(type(row), []).append(row)
    if not rows_by_model:
        return True
    with transaction.atomic():
        locked = (
            RunChunk.objects.select_for_update().filter(pk=chunk.pk).values_list("status", flat=True).first()
        )
        if locked != RunChunk.Status.PENDING:
            return False
        for row_model, rows in rows_by_model.items():
            # Copies: ``bulk_create`` may set primary keys, and the chunk's commit inserts the rows again.
            row_model.objects.bulk_create([_unsaved_copy(row) for row in rows], ignore_conflicts=True)
    return True


def _unsaved_copy(row: models.Model) -> models.Model:
    copy = type(row)(**{f.attname: getattr(row, f.attname) for f in row._meta.concrete_fields})
    copy.pk = None
    return copy


def chunk_process(
    *,
    chunk: RunChunk,
    run: models.Model,
    existing_keys: ExistingKeysFn,
    compute: ComputeFn,
) -> bool:
    """Run one chunk: skip items that already have a result, compute the rest, commit. Returns whether this
    call wrote the chunk (False: run not active, chunk already done, or the run failed on a config error)."""
    if run.status not in ACTIVE_STATUSES or chunk.status != RunChunk.Status.PENDING:
        return False
    _mark_running(run)
    RunChunk.objects.filter(pk=chunk.pk).update(attempts=F("attempts") + 1, started_at=timezone.now())
    items = list(chunk.items)
    have = existing_keys(run, items)
    todo = [item for item in items if item["key"] not in have]
    try:
        with (
            heartbeating(key=chunk_heartbeat_key(chunk.pk, chunk.attempts + 1)),
            chunk_stop_watch(run, chunk.pk) as stop,
        ):
            outcomes = compute(run=run, items=todo, endpoint=chunk.endpoint, stop=stop) if todo else []
    except (BackendConfigError, NotImplementedError) as exc:
        logger.warning("%s failed on chunk %s: %s", run, chunk.index, exc)
        run_fail(run=run, error=f"{type(exc).__name__}: {exc}")
        return False
    # A stop that arrived while the model was working: what came back is kept (it is correct and paid
    # for); the items never sent have no outcome, so they count neither done nor failed, and Retry sends
    # them.
    return chunk_commit(chunk=chunk, run=run, outcomes=outcomes, n_already_done=len(items) - len(todo))


def run_for_chunk(chunk: RunChunk) -> models.Model | None:
    return RUN_MODELS[chunk.run_kind].objects.filter(pk=chunk.run_id).first()
