"""The database keeps annotation's invariants even when a write bypasses the services."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F

from annotation import services
from annotation.models import (
    Annotation,
    AnnotatorGroup,
    Assignment,
    Membership,
    Project,
    Review,
    Rubric,
    TaskSlot,
)
from tests.annotation.conftest import likert_payload

pytestmark = pytest.mark.django_db


def refused(write):
    with pytest.raises(IntegrityError), transaction.atomic():
        write()


def test_project_overlap_is_positive_and_gold_rate_a_fraction(make_project):
    project = make_project(n_prompts=1)
    refused(lambda: Project.objects.filter(pk=project.pk).update(overlap=0))
    refused(lambda: Project.objects.filter(pk=project.pk).update(gold_rate=1.5))
    refused(lambda: Project.objects.filter(pk=project.pk).update(gold_rate=-0.1))
    Project.objects.filter(pk=project.pk).update(overlap=1, gold_rate=1)  # the bounds themselves are fine


def test_full_clean_reports_the_check_constraints(make_project):
    project = make_project(n_prompts=1)
    project.overlap = 0
    with pytest.raises(ValidationError) as err:
        project.full_clean()
    assert "project_overlap_positive" in str(err.value)


def test_slot_counts_always_add_up_to_capacity(make_project):
    project = make_project(n_prompts=1, overlap=2)
    slot = TaskSlot.objects.get(project=project)
    refused(lambda: TaskSlot.objects.filter(pk=slot.pk).update(open_count=F("open_count") - 1))
    refused(lambda: TaskSlot.objects.filter(pk=slot.pk).update(active_count=F("active_count") + 1))
    # Moving one place from open to active keeps the sum.
    TaskSlot.objects.filter(pk=slot.pk).update(open_count=F("open_count") - 1, active_count=1)


def test_one_slot_per_task_and_group(make_project):
    project = make_project(n_prompts=1)
    slot = TaskSlot.objects.get(project=project)
    slot.pk = None
    refused(slot.save)


def test_one_assignment_per_task_and_annotator(make_project):
    project = make_project(n_prompts=2, per_group=1)
    user = project.annotators[0]
    assignment = services.assignment_claim(project=project, user=user)
    duplicate = Assignment(
        project=project,
        task_id=assignment.task_id,
        group_id=assignment.group_id,
        annotator=user,
        started_at=assignment.started_at,
    )
    refused(duplicate.save)


def test_one_group_name_and_one_membership_per_project(make_project, make_user):
    project = make_project(n_prompts=1, per_group=1)
    refused(lambda: AnnotatorGroup.objects.create(project=project, name="G1"))
    member = Membership.objects.get(project=project)
    member.pk = None
    refused(member.save)


def test_one_value_per_response_turn_and_criterion_even_when_the_response_is_empty(make_project):
    project = make_project(n_prompts=1, per_group=1, n_models=2)
    user = project.annotators[0]
    assignment = services.assignment_claim(project=project, user=user)
    services.assignment_submit(token=assignment.token, user=user, payload=likert_payload(2))
    rated = Annotation.objects.filter(assignment=assignment, criterion="relevance").first()
    refused(
        lambda: Annotation.objects.create(
            assignment=assignment, response_id=rated.response_id, criterion="relevance", value_int=1
        )
    )
    Annotation.objects.create(assignment=assignment, criterion="comment", comment="first")
    # No response and no turn: the constraint still sees the two rows as the same value.
    refused(lambda: Annotation.objects.create(assignment=assignment, criterion="comment", comment="again"))
    # The same criterion in a later round is another value.
    Annotation.objects.create(assignment=assignment, round=2, criterion="comment", comment="round two")


def test_one_whole_review_per_round_and_reviewer(make_project, make_user):
    project = make_project(n_prompts=1, per_group=1, n_models=2)
    user, reviewer = project.annotators[0], make_user("reviewer")
    assignment = services.assignment_claim(project=project, user=user)
    services.assignment_submit(token=assignment.token, user=user, payload=likert_payload(2))
    Review.objects.create(assignment=assignment, reviewer=reviewer, verdict="accept", round=1)
    refused(
        lambda: Review.objects.create(assignment=assignment, reviewer=reviewer, verdict="reject", round=1)
    )
    # Reviews of single values are not limited by it.
    value = assignment.annotations.first()
    for verdict in ("accept", "reject"):
        Review.objects.create(
            assignment=assignment, annotation=value, reviewer=reviewer, verdict=verdict, round=1
        )


def test_rubric_versions_are_unique_per_criterion_and_category():
    services.rubric_defaults_ensure()
    general = Rubric.objects.get(criterion="relevance", category="", version=1)
    general.pk = None
    refused(general.save)
    general.version = 2
    general.save()
