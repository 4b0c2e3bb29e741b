import pytest
from rest_framework.test import APIClient

from annotation.models import Assignment, Review
from tests.annotation.conftest import likert_payload

pytestmark = pytest.mark.django_db


def _submit_one(project):
    api = APIClient()
    api.force_authenticate(project.annotators[0])
    task = api.get(f"/api/v1/projects/{project.pk}/next").json()
    posted = api.post(
        f"/api/v1/tasks/{task['task']}/annotations",
        {"answer": likert_payload(len(task["responses"]))},
        format="json",
    )
    assert posted.status_code == 201
    return Assignment.objects.get(token=task["task"])


def test_a_reviewer_lists_pending_work_and_rejects_it_with_a_comment(make_project, api_client_for):
    project = make_project(n_prompts=2, per_group=1, overlap=1)
    assignment = _submit_one(project)
    reviewer = api_client_for("reviewer")
    queue = reviewer.get(f"/api/v1/reviews/?project={project.pk}").json()
    assert [item["assignment"] for item in queue["results"]] == [assignment.pk]
    assert queue["results"][0]["annotator"] == project.annotators[0].username
    refused = reviewer.post(
        "/api/v1/reviews/create", {"assignment": assignment.pk, "verdict": "reject"}, format="json"
    )
    assert refused.status_code == 400 and "Say what to fix" in refused.json()["detail"]
    assert not Review.objects.exists()
    created = reviewer.post(
        "/api/v1/reviews/create",
        {"assignment": assignment.pk, "verdict": "reject", "comment": "Nilai kelancaran terlalu tinggi."},
        format="json",
    )
    assert created.status_code == 201 and created.json()["verdict"] == "reject"
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED and assignment.round == 2
    assert reviewer.get(f"/api/v1/reviews/?project={project.pk}").json()["results"] == []
    assert reviewer.get("/api/v1/reviews/?status=nope").status_code == 400


def test_the_rubric_of_a_project_has_both_languages_and_the_scale(make_project, api_client_for):
    project = make_project(n_prompts=1, per_group=1)
    criteria = api_client_for("project_manager").get(f"/api/v1/projects/{project.pk}/rubric").json()
    assert [c["key"] for c in criteria] == ["relevance", "fluency"]
    assert set(criteria[0]["label"]) == {"id", "en"} and criteria[0]["scale"] == {"points": 5}
    assert set(criteria[0]["levels"]["en"]) == {"1", "2", "3", "4", "5"}
