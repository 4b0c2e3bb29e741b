import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from accounts.roles import user_roles
from annotation import selectors
from annotation.models import Annotation, Assignment, Project
from tests.annotation.conftest import build_dataset, likert_payload

pytestmark = pytest.mark.django_db


def api_for(user) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


def test_next_returns_a_blinded_task_then_204(make_project):
    project = make_project(n_prompts=2, n_models=3, per_group=1, best_pick="optional")
    api = api_for(project.annotators[0])
    for expected_done in (0, 1):
        response = api.get(f"/api/v1/projects/{project.pk}/next")
        assert response.status_code == 200
        body = response.json()
        assert body["progress"] == {"done": expected_done, "total": 2}
        assert [r["label"] for r in body["responses"]] == ["Response 1", "Response 2", "Response 3"]
        assert [c["key"] for c in body["criteria"]] == ["relevance", "fluency"]
        assert set(body["criteria"][0]["levels"]) == {"id", "en"}
        posted = api.post(
            f"/api/v1/tasks/{body['task']}/annotations", {"answer": likert_payload(3, best=2)}, format="json"
        )
        assert posted.status_code == 201 and posted.json()["outcome"] == "created"
    assert api.get(f"/api/v1/projects/{project.pk}/next").status_code == 204


def test_indonesian_labels_on_request(make_project):
    project = make_project(per_group=1)
    body = api_for(project.annotators[0]).get(f"/api/v1/projects/{project.pk}/next?lang=id").json()
    assert body["responses"][0]["label"] == "Respons 1"


def test_double_post_is_a_no_op_and_errors_are_per_field(make_project):
    project = make_project(n_models=2, per_group=1)
    api = api_for(project.annotators[0])
    token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    url = f"/api/v1/tasks/{token}/annotations"
    bad = api.post(url, {"answer": {"ratings": {"1": {"relevance": 9}}}}, format="json")
    assert bad.status_code == 400
    assert set(bad.json()["errors"]) == {
        "ratings.1.relevance",
        "ratings.1.fluency",
        "ratings.2.relevance",
        "ratings.2.fluency",
    }
    assert api.post(url, {"answer": likert_payload(2)}, format="json").status_code == 201
    again = api.post(url, {"answer": likert_payload(2)}, format="json")
    assert again.status_code == 200 and again.json()["outcome"] == "unchanged"
    assert Annotation.objects.count() == 4


def test_other_annotators_task_gives_404_and_non_members_404(make_project, make_user):
    project = make_project(per_group=2)
    owner, other = project.annotators
    token = api_for(owner).get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    response = api_for(other).post(
        f"/api/v1/tasks/{token}/annotations", {"answer": likert_payload(3)}, format="json"
    )
    assert response.status_code == 404
    assert api_for(other).post(f"/api/v1/tasks/{token}/skip", {}, format="json").status_code == 404
    outsider = make_user("annotator")
    assert api_for(outsider).get(f"/api/v1/projects/{project.pk}/next").status_code == 404


def test_skip_via_api(make_project):
    project = make_project(per_group=1)
    api = api_for(project.annotators[0])
    token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    response = api.post(f"/api/v1/tasks/{token}/skip", {"reason": "bahasa"}, format="json")
    assert response.json()["status"] == "skipped"
    assert Assignment.objects.get(token=token).skip_reason == "bahasa"


