"""Reviews of submitted work, the parts every job kind shares: who may review what, and the ``Review`` row.

``kinds.review_create`` runs these steps around the kind's own check and follow-up (question authoring
records the verdict on the question's round; translation work may be accepted here but is sent back in
its translation review job) and reopens rejected work for its annotator.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils.translation import gettext_noop

from annotation.models import Annotation, Assignment, Review
from annotation.services.loop import AnnotationError

__all__ = ["review_store", "review_target_lock"]


def review_target_lock(
    *,
    assignment: Assignment,
    reviewer: AbstractBaseUser,
    verdict: str,
    comment: str,
    annotation: Annotation | None,
) -> Assignment:
    """The assignment under review, locked with its project, once the review is allowed: a known verdict,
    somebody else's submitted work, the annotation (if any) of that work, and a comment with a rejection.
    Call inside a transaction."""
    if verdict not in Review.Verdict.values:
        raise AnnotationError(gettext_noop("The verdict is accept or reject."))
    assignment = (
        Assignment.objects.select_for_update(of=("self",)).select_related("project").get(pk=assignment.pk)
    )
    if assignment.annotator_id == reviewer.pk:
        raise AnnotationError(gettext_noop("Nobody reviews their own work."))
    if assignment.status != Assignment.Status.SUBMITTED:
        raise AnnotationError(gettext_noop("Only submitted work can be reviewed."))
    if Review.objects.filter(assignment=assignment, round=assignment.round, reviewer_id=reviewer.pk).exists():
        raise AnnotationError(gettext_noop("You already reviewed this work in its current round."))
    if annotation is not None and annotation.assignment_id != assignment.pk:
        raise AnnotationError(gettext_noop("The annotation belongs to another assignment."))
    if verdict == Review.Verdict.REJECT and not comment.strip():
        raise AnnotationError(gettext_noop("Say what to fix when you reject."))
    return assignment


def review_store(
    *,
    assignment: Assignment,
    reviewer: AbstractBaseUser,
    verdict: str,
    comment: str,
    annotation: Annotation | None,
) -> Review:
    """The review row of the assignment's current round."""
    return Review.objects.create(
        assignment=assignment,
        annotation=annotation,
        reviewer=reviewer,
        verdict=verdict,
        comment=comment.strip(),
        round=assignment.round,
    )
