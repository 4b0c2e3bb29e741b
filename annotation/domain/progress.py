"""Progress of an annotation project from plain assignment rows.

A row is a mapping (``QuerySet.values()`` or a DataFrame record) with ``annotator``, ``group``, ``status``
(``assigned`` / ``submitted`` / ``skipped`` / ``expired``), ``started_at`` and ``submitted_at``
(datetimes or ``None``), and optionally ``task``, ``skipped`` (bool) and ``gold`` (bool). Gold rows count
as the annotator's work but never towards the k submissions a task needs.
"""

from __future__ import annotations

import statistics
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

STATUSES: tuple[str, ...] = ("assigned", "submitted", "skipped", "expired")
_KNOWN = frozenset(STATUSES)

Row = Mapping[str, object]


@dataclass(frozen=True)
class WorkCounts:
    """Counts over a set of assignments; ``median_seconds`` over submitted ones with both timestamps."""

    done: int
    skipped: int
    expired: int
    in_progress: int
    median_seconds: float | None
    n_timed: int


@dataclass(frozen=True)
class AnnotatorProgress:
    annotator: Hashable
    groups: tuple[Hashable, ...]
    work: WorkCounts
    gold_done: int


@dataclass(frozen=True)
class GroupProgress:
    """``required`` and ``tasks_complete`` are filled when ``k`` and ``n_tasks`` are known."""

    group: Hashable
    n_annotators: int
    work: WorkCounts
    required: int | None
    submitted_toward_k: int | None
    tasks_complete: int | None


@dataclass(frozen=True)
class ProjectProgress:
    """``done`` of ``required`` submissions, counting at most k per task and group."""

    done: int
    required: int
    tasks_complete: int
    n_tasks: int

    @property
    def fraction(self) -> float:
        return self.done / self.required if self.required else 1.0

    def label(self) -> str:
        return f"{self.done} of {self.required}"


def _unknown(status: object) -> ValueError:
    return ValueError(f"unknown assignment status {status!r}; expected one of {', '.join(STATUSES)}")


def _state(row: Row) -> str:
    status = row["status"]
    if status == "submitted":
        return status
    if status not in _KNOWN:
        raise _unknown(status)
    return "skipped" if row.get("skipped") else str(status)


def _seconds(row: Row) -> float | None:
    if "seconds" in row:  # the span already computed (by the database), or None without both timestamps
        seconds = row["seconds"]
        return seconds if isinstance(seconds, int | float) and seconds >= 0 else None
    started, submitted = row.get("started_at"), row.get("submitted_at")
    if not isinstance(started, datetime) or not isinstance(submitted, datetime):
        return None
    seconds = (submitted - started).total_seconds()
    # A negative span can only come from bad data; leaving it out keeps one bad row from skewing the median.
    return seconds if seconds >= 0 else None


def _counts(rows: Sequence[Row]) -> WorkCounts:
    states = [_state(row) for row in rows]
    times = [
        seconds
        for row, state in zip(rows, states, strict=True)
        if state == "submitted" and (seconds := _seconds(row)) is not None
    ]
    return WorkCounts(
        done=states.count("submitted"),
        skipped=states.count("skipped"),
        expired=states.count("expired"),
        in_progress=states.count("assigned"),
        median_seconds=statistics.median(times) if times else None,
        n_timed=len(times),
    )


def _by(rows: Iterable[Row], key: str) -> dict[Hashable, list[Row]]:
    grouped: dict[Hashable, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row[key], []).append(row)  # type: ignore[arg-type]
    return grouped


def _toward_k(rows: Iterable[Row], k: int) -> dict[tuple[Hashable, Hashable], int]:
    # Submissions per (task, group), capped at k: extra submissions (edits, races) never inflate progress.
    counts: dict[tuple[Hashable, Hashable], int] = {}
    for row in rows:
        status = row["status"]
        if status != "submitted":
            if status not in _KNOWN:
                raise _unknown(status)
            continue
        if row.get("gold"):
            continue
        if "task" not in row:
            raise ValueError("rows need a 'task' key to count submissions per task")
        key = (row["task"], row["group"])
        counts[key] = counts.get(key, 0) + 1  # type: ignore[index]
    return {key: min(count, k) for key, count in counts.items()}


def annotator_progress(rows: Iterable[Row]) -> dict[Hashable, AnnotatorProgress]:
    """Per annotator: done, skipped, expired, in progress, median seconds per submitted task."""
    result: dict[Hashable, AnnotatorProgress] = {}
    for annotator, own in _by(rows, "annotator").items():
        groups = tuple(dict.fromkeys(row["group"] for row in own))
        gold_done = sum(1 for row in own if row.get("gold") and _state(row) == "submitted")
        result[annotator] = AnnotatorProgress(annotator, groups, _counts(own), gold_done)  # type: ignore[arg-type]
    return result


def group_progress(
    rows: Iterable[Row], *, k: int | None = None, n_tasks: int | None = None
) -> dict[Hashable, GroupProgress]:
    """Per group: counts, distinct annotators and, given ``k`` and ``n_tasks``, completion toward k."""
    rows = list(rows)
    toward = _toward_k(rows, k) if k is not None else {}
    result: dict[Hashable, GroupProgress] = {}
    for group, own in _by(rows, "group").items():
        submitted = tasks_complete = required = None
        if k is not None and n_tasks is not None:
            required = k * n_tasks
            per_task = [count for (_, g), count in toward.items() if g == group]
            submitted = sum(per_task)
            tasks_complete = sum(1 for count in per_task if count >= k)
        result[group] = GroupProgress(
            group=group,
            n_annotators=len({row["annotator"] for row in own}),
            work=_counts(own),
            required=required,
            submitted_toward_k=submitted,
            tasks_complete=tasks_complete,
        )
    return result


def project_progress(
    rows: Iterable[Row], *, k: int, n_tasks: int, groups: Sequence[Hashable]
) -> ProjectProgress:
    """ "n of m done" for the whole project: m = k x groups x tasks; a task is complete when every group
    has k submissions on it."""
    if k < 1 or n_tasks < 0 or not groups:
        raise ValueError("need k >= 1, n_tasks >= 0 and at least one group")
    rows = list(rows)
    unknown = {row["group"] for row in rows} - set(groups)
    if unknown:
        raise ValueError(f"rows from groups outside the project: {sorted(map(str, unknown))}")
    toward = _toward_k(rows, k)
    per_task: dict[Hashable, int] = {}
    for (task, _group), count in toward.items():
        if count >= k:
            per_task[task] = per_task.get(task, 0) + 1
    return ProjectProgress(
        done=sum(toward.values()),
        required=k * len(groups) * n_tasks,
        tasks_complete=sum(1 for complete_groups in per_task.values() if complete_groups == len(groups)),
        n_tasks=n_tasks,
    )
