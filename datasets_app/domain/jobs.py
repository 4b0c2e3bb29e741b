"""What a background job does when a task delivery or the stale sweep finds it: pure decisions.

The ORM side is ``datasets_app.jobs``; these rules take the row's state as plain values.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import Enum

QUEUED = "queued"
RUNNING = "running"


class Delivery(Enum):
    START = "start"  # a queued job: run it
    RESTART = "restart"  # running under this very task id: the earlier delivery died; run it again, clean
    IGNORE = "ignore"  # ended, or running under another delivery: leave it
    CANCEL = "cancel"  # its cancel was asked while the dead delivery ran it: end it cancelled
    GIVE_UP = "give_up"  # out of attempts: end it failed


class Stale(Enum):
    SEND_AGAIN = "send_again"
    CANCEL = "cancel"
    GIVE_UP = "give_up"


def on_delivery(
    *, status: str, own_task: bool, cancel_requested: bool, attempts: int, max_attempts: int
) -> Delivery:
    """What a task delivery does with the job it was sent for."""
    if status == QUEUED:
        return Delivery.GIVE_UP if attempts >= max_attempts else Delivery.START
    if status != RUNNING or not own_task:
        return Delivery.IGNORE
    if cancel_requested:
        return Delivery.CANCEL
    return Delivery.GIVE_UP if attempts >= max_attempts else Delivery.RESTART


def is_stale(*, started_at: datetime, now: datetime, limit: timedelta) -> bool:
    """A running attempt older than its task's hard time limit has no live task."""
    return now - started_at > limit


def worker_stopped(
    *,
    started_at: datetime,
    heartbeat_at: datetime | None,
    now: datetime,
    timeout: timedelta,
    limit: timedelta,
) -> bool:
    """Whether a running attempt has no live task: its last heartbeat is older than ``timeout``, or the
    attempt outlived its task's hard time limit ``limit``. Without a heartbeat only the time limit tells."""
    if is_stale(started_at=started_at, now=now, limit=limit):
        return True
    return heartbeat_at is not None and now - heartbeat_at > timeout


def on_stale(*, cancel_requested: bool, attempts: int, max_attempts: int) -> Stale:
    """What the sweep does with a running job that has no live task."""
    if cancel_requested:
        return Stale.CANCEL
    return Stale.GIVE_UP if attempts >= max_attempts else Stale.SEND_AGAIN
