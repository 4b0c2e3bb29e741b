"""Marking one task as gold on the project page, with the expected answer in a form shaped by the kind."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Task, TaskSlot
from tests.annotation.conftest import MODEL_NAMES

pytestmark = pytest.mark.django_db


def _url(project, task):
    return reverse("annotation:manage_gold_task", args=[project.pk, task.pk])


def test_likert_gold_answer_follows_each_criterion_scale(client, make_user, make_project):
    project = make_project(
        n_prompts=3, n_models=2, activate=False, criteria=["relevance", "fluency"], kind="likert"
    )
    client.force_login(make_user("project_manager"))
    task = project.tasks.order_by("pk").first()
    page = client.get(_url(project, task)).content.decode()
    # One choice per response per criterion, on the 1-5 scale; responses by number, never by model.
    assert 'name="r0_relevance"' in page and 'name="r1_fluency"' in page
    assert '<option value="5">5</option>' in page and '<option value="6">' not in page
    assert "Jawaban 1 untuk 0" in page and not any(name in page for name in MODEL_NAMES)
    answer = {"r0_relevance": 5, "r0_fluency": 4, "r1_relevance": 2, "r1_fluency": 3}
    # A value off the scale is refused on its own field, and nothing is written.
    response = client.post(_url(project, task), {**answer, "r1_fluency": 7})
    assert response.status_code == 400
    assert list(response.context["form"].errors) == ["r1_fluency"]
    assert not Task.objects.filter(project=project, is_gold=True).exists()
    response = client.post(_url(project, task), answer)
    assert response.status_code == 302
    task.refresh_from_db()
    assert task.is_gold
    assert task.gold_answer == {"0": {"relevance": 5, "fluency": 4}, "1": {"relevance": 2, "fluency": 3}}
    project.refresh_from_db()
    # Gold leaves the k pool: 3 prompts, 1 gold -> 2 tasks toward k, no slot for the gold task.
    assert project.n_tasks == 2 and not TaskSlot.objects.filter(task=task).exists()
    listing = client.get(reverse("annotation:manage_gold_tasks", args=[project.pk])).content.decode()
    assert listing.count('data-testid="gold-task-row"') == 3 and "change answer" in listing


def test_best_of_n_and_pairwise_answers(client, make_user, make_project):
    client.force_login(make_user("project_manager"))
    best = make_project(n_prompts=2, n_models=3, activate=False, kind="best_of_n")
    task = best.tasks.order_by("pk").first()
    response = client.post(_url(best, task), {"best": "3"})  # only responses 0..2 and all_bad exist
    assert response.status_code == 400 and list(response.context["form"].errors) == ["best"]
    assert client.post(_url(best, task), {"best": "2"}).status_code == 302
    task.refresh_from_db()
    assert (task.is_gold, task.gold_answer) == (True, 2)
    pairwise = make_project(n_prompts=2, n_models=2, activate=False, kind="pairwise")
    task = pairwise.tasks.order_by("pk").first()
    assert client.post(_url(pairwise, task), {"vote": "tie"}).status_code == 302
    task.refresh_from_db()
    assert (task.is_gold, task.gold_answer) == (True, "tie")


def test_an_active_project_takes_gold_on_tasks_nobody_was_given(client, make_user, make_project):
    project = make_project(n_prompts=3, n_models=2, activate=True, kind="pairwise")
    client.force_login(make_user("project_manager"))
    annotator = project.annotators[0]
    given = services.assignment_claim(project=project, user=annotator).task
    fresh = project.tasks.exclude(pk=given.pk).order_by("pk").first()
    listing = client.get(reverse("annotation:manage_gold_tasks", args=[project.pk])).content.decode()
    assert "already given out" in listing and "draft" not in listing
    # A task somebody holds keeps counting toward k: refused by number, nothing written.
    response = client.post(_url(project, given), {"vote": "A"})
    assert response.status_code == 400
    assert f"Task {given.pk} has been given to annotators already" in response.content.decode()
    given.refresh_from_db()
    assert not given.is_gold and TaskSlot.objects.filter(task=given).exists()
    assert client.post(_url(project, fresh), {"vote": "B"}).status_code == 302
    fresh.refresh_from_db()
    project.refresh_from_db()
    assert (fresh.is_gold, fresh.gold_answer) == (True, "B")
    assert project.n_tasks == 2 and not TaskSlot.objects.filter(task=fresh).exists()
    # Its answer can change while the project runs; in Indonesian the refusal reads in Indonesian.
    assert client.post(_url(project, fresh), {"vote": "tie"}).status_code == 302
    fresh.refresh_from_db()
    assert fresh.gold_answer == "tie"
    client.cookies["django_language"] = "id"
    page = client.post(_url(project, given), {"vote": "A"}).content.decode()
    assert f"Tugas {given.pk} sudah diberikan kepada anotator" in page


def test_a_closed_project_keeps_its_gold(client, make_user, make_project):
    project = make_project(n_prompts=2, n_models=2, activate=True, kind="pairwise")
    services.project_close(project=project)
    client.force_login(make_user("project_manager"))
    task = project.tasks.order_by("pk").first()
    response = client.post(_url(project, task), {"vote": "A"})
    assert response.status_code == 400
    assert "The project is closed: its gold items cannot change." in response.content.decode()
    task.refresh_from_db()
    assert not task.is_gold
    rate = client.post(reverse("annotation:manage_gold_rate", args=[project.pk]), {"gold_rate": "0.2"})
    assert rate.status_code == 302
    project.refresh_from_db()
    assert project.gold_rate == 0


def test_the_gold_rate_changes_on_an_active_project_for_later_claims(client, make_user, make_project):
    project = make_project(n_prompts=6, n_models=2, activate=True, kind="best_of_n")
    client.force_login(make_user("project_manager"))
    annotator = project.annotators[0]
    before = services.assignment_claim(project=project, user=annotator)
    services.task_gold_set(task=project.tasks.exclude(pk=before.task_id).order_by("pk").first(), answer=0)
    page = client.get(reverse("annotation:manage_detail", args=[project.pk])).content.decode()
    assert 'data-testid="gold-rate"' in page and 'name="gold_rate"' in page
    response = client.post(reverse("annotation:manage_gold_rate", args=[project.pk]), {"gold_rate": "1"})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.gold_rate == 1
    # The task given out before stays as it was; the next claim follows the new rate.
    before.refresh_from_db()
    assert not before.is_gold and before.status == "assigned"
    services.assignment_submit(token=before.token, user=annotator, payload={"best": 1})
    after = services.assignment_claim(project=project, user=annotator)
    assert after.is_gold
    bad = client.post(reverse("annotation:manage_gold_rate", args=[project.pk]), {"gold_rate": "1.5"})
    assert bad.status_code == 302
    project.refresh_from_db()
    assert project.gold_rate == 1


def test_the_service_names_the_missing_rating(make_project):
    project = make_project(n_prompts=2, n_models=2, activate=False, criteria=["relevance", "fluency"])
    task = project.tasks.order_by("pk").first()
    with pytest.raises(ValueError, match=r"answer: .* \(response 2, fluency: missing\)"):
        services.task_gold_mark(
            task=task, answer={"0": {"relevance": 5, "fluency": 4}, "1": {"relevance": 2}}
        )
    with pytest.raises(ValueError, match=r"response 1, relevance: 9 is not on its scale \(1, 2, 3, 4, 5\)"):
        services.task_gold_mark(
            task=task, answer={"0": {"relevance": 9, "fluency": 4}, "1": {"relevance": 2, "fluency": 1}}
        )
    task.refresh_from_db()
    assert not task.is_gold
