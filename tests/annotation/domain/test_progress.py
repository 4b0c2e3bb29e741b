from datetime import datetime, timedelta

import pytest

from annotation.domain.progress import (
    WorkCounts,
    annotator_progress,
    group_progress,
    project_progress,
)

T0 = datetime(2026, 1, 5, 9, 0, 0)


def row(annotator, group, task, status, seconds=None, *, started=True, gold=False, skipped=False):
    return {
        "annotator": annotator,
        "group": group,
        "task": task,
        "status": status,
        "started_at": T0 if started else None,
        "submitted_at": T0 + timedelta(seconds=seconds) if seconds is not None else None,
        "gold": gold,
        "skipped": skipped,
    }


ROWS = [
    row("a1", "g1", 1, "submitted", 60),
    row("a1", "g1", 2, "submitted", 120),
    row("a1", "g1", 3, "skipped"),
    row("a1", "g1", 90, "submitted", 30, gold=True),
    row("a2", "g1", 1, "submitted", 90),
    row("a2", "g1", 2, "expired"),
    row("a2", "g1", 3, "assigned"),
    row("a3", "g2", 1, "submitted", 300),
    row("a3", "g2", 2, "submitted", 45, started=False),  # no start time: counted, not timed
    row("a4", "g2", 1, "submitted", 40),
]


def test_annotator_progress():
    progress = annotator_progress(ROWS)
    # a1: 3 submitted (one gold), times 60, 120, 30 -> median 60.
    assert progress["a1"].work == WorkCounts(
        done=3, skipped=1, expired=0, in_progress=0, median_seconds=60, n_timed=3
    )
    assert progress["a1"].gold_done == 1
    assert progress["a1"].groups == ("g1",)
    assert progress["a2"].work == WorkCounts(
        done=1, skipped=0, expired=1, in_progress=1, median_seconds=90, n_timed=1
    )
    assert progress["a3"].work.done == 2 and progress["a3"].work.n_timed == 1
    assert progress["a3"].work.median_seconds == 300


def test_group_progress():
    groups = group_progress(ROWS, k=2, n_tasks=3)
    g1, g2 = groups["g1"], groups["g2"]
    # g1 times 60, 120, 30, 90 -> median (60 + 90) / 2 = 75.
    assert g1.work == WorkCounts(done=4, skipped=1, expired=1, in_progress=1, median_seconds=75, n_timed=4)
    assert g1.n_annotators == 2
    # Toward k (gold left out): task 1 has 2 (complete), task 2 has 1 -> 3 of 2 x 3 = 6.
    assert (g1.submitted_toward_k, g1.tasks_complete, g1.required) == (3, 1, 6)
    # g2: task 1 by a3 and a4 (complete), task 2 by a3; times 300, 40 -> median 170.
    assert (g2.submitted_toward_k, g2.tasks_complete, g2.required) == (3, 1, 6)
    assert g2.work.median_seconds == 170
    plain = group_progress(ROWS)["g1"]
    assert plain.required is None and plain.tasks_complete is None


def test_project_progress_n_of_m():
    progress = project_progress(ROWS, k=2, n_tasks=3, groups=["g1", "g2"])
    # m = k 2 x groups 2 x tasks 3 = 12; n = 3 (g1) + 3 (g2) = 6; task 1 is complete in both groups.
    assert (progress.done, progress.required, progress.tasks_complete) == (6, 12, 1)
    assert progress.label() == "6 of 12"
    assert progress.fraction == 0.5


def test_extra_submissions_never_push_a_task_past_k():
    extra = [*ROWS, row("a5", "g2", 1, "submitted", 50)]
    assert project_progress(extra, k=2, n_tasks=3, groups=["g1", "g2"]).done == 6


def test_a_group_without_rows_still_counts_toward_the_total():
    progress = project_progress(ROWS, k=2, n_tasks=3, groups=["g1", "g2", "g3"])
    assert (progress.done, progress.required, progress.tasks_complete) == (6, 18, 0)


def test_skipped_flag_and_bad_times():
    rows = [
        row("a", "g", 1, "expired", skipped=True),
        row("a", "g", 2, "submitted", -5),  # clock went backwards: left out of the median
        row("a", "g", 3, "submitted", 10),
    ]
    work = annotator_progress(rows)["a"].work
    assert (work.skipped, work.expired, work.done, work.n_timed, work.median_seconds) == (1, 0, 2, 1, 10)


def test_bad_rows_are_refused():
    with pytest.raises(ValueError, match="status"):
        annotator_progress([row("a", "g", 1, "done")])
    with pytest.raises(ValueError, match="groups outside"):
        project_progress(ROWS, k=2, n_tasks=3, groups=["g1"])
    no_task = [{k: v for k, v in ROWS[0].items() if k != "task"}]
    with pytest.raises(ValueError, match="task"):
        project_progress(no_task, k=1, n_tasks=1, groups=["g1"])
    empty = project_progress([], k=1, n_tasks=0, groups=["g1"])
    assert empty.fraction == 1.0 and empty.label() == "0 of 0"
