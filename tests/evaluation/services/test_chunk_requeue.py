"""Sending again the chunks whose tasks the broker lost, and only those."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from datasets_app.jobs import heartbeat_at, heartbeat_touch
from datasets_app.models import Response
from evaluation.models import GenerationRun, RunChunk
from evaluation.services import generation_run_start, run_cancel
from evaluation.services.runs import chunk_heartbeat_key, chunks_requeue_lost
from evaluation.tasks import generation_chunk
from tests.evaluation.services.builders import make_endpoint, make_prompt_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_heartbeats_of_other_tests():
    """Heartbeats live in the cache, which outlives each test's database."""
    cache.clear()


RUNNING_LIMIT = timedelta(minutes=26)
LOST_AFTER = timedelta(minutes=10)


def empty(queue: str) -> int:
    return 0


@pytest.fixture
def lost_run(server, django_capture_on_commit_callbacks):
    """A run of 3 chunks whose tasks were sent an hour ago and never arrived."""
    dataset = make_prompt_dataset(n_prompts=6, two_turn_first=False)
    endpoint = make_endpoint(server, "lost", queue="gpu.lost")
    with django_capture_on_commit_callbacks(execute=False):  # the broker drops every task
        run = generation_run_start(dataset=dataset, endpoints=[endpoint], options={"chunk_size": 2})
    chunks = RunChunk.objects.filter(run_kind="generation", run_id=run.pk)
    assert chunks.count() == 3 and not chunks.filter(queued_at=None).exists()
    chunks.update(queued_at=timezone.now() - timedelta(hours=1))
    return run


def _sweep(capture, *, queue_size=empty, now=None, execute=True) -> tuple[int, list]:
    with capture(execute=execute) as callbacks:
        n = chunks_requeue_lost(
            queue_size=queue_size, running_limit=RUNNING_LIMIT, lost_after=LOST_AFTER, now=now
        )
    return n, callbacks


def test_lost_chunks_of_an_active_run_are_sent_again_and_the_run_finishes(
    lost_run, django_capture_on_commit_callbacks
):
    asked: list[str] = []

    def queue_size(queue: str) -> int:
        asked.append(queue)
        return 0

    n, _ = _sweep(django_capture_on_commit_callbacks, queue_size=queue_size)

    assert n == 3 and asked == ["gpu.lost"]
    lost_run.refresh_from_db()
    assert (lost_run.status, lost_run.n_done, lost_run.n_total) == ("succeeded", 6, 6)
    assert Response.objects.filter(generation_run=lost_run).count() == 6
    chunks = RunChunk.objects.filter(run_kind="generation", run_id=lost_run.pk)
    assert set(chunks.values_list("status", "attempts")) == {("done", 1)}
    # Nothing is left to send.
    assert _sweep(django_capture_on_commit_callbacks)[0] == 0


def test_nothing_is_sent_while_the_queue_still_holds_tasks_or_cannot_be_asked(
    lost_run, django_capture_on_commit_callbacks
):
    for answer in (4, None):
        n, callbacks = _sweep(django_capture_on_commit_callbacks, queue_size=lambda queue, a=answer: a)
        assert (n, callbacks) == (0, [])
    assert not RunChunk.objects.filter(run_id=lost_run.pk, status="done").exists()


def test_recently_sent_and_running_chunks_are_left_alone(lost_run, django_capture_on_commit_callbacks):
    now = timezone.now()
    first, second, third = RunChunk.objects.filter(run_kind="generation", run_id=lost_run.pk)
    RunChunk.objects.filter(pk=first.pk).update(queued_at=now - timedelta(minutes=2))  # still on its way
    # Started after it was sent, five minutes ago: a slow model, still within the task's time limit.
    RunChunk.objects.filter(pk=second.pk).update(started_at=now - timedelta(minutes=5))

    n, callbacks = _sweep(django_capture_on_commit_callbacks, now=now, execute=False)

    assert (n, len(callbacks)) == (1, 1)  # only the third
    third.refresh_from_db()
    assert third.queued_at == now

    # Half an hour later the started one cannot be running any more (its worker died and the broker
    # lost the unacknowledged task): it is sent again too, and so is the first.
    later = now + timedelta(minutes=30)
    assert _sweep(django_capture_on_commit_callbacks, now=later, execute=False)[0] == 3


