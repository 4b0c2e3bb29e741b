"""API of the translation and question jobs: the same next/annotations loop, pairs, reports, recompute."""

import pytest

from annotation import services
from datasets_app.models import TranslationUnit
from tests.annotation.conftest import build_question_dataset, build_translation_dataset

pytestmark = pytest.mark.django_db


def test_review_loop_over_the_api(api_client_for, make_user, job_project):
    dataset = build_translation_dataset(n_units=1)
    translator = api_client_for("annotator")
    reviewer = api_client_for("annotator")
    translate = job_project(kind="translation", dataset=dataset, members=[translator.user])
    review = job_project(kind="translation_review", dataset=dataset, members=[reviewer.user])

    task = translator.get(f"/api/v1/projects/{translate.pk}/next").json()
    assert task["kind"] == "translation" and task["item"]["register"]["code"] == "krama"
    bad = translator.post(f"/api/v1/tasks/{task['task']}/annotations", {"answer": {}}, format="json")
    assert bad.status_code == 400 and "translation" in bad.json()["errors"]
    ok = translator.post(
        f"/api/v1/tasks/{task['task']}/annotations",
        {"answer": {"translation": "Kula nedha sekul."}},
        format="json",
    )
    assert ok.status_code == 201

    shown = reviewer.get(f"/api/v1/projects/{review.pk}/next").json()
    assert shown["item"]["translation"] == "Kula nedha sekul."
    assert shown["item"]["translator"].startswith("T-") and translator.user.username not in str(shown)
    verdict = {
        "verdict": "reject",
        "error_categories": ["wrong_language"],
        "comment": "Ini bahasa Indonesia.",
    }
    assert (
        reviewer.post(
            f"/api/v1/tasks/{shown['task']}/annotations", {"answer": verdict}, format="json"
        ).status_code
        == 201
    )
    assert TranslationUnit.objects.get().status == "revise"
    again = translator.get(f"/api/v1/projects/{translate.pk}/next").json()
    assert again["task"] == task["task"] and again["round"] == 2
    assert again["item"]["returned"] == {"categories": ["Wrong language"], "comment": "Ini bahasa Indonesia."}


def test_manager_operations(api_client_for, make_user, job_project, django_capture_on_commit_callbacks):
    manager = api_client_for("project_manager")
    created = manager.post(
        "/api/v1/projects/create",
        {"name": "Tulis", "kind": "question_authoring", "overlap": 1},
        format="json",
    )
    assert created.status_code == 201, created.json()
    project_id = created.json()["id"]
    bad = manager.post(
        f"/api/v1/projects/{project_id}/pairs",
        {"pairs": [{"category": "food", "concept": "x", "language": "qq"}]},
        format="json",
    )
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "language"
    added = manager.post(
        f"/api/v1/projects/{project_id}/pairs",
        {"pairs": [{"category": "food", "concept": "ketupat"}]},
        format="json",
    )
    assert added.status_code == 201 and added.json() == {"added": 1, "skipped": 0}

    creator, answerer = (
        make_user("annotator", username="creator"),
        make_user("annotator", username="answerer"),
    )
    dataset = build_question_dataset(creators=[creator], n_per_creator=2)
    mcq = job_project(kind="mcq_answer", dataset=dataset, members=[answerer])
    for choice in ("B", "A"):
        work = services.assignment_claim(project=mcq, user=answerer)
        services.assignment_submit(token=work.token, user=answerer, payload={"choice": choice})
    report = manager.get(f"/api/v1/projects/{mcq.pk}/answers/report").json()
    assert report["total_conflicts"] == 1 and report["accuracy"] == 0.5
    assert report["ambiguous_counts"] == {"q-creator-0": 0, "q-creator-1": 0}
    assert report["conflicts"] == [
        {"creator": "creator", "answerer": "answerer", "n_answers": 2, "n_conflicts": 1, "n_blank": 0}
    ]
    # No review yet; the project's taxonomy is id-csqa's, "Invalid options" for options only.
    assert report["taxonomy"] is None and report["option_taxonomy"] is None
    assert report["taxonomy_shares"] is None
    assert len(report["taxonomy_categories"]) == 8
    assert report["taxonomy_categories"][-1]["applies_to"] == ["options"]

    units = build_translation_dataset(n_units=3, translated=True)
    review = job_project(kind="translation_review", dataset=units, members=[make_user("annotator")])
    with django_capture_on_commit_callbacks(execute=True):
        started = manager.post(f"/api/v1/projects/{review.pk}/flags/recompute")
    assert started.status_code == 202
    run = manager.get(f"/api/v1/flag-recomputes/{started.json()['id']}").json()
    assert (run["status"], run["done"], run["total"]) == ("succeeded", 3, 3)
    assert (
        manager.get(f"/api/v1/projects/{review.pk}/translation/report").json()["status_counts"]["to_review"]
        == 3
    )
    assert manager.get(f"/api/v1/projects/{mcq.pk}/translation/report").status_code == 404


def test_answering_loop_uses_a_fixed_number_of_queries(
    api_client_for, make_user, job_project, django_assert_max_num_queries
):
    answerer = api_client_for("annotator")
    dataset = build_question_dataset(creators=[make_user("annotator")], n_per_creator=6)
    project = job_project(kind="mcq_answer", dataset=dataset, members=[answerer.user])
    for _ in range(3):  # the same bound whatever the position in the project
        with django_assert_max_num_queries(12):
            token = answerer.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
        with django_assert_max_num_queries(7):
            response = answerer.post(
                f"/api/v1/tasks/{token}/annotations", {"answer": {"choice": "A"}}, format="json"
            )
        assert response.status_code == 201
