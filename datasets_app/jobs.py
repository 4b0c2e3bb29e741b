"""Background jobs kept as rows (imports, exports, flag recomputations): take, restart, cancel, retry, sweep.

A job row has ``status`` (queued, running, succeeded, failed, cancelled), ``attempts``, ``task_id`` (the
Celery id of the delivery meant to run it), ``cancel_requested``, ``started_at`` and ``finished_at``. Tasks
are acknowledged late and rejected when their worker dies, so a killed worker's task is delivered again
with the same id; these rules make every delivery safe:

- a delivery takes a queued job, or restarts a running one whose ``task_id`` is its own (the earlier
  delivery of the same message died), from a clean start: the kind's clean-up removes what the dead
  attempt left; any other delivery (a duplicate, a message older than a retry) leaves the job alone;
- every take counts an attempt; a job that used up ``JOB_MAX_ATTEMPTS`` fails with a message instead of
  running again, so a job that brings its worker down cannot do so for ever;
- a running attempt beats a heartbeat (:func:`job_heartbeat`, kept in the cache, which every process
  shares and which an import's one long transaction does not hide): one whose heartbeat is older than
  ``JOB_HEARTBEAT_TIMEOUT_S``, or that outlived its task's hard time limit, has no live task (its worker
  was killed, and the broker keeps the message until its visibility timeout): the periodic
  :func:`jobs_requeue_stale` sends it again under a new task id, or fails it, and notes on the row when
  the worker was last heard from (``worker_stopped_at``);
- a cancel ends a queued job at once, and a running one whose worker stopped too; a running one with a
  live task is asked to stop and does at its next progress step (:func:`job_check`, raising
  :class:`JobCancelled`), cleaning up behind it;
- a failed or cancelled job can be retried: it is queued again under a new task id with its results
  cleared.

The kinds (:class:`JobKind`) say what differs: the model, the task, its time limit, how a failure is
recorded and what is removed from disk when a job ends or restarts. The decisions themselves are pure
(``datasets_app.domain.jobs``).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import models, transaction
from django.utils import timezone

from accounts.events import event_emit
from datasets_app.domain import jobs as rules

logger = logging.getLogger(__name__)

QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = (
    rules.QUEUED,
    rules.RUNNING,
    "succeeded",
    "failed",
    "cancelled",
)


class JobCancelled(Exception):
    """Raised at a progress step of a job whose cancel was asked for."""


class JobRefused(Exception):
    """A cancel or retry the job's state does not allow; the message says why."""


@dataclass(frozen=True)
class JobKind:
    """What differs between kinds of job rows."""

    model: type[models.Model]
    noun: str
    # The Celery task's name (sent by name: tasks import the services that use this kind, never the reverse).
    task: str
    # The task's hard time limit: no attempt of the task lives longer.
    time_limit: timedelta
    # Sets the failure message on the row (not saved); returns the fields it set.
    record_failure: Callable[[Any, str], list[str]]
    # Clears the results of an earlier attempt on the row (not saved); returns the fields it set.
    reset: Callable[[Any], list[str]]
    # Removes from disk what the job leaves behind once it ended with ``status`` (or before a restart).
    clean_up: Callable[[Any, str], None]
    queue: str = "default"
    # Whether a worker may run the job (one started by a command in its own process may not).
    on_worker: Callable[[Any], bool] = lambda job: True
    # The event (``accounts.events``) emitted when a job of this kind ends, with its project's id.
    event: str = ""
    event_project: Callable[[Any], int | None] = lambda job: None
    # The key of the job's id in the event's data (default: ``noun``).
    event_key: str = ""


def max_attempts() -> int:
    return int(getattr(settings, "JOB_MAX_ATTEMPTS", 3))


def new_task_id() -> str:
    return uuid.uuid4().hex


# -- heartbeats ------------------------------------------------------------------------------------------

# Besides the heartbeat, the sweep gives an attempt this long past its task's hard time limit.
TIME_LIMIT_MARGIN = timedelta(seconds=60)
# A heartbeat outlives any attempt: one that is missing was lost with the cache, not outgrown.
HEARTBEAT_TTL_SECONDS = 24 * 3600


