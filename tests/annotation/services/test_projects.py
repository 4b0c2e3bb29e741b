import pytest

from annotation import services
from annotation.models import Project, Rubric, Task, TaskSlot
from tests.annotation.conftest import build_dataset

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


def test_default_rubrics_are_seeded_once_with_category_overrides():
    services.rubric_defaults_ensure()
    services.rubric_defaults_ensure()
    # Per criterion: the general rubric plus safety, math and coding overrides.
    assert Rubric.objects.count() == 2 * 4
    math = Rubric.objects.get(criterion="relevance", category="math")
    assert math.levels["en"]["5"].startswith("Correct final answer")
    assert set(math.levels["id"]) == {"1", "2", "3", "4", "5"}


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
