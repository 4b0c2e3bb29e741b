"""Quality signals per annotator per project, read with a fixed number of queries whatever the number of
annotations: the project's submitted work, two aggregates of its counted ratings (the votes too, for a
pairwise project), gold accuracy (``gold_scores``), attention checks of error-span projects
(``attention_check_scores``) and the members. The numbers come from ``annotation.domain.quality`` and
``annotation.domain.error_spans``.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Count
from django.utils.translation import gettext_lazy

from annotation.domain.gold import qualification_outcome, qualification_settings_from
from annotation.domain.quality import (
    QualitySignals,
    QualityThresholds,
    position_bias,
    signal_flags,
    speed,
    spread_from_moments,
    straight_share,
)
from annotation.domain.reliability import dawid_skene
from annotation.models import SPAN_KINDS, Annotation, Assignment, Membership, Project
from annotation.selectors.core import gold_scores
from annotation.selectors.spans import attention_check_count, attention_check_scores

__all__ = [
    "FLAG_LABELS",
    "QUALITY_COLUMNS",
    "QualityReport",
    "annotator_reliability",
    "flagged_annotators",
    "quality_report",
    "quality_rows",
]

_NOT_RATINGS = ("best", "vote", "comment", "choice", "ambiguous")
# One pass over the project's counted ratings, in the database: per (assignment, criterion) the lowest and
# highest value and their number; per task whether some criterion has two or more values and whether one
# of those is flat (lowest == highest: every response got the same value, ``domain.quality.straight_lining``);
# per annotator the tasks that count, the flat ones, and the count, sum and sum of squares of the ratings.
_RATING_SUMMARY_SQL = """
SELECT annotator_id,
       SUM(CASE WHEN rated = 1 THEN 1 ELSE 0 END),
       SUM(CASE WHEN rated = 1 THEN flat ELSE 0 END),
       SUM(n), SUM(total), SUM(squares)
FROM (
    SELECT assignment_id, annotator_id,
           MAX(CASE WHEN n >= 2 THEN 1 ELSE 0 END) AS rated,
           MAX(CASE WHEN n >= 2 AND lo = hi THEN 1 ELSE 0 END) AS flat,
           SUM(n) AS n, SUM(total) AS total, SUM(squares) AS squares
    FROM (
        SELECT a.assignment_id, s.annotator_id, a.criterion,
               MIN(a.value_int) AS lo, MAX(a.value_int) AS hi, COUNT(*) AS n,
               SUM(a.value_int) AS total, SUM(a.value_int * a.value_int) AS squares
        FROM annotation_annotation a
        JOIN annotation_assignment s ON a.assignment_id = s.id
        WHERE s.project_id = %s AND s.status = %s AND NOT s.is_gold AND a.round = s.round
          AND a.value_int IS NOT NULL AND a.criterion NOT IN (%s, %s, %s, %s, %s)
        GROUP BY a.assignment_id, s.annotator_id, a.criterion
    ) per_criterion
    GROUP BY assignment_id, annotator_id
) per_task
GROUP BY annotator_id
"""
# What the project page shows for each flag's code (the API and the CSV give the codes).
FLAG_LABELS = {
    "qualification": gettext_lazy("failed qualification"),
    "gold": gettext_lazy("gold accuracy"),
    "straight_lining": gettext_lazy("straight-lining"),
    "spread": gettext_lazy("narrow spread"),
    "speed": gettext_lazy("too fast"),
    "position": gettext_lazy("position bias"),
    "attention": gettext_lazy("missed attention checks"),
}
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
    "reliability",
    "checks_seen",
    "checks_found",
    "checks_missed",
    "checks_share",
    "flags",
)


@dataclass(frozen=True)
class QualityReport:
    """``n_checks``: the project's attention checks (error-span projects; 0 elsewhere); each row's
    ``attention`` holds the annotator's ``seen``, ``found``, ``missed`` and ``share`` of them, or None."""

    thresholds: QualityThresholds
    rows: list[dict[str, Any]]
    n_checks: int = 0

    @property
    def flagged_ids(self) -> set[int]:
        return {row["user_id"] for row in self.rows if row["flags"]}