def heartbeat_timeout() -> timedelta:
    """How long a running attempt may go without a heartbeat before its worker counts as stopped."""
    return timedelta(seconds=float(getattr(settings, "JOB_HEARTBEAT_TIMEOUT_S", 90)))


def heartbeat_interval() -> float:
    """Seconds between two heartbeats of a running attempt."""
    return float(getattr(settings, "JOB_HEARTBEAT_INTERVAL_S", 15))


def heartbeat_touch(*, key: str, now: datetime | None = None) -> None:
    """Record that the attempt beating the heartbeat ``key`` is alive at ``now``."""
    cache.set(key, now or timezone.now(), HEARTBEAT_TTL_SECONDS)


def _beat(key: str, now: datetime | None = None) -> None:
    """Beat a running attempt's heartbeat; a cache that cannot be reached costs a beat, not the work."""
    try:
        heartbeat_touch(key=key, now=now)
    except Exception:  # noqa: BLE001 - the next beat tries again; the sweep waits a timeout for it
        logger.warning("heartbeat %s not recorded", key, exc_info=True)


def heartbeat_at(*, key: str) -> datetime | None:
    """When the heartbeat ``key`` was last beaten; None when it never was, or the cache lost it."""
    return cache.get(key)


@contextmanager
def heartbeating(*, key: str) -> Iterator[None]:
    """Beat the heartbeat ``key`` now and every ``JOB_HEARTBEAT_INTERVAL_S`` while the block runs.

    A thread of its own beats it, so a long step (a Hub download, a parquet write, a model call) between
    two progress steps does not pass for a stopped worker; the thread ends with the block, and with the
    process.
    """
    interval = heartbeat_interval()
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(interval):
            _beat(key)

    _beat(key)
    thread = threading.Thread(target=beat, name=f"heartbeat {key}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def heartbeat_stopped_at(
    *, key: str, started_at: datetime | None, now: datetime, timeout: timedelta, limit: timedelta
) -> datetime | None:
    """When the attempt that began at ``started_at`` and beats ``key`` was last heard from, if its worker
    stopped (``rules.worker_stopped``); None while it may still run.

    An attempt without a heartbeat (never beaten, or lost with the cache) is timed from when a check first
    missed it, so a cache that lost its entries does not pass every running attempt for a stopped one;
    its worker was last heard from when the attempt began.
    """
    if started_at is None:
        return None
    beat = heartbeat_at(key=key)
    if beat is None:
        missed = cache.get_or_set(f"{key}:missed", now, HEARTBEAT_TTL_SECONDS)
        stopped = rules.worker_stopped(
            started_at=started_at, heartbeat_at=missed, now=now, timeout=timeout, limit=limit
        )
        return started_at if stopped else None
    stopped = rules.worker_stopped(
        started_at=started_at, heartbeat_at=beat, now=now, timeout=timeout, limit=limit
    )
    return max(beat, started_at) if stopped else None


def _heartbeat_key(kind: JobKind, job: Any) -> str:
    return f"jobs:heartbeat:{kind.model._meta.label_lower}:{job.pk}:{job.task_id}"


def job_heartbeat_touch(*, kind: JobKind, job: Any, now: datetime | None = None) -> None:
    """Record that the attempt ``job.task_id`` of the job is alive at ``now``."""
    _beat(_heartbeat_key(kind, job), now)
    job._heartbeat_sent = time.monotonic()


def job_heartbeat_at(*, kind: JobKind, job: Any) -> datetime | None:
    """When the attempt ``job.task_id`` of the job last beat its heartbeat; None when it has none."""
    return heartbeat_at(key=_heartbeat_key(kind, job))


@contextmanager
def job_heartbeat(*, kind: JobKind, job: Any) -> Iterator[None]:
    """Beat the taken job's heartbeat while the block runs (:func:`heartbeating`)."""
    with heartbeating(key=_heartbeat_key(kind, job)):
        job._heartbeat_sent = time.monotonic()
        yield


