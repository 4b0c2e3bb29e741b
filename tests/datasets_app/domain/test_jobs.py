"""The pure rules of background jobs: what a delivery and the stale sweep do with a job."""

from datetime import UTC, datetime, timedelta

import pytest

from datasets_app.domain.jobs import Delivery, Stale, is_stale, on_delivery, on_stale, worker_stopped


def delivery(status, *, own=True, cancel=False, attempts=1, most=3):
    return on_delivery(
        status=status, own_task=own, cancel_requested=cancel, attempts=attempts, max_attempts=most
    )


def test_a_queued_job_starts_whoever_delivers_it():
    assert delivery("queued", own=False, attempts=0) is Delivery.START
    assert delivery("queued", own=True, attempts=2) is Delivery.START


def test_a_running_job_restarts_only_for_a_redelivery_of_its_own_task():
    assert delivery("running", own=True, attempts=1) is Delivery.RESTART
    assert delivery("running", own=False, attempts=1) is Delivery.IGNORE


@pytest.mark.parametrize("status", ["succeeded", "failed", "cancelled"])
def test_an_ended_job_is_left_alone(status):
    assert delivery(status) is Delivery.IGNORE


def test_attempts_run_out():
    assert delivery("running", attempts=3, most=3) is Delivery.GIVE_UP
    assert delivery("queued", attempts=3, most=3) is Delivery.GIVE_UP
    assert delivery("running", attempts=2, most=3) is Delivery.RESTART


def test_a_cancel_asked_while_the_dead_delivery_ran_ends_it_cancelled():
    assert delivery("running", cancel=True, attempts=3) is Delivery.CANCEL


def test_staleness_is_the_time_limit_passed():
    start = datetime(2026, 1, 1, tzinfo=UTC)
    limit = timedelta(minutes=10)
    assert not is_stale(started_at=start, now=start + limit, limit=limit)
    assert is_stale(started_at=start, now=start + limit + timedelta(seconds=1), limit=limit)


def test_the_sweep_sends_again_then_gives_up_and_honours_a_cancel():
    assert on_stale(cancel_requested=False, attempts=1, max_attempts=3) is Stale.SEND_AGAIN
    assert on_stale(cancel_requested=False, attempts=3, max_attempts=3) is Stale.GIVE_UP
    assert on_stale(cancel_requested=True, attempts=1, max_attempts=3) is Stale.CANCEL


def test_a_worker_counts_as_stopped_once_its_heartbeat_is_older_than_the_timeout_whatever_the_limit():
    start = datetime(2026, 1, 1, tzinfo=UTC)
    beat = start + timedelta(minutes=10)
    timeout, limit = timedelta(seconds=90), timedelta(hours=3)

    def stopped(now, heartbeat=beat):
        return worker_stopped(started_at=start, heartbeat_at=heartbeat, now=now, timeout=timeout, limit=limit)

    assert not stopped(beat + timeout)
    assert stopped(beat + timeout + timedelta(seconds=1))  # hours inside the task's time limit
    # Without a heartbeat (lost with the cache) only the time limit tells.
    assert not stopped(beat + timedelta(hours=1), heartbeat=None)
    assert stopped(start + limit + timedelta(seconds=1), heartbeat=None)
    # A heartbeat, however fresh, never keeps an attempt alive past the hard time limit.
    assert stopped(start + limit + timedelta(seconds=1), heartbeat=start + limit)
