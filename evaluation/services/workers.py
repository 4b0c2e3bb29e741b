"""Which queues the running workers consume: each worker reports its queues every few seconds.

A worker writes ``{"queues": [...], "at": ...}`` under its own cache key (and its name into an index) every
``WORKER_REPORT_INTERVAL_S`` seconds from a thread it starts when it is ready; a report older than
``WORKER_REPORT_STALE_S`` is a worker that stopped. The run page and the API read the reports to say, within
seconds, that a run's queue has no worker. With ``MODEL_QUEUES_FOLLOW`` set (``scripts/serve`` sets it for
its model workers), the same thread also starts consuming the model queues of endpoints added since the
worker started, so a new endpoint's runs start without restarting anything.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from evaluation.models import RunChunk

logger = logging.getLogger(__name__)

_INDEX_KEY = "workers:index"


def _key(hostname: str) -> str:
    return f"workers:queues:{hostname}"


def _stale_after() -> timedelta:
    return timedelta(seconds=settings.WORKER_REPORT_STALE_S)


def worker_queues_report(*, hostname: str, queues: Iterable[str], now: datetime | None = None) -> None:
    """Record that ``hostname`` consumes ``queues`` now."""
    now = now or timezone.now()
    ttl = max(1, int(settings.WORKER_REPORT_STALE_S * 4))
    cache.set(_key(hostname), {"queues": sorted(set(queues)), "at": now.isoformat()}, ttl)
    index = cache.get(_INDEX_KEY) or []
    if hostname not in index:
        cache.set(_INDEX_KEY, sorted({*index, hostname}), None)


def worker_queues_forget(*, hostname: str) -> None:
    """A worker that shuts down takes its report with it."""
    cache.delete(_key(hostname))


def live_queues(reports: Mapping[str, Mapping[str, Any] | None], *, now: datetime, stale_after: timedelta):
    """Queue → sorted names of the workers whose report is fresh (younger than ``stale_after``)."""
    consumed: dict[str, list[str]] = {}
    for hostname, report in sorted(reports.items()):
        if not report:
            continue
        try:
            at = datetime.fromisoformat(report["at"])
        except (KeyError, TypeError, ValueError):
            continue
        if now - at > stale_after:
            continue
        for queue in report.get("queues") or ():
            consumed.setdefault(queue, []).append(hostname)
    return consumed


def queues_consumed(*, now: datetime | None = None) -> dict[str, list[str]]:
    """Every queue some live worker consumes, with the workers' names."""
    index = cache.get(_INDEX_KEY) or []
    reports = cache.get_many([_key(name) for name in index]) if index else {}
    by_host = {name: reports.get(_key(name)) for name in index}
    return live_queues(by_host, now=now or timezone.now(), stale_after=_stale_after())


def queue_consumed(queue: str, *, now: datetime | None = None) -> bool:
    return bool(queues_consumed(now=now).get(queue))


def queues_to_follow(*, consuming: Iterable[str], wanted: Iterable[str]) -> list[str]:
    """The model queues a following worker should add: wanted and not yet consumed."""
    have = set(consuming)
    return sorted(queue for queue in set(wanted) if queue not in have and queue != "default")


class QueueReporter:
    """The worker-side thread: report the consumer's queues, and follow new model queues when asked.

    ``consuming`` returns the names the consumer reads now; ``add`` asks the consumer to read one more
    queue (Celery's ``add_task_queue`` scheduled on the consumer's own loop); ``wanted`` returns the model
    queues to follow, or None when the worker does not follow."""

    def __init__(
        self,
        *,
        hostname: str,
        consuming: Callable[[], Iterable[str]],
        add: Callable[[str], None],
        wanted: Callable[[], Iterable[str]] | None,
        interval_s: float,
    ) -> None:
        self.hostname = hostname
        self.consuming = consuming
        self.add = add
        self.wanted = wanted
        self.interval_s = interval_s
        self.requested: set[str] = set()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="queue-reporter", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        try:
            worker_queues_forget(hostname=self.hostname)
        except Exception:  # the cache may be gone at shutdown; the report expires on its own
            logger.warning("could not remove the queue report of %s", self.hostname, exc_info=True)

    def tick(self) -> list[str]:
        """One round: follow new queues, then report; returns the queues added."""
        consuming = list(self.consuming())
        added: list[str] = []
        if self.wanted is not None:
            # Asked once: the consumer adds the queue on its own loop, maybe after the next round.
            added = queues_to_follow(consuming=[*consuming, *self.requested], wanted=self.wanted())
            self.requested.update(added)
            for queue in added:
                logger.info("%s: consuming the new model queue %s", self.hostname, queue)
                self.add(queue)
        # A queue just added is reported now: the consumer starts reading it within its next loop.
        worker_queues_report(hostname=self.hostname, queues=[*consuming, *self.requested])
        return added

    def _loop(self) -> None:
        from django.db import close_old_connections

        while not self.stopped.is_set():
            try:
                self.tick()
            except Exception:  # a database or cache hiccup: report again on the next round
                logger.warning("queue report of %s failed", self.hostname, exc_info=True)
            finally:
                close_old_connections()
            self.stopped.wait(self.interval_s)


def run_queues_without_worker(run: Any, *, now: datetime | None = None) -> list[str]:
    """The queues of an active run's pending chunks that no live worker consumes (empty when every one has
    a worker, when the run is not active, or when tasks run in the web process)."""
    if settings.CELERY_TASK_ALWAYS_EAGER or not getattr(run, "is_active", False):
        return []
    queues = set(
        RunChunk.objects.filter(run_kind=run.kind, run_id=run.pk, status=RunChunk.Status.PENDING).values_list(
            "endpoint__queue", flat=True
        )
    )
    if not queues:
        return []
    consumed = queues_consumed(now=now)
    return sorted(queue for queue in queues if not consumed.get(queue))
