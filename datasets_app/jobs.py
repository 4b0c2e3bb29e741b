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
- a running job whose attempt started longer ago than its task's hard time limit has no live task
  (Celery killed it, or its worker died and the broker keeps the message until its visibility timeout):
  the periodic :func:`jobs_requeue_stale` sends it again under a new task id, or fails it;
- a cancel ends a queued job at once; a running one is asked to stop and does at its next progress step
  (:func:`job_check`, raising :class:`JobCancelled`), cleaning up behind it;
- a failed or cancelled job can be retried: it is queued again under a new task id with its results
  cleared.

The kinds (:class:`JobKind`) say what differs: the model, the task, its time limit, how a failure is
recorded and what is removed from disk when a job ends or restarts. The decisions themselves are pure
(``datasets_app.domain.jobs``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone
from django.utils.module_loading import import_string

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
    # Dotted path of the Celery task (resolved on use: tasks import the services that use this kind).
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


def max_attempts() -> int:
    return int(getattr(settings, "JOB_MAX_ATTEMPTS", 3))


def new_task_id() -> str:
    return uuid.uuid4().hex


def job_send(*, kind: JobKind, job_id: int, task_id: str) -> None:
    """Queue the job's task under ``task_id`` once the current transaction commits."""
    task = import_string(kind.task)
    transaction.on_commit(lambda: task.apply_async(args=[job_id], task_id=task_id, queue=kind.queue))


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
    if fresh_start:
        logger.warning("%s %s starts again (attempt %d)", kind.noun, job.pk, job.attempts)
        kind.clean_up(job, RUNNING)
    return Taken(job=job, restarted=restarted)


def job_check(*, kind: JobKind, job: Any, **updates: Any) -> None:
    """A progress step: store ``updates`` and raise :class:`JobCancelled` when the job should stop.

    It stops when its cancel was asked for, or when it is no longer this attempt's (the sweep gave it to
    another delivery): one query either way. Without ``updates`` it only reads, so a job running inside
    one long transaction (an import) takes no lock on its row and a cancel never waits for it.
    """
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
    return job


def _end(kind: JobKind, job: Any, status: str, *, now: datetime, message: str = "") -> None:
    job.status = status
    job.finished_at = now
    job.cancel_requested = False
    fields = ["status", "finished_at", "cancel_requested"]
    if message:
        fields += kind.record_failure(job, message)
    job.save(update_fields=fields)
    transaction.on_commit(lambda: kind.clean_up(job, status))


def job_cancel(*, kind: JobKind, job_id: int) -> Any:
    """Cancel a queued job at once, or ask a running one to stop at its next progress step."""
    with transaction.atomic():
        job = kind.model.objects.select_for_update().get(pk=job_id)
        if job.status == QUEUED:
            _end(kind, job, CANCELLED, now=timezone.now())
        elif job.status == RUNNING:
            if not job.cancel_requested:
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
        fields = ["status", "attempts", "cancel_requested", "task_id", "started_at", "finished_at"]
        job.save(update_fields=fields + kind.reset(job))
        job_send(kind=kind, job_id=job.pk, task_id=job.task_id)
    kind.clean_up(job, QUEUED)
    return job


def jobs_requeue_stale(
    *, kind: JobKind, now: datetime | None = None, margin: timedelta = timedelta(seconds=60)
) -> dict:
    """Send again (or fail, or finish cancelling) the running jobs whose attempt outlived the task's hard
    time limit: no task runs them any more. Returns how many of each."""
    now = now or timezone.now()
    limit = kind.time_limit + margin
    done = {"sent": 0, "failed": 0, "cancelled": 0}
    stale = kind.model.objects.filter(status=RUNNING, started_at__lt=now - limit).values_list("pk", flat=True)
    for job_id in list(stale):
        with transaction.atomic():
            job = kind.model.objects.select_for_update().filter(pk=job_id, status=RUNNING).first()
            if (
                job is None
                or job.started_at is None
                or not rules.is_stale(started_at=job.started_at, now=now, limit=limit)
            ):
                continue
            action = rules.on_stale(
                cancel_requested=job.cancel_requested, attempts=job.attempts, max_attempts=max_attempts()
            )
            if action is rules.Stale.SEND_AGAIN and not kind.on_worker(job):
                message = (
                    f"the process running this {kind.noun} stopped without finishing (last started "
                    f"{timezone.localtime(job.started_at):%Y-%m-%d %H:%M:%S %Z}); run it again"
                )
                _end(kind, job, FAILED, now=now, message=message)
                done["failed"] += 1
            elif action is rules.Stale.CANCEL:
                _end(kind, job, CANCELLED, now=now)
                done["cancelled"] += 1
            elif action is rules.Stale.GIVE_UP:
                message = (
                    f"the worker running this {kind.noun} stopped without finishing "
                    f"(attempt {job.attempts} of {max_attempts()}, last started "
                    f"{timezone.localtime(job.started_at):%Y-%m-%d %H:%M:%S %Z}); gave up (retry it to run it again)"
                )
                _end(kind, job, FAILED, now=now, message=message)
                done["failed"] += 1
            else:
                job.status = QUEUED
                job.task_id = new_task_id()
                job.save(update_fields=["status", "task_id"])
                job_send(kind=kind, job_id=job.pk, task_id=job.task_id)
                done["sent"] += 1
    if any(done.values()):
        logger.warning("stale %s jobs: %s", kind.noun, done)
    return done
