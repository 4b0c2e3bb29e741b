"""``POST /api/v1/tasks/{token}/annotations?next=1``: the answer and the next task in one request, with
token authentication read in one statement."""

import json
import re

import psycopg
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.authentication import token_with_user
from accounts.roles import user_roles
from annotation import selectors
from annotation.models import Annotation, Assignment, TaskSlot
from datasets_app.models import Response
from tests.accounts.test_sql import prepared_statements
from tests.annotation.conftest import likert_payload

pytestmark = pytest.mark.django_db


def token_client(user) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return api


def _warm_rubrics(project) -> None:
    # As the server reads the project: its rubric stamp moved on when its rubric rows were written.
    project.refresh_from_db()
    for category in ("", "analysis", "math"):
        selectors.rubrics_for(project, category)


def test_a_loop_of_one_request_per_task_covers_every_task_once(make_project):
    project = make_project(n_prompts=3, n_models=3, per_group=1, best_pick="optional")
    api = token_client(project.annotators[0])
    body = api.get(f"/api/v1/projects/{project.pk}/next").json()
    seen = []
    while body is not None:
        seen.append(body["task"])
        assert body["progress"]["done"] == len(seen) - 1
        posted = api.post(
            f"/api/v1/tasks/{body['task']}/annotations?next=1",
            {"answer": likert_payload(3, best=2)},
            format="json",
        )
        assert posted.status_code == 201
        result = posted.json()
        assert (result["task"], result["status"], result["outcome"]) == (body["task"], "submitted", "created")
        body = result["next"]
    assert len(set(seen)) == 3
    assert Assignment.objects.filter(status="submitted").count() == 3
    # k = 3 places per task for the group: one of each is now submitted, none held.
    assert (
        sorted(TaskSlot.objects.values_list("submitted_count", "active_count", "open_count"))
        == [(1, 0, 2)] * 3
    )


def test_the_next_task_is_blinded(make_project):
    project = make_project(n_prompts=2, n_models=3, per_group=1)
    api = token_client(project.annotators[0])
    token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    posted = api.post(
        f"/api/v1/tasks/{token}/annotations?next=1", {"answer": likert_payload(3)}, format="json"
    )
    text = json.dumps(posted.json()["next"])
    for name in Response.objects.values_list("model_name", flat=True):
        assert name not in text
    nxt_body = posted.json()["next"]
    # The same blinded shape as GET next: responses carry a shown number, a label and the texts only.
    assert set(nxt_body) == set(api.get(f"/api/v1/projects/{project.pk}/next").json())
    assert {key for r in nxt_body["responses"] for key in r} == {"number", "label", "turns"}
    nxt = Assignment.objects.get(token=posted.json()["next"]["task"])
    canonical = dict(Response.objects.filter(pk__in=nxt.task.response_ids).values_list("pk", "turns"))
    shown = [r["turns"] for r in posted.json()["next"]["responses"]]
    assert shown == [canonical[nxt.task.response_ids[i]] for i in nxt.permutation]


def test_a_bad_answer_claims_nothing_and_writes_nothing(make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=1)
    api = token_client(project.annotators[0])
    token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    bad = api.post(
        f"/api/v1/tasks/{token}/annotations?next=1",
        {"answer": {"ratings": {"1": {"relevance": 9}}}},
        format="json",
    )
    assert bad.status_code == 400 and "ratings.1.relevance" in bad.json()["errors"]
    assert "next" not in bad.json()
    assert Assignment.objects.count() == 1 and not Annotation.objects.exists()
    assert Assignment.objects.get().status == "assigned"


def test_posting_twice_is_harmless_and_resumes_the_held_task(make_project):
    project = make_project(n_prompts=3, n_models=2, per_group=1)
    api = token_client(project.annotators[0])
    token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    url = f"/api/v1/tasks/{token}/annotations?next=1"
    first = api.post(url, {"answer": likert_payload(2)}, format="json").json()
    again = api.post(url, {"answer": likert_payload(2)}, format="json")
    assert again.status_code == 200 and again.json()["outcome"] == "unchanged"
    assert again.json()["next"]["task"] == first["next"]["task"]  # the held claim, not a new one
    assert Assignment.objects.count() == 2 and Annotation.objects.count() == 4


