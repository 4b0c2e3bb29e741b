"""A judge run's progress counts items as they finish inside a chunk, and stays exactly once."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation import selectors
from evaluation.models import JudgeRun, Judgment, PairVerdict, RunChunk
from evaluation.services import judge_run_start
from evaluation.services.judging import judge_chunk_process, judge_compute
from evaluation.services.runs import chunk_commit, chunk_results_write
from tests.evaluation.services.builders import fair_judge, make_endpoint, make_pair_dataset

pytestmark = pytest.mark.django_db


def queued_run(server, capture) -> tuple[JudgeRun, RunChunk]:
    """Four pairwise items in one chunk, not yet processed; the judge takes two requests at a time, so the
    chunk works in four batches of one item (two orders each)."""
    server.responder = fair_judge
    judge = make_endpoint(server, "juri-lambat", max_concurrency=2)
    with capture(execute=False):
        run = judge_run_start(
            judge_kind="pairwise",
            endpoint=judge,
            dataset=make_pair_dataset(n_prompts=4),
            options={"chunk_size": 4},
        )
    chunk = RunChunk.objects.get(run_kind="judge", run_id=run.pk)
    return run, chunk


def test_progress_counts_items_before_the_chunk_ends(server, role_client, django_capture_on_commit_callbacks):
    run, chunk = queued_run(server, django_capture_on_commit_callbacks)
    client = role_client("researcher")
    page = reverse("evaluation:run", args=["judge", run.pk]) + "?fragment=progress"
    seen = []

    def after_batch(outcomes):
        chunk_results_write(chunk=chunk, outcomes=outcomes)
        run.refresh_from_db()
        html = client.get(page, HTTP_HX_REQUEST="true").content.decode()
        listing = client.get(reverse("evaluation:runs")).content.decode()
        chunk.refresh_from_db()
        n = len(seen) + 1
        shown = f"{n} / 4" in html and f"{n}/4" in listing
        seen.append((selectors.judge_items_done(run=run), run.n_done, chunk.status, shown))

    JudgeRun.objects.filter(pk=run.pk).update(status="running")  # as the chunk task marks it
    run.refresh_from_db()
    outcomes = judge_compute(
        run=run, items=list(chunk.items), endpoint=chunk.endpoint, on_outcomes=after_batch
    )
    # Item by item: the run page and the run list show 1 / 4, 2 / 4, ... while the chunk is still pending and the run row still
    # says 0 done (the row's counts move when the chunk commits).
    assert seen == [(n, 0, "pending", True) for n in (1, 2, 3, 4)]
    assert chunk_commit(chunk=chunk, run=run, outcomes=outcomes, n_already_done=0)
    run.refresh_from_db()
    # The commit inserted the same rows again: nothing doubled.
    assert (run.status, run.n_done, run.n_total) == ("succeeded", 4, 4)
    assert PairVerdict.objects.filter(judge_run=run).count() == 4
    assert Judgment.objects.filter(judge_run=run).count() == 8


class WorkerDied(Exception):
    pass


def test_a_chunk_that_dies_after_two_items_is_finished_by_its_next_delivery(
    server, django_capture_on_commit_callbacks
):
    run, chunk = queued_run(server, django_capture_on_commit_callbacks)
    batches = []

    def die_after_two(outcomes):
        chunk_results_write(chunk=chunk, outcomes=outcomes)
        batches.append(len(outcomes))
        if len(batches) == 2:
            raise WorkerDied

    with pytest.raises(WorkerDied):
        judge_compute(run=run, items=list(chunk.items), endpoint=chunk.endpoint, on_outcomes=die_after_two)
    assert selectors.judge_items_done(run=run) == 2
    assert len(server.requests) == 4
    # The next delivery skips the two finished items and judges the other two (4 more requests).
    assert judge_chunk_process(chunk=chunk, run=run)
    run.refresh_from_db()
    chunk.refresh_from_db()
    assert len(server.requests) == 8
    assert (chunk.status, chunk.n_done, chunk.n_failed) == ("done", 4, 0)
    assert (run.status, run.n_done) == ("succeeded", 4)
    assert PairVerdict.objects.filter(judge_run=run).count() == 4
    assert Judgment.objects.filter(judge_run=run).count() == 8
    # A delivery after the commit writes nothing.
    assert not judge_chunk_process(chunk=chunk, run=run)
    assert Judgment.objects.filter(judge_run=run).count() == 8


def test_partial_writes_stop_once_the_chunk_is_done(server, django_capture_on_commit_callbacks):
    run, chunk = queued_run(server, django_capture_on_commit_callbacks)
    outcomes = judge_compute(run=run, items=list(chunk.items), endpoint=chunk.endpoint)
    assert chunk_commit(chunk=chunk, run=run, outcomes=outcomes, n_already_done=0)
    chunk.refresh_from_db()
    assert not chunk_results_write(chunk=chunk, outcomes=outcomes)
    assert PairVerdict.objects.filter(judge_run=run).count() == 4
