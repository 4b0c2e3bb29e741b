"""Project set-up shared by every kind: rubrics, status, groups and members, overlap changes."""

import pytest

from annotation import services
from annotation.models import Rubric, TaskSlot
from annotation.services import assignment_claim
from tests.annotation.conftest import build_dataset

pytestmark = pytest.mark.django_db


def test_default_rubrics_are_seeded_once_with_category_overrides():
    services.rubric_defaults_ensure()
    services.rubric_defaults_ensure()
    # Per criterion: the general rubric plus safety, math and coding overrides.
    assert Rubric.objects.count() == 2 * 4
    math = Rubric.objects.get(criterion="relevance", category="math")
    assert math.levels["en"]["5"].startswith("Correct final answer")
    assert set(math.levels["id"]) == {"1", "2", "3", "4", "5"}


def test_status_transitions_and_activation_needs_members(make_project, make_user):
    project = services.project_create(dataset=build_dataset(n_prompts=1), name="x", kind="best_of_n")
    with pytest.raises(services.AnnotationError, match="Add at least one annotator"):
        services.project_activate(project=project)
    services.project_member_add(project=project, user=make_user("annotator"), group=project.groups.get())
    assert services.project_activate(project=project).status == "active"
    assert services.project_pause(project=project).status == "paused"
    assert services.project_activate(project=project).status == "active"
    assert services.project_close(project=project).status == "closed"
    with pytest.raises(services.AnnotationError):
        services.project_activate(project=project)


def test_member_is_in_one_group_per_project(make_project, make_user):
    project = make_project(groups=2, per_group=1)
    first, second = project.groups.order_by("id")
    user = project.annotators[0]
    assert services.project_member_add(project=project, user=user, group=first).group == first
    services.assignment_claim(project=project, user=user)
    with pytest.raises(services.ProjectInvalid):
        services.project_member_add(project=project, user=user, group=second)


def test_overlap_changes_only_in_draft(make_project):
    project = make_project(activate=False, overlap=2)
    services.project_update(project=project, overlap=4)
    assert set(TaskSlot.objects.filter(project=project).values_list("capacity", "open_count")) == {(4, 4)}
    services.project_activate(project=project)
    with pytest.raises(services.ProjectInvalid):
        services.project_update(project=project, overlap=2)


def test_removing_a_member_frees_their_claims(make_project):
    project = make_project(n_prompts=1, per_group=2, overlap=1)
    leaving, staying = project.annotators
    assignment_claim(project=project, user=leaving)
    assert services.project_member_remove(project=project, user=leaving)
    assert assignment_claim(project=project, user=staying) is not None