def test_nothing_left_gives_null(make_project):
    project = make_project(n_prompts=1, n_models=2, per_group=1)
    api = token_client(project.annotators[0])
    token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    posted = api.post(
        f"/api/v1/tasks/{token}/annotations?next=1", {"answer": likert_payload(2)}, format="json"
    )
    assert posted.status_code == 201 and posted.json()["next"] is None


def test_a_paused_project_keeps_the_answer_and_says_why(make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=1)
    api = token_client(project.annotators[0])
    token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    project.status = "paused"
    project.save(update_fields=["status"])
    posted = api.post(
        f"/api/v1/tasks/{token}/annotations?next=1", {"answer": likert_payload(2)}, format="json"
    )
    assert posted.status_code == 201 and posted.json()["next"] is None
    assert "not open" in posted.json()["next_detail"]
    assert Assignment.objects.get(token=token).status == "submitted" and Annotation.objects.count() == 4


def test_someone_elses_task_is_404_and_untouched(make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=2)
    owner, other = project.annotators
    token = token_client(owner).get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    posted = token_client(other).post(
        f"/api/v1/tasks/{token}/annotations?next=1", {"answer": likert_payload(2)}, format="json"
    )
    assert posted.status_code == 404
    assert Assignment.objects.count() == 1 and not Annotation.objects.exists()


def test_the_loop_request_needs_seven_statements_on_postgresql(make_project, django_assert_max_num_queries):
    """Token with user and roles (1), then in one transaction (BEGIN, COMMIT): the assignment lock, the
    status + counters + answer rows with the claim state read in the same statement, the slot taken with
    its counters and the task's texts, the assignment insert. SQLite runs the writes a statement each,
    reads the claim state on its own and the claim's range scans unfused, so it needs a few more."""
    project = make_project(n_prompts=60, n_models=5, per_group=2, overlap=2, best_pick="optional")
    _warm_rubrics(project)
    api = token_client(project.annotators[0])
    token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    token = api.post(
        f"/api/v1/tasks/{token}/annotations?next=1", {"answer": likert_payload(5, best=1)}, format="json"
    ).json()["next"]["task"]
    limit = 7 if connection.vendor == "postgresql" else 12
    with django_assert_max_num_queries(limit):
        posted = api.post(
            f"/api/v1/tasks/{token}/annotations?next=1", {"answer": likert_payload(5, best=1)}, format="json"
        )
    assert posted.status_code == 201 and posted.json()["next"] is not None


@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's")
def test_the_loop_prepares_its_statements_once_not_once_a_request(make_project):
    project = make_project(n_prompts=20, n_models=3, per_group=1, best_pick="optional")
    api = token_client(project.annotators[0])
    token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    loops = 12
    for _ in range(loops):
        posted = api.post(
            f"/api/v1/tasks/{token}/annotations?next=1", {"answer": likert_payload(3, best=1)}, format="json"
        )
        assert posted.status_code == 201
        token = posted.json()["next"]["task"]
    prepared = prepared_statements()
    # One prepared statement per text and parameter types: the token read, the lock, the submit, the claim
    # state, the insert, and the claim for each shape of key range (and integer width of its bounds) met.
    assert len(set(prepared)) == len(prepared)
    assert len(prepared) < 2 * 6
    texts = " ".join(statement for statement, _types in prepared)
    for table in ("authtoken_token", "annotation_membership", "annotation_taskslot", "annotation_annotation"):
        assert table in texts
    # The statuses the partial indexes name are in the claim state's text, not parameters.
    assert "a.status = 'assigned'" in texts and "a.status = 'submitted'" in texts