def _worker_stopped_at(
    kind: JobKind, job: Any, *, now: datetime, timeout: timedelta, margin: timedelta = TIME_LIMIT_MARGIN
) -> datetime | None:
    """When the worker running the job was last heard from, if it stopped; None while it may still run."""
    return heartbeat_stopped_at(
        key=_heartbeat_key(kind, job),
        started_at=job.started_at,
        now=now,
        timeout=timeout,
        limit=kind.time_limit + margin,
    )


_tasks_discovered = False


def task_named(name: str) -> Any:
    """The Celery task registered as ``name``. Services queue work by task name and never import a tasks
    module (tasks import services); the first lookup in a process has Celery's autodiscovery import every
    app's tasks module, which is the only place they are imported from."""
    global _tasks_discovered
    app = current_app
    if name not in app.tasks and not _tasks_discovered:
        app.loader.import_default_modules()
        _tasks_discovered = True
    return app.tasks[name]


def task_send(name: str, *, args: list[Any], queue: str = "default", task_id: str | None = None) -> None:
    """Send the task ``name`` to ``queue`` now. A process that only sends (a web worker, a command) sends by
    name and never imports the tasks modules: their first import, Celery's autodiscovery of every app's
    tasks with what they import, took about a second on the first send of each process. Eager mode (tests,
    the demo without a broker) runs the task here, so there the task itself is looked up."""
    app = current_app
    if app.conf.task_always_eager:
        task_named(name).apply_async(args=args, task_id=task_id, queue=queue)
    else:
        app.send_task(name, args=args, task_id=task_id, queue=queue)


def task_send_on_commit(
    name: str, *, args: list[Any], queue: str = "default", task_id: str | None = None
) -> None:
    """Send the task ``name`` once the current transaction commits (at once outside a transaction)."""
    transaction.on_commit(lambda: task_send(name, args=args, task_id=task_id, queue=queue))


def job_send(*, kind: JobKind, job_id: int, task_id: str) -> None:
    """Queue the job's task under ``task_id`` once the current transaction commits."""
    task_send_on_commit(kind.task, args=[job_id], task_id=task_id, queue=kind.queue)


@dataclass(frozen=True)
class Taken:
    job: Any
    restarted: bool


def job_take(*, kind: JobKind, job_id: int, task_id: str | None) -> Taken | None:
    """Take the job for the delivery ``task_id``; None when this delivery has nothing to run.

    A running job restarted by a redelivery of its own task is cleaned first, so the caller always runs it
    from a clean start. A job out of attempts, or whose cancel was asked while it ran, is ended here.
    """
    task_id = task_id or new_task_id()
    now = timezone.now()
    with transaction.atomic():
        job = kind.model.objects.select_for_update().filter(pk=job_id).first()
        if job is None:
            return None
        action = rules.on_delivery(
            status=job.status,
            own_task=bool(job.task_id) and job.task_id == task_id,
            cancel_requested=job.cancel_requested,
            attempts=job.attempts,
            max_attempts=max_attempts(),
        )
        if action is rules.Delivery.IGNORE:
            return None
        if action is rules.Delivery.CANCEL:
            _end(kind, job, CANCELLED, now=now)
            return None
        if action is rules.Delivery.GIVE_UP:
            message = (
                f"the worker running this {kind.noun} stopped {job.attempts} time(s) before it finished; "
                "gave up (retry it to run it again)"
            )
            _end(kind, job, FAILED, now=now, message=message)
            return None
        restarted = action is rules.Delivery.RESTART
        # An earlier attempt (redelivered, or sent again by the sweep) may have left partial output.
        fresh_start = restarted or job.attempts > 0
        job.status = RUNNING
        job.attempts += 1
        job.task_id = task_id
        job.started_at = now
        job.finished_at = None
        fields = ["status", "attempts", "task_id", "started_at", "finished_at"]
        if fresh_start:
            fields += kind.reset(job)
        job.save(update_fields=fields)
    job_heartbeat_touch(kind=kind, job=job, now=now)
    if fresh_start:
        logger.warning("%s %s starts again (attempt %d)", kind.noun, job.pk, job.attempts)
        kind.clean_up(job, RUNNING)
    return Taken(job=job, restarted=restarted)


