"""Writes of the review queue and of "My work": accept many items at once, reopen one's own submitted
answer to change it (a new round; the old round's rows stay stored), and the thresholds of the quality
signals that flag annotators in the queue.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.domain.echo import echoed
from annotation.domain.quality import QualityThresholds
from annotation.models import Assignment, Project, Review
from annotation.selectors.review import EDITABLE_KINDS
from annotation.services.kinds import review_create
from annotation.services.loop import AnnotationError, assignment_for_update, reopen

__all__ = ["assignment_edit_open", "project_quality_settings_set", "reviews_accept_many"]


@transaction.atomic
def reviews_accept_many(
    *, assignment_ids: Sequence[int], reviewer: AbstractBaseUser, now: datetime | None = None
) -> list[Review]:
    """Accept every listed item, or none: the first item that cannot be accepted raises
    ``AnnotationError`` naming it, and nothing is written."""
    ids = list(dict.fromkeys(int(i) for i in assignment_ids))
    if not ids:
        raise AnnotationError(gettext_noop("Select at least one item to accept."))
    found = {a.pk: a for a in Assignment.objects.filter(pk__in=ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise AnnotationError(gettext_noop("Item %(item)s does not exist."), item=missing[0])
    now = now or timezone.now()
    reviews = []
    for position, assignment_id in enumerate(ids, start=1):
        try:
            reviews.append(
                review_create(
                    assignment=found[assignment_id], reviewer=reviewer, verdict=Review.Verdict.ACCEPT, now=now
                )
            )
        except AnnotationError as exc:
            raise AnnotationError(
                gettext_noop("Selected item %(position)s (#%(item)s): %(reason)s"),
                position=position,
                item=assignment_id,
                reason=exc,
            ) from exc
    return reviews


@transaction.atomic
def assignment_edit_open(*, token: str, user: AbstractBaseUser, now: datetime | None = None) -> Assignment:
    """Reopen the caller's submitted answer as a new round so they can change it, while the project allows
    edits. The earlier round stays stored (and counts no more once the new round is submitted); the task
    keeps its place and its blinded order."""
    assignment = assignment_for_update(token=token, user=user)
    project = assignment.project
    if project.kind not in EDITABLE_KINDS:
        raise AnnotationError(
            gettext_noop("Work of this kind is changed through its reviewer, not from My work.")
        )
    if assignment.status == Assignment.Status.ASSIGNED:
        return assignment  # already open (returned by a reviewer or opened before)
    if assignment.status != Assignment.Status.SUBMITTED:
        raise AnnotationError(gettext_noop("Only submitted work can be changed."))
    if not (project.allow_edits and project.status in (Project.Status.ACTIVE, Project.Status.PAUSED)):
        raise AnnotationError(gettext_noop("This project no longer allows changes to submitted answers."))
    reopen(assignment, now=now or timezone.now(), by_annotator=True)
    return assignment


def project_quality_settings_set(*, project: Project, settings: dict[str, float | int]) -> Project:
    """Store the quality thresholds of ``project`` (unknown names are refused, each named)."""
    known = set(QualityThresholds().as_dict())
    unknown = [name for name in settings if name not in known]
    if unknown:
        raise AnnotationError(f"Unknown quality setting(s): {echoed(unknown)}.")
    thresholds = QualityThresholds.from_mapping({**project.quality_settings, **settings})
    project.quality_settings = {**project.quality_settings, **thresholds.as_dict()}
    project.save(update_fields=["quality_settings"])
    return project
