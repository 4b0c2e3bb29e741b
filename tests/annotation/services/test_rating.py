"""Rating jobs: tasks of likert and pairwise projects, their settings, answers mapped to canonical responses."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import services
from annotation.models import Annotation, Project, Task, TaskSlot
from annotation.services import assignment_claim, assignment_submit
from tests.annotation.conftest import build_dataset, likert_payload

pytestmark = pytest.mark.django_db


def test_likert_project_has_one_task_per_prompt_with_every_response():
    dataset = build_dataset(n_prompts=3, n_models=5)
    project = services.project_create(dataset=dataset, name="p", kind="likert", groups=["A", "B"], seed=5)
    tasks = list(Task.objects.filter(project=project).select_related("prompt"))
    assert len(tasks) == 3 and project.n_tasks == 3
    for task in tasks:
        # Canonical order is the responses' id order.
        assert task.response_ids == sorted(task.prompt.responses.values_list("id", flat=True))
        assert len(task.response_ids) == 5
    # Two groups x three tasks, each with k=3 open places.
    slots = TaskSlot.objects.filter(project=project)
    assert slots.count() == 6
    assert {(s.capacity, s.open_count, s.active_count, s.submitted_count) for s in slots} == {(3, 3, 0, 0)}
    assert project.criteria == ["relevance", "fluency"]
    assert project.rubric_versions == {"relevance": 1, "fluency": 1}


def test_pairwise_all_pairs_per_turn():
    dataset = build_dataset(n_prompts=2, n_models=3, n_turns=2)
    project = services.project_create(
        dataset=dataset, name="pw", kind="pairwise", pair_mode="all", turn_mode="per_turn", seed=1
    )
    # 3 models -> 3 pairs; 2 turns each -> 6 tasks per prompt, 12 in all.
    tasks = Task.objects.filter(project=project)
    assert tasks.count() == 12
    task = tasks.select_related("response_a", "response_b").first()
    assert task.response_ids == [task.response_a_id, task.response_b_id]
    # Canonical pair order is by model name.
    assert task.response_a.model_name < task.response_b.model_name
    assert sorted(set(tasks.values_list("turn", flat=True))) == [0, 1]


def test_pairwise_sampled_pairs_are_distinct_per_prompt():
    dataset = build_dataset(n_prompts=4, n_models=5)
    project = services.project_create(
        dataset=dataset, name="pw", kind="pairwise", pair_mode="sample", pairs_per_prompt=3, seed=3
    )
    for prompt in dataset.prompts.all():
        pairs = [tuple(t.response_ids) for t in Task.objects.filter(project=project, prompt=prompt)]
        assert len(pairs) == 3 and len(set(pairs)) == 3


def test_invalid_settings_are_reported_per_field():
    dataset = build_dataset(n_prompts=1)
    with pytest.raises(services.ProjectInvalid) as err:
        services.project_create(
            dataset=dataset, name="x", kind="likert", criteria=["relevance", "charm"], overlap=0, gold_rate=2
        )
    assert set(err.value.errors) == {"criteria", "overlap", "gold_rate"}
    assert not Project.objects.exists()


def test_double_submit_stores_one_answer_and_edit_replaces_it(make_project):
    project = make_project(n_prompts=2, n_models=3)
    user = project.annotators[0]
    assignment = assignment_claim(project=project, user=user)
    first = assignment_submit(token=assignment.token, user=user, payload=likert_payload(3, value=4))
    second = assignment_submit(token=assignment.token, user=user, payload=likert_payload(3, value=4))
    assert (first.outcome, second.outcome) == ("created", "unchanged")
    # 3 responses x 2 criteria = 6 rows.
    assert Annotation.objects.filter(assignment=assignment).count() == 6
    assert TaskSlot.objects.get(pk=assignment.slot_id).submitted_count == 1
    edited = assignment_submit(
        token=assignment.token, user=user, payload=likert_payload(3, value=2, comment="ok")
    )
    assert edited.outcome == "edited"
    values = set(Annotation.objects.filter(assignment=assignment).values_list("criterion", "value_int"))
    assert values == {("relevance", 2), ("fluency", 2), ("comment", None)}
    assert TaskSlot.objects.get(pk=assignment.slot_id).submitted_count == 1


def test_edit_refused_when_project_forbids_and_lease_is_over(make_project):
    project = make_project(allow_edits=False, n_models=3)
    user = project.annotators[0]
    now = timezone.now()
    assignment = assignment_claim(project=project, user=user, now=now)
    assignment_submit(token=assignment.token, user=user, payload=likert_payload(3), now=now)
    # Within the lease an edit is still fine.
    assert (
        assignment_submit(
            token=assignment.token, user=user, payload=likert_payload(3, value=5), now=now
        ).outcome
        == "edited"
    )
    with pytest.raises(services.AssignmentClosed):
        assignment_submit(
            token=assignment.token,
            user=user,
            payload=likert_payload(3, value=1),
            now=now + timedelta(hours=2),
        )


def test_invalid_payload_reports_fields_and_writes_nothing(make_project):
    project = make_project(n_models=3)
    user = project.annotators[0]
    assignment = assignment_claim(project=project, user=user)
    payload = likert_payload(3)
    payload["ratings"]["2"]["fluency"] = 7
    del payload["ratings"]["3"]
    with pytest.raises(services.SubmissionInvalid) as err:
        assignment_submit(token=assignment.token, user=user, payload=payload)
    assert set(err.value.errors) == {"ratings.2.fluency", "ratings.3.relevance", "ratings.3.fluency"}
    assignment.refresh_from_db()
    assert assignment.status == "assigned" and not Annotation.objects.exists()


def test_answers_are_stored_against_canonical_responses(make_project):
    project = make_project(n_models=5, best_pick="required")
    user = project.annotators[0]
    assignment = assignment_claim(project=project, user=user)
    perm = assignment.permutation
    # Rate the response shown first 5 and every other one 1; pick the third shown as best.
    payload = {
        "ratings": {str(i + 1): {"relevance": 5 if i == 0 else 1, "fluency": 3} for i in range(5)},
        "best": 3,
    }
    assignment_submit(token=assignment.token, user=user, payload=payload)
    ids = assignment.task.response_ids
    top = Annotation.objects.get(assignment=assignment, criterion="relevance", value_int=5)
    assert top.response_id == ids[perm[0]]
    assert Annotation.objects.get(assignment=assignment, criterion="best").response_id == ids[perm[2]]


def test_pairwise_vote_is_mapped_back_to_canonical_sides(make_project):
    # Each task's sides are swapped or not by its own seeded draw: with 24 tasks, both cases come up in
    # all but one run in eight million (with 6, one run in 32 saw only one of them).
    project = make_project(kind="pairwise", n_models=2, n_prompts=24, per_group=1)
    user = project.annotators[0]
    seen = set()
    while (assignment := assignment_claim(project=project, user=user)) is not None:
        assignment_submit(token=assignment.token, user=user, payload={"vote": "A"})
        row = Annotation.objects.get(assignment=assignment, criterion="vote")
        swapped = assignment.permutation == [1, 0]
        seen.add(swapped)
        # "A" on screen is canonical B exactly when the sides were swapped; the winner is what was shown as A.
        assert row.choice == ("B" if swapped else "A")
        assert row.response_id == assignment.task.response_ids[assignment.permutation[0]]
    assert seen == {True, False}
