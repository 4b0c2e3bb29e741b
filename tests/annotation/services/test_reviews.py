"""Reviews of rating work: a rejection reopens the task for its annotator; what may be reviewed."""

import pytest

from annotation import services
from annotation.models import Annotation, TaskSlot
from annotation.services import assignment_claim, assignment_submit
from tests.annotation.conftest import likert_payload

pytestmark = pytest.mark.django_db


def test_reject_sends_the_task_back_to_the_same_annotator(make_project, make_user):
    project = make_project(n_models=3, per_group=1)
    user = project.annotators[0]
    reviewer = make_user("reviewer")
    assignment = assignment_claim(project=project, user=user)
    assignment_submit(token=assignment.token, user=user, payload=likert_payload(3))
    review = services.review_create(
        assignment=assignment, reviewer=reviewer, verdict="reject", comment="Baca lagi"
    )
    assert review.round == 1
    back = assignment_claim(project=project, user=user)
    assert back.pk == assignment.pk and back.round == 2 and back.status == "assigned"
    slot = TaskSlot.objects.get(pk=assignment.slot_id)
    assert (slot.active_count, slot.submitted_count) == (1, 0)
    assignment_submit(token=back.token, user=user, payload=likert_payload(3, value=5))
    # Round 1 rows stay as history next to the new round.
    assert Annotation.objects.filter(assignment=assignment, round=1).count() == 6
    assert Annotation.objects.filter(assignment=assignment, round=2).count() == 6
    accepted = services.review_create(assignment=assignment, reviewer=reviewer, verdict="accept")
    assert accepted.round == 2


def test_reviewing_needs_submitted_work_and_a_reason_to_reject(make_project, make_user):
    project = make_project(n_models=3)
    user = project.annotators[0]
    assignment = assignment_claim(project=project, user=user)
    with pytest.raises(services.AnnotationError):
        services.review_create(assignment=assignment, reviewer=make_user("reviewer"), verdict="accept")
    assignment_submit(token=assignment.token, user=user, payload=likert_payload(3))
    with pytest.raises(services.AnnotationError):
        services.review_create(assignment=assignment, reviewer=make_user("reviewer"), verdict="reject")
    with pytest.raises(services.AnnotationError):
        services.review_create(assignment=assignment, reviewer=user, verdict="accept")
