"""A cancel stops the requests of chunks already running; Retry sends the items without a result."""

from __future__ import annotations

import threading
import time

import pytest
from django.core.cache import cache
from django.db import connection

from evaluation.inference.base import ChatRequest
from evaluation.inference.openai_backend import OpenAIBackend
from evaluation.models import JudgeRun, Judgment, PairVerdict, RunChunk
from evaluation.services import judge_chunk_process, judge_run_start, run_cancel, run_retry_not_done, runs
from evaluation.services.runs import RunConfigError, chunk_stop_key
from tests.evaluation.inference.openai_stub_server import Reply, completion_body
from tests.evaluation.services.builders import fair_judge, make_endpoint, make_pair_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_stop_polls(monkeypatch):
    monkeypatch.setattr(runs, "CHUNK_STOP_POLL_S", 0.02)
    cache.clear()
    yield
    cache.clear()


def _requests(n: int) -> list[ChatRequest]:
    return [
        ChatRequest(messages=[{"role": "user", "content": f"q{i}"}], request_id=f"r{i}") for i in range(n)
    ]


def test_a_backend_sends_nothing_once_stopped_and_says_which_requests_it_did_not_send(server):
    stop = threading.Event()
    sent = []

    def answer(body):
        sent.append(body)
        if len(sent) == 2:
            stop.set()
        return Reply(body=completion_body("ok"))

    server.responder = answer
    backend = OpenAIBackend(base_url=server.base_url, model="m", max_concurrency=1, max_attempts=1)
    try:
        results = backend.generate(_requests(5), stop=stop)
    finally:
        backend.close()

    assert len(server.requests) == 2
    assert [r.ok for r in results] == [True, True, False, False, False]
    assert [r.cancelled for r in results] == [False, False, True, True, True]


def _pairwise_run(server, n_prompts: int, monkeypatch) -> tuple[JudgeRun, RunChunk]:
    """A pairwise run of one order per pair, one request at a time, in one chunk not sent to a worker."""
    endpoint = make_endpoint(server, "judge", max_concurrency=1)
    with monkeypatch.context() as patched:
        patched.setattr(runs, "_send_on_commit", lambda chunks, now: None)
        run = judge_run_start(
            judge_kind="pairwise",
            endpoint=endpoint,
            dataset=make_pair_dataset(n_prompts=n_prompts),
            order_mode="single_random",
            options={"chunk_size": 50},
        )
    return run, RunChunk.objects.get(run_kind="judge", run_id=run.pk)


@pytest.mark.django_db(transaction=True)
def test_a_cancel_stops_a_running_chunk_and_retry_judges_only_what_was_not_done(
    server, django_capture_on_commit_callbacks, monkeypatch
):
    run, chunk = _pairwise_run(server, 6, monkeypatch)
    seen = []

    def judge_then_cancel(body):
        seen.append(body)
        if len(seen) == 2:  # the cancel arrives while the second pair is being judged
            try:
                assert run_cancel(run=JudgeRun.objects.get(pk=run.pk)) is True
            finally:
                connection.close()  # this server thread's own connection
            time.sleep(0.2)  # ten stop polls: the worker sees the signal before this reply reaches it
        return fair_judge(body)

    server.responder = judge_then_cancel
    assert judge_chunk_process(chunk=chunk, run=run) is True

    # The two answered pairs are kept; the four never sent count neither done nor failed.
    assert len(server.requests) == 2
    chunk.refresh_from_db()
    assert (chunk.status, chunk.n_done, chunk.n_failed) == ("done", 2, 0)
    run.refresh_from_db()
    assert (run.status, run.n_done, run.n_failed, run.n_total) == ("cancelled", 2, 0, 6)

    server.responder = fair_judge
    with django_capture_on_commit_callbacks(execute=True):
        assert run_retry_not_done(run=run) == 4

    run.refresh_from_db()
    assert (run.status, run.n_done, run.n_failed, run.n_total) == ("succeeded", 6, 0, 6)
    assert len(server.requests) == 6  # each pair judged once in all
    assert Judgment.objects.filter(judge_run=run).count() == 6
    assert PairVerdict.objects.filter(judge_run=run).count() == 6
    chunks = RunChunk.objects.filter(run_kind="judge", run_id=run.pk).order_by("index")
    assert [(c.index, c.status, c.n_done, len(c.items)) for c in chunks] == [
        (0, "done", 2, 6),
        (1, "done", 4, 4),
    ]


def test_retry_sends_the_failed_items_again_and_no_longer_counts_them_failed(
    server, django_capture_on_commit_callbacks, monkeypatch
):
    run, chunk = _pairwise_run(server, 3, monkeypatch)
    calls = []

    def fail_the_second(body):
        calls.append(body)
        return Reply(status=500, body={"error": "busy"}) if len(calls) == 2 else fair_judge(body)

    server.responder = fail_the_second
    with django_capture_on_commit_callbacks(execute=True):
        judge_chunk_process(chunk=chunk, run=run)
    run.refresh_from_db()
    assert (run.status, run.n_done, run.n_failed) == ("succeeded", 2, 1)

    server.responder = fair_judge
    with django_capture_on_commit_callbacks(execute=True):
        assert run_retry_not_done(run=run) == 1
    run.refresh_from_db()
    assert (run.status, run.n_done, run.n_failed, run.error) == ("succeeded", 3, 0, "")
    assert len(server.requests) == 4
    # Nothing left: a second Retry queues nothing and leaves the run as it is.
    assert run_retry_not_done(run=run) == 0
    run.refresh_from_db()
    assert run.status == "succeeded"


def test_a_running_run_cannot_be_retried(server, monkeypatch):
    run, _ = _pairwise_run(server, 2, monkeypatch)
    with pytest.raises(RunConfigError, match="still running"):
        run_retry_not_done(run=run)


def test_a_chunk_replaced_by_a_retry_writes_nothing_when_its_task_arrives_late(
    server, django_capture_on_commit_callbacks, monkeypatch
):
    run, chunk = _pairwise_run(server, 3, monkeypatch)
    run_cancel(run=run)  # before the chunk ran
    server.responder = fair_judge
    with django_capture_on_commit_callbacks(execute=True):
        assert run_retry_not_done(run=run) == 3
    assert len(server.requests) == 3
    chunk.refresh_from_db()
    assert (chunk.status, chunk.n_done) == ("done", 0)
    assert cache.get(chunk_stop_key(run, chunk.pk))  # told to stop, should it be running somewhere

    run.refresh_from_db()
    assert judge_chunk_process(chunk=chunk, run=run) is False  # the old task, delivered late
    assert len(server.requests) == 3
    assert (run.status, run.n_done, run.n_failed) == ("succeeded", 3, 0)