def job_check(*, kind: JobKind, job: Any, **updates: Any) -> None:
    """A progress step: store ``updates`` and raise :class:`JobCancelled` when the job should stop.

    It stops when its cancel was asked for, or when it is no longer this attempt's (the sweep gave it to
    another delivery): one query either way. Without ``updates`` it only reads, so a job running inside
    one long transaction (an import) takes no lock on its row and a cancel never waits for it. It beats
    the job's heartbeat too (at most once a heartbeat interval).
    """
    if time.monotonic() - getattr(job, "_heartbeat_sent", 0.0) >= heartbeat_interval():
        job_heartbeat_touch(kind=kind, job=job)
    mine = kind.model.objects.filter(pk=job.pk, status=RUNNING, task_id=job.task_id, cancel_requested=False)
    still = mine.update(**updates) if updates else mine.exists()
    if not still:
        raise JobCancelled(f"{kind.noun} {job.pk} was cancelled")


def job_finish(*, kind: JobKind, job: Any, status: str, message: str = "", fields: list[str] = ()) -> Any:
    """End a taken job with ``status`` (saving ``fields`` set on it too) and clean up behind it.

    Only while the job is still this attempt's: one that was handed to another delivery meanwhile is
    left to it, files included.
    """
    job.status = status
    job.finished_at = timezone.now()
    job.cancel_requested = False
    names = {"status", "finished_at", "cancel_requested", *fields}
    if message:
        names.update(kind.record_failure(job, message))
    mine = kind.model.objects.filter(pk=job.pk, status=RUNNING, task_id=job.task_id)
    if not mine.update(**{name: getattr(job, name) for name in sorted(names)}):
        logger.warning(
            "%s %s was handed to another delivery; this attempt's end is not recorded", kind.noun, job.pk
        )
        job.refresh_from_db()
        return job
    kind.clean_up(job, status)
    if kind.event:
        project_id = kind.event_project(job)
        data = {kind.event_key or kind.noun: job.pk, "status": status}
        event_emit(name=kind.event, project_id=project_id, data=data | {"project": project_id})
    return job


def _end(
    kind: JobKind, job: Any, status: str, *, now: datetime, message: str = "", fields: list[str] = ()
) -> None:
    job.status = status
    job.finished_at = now
    job.cancel_requested = False
    fields = ["status", "finished_at", "cancel_requested", *fields]
    if message:
        fields += kind.record_failure(job, message)
    job.save(update_fields=fields)
    transaction.on_commit(lambda: kind.clean_up(job, status))


def job_cancel(*, kind: JobKind, job_id: int, now: datetime | None = None) -> Any:
    """Cancel a queued job at once, and a running one whose worker stopped (no task would act on the
    request); ask a running one with a live task to stop at its next progress step."""
    now = now or timezone.now()
    with transaction.atomic():
        job = kind.model.objects.select_for_update().get(pk=job_id)
        if job.status == QUEUED:
            _end(kind, job, CANCELLED, now=now)
        elif job.status == RUNNING:
            stopped_at = _worker_stopped_at(kind, job, now=now, timeout=heartbeat_timeout())
            if stopped_at is not None:
                job.worker_stopped_at = stopped_at
                _end(kind, job, CANCELLED, now=now, fields=["worker_stopped_at"])
            elif not job.cancel_requested:
                job.cancel_requested = True
                job.save(update_fields=["cancel_requested"])
        else:
            raise JobRefused(
                f"this {kind.noun} is {job.status}: only a queued or running one can be cancelled"
            )
    return job


def job_retry(*, kind: JobKind, job_id: int) -> Any:
    """Queue a failed or cancelled job again, its earlier results cleared."""
    with transaction.atomic():
        job = kind.model.objects.select_for_update().get(pk=job_id)
        if job.status not in (FAILED, CANCELLED):
            raise JobRefused(
                f"this {kind.noun} is {job.status}: only a failed or cancelled one can be retried"
            )
        job.status = QUEUED
        job.attempts = 0
        job.cancel_requested = False
        job.task_id = new_task_id()
        job.started_at = None
        job.finished_at = None
        job.worker_stopped_at = None
        fields = [
            "status",
            "attempts",
            "cancel_requested",
            "task_id",
            "started_at",
            "finished_at",
            "worker_stopped_at",
        ]
        job.save(update_fields=fields + kind.reset(job))
        job_send(kind=kind, job_id=job.pk, task_id=job.task_id)
    kind.clean_up(job, QUEUED)
    return job


