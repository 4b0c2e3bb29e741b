"""Quality signals per annotator per project, read with a fixed number of queries whatever the number of
annotations: the project's submitted work (one query), its counted answers (one query), gold accuracy
(``gold_scores``) and the members. The numbers come from ``annotation.domain.quality``.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from annotation.domain.quality import (
    QualitySignals,
    QualityThresholds,
    position_bias,
    rating_spread,
    signal_flags,
    speed,
    straight_lining,
)
from annotation.models import Annotation, Assignment, Membership, Project
from annotation.selectors.core import gold_scores

__all__ = ["QUALITY_COLUMNS", "QualityReport", "flagged_annotators", "quality_report", "quality_rows"]

_NOT_RATINGS = ("best", "vote", "comment", "choice", "ambiguous")
# Columns of the API rows and the CSV, in order.
QUALITY_COLUMNS = (
    "annotator",
    "group",
    "simulated",
    "n_tasks",
    "gold_accuracy",
    "straight_share",
    "spread",
    "project_spread",
    "spread_ratio",
    "median_seconds",
    "project_median_seconds",
    "fast_share",
    "first_share",
    "n_position_votes",
    "position_p",
    "flags",
)


@dataclass(frozen=True)
class QualityReport:
    thresholds: QualityThresholds
    rows: list[dict[str, Any]]

    @property
    def flagged_ids(self) -> set[int]:
        return {row["user_id"] for row in self.rows if row["flags"]}


def quality_report(*, project: Project) -> QualityReport:
    """Per member: the signals, the project's reference figures and the names of the flagged signals."""
    thresholds = QualityThresholds.from_mapping(project.quality_settings)
    work = list(
        Assignment.objects.filter(project=project, status=Assignment.Status.SUBMITTED, is_gold=False)
        .order_by()
        .values_list("id", "annotator_id", "seconds_on_task", "permutation")
    )
    owner = {pk: annotator for pk, annotator, _, _ in work}
    swapped = {pk for pk, _, _, permutation in work if permutation == [1, 0]}
    seconds: dict[int, list[float]] = defaultdict(list)
    for _, annotator, secs, _ in work:
        if secs is not None:
            seconds[annotator].append(secs)
    ratings: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    first_votes: dict[int, list[bool]] = defaultdict(list)
    rows = (
        Annotation.objects.counted()
        .filter(assignment__project=project)
        .order_by()
        .values_list("assignment_id", "criterion", "value_int", "choice")
    )
    for assignment_id, criterion, value, choice in rows.iterator(chunk_size=20_000):
        if criterion == "vote":
            if choice in ("A", "B"):
                # Stored votes are canonical; the side shown first is A unless the pair was swapped.
                first_votes[owner[assignment_id]].append((choice == "A") != (assignment_id in swapped))
        elif value is not None and criterion not in _NOT_RATINGS:
            ratings[assignment_id][criterion].append(value)
    tasks_of: dict[int, list[dict[str, list[int]]]] = defaultdict(list)
    values_of: dict[int, list[int]] = defaultdict(list)
    for assignment_id, by_criterion in ratings.items():
        annotator = owner[assignment_id]
        tasks_of[annotator].append(by_criterion)
        for values in by_criterion.values():
            values_of[annotator].extend(values)
    everybody = [v for values in values_of.values() for v in values]
    project_spread = rating_spread(everybody)
    all_seconds = [s for values in seconds.values() for s in values]
    project_median = statistics.median(all_seconds) if all_seconds else None
    n_tasks: dict[int, int] = defaultdict(int)
    for _, annotator, _, _ in work:
        n_tasks[annotator] += 1
    gold = gold_scores(project=project)
    result = []
    for membership in (
        Membership.objects.filter(project=project)
        .select_related("user", "group")
        .order_by("group_id", "user__username")
    ):
        uid, name = membership.user_id, membership.user.get_username()
        median, fast = speed(seconds.get(uid, []), floor=thresholds.speed_floor_seconds)
        share, p = position_bias(first_votes.get(uid, []))
        accuracy = gold.get(name)
        signals = QualitySignals(
            n_tasks=n_tasks.get(uid, 0),
            gold_accuracy=accuracy.mean_score if accuracy else None,
            straight_share=straight_lining(tasks_of.get(uid, [])),
            spread=rating_spread(values_of.get(uid, [])),
            project_spread=project_spread,
            median_seconds=median,
            project_median_seconds=project_median,
            fast_share=fast,
            first_share=share,
            n_position_votes=len(first_votes.get(uid, [])),
            position_p=p,
        )
        result.append(
            {
                "user_id": uid,
                "annotator": name,
                "group": membership.group.name,
                "simulated": membership.is_simulated,
                "signals": signals,
                "flags": signal_flags(signals, thresholds),
            }
        )
    return QualityReport(thresholds=thresholds, rows=result)


def flagged_annotators(*, project_ids: list[int] | None = None) -> dict[int, set[int]]:
    """Project id -> ids of the annotators a quality signal flags there (the given projects, or every
    active and paused one)."""
    projects = Project.objects.all()
    if project_ids is not None:
        projects = projects.filter(pk__in=project_ids)
    else:
        projects = projects.filter(status__in=[Project.Status.ACTIVE, Project.Status.PAUSED])
    return {project.pk: quality_report(project=project).flagged_ids for project in projects}


def quality_rows(report: QualityReport) -> list[dict[str, Any]]:
    """Plain rows of the report (``QUALITY_COLUMNS``) for the API and the CSV; flags joined by ``;``
    in the CSV, a list in JSON."""
    rows = []
    for row in report.rows:
        signals: QualitySignals = row["signals"]
        rows.append(
            {
                "annotator": row["annotator"],
                "group": row["group"],
                "simulated": row["simulated"],
                "n_tasks": signals.n_tasks,
                "gold_accuracy": signals.gold_accuracy,
                "straight_share": signals.straight_share,
                "spread": signals.spread,
                "project_spread": signals.project_spread,
                "spread_ratio": signals.spread_ratio,
                "median_seconds": signals.median_seconds,
                "project_median_seconds": signals.project_median_seconds,
                "fast_share": signals.fast_share,
                "first_share": signals.first_share,
                "n_position_votes": signals.n_position_votes,
                "position_p": signals.position_p,
                "flags": list(row["flags"]),
            }
        )
    return rows