def test_project_crud_and_members(api_client_for, make_user):
    dataset = build_dataset(n_prompts=2, n_models=3)
    api = api_client_for("project_manager")
    created = api.post(
        "/api/v1/projects/create",
        {
            "dataset": dataset.pk,
            "name": "API",
            "kind": "pairwise",
            "pair_mode": "all",
            "groups": ["G1", "G2"],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    project_id = created.json()["id"]
    # 3 models -> 3 pairs per prompt, 2 prompts.
    assert created.json()["n_tasks"] == 6 and created.json()["groups"] == ["G1", "G2"]
    annotator = make_user("annotator", username="siti")
    added = api.post(
        f"/api/v1/projects/{project_id}/members/add", {"user": "siti", "group": "G3"}, format="json"
    )
    assert added.status_code == 201 and added.json()["group"] == "G3"
    members = api.get(f"/api/v1/projects/{project_id}/members").json()["results"]
    assert [m["username"] for m in members] == ["siti"]
    updated = api.patch(f"/api/v1/projects/{project_id}/update", {"lease_minutes": 45}, format="json")
    assert updated.json()["lease_minutes"] == 45
    assert (
        api.post(f"/api/v1/projects/{project_id}/status", {"action": "activate"}, format="json").json()[
            "status"
        ]
        == "active"
    )
    token = api_for(annotator).get(f"/api/v1/projects/{project_id}/next").json()["task"]
    api_for(annotator).post(f"/api/v1/tasks/{token}/annotations", {"answer": {"vote": "B"}}, format="json")
    progress = api.get(f"/api/v1/projects/{project_id}/progress").json()
    assert progress["annotators"][0]["done"] == 1
    assert api.delete(f"/api/v1/projects/{project_id}/delete").status_code == 409
    assert api.get("/api/v1/projects/").json()["count"] == 1
    removed = api.post(f"/api/v1/projects/{project_id}/members/remove", {"user": "siti"}, format="json")
    assert removed.status_code == 204


def test_annotators_cannot_manage(api_client_for):
    dataset = build_dataset(n_prompts=1)
    api = api_client_for("annotator")
    listing = api.get("/api/v1/projects/")  # their own projects only: none here
    assert listing.status_code == 200 and listing.json()["results"] == []
    assert (
        api.post(
            "/api/v1/projects/create", {"dataset": dataset.pk, "name": "x", "kind": "likert"}, format="json"
        ).status_code
        == 403
    )
    assert not Project.objects.exists()


def _warm_rubrics(project) -> None:
    """Show the rubric of every category of the test data once, as a running server soon has."""
    # As the server reads the project: its rubric stamp moved on when its rubric rows were written.
    project.refresh_from_db()
    for category in ("", "analysis", "math"):
        selectors.rubrics_for(project, category)


def _loop_queries(make_project, n_prompts: int) -> tuple[int, int]:
    project = make_project(n_prompts=n_prompts, n_models=5, per_group=2, overlap=2, best_pick="optional")
    _warm_rubrics(project)
    api = api_for(project.annotators[0])
    # Warm up: one full round so the measured round is a steady-state claim (cursor set, nothing to resume).
    token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    api.post(f"/api/v1/tasks/{token}/annotations", {"answer": likert_payload(5, best=1)}, format="json")
    with CaptureQueriesContext(connection) as next_queries:
        token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    with CaptureQueriesContext(connection) as submit_queries:
        response = api.post(
            f"/api/v1/tasks/{token}/annotations", {"answer": likert_payload(5, best=1)}, format="json"
        )
    assert response.status_code == 201
    return len(next_queries), len(submit_queries)


def test_loop_query_counts_are_small_and_do_not_grow_with_the_project(
    make_project, django_assert_max_num_queries
):
    small = _loop_queries(make_project, 20)
    large = _loop_queries(make_project, 300)
    print("queries (next, submit):", small, large)
    # The same statements whatever the size; a claim whose cursor reached the end of the annotator's order
    # wraps around with one more statement, which the small project's random order may or may not need.
    assert small[1] == large[1]
    assert abs(small[0] - large[0]) <= 1
    project = make_project(n_prompts=300, n_models=5, per_group=1, best_pick="optional")
    _warm_rubrics(project)
    user_roles(project.annotators[0])  # read with the token in production (one query, not counted here)
    api = api_for(project.annotators[0])
    # A fresh claim (the forced user keeps its roles from the warm-up): the claim state (membership
    # locked, held claim, expired leases, progress), the slot taken with its counters, cursor and the
    # page's texts (SQLite: a pick and two updates), the assignment insert, BEGIN and COMMIT.
    with django_assert_max_num_queries(7):
        token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    # A submit: the assignment lock, status + slot counters + answer rows (SQLite: three statements),
    # BEGIN and COMMIT.
    with django_assert_max_num_queries(6):
        api.post(f"/api/v1/tasks/{token}/annotations", {"answer": likert_payload(5, best=1)}, format="json")