def quality_report(*, project: Project) -> QualityReport:
    """Per member: the signals, the project's reference figures and the names of the flagged signals.

    The database does the per-row work: per (assignment, criterion) the lowest and highest rating and their
    number (straight-lining), per annotator the count, sum and sum of squares of their ratings (spread);
    only pairwise projects read their votes row by row (with the permutation each was shown in).
    """
    thresholds = QualityThresholds.from_mapping(project.quality_settings)
    work = Assignment.objects.filter(
        project=project, status=Assignment.Status.SUBMITTED, is_gold=False
    ).order_by()
    seconds: dict[int, list[float]] = defaultdict(list)
    n_tasks: dict[int, int] = defaultdict(int)
    for annotator, secs in work.values_list("annotator_id", "seconds_on_task").iterator(chunk_size=20_000):
        n_tasks[annotator] += 1
        if secs is not None:
            seconds[annotator].append(secs)
    counted = Annotation.objects.counted().filter(assignment__project=project).order_by()
    straight: dict[int, tuple[int, int]] = {}
    moments: dict[int, tuple[int, int, int]] = {}
    with connection.cursor() as cursor:
        cursor.execute(_RATING_SUMMARY_SQL, [project.pk, Assignment.Status.SUBMITTED, *_NOT_RATINGS])
        for annotator, n_counted, n_flat, n, total, squares in cursor.fetchall():
            straight[annotator] = (int(n_counted or 0), int(n_flat or 0))
            moments[annotator] = (int(n), int(total), int(squares))
    first_votes: dict[int, list[bool]] = defaultdict(list)
    if project.is_pairwise:
        for annotator, choice, permutation in counted.filter(
            criterion="vote", choice__in=["A", "B"]
        ).values_list("assignment__annotator_id", "choice", "assignment__permutation"):
            # Stored votes are canonical; the side shown first is A unless the pair was swapped.
            first_votes[annotator].append((choice == "A") != (permutation == [1, 0]))
    everybody = [sum(column) for column in zip(*moments.values(), strict=True)] if moments else [0, 0, 0]
    project_spread = spread_from_moments(*everybody)
    all_seconds = [s for values in seconds.values() for s in values]
    project_median = statistics.median(all_seconds) if all_seconds else None
    reliability = _reliability(counted)
    gold = gold_scores(project=project)
    n_required, pass_mark = qualification_settings_from(project.quality_settings)
    gold_done: dict[int, int] = {}
    if n_required:
        gold_done = dict(
            Assignment.objects.filter(project=project, is_gold=True, status=Assignment.Status.SUBMITTED)
            .order_by()
            .values("annotator_id")
            .annotate(n=Count("id"))
            .values_list("annotator_id", "n")
        )
    n_checks, checks = 0, {}
    if project.kind in SPAN_KINDS:
        n_checks = attention_check_count(project)
        checks = attention_check_scores(project) if n_checks else {}
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
            straight_share=straight_share(*straight.get(uid, (0, 0))),
            spread=spread_from_moments(*moments.get(uid, (0, 0, 0))),
            project_spread=project_spread,
            median_seconds=median,
            project_median_seconds=project_median,
            fast_share=fast,
            first_share=share,
            n_position_votes=len(first_votes.get(uid, [])),
            position_p=p,
            attention_share=(checks.get(uid) or {}).get("share"),
        )
        # Read from the answers: a refused claim rolls back what it noted on the membership.
        failed = membership.qualification == "failed" or (
            membership.qualification != "passed"
            and qualification_outcome(
                n_required=n_required,
                pass_mark=pass_mark,
                n_done=gold_done.get(uid, 0),
                mean_score=accuracy.mean_score if accuracy else None,
            )
            == "failed"
        )
        flags = signal_flags(signals, thresholds, qualification_failed=failed)
        result.append(
            {
                "user_id": uid,
                "annotator": name,
                "group": membership.group.name,
                "simulated": membership.is_simulated,
                "signals": signals,
                "reliability": reliability.get(uid),
                "attention": checks.get(uid),
                "flags": flags,
                "flag_labels": [FLAG_LABELS.get(flag, flag) for flag in flags],
            }
        )
    return QualityReport(thresholds=thresholds, rows=result, n_checks=n_checks)


def annotator_reliability(*, project: Project) -> dict[int, float]:
    """User id -> Dawid-Skene accuracy over the project's counted categorical answers: the number the
    progress page shows beside the quality signals; empty when fewer than two annotators answered."""
    return _reliability(Annotation.objects.counted().filter(assignment__project=project).order_by())


def _reliability(counted: Any) -> dict[int, float]:
    """Dawid-Skene accuracy per annotator over the project's categorical answers (pairwise votes, best-of-N
    picks, multiple-choice answers), one item per (task, turn); empty when fewer than two annotators."""
    items, annotators, answers = [], [], []
    for task_id, turn, annotator, criterion, choice, response_id in counted.filter(
        criterion__in=["vote", "best", "choice"]
    ).values_list(
        "assignment__task_id", "turn", "assignment__annotator_id", "criterion", "choice", "response_id"
    ):
        answer = response_id if criterion == "best" and response_id is not None else choice
        if answer in (None, ""):
            continue
        items.append((task_id, turn))
        annotators.append(annotator)
        answers.append(answer)
    if len(set(annotators)) < 2:
        return {}
    fit = dawid_skene(items, annotators, answers)
    return {int(a): accuracy for a, accuracy in fit.accuracy.items()}  # type: ignore[call-overload]


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
                "reliability": row["reliability"],
                **{
                    f"checks_{k}": (row["attention"] or {}).get(k)
                    for k in ("seen", "found", "missed", "share")
                },
                "flags": list(row["flags"]),
            }
        )
    return rows
