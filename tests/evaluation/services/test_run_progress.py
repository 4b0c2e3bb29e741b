"""A run's progress and its end come from its chunk rows; a chunk's transaction never writes the run row."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from datasets_app.models import Response
from evaluation.models import GenerationRun, RunChunk
from evaluation.services import generation_run_start
from evaluation.services.runs import ProgressThrottle, progress_throttle, runs_finish_settled
from evaluation.tasks import generation_chunk
from tests.evaluation.inference.openai_stub_server import Reply
from tests.evaluation.services.builders import make_endpoint, make_prompt_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_throttle():
    """Run ids repeat between tests: forget when this process last refreshed them."""
    progress_throttle.clear()


@pytest.fixture
def unsent_run(server, django_capture_on_commit_callbacks):
    """A generation run of 3 chunks (2 prompts each) whose tasks we deliver ourselves."""
    dataset = make_prompt_dataset(n_prompts=6, two_turn_first=False)
    endpoint = make_endpoint(server, "progress")
    with django_capture_on_commit_callbacks(execute=False):
        run = generation_run_start(dataset=dataset, endpoints=[endpoint], options={"chunk_size": 2})
    return run


def _chunks(run) -> list[RunChunk]:
    return list(RunChunk.objects.filter(run_kind="generation", run_id=run.pk).order_by("index"))


def test_a_chunk_commit_writes_no_run_row_inside_its_transaction(unsent_run):
    first = _chunks(unsent_run)[0]
    with CaptureQueriesContext(connection) as queries:
        assert generation_chunk(first.pk) is True
    sql = [q["sql"] for q in queries.captured_queries]
    # The chunk's transaction is a savepoint here (the test runs inside a transaction).
    begin = next(i for i, s in enumerate(sql) if s.startswith("SAVEPOINT"))
    end = next(i for i, s in enumerate(sql) if s.startswith("RELEASE SAVEPOINT"))
    inside = sql[begin:end]
    assert any('UPDATE "evaluation_runchunk"' in s for s in inside)
    assert not any('"evaluation_generationrun"' in s for s in inside)


def test_progress_is_the_sum_of_the_chunks_and_the_last_chunk_finishes_the_run(unsent_run):
    first, second, third = _chunks(unsent_run)

    generation_chunk(first.pk)
    unsent_run.refresh_from_db()
    # The first commit of a run in this process refreshes its counts.
    assert (unsent_run.status, unsent_run.n_done, unsent_run.n_failed) == ("running", 2, 0)

    generation_chunk(second.pk)
    unsent_run.refresh_from_db()
    assert unsent_run.status == "running"
    assert unsent_run.n_done in (2, 4)  # refreshed at most once a second by one process

    generation_chunk(third.pk)
    unsent_run.refresh_from_db()
    assert (unsent_run.status, unsent_run.n_done, unsent_run.n_failed) == ("succeeded", 6, 0)
    assert unsent_run.finished_at is not None
    assert Response.objects.filter(generation_run=unsent_run).count() == 6


def test_failed_items_are_summed_from_the_chunks_and_a_run_with_no_success_fails(server, unsent_run):
    server.responder = lambda body: Reply(status=400, body={"error": {"message": "prompt too long"}})
    for chunk in _chunks(unsent_run):
        generation_chunk(chunk.pk)
    unsent_run.refresh_from_db()
    assert (unsent_run.status, unsent_run.n_done, unsent_run.n_failed) == ("failed", 0, 6)
    assert unsent_run.error.startswith("6 of 6 item(s) failed; first error: ")


def _commit_without_finishing(run) -> None:
    """The state a worker killed right after its last chunk's commit leaves: every chunk done, run running."""
    GenerationRun.objects.filter(pk=run.pk).update(status="running")
    for chunk in _chunks(run):
        RunChunk.objects.filter(pk=chunk.pk).update(status="done", n_done=len(chunk.items) - 1, n_failed=1)


def test_a_redelivered_done_chunk_finishes_a_run_its_first_delivery_left_running(server, unsent_run):
    _commit_without_finishing(unsent_run)
    last = _chunks(unsent_run)[-1]

    assert generation_chunk(last.pk) is False  # nothing to write

    unsent_run.refresh_from_db()
    assert (unsent_run.status, unsent_run.n_done, unsent_run.n_failed) == ("succeeded", 3, 3)
    assert server.requests == []


def test_the_sweep_finishes_runs_whose_chunks_are_all_done_and_no_other(server, unsent_run):
    other = generation_run_start(
        dataset=make_prompt_dataset(n_prompts=2, two_turn_first=False, name="still-pending"),
        endpoints=[make_endpoint(server, "pending")],
    )
    GenerationRun.objects.filter(pk=other.pk).update(status="running")
    _commit_without_finishing(unsent_run)

    assert runs_finish_settled() == 1
    assert runs_finish_settled() == 0

    unsent_run.refresh_from_db()
    other.refresh_from_db()
    assert (unsent_run.status, unsent_run.n_done, unsent_run.n_failed) == ("succeeded", 3, 3)
    assert other.status == "running"


def test_a_cancelled_run_still_counts_chunks_that_commit_after_the_cancel(unsent_run):
    first, second, _ = _chunks(unsent_run)
    generation_chunk(first.pk)
    GenerationRun.objects.filter(pk=unsent_run.pk).update(status="cancelled")

    assert generation_chunk(second.pk) is False  # cancelled before it started: nothing sent
    generation_chunk(first.pk)  # a redelivery of a committed chunk refreshes the counts
    unsent_run.refresh_from_db()
    assert (unsent_run.status, unsent_run.n_done) == ("cancelled", 2)


def test_the_progress_throttle_lets_one_refresh_through_per_interval_and_run():
    now = [100.0]
    throttle = ProgressThrottle(1.0, clock=lambda: now[0])
    assert throttle.due(("generation", 1)) is True
    assert throttle.due(("generation", 1)) is False
    assert throttle.due(("generation", 2)) is True
    now[0] += 0.5
    assert throttle.due(("generation", 1)) is False
    now[0] += 0.6
    assert throttle.due(("generation", 1)) is True