def _assignment_rows_read(plan: dict) -> int:
    """Rows the plan's scans of ``annotation_assignment`` returned, over all their runs."""
    rows = (
        plan["Actual Rows"] * plan["Actual Loops"]
        if plan.get("Relation Name") == "annotation_assignment"
        else 0
    )
    return rows + sum(_assignment_rows_read(child) for child in plan.get("Plans", []))


@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's")
def test_the_claim_does_not_read_the_callers_history(make_project):
    """The claim skips places whose task the caller ever had. Its prepared statement's plan (the generic
    one, which PostgreSQL switches to after five runs when it costs no more than a custom one) tests that
    with a look-up of (task, caller) per candidate place; read by caller, the caller's whole history would
    be read again at every claim."""
    project = make_project(n_prompts=40, n_models=3, per_group=1, best_pick="optional")
    api = token_client(project.annotators[0])
    token = api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]
    for _ in range(15):
        token = api.post(
            f"/api/v1/tasks/{token}/annotations?next=1", {"answer": likert_payload(3, best=1)}, format="json"
        ).json()["next"]["task"]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_assignment")
    claims = []

    def kept(execute, sql, params, many, context):
        if "FOR UPDATE OF ts" in sql:
            claims.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(kept):
        posted = api.post(
            f"/api/v1/tasks/{token}/annotations?next=1", {"answer": likert_payload(3, best=1)}, format="json"
        )
    assert posted.status_code == 201 and posted.json()["next"] is not None
    (sql, params), *_ = claims
    numbered = iter(range(1, len(params) + 1))
    statement = re.sub("%s", lambda _: f"${next(numbered)}", sql)
    values = ", ".join(psycopg.sql.Literal(v).as_string(connection.connection) for v in params)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute(f"PREPARE claim_probe AS {statement}")
        try:
            cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim_probe({values})")
            (plan,) = cursor.fetchone()[0]
        finally:
            cursor.execute("DEALLOCATE claim_probe")
        transaction.set_rollback(True)
    assert Assignment.objects.filter(annotator=project.annotators[0]).count() == 17
    assert _assignment_rows_read(plan["Plan"]) <= 1


def test_token_user_and_roles_come_in_one_statement(make_project):
    project = make_project(n_prompts=2, per_group=1)
    api = token_client(project.annotators[0])
    with CaptureQueriesContext(connection) as queries:
        assert api.get(f"/api/v1/projects/{project.pk}/next").status_code == 200
    sql = [q["sql"] for q in queries.captured_queries]
    assert len([s for s in sql if "authtoken_token" in s or "auth_user_groups" in s]) == 1


@pytest.mark.parametrize("staff", [False, True])
def test_roles_read_with_the_token(make_user, staff):
    user = make_user("reviewer")
    user.is_staff = staff
    user.save(update_fields=["is_staff"])
    key = Token.objects.create(user=user).key
    found, token = token_with_user(key)
    assert found.pk == user.pk and token.key == key and token.user is found
    expected = {"annotator", "reviewer", "project_manager", "researcher"} if staff else {"reviewer"}
    with CaptureQueriesContext(connection) as queries:
        assert user_roles(found) == expected
    assert not queries.captured_queries
    assert token_with_user("no-such-key") is None


def test_unknown_and_inactive_tokens_are_refused(make_user, make_project):
    project = make_project(n_prompts=1, per_group=1)
    user = project.annotators[0]
    api = token_client(user)
    user.is_active = False
    user.save(update_fields=["is_active"])
    refused = api.get(f"/api/v1/projects/{project.pk}/next")
    assert refused.status_code in (401, 403) and "inactive" in refused.json()["detail"]
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION="Token nope")
    refused = wrong.get(f"/api/v1/projects/{project.pk}/next")
    assert refused.status_code in (401, 403) and refused.json()["detail"] == "Invalid token."
    assert not Assignment.objects.exists()
