"""The qualification gate: n gold tasks and a pass mark before any real task."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import services
from annotation.models import Assignment, Membership, TaskSlot

pytestmark = pytest.mark.django_db


@pytest.fixture
def gated(make_project):
    """Best-of-3 on 8 prompts, 4 of them gold (expected pick: canonical response 0), qualification of 4
    gold tasks at a pass mark of 0.75."""
    project = make_project(n_prompts=8, n_models=3, per_group=2, activate=False, kind="best_of_n")
    for task in project.tasks.order_by("id")[:4]:
        services.task_gold_set(task=task, answer=0)
    services.project_qualification_set(project=project, n_tasks=4, pass_mark=0.75)
    services.project_activate(project=project)
    project.refresh_from_db()
    return project


def _answer(project, user, right: bool) -> Assignment:
    assignment = services.assignment_claim(project=project, user=user)
    canonical = 0 if right else 1
    services.assignment_submit(
        token=assignment.token, user=user, payload={"best": assignment.permutation.index(canonical) + 1}
    )
    return assignment


def test_the_set_comes_first_and_a_pass_opens_the_real_tasks(gated):
    user = gated.annotators[0]
    first = [_answer(gated, user, right=i != 0) for i in range(4)]  # 3 of 4 right: 0.75, the pass mark
    assert all(a.is_gold for a in first)
    real = services.assignment_claim(project=gated, user=user)
    assert real is not None and not real.is_gold and real.slot_id is not None
    assert Membership.objects.get(project=gated, user=user).qualification == "passed"
    # Gold never counts toward k: the set's tasks have no places.
    assert gated.n_tasks == 4 and not TaskSlot.objects.filter(task__is_gold=True).exists()


def test_below_the_pass_mark_the_api_serves_no_real_task(gated):
    user = gated.annotators[1]
    for i in range(4):
        _answer(gated, user, right=i < 2)  # 2 of 4 right: 0.5 < 0.75
    api = APIClient()
    api.force_authenticate(user)
    response = api.get(reverse("api-next-task", args=[gated.pk]))
    assert response.status_code == 409
    assert "did not reach the pass mark" in response.json()["detail"]
    assert not Assignment.objects.filter(annotator=user, is_gold=False).exists()
    assert api.get(reverse("api-next-task", args=[gated.pk])).status_code == 409  # and every later try


def test_below_the_pass_mark_the_page_says_so_in_the_annotators_language(client, gated):
    user = gated.annotators[1]
    for i in range(4):
        _answer(gated, user, right=i < 2)
    client.force_login(user)
    client.cookies["django_language"] = "id"
    page = client.post(reverse("annotation:start", args=[gated.pk]), follow=True).content.decode()
    assert "Anda belum mencapai nilai lulus set kualifikasi proyek ini" in page
    assert "did not reach the pass mark" not in page
    assert not Assignment.objects.filter(annotator=user, is_gold=False).exists()


def test_a_set_larger_than_the_gold_tasks_is_refused_with_the_numbers(make_project):
    project = make_project(n_prompts=3, n_models=3, per_group=1, activate=False, kind="best_of_n")
    services.task_gold_set(task=project.tasks.first(), answer=0)
    with pytest.raises(ValueError, match="qualification tasks: 2 asked, but the project has 1 gold task"):
        services.project_qualification_set(project=project, n_tasks=2, pass_mark=0.8)
    project.refresh_from_db()
    assert "qualification_n" not in project.quality_settings


def test_the_manager_sets_the_qualification_on_the_project_page(client, make_user, gated):
    client.force_login(make_user("project_manager"))
    url = reverse("annotation:manage_qualification", args=[gated.pk])
    page = client.post(url, {"n_tasks": 9, "pass_mark": 0.9}, follow=True).content.decode()
    assert "qualification tasks: 9 asked, but the project has 4 gold task(s)." in page
    client.post(url, {"n_tasks": 2, "pass_mark": 0.5})
    gated.refresh_from_db()
    assert (gated.quality_settings["qualification_n"], gated.quality_settings["qualification_pass"]) == (
        2,
        0.5,
    )
    detail = client.get(reverse("annotation:manage_detail", args=[gated.pk])).content.decode()
    assert 'name="n_tasks" value="2"' in detail


def test_a_gold_file_marks_tasks_or_names_every_bad_line(client, make_user, make_project):
    project = make_project(n_prompts=3, n_models=3, per_group=1, activate=False, kind="best_of_n")
    first, second, third = project.tasks.order_by("id")
    client.force_login(make_user("project_manager"))
    url = reverse("annotation:manage_gold_import", args=[project.pk])
    bad = f'task,answer\n{first.pk},0\n999999,1\n{second.pk},"{{""x"": 1}}"\n'
    page = client.post(url, {"text": bad}, follow=True).content.decode()
    assert "line 3, task: &#x27;999999&#x27; is not a task of this project." in page
    assert "line 4, answer:" in page
    assert not project.tasks.filter(is_gold=True).exists()  # nothing written
    client.post(url, {"text": f'task,answer\n{first.pk},0\n{third.pk},"""all_bad"""\n'})
    assert dict(project.tasks.filter(is_gold=True).values_list("pk", "gold_answer")) == {
        first.pk: 0,
        third.pk: "all_bad",
    }
    project.refresh_from_db()
    assert project.n_tasks == 1


def test_a_failed_set_ends_on_the_failure_alone_and_flags_the_annotator(client, make_user, gated):
    user = gated.annotators[1]
    for _ in range(3):
        _answer(gated, user, right=False)
    last = services.assignment_claim(project=gated, user=user)
    client.force_login(user)
    wrong = last.permutation.index(1) + 1
    fragment = client.post(
        reverse("annotation:submit", args=[last.token]), {"best": str(wrong)}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "did not reach the pass mark" in fragment
    assert "All done" not in fragment and "Thank you" not in fragment
    manager = make_user("project_manager", username="pm")
    client.force_login(manager)
    page = client.get(reverse("annotation:manage_detail", args=[gated.pk]))
    flags = {row["annotator"]: row["flags"] for row in page.context["quality"].rows}
    assert flags[user.get_username()] == ["qualification"]
    assert flags[gated.annotators[0].get_username()] == []
    assert "failed qualification" in page.content.decode()
    client.cookies["django_language"] = "id"
    assert (
        "tidak lulus kualifikasi"
        in client.get(reverse("annotation:manage_detail", args=[gated.pk])).content.decode()
    )