def jobs_requeue_stale(
    *,
    kind: JobKind,
    now: datetime | None = None,
    margin: timedelta = TIME_LIMIT_MARGIN,
    timeout: timedelta | None = None,
) -> dict:
    """Send again (or fail, or finish cancelling) the running jobs whose worker stopped: their heartbeat
    is older than ``timeout`` (``JOB_HEARTBEAT_TIMEOUT_S``), or their attempt outlived the task's hard time
    limit (plus ``margin``). No task runs them any more. Returns how many of each."""
    now = now or timezone.now()
    timeout = timeout or heartbeat_timeout()
    done = {"sent": 0, "failed": 0, "cancelled": 0}
    running = kind.model.objects.filter(status=RUNNING).only("pk", "task_id", "started_at")
    # Read without a lock first: a live job is left alone without waiting for its row.
    stopped = [
        job.pk for job in running if _worker_stopped_at(kind, job, now=now, timeout=timeout, margin=margin)
    ]
    for job_id in stopped:
        with transaction.atomic():
            job = kind.model.objects.select_for_update().filter(pk=job_id, status=RUNNING).first()
            stopped_at = job and _worker_stopped_at(kind, job, now=now, timeout=timeout, margin=margin)
            if not stopped_at:
                continue
            job.worker_stopped_at = stopped_at
            heard = f"{timezone.localtime(stopped_at):%Y-%m-%d %H:%M:%S %Z}"
            action = rules.on_stale(
                cancel_requested=job.cancel_requested, attempts=job.attempts, max_attempts=max_attempts()
            )
            if action is rules.Stale.SEND_AGAIN and not kind.on_worker(job):
                message = (
                    f"the process running this {kind.noun} stopped without finishing (last heard from "
                    f"{heard}); run it again"
                )
                _end(kind, job, FAILED, now=now, message=message, fields=["worker_stopped_at"])
                done["failed"] += 1
            elif action is rules.Stale.CANCEL:
                _end(kind, job, CANCELLED, now=now, fields=["worker_stopped_at"])
                done["cancelled"] += 1
            elif action is rules.Stale.GIVE_UP:
                message = (
                    f"the worker running this {kind.noun} stopped without finishing "
                    f"(attempt {job.attempts} of {max_attempts()}, last heard from {heard}); "
                    "gave up (retry it to run it again)"
                )
                _end(kind, job, FAILED, now=now, message=message, fields=["worker_stopped_at"])
                done["failed"] += 1
            else:
                job.status = QUEUED
                job.task_id = new_task_id()
                job.save(update_fields=["status", "task_id", "worker_stopped_at"])
                job_send(kind=kind, job_id=job.pk, task_id=job.task_id)
                done["sent"] += 1
    if any(done.values()):
        logger.warning("%s jobs whose worker stopped: %s", kind.noun, done)
    return done


@dataclass(frozen=True)
class Recovery:
    """What became of a job whose worker stopped under it, for its page."""

    # requeued (it ran again, or waits to), or failed / cancelled when the stopped worker's attempt ended it.
    state: str
    stopped_at: datetime
    attempt: int
    max_attempts: int


def job_recovery(job: Any) -> Recovery | None:
    """The job's recovery after its worker stopped; None when no stopped worker was found under it."""
    if job.worker_stopped_at is None:
        return None
    # The attempt found stopped began before its worker was last heard from; a later one began after.
    ended_by_stop = job.status in (FAILED, CANCELLED) and (
        job.started_at is None or job.started_at <= job.worker_stopped_at
    )
    return Recovery(
        state=job.status if ended_by_stop else "requeued",
        stopped_at=job.worker_stopped_at,
        # A queued job waits for the attempt after its last one.
        attempt=job.attempts + 1 if job.status == QUEUED else job.attempts,
        max_attempts=max_attempts(),
    )