def test_chunks_of_ended_runs_and_done_chunks_are_never_sent(
    server, lost_run, django_capture_on_commit_callbacks
):
    first = RunChunk.objects.filter(run_kind="generation", run_id=lost_run.pk).first()
    with django_capture_on_commit_callbacks(execute=True):
        assert generation_chunk.delay(first.pk).get() is True  # one chunk arrived and was done
    n, _ = _sweep(django_capture_on_commit_callbacks, execute=False)
    assert n == 2

    run_cancel(run=lost_run)
    assert _sweep(django_capture_on_commit_callbacks, now=timezone.now() + timedelta(hours=2))[0] == 0


def test_a_chunk_sent_twice_is_done_once(server, lost_run, django_capture_on_commit_callbacks):
    """The original task turns up after all (a broker that was only slow): the second delivery is a no-op."""
    n, callbacks = _sweep(django_capture_on_commit_callbacks, execute=False)
    assert n == 3
    for callback in callbacks:
        callback()
    n_requests = len(server.requests)
    for chunk in RunChunk.objects.filter(run_kind="generation", run_id=lost_run.pk):
        assert generation_chunk.delay(chunk.pk).get() is False

    lost_run.refresh_from_db()
    assert (lost_run.status, lost_run.n_done, lost_run.n_failed) == ("succeeded", 6, 0)
    assert Response.objects.filter(generation_run=lost_run).count() == 6
    assert len(server.requests) == n_requests
    assert GenerationRun.objects.get(pk=lost_run.pk).finished_at is not None


def test_a_started_chunk_whose_heartbeat_stopped_is_sent_again_whatever_its_queue_holds(
    lost_run, settings, role_client, django_capture_on_commit_callbacks
):
    settings.JOB_HEARTBEAT_TIMEOUT_S = 90
    now = timezone.now()
    first, second, third = RunChunk.objects.filter(run_kind="generation", run_id=lost_run.pk)
    heard = now - timedelta(minutes=2)  # well inside the task's time limit
    for chunk, beat in ((first, heard), (second, now - timedelta(seconds=30))):
        RunChunk.objects.filter(pk=chunk.pk).update(attempts=1, started_at=now - timedelta(minutes=3))
        heartbeat_touch(key=chunk_heartbeat_key(chunk.pk, 1), now=beat)

    # The queue still holds tasks: only the chunk whose worker stopped beating is sent again.
    n, callbacks = _sweep(
        django_capture_on_commit_callbacks, queue_size=lambda queue: 4, now=now, execute=False
    )
    assert (n, len(callbacks)) == (1, 1)
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.worker_stopped_at, first.queued_at, second.worker_stopped_at) == (heard, now, None)

    client = role_client("researcher")
    url = reverse("evaluation:run", args=["generation", lost_run.pk])
    time_shown = f"{timezone.localtime(heard):%H:%M}"
    page = client.get(url).content.decode()
    assert f"The worker running part 1 stopped at {time_shown}; requeued (attempt 2)." in page
    client.cookies["django_language"] = "id"
    page = client.get(url, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert (
        f"Worker yang menjalankan bagian 1 berhenti pada pukul {time_shown}; dimasukkan ke antrean lagi"
        in page
    )


def test_a_chunk_beats_its_heartbeat_while_it_runs(server, lost_run):
    chunk = RunChunk.objects.filter(run_kind="generation", run_id=lost_run.pk).first()
    before = timezone.now()
    assert generation_chunk.delay(chunk.pk).get() is True
    chunk.refresh_from_db()
    beat = heartbeat_at(key=chunk_heartbeat_key(chunk.pk, 1))
    assert chunk.attempts == 1 and beat is not None and before <= beat <= chunk.finished_at
