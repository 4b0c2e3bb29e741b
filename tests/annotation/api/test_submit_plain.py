"""``POST /api/v1/tasks/{token}/annotations``: a token-authenticated JSON answer is handled without DRF's
request machinery, with the same answer DRF gives; every other request goes through DRF."""

import json
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Annotation, Assignment
from tests.annotation.conftest import likert_payload

pytestmark = pytest.mark.django_db


def token_client(user) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return api


def through_drf(response) -> bool:
    # DRF's Response keeps the data it rendered; the plain path answers with a Django HttpResponse.
    return hasattr(response, "data")


def headers(response) -> dict[str, object]:
    found = {name: value for name, value in response.items() if name != "Content-Length"}
    found["Vary"] = {v.strip() for v in response["Vary"].split(",")}
    return found


def held_task(project, user) -> tuple[APIClient, str]:
    api = token_client(user)
    return api, api.get(f"/api/v1/projects/{project.pk}/next").json()["task"]


def test_the_plain_answer_is_the_answer_drf_gives(make_project):
    project = make_project(n_prompts=3, n_models=3, per_group=1, best_pick="optional")
    api, token = held_task(project, project.annotators[0])
    url = f"/api/v1/tasks/{token}/annotations?next=1"
    first = api.post(url, {"answer": likert_payload(3, best=2)}, format="json")
    assert first.status_code == 201 and not through_drf(first)
    # The same answer again: "unchanged", and the held next task, so both paths have one right answer.
    plain = api.post(url, {"answer": likert_payload(3, best=2)}, format="json")
    drf = api.post(url + "&format=json", {"answer": likert_payload(3, best=2)}, format="json")
    assert not through_drf(plain) and through_drf(drf)
    assert plain.status_code == drf.status_code == 200
    assert plain.content == drf.content
    assert headers(plain) == headers(drf)
    assert plain.json()["next"]["task"] == first.json()["next"]["task"]


def test_without_next_and_with_seconds(make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=1)
    api, token = held_task(project, project.annotators[0])
    posted = api.post(
        f"/api/v1/tasks/{token}/annotations", {"answer": likert_payload(2), "seconds": 0}, format="json"
    )
    assert not through_drf(posted)
    assert posted.status_code == 201 and posted.json() == {
        "task": token,
        "status": "submitted",
        "outcome": "created",
    }
    assert Assignment.objects.get(token=token).seconds_on_task == 0
    assert Annotation.objects.count() == 4


def test_refusals_of_the_services_are_drfs_answers(make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=2)
    owner, other = project.annotators
    _, token = held_task(project, owner)
    api = token_client(other)
    url = f"/api/v1/tasks/{token}/annotations"
    plain = api.post(url, {"answer": likert_payload(2)}, format="json")
    drf = api.post(url + "?format=json", {"answer": likert_payload(2)}, format="json")
    assert (
        (plain.status_code, plain.json()) == (drf.status_code, drf.json()) == (404, {"detail": "Not found."})
    )
    api = token_client(owner)
    bad = {"answer": {"ratings": {"1": {"relevance": 9}}}}
    plain = api.post(url, bad, format="json")
    drf = api.post(url + "?format=json", bad, format="json")
    assert not through_drf(plain) and plain.status_code == drf.status_code == 400
    assert plain.content == drf.content and "ratings.1.relevance" in plain.json()["errors"]
    assert not Annotation.objects.exists()


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b'{"answer": {}, "seconds": null}', 400),  # the serializer's "may not be null"
        (b'{"answer": {}, "seconds": -1}', 400),
        (b'{"answer": {}, "seconds": NaN}', 400),  # DRF's strict JSON parser
        (b'{"answer": []}', 400),
        (b"[1, 2]", 400),
        (b"not json", 400),
        (b"\xef\xbb\xbf{}", 400),
        (b"", 400),
    ],
)
def test_bodies_the_plain_path_does_not_take_get_drfs_answer(make_project, body, code):
    project = make_project(n_prompts=1, n_models=2, per_group=1)
    api, token = held_task(project, project.annotators[0])
    posted = api.generic("POST", f"/api/v1/tasks/{token}/annotations", body, content_type="application/json")
    assert through_drf(posted) and posted.status_code == code
    assert not Annotation.objects.exists()


def test_a_numeric_string_for_seconds_goes_through_drf_and_is_accepted(make_project):
    project = make_project(n_prompts=1, n_models=2, per_group=1)
    api, token = held_task(project, project.annotators[0])
    body = json.dumps({"answer": likert_payload(2), "seconds": "3"})
    posted = api.generic("POST", f"/api/v1/tasks/{token}/annotations", body, content_type="application/json")
    assert through_drf(posted) and posted.status_code == 201


@pytest.mark.parametrize(
    "extra",
    [
        {"HTTP_ACCEPT": "text/html"},
        {"HTTP_ACCEPT": "application/json; indent=2"},
        {"CONTENT_TYPE": "application/json; charset=utf-8"},
    ],
)
def test_other_negotiations_go_through_drf(make_project, extra):
    project = make_project(n_prompts=1, n_models=2, per_group=1)
    api, token = held_task(project, project.annotators[0])
    kwargs = {"content_type": extra.pop("CONTENT_TYPE", "application/json"), **extra}
    body = json.dumps({"answer": likert_payload(2)})
    posted = api.generic("POST", f"/api/v1/tasks/{token}/annotations", body, **kwargs)
    assert through_drf(posted) and posted.status_code == 201


def test_a_session_cookie_leaves_the_request_to_drf(make_project, client):
    """Session authentication comes before the token, with its CSRF check."""
    project = make_project(n_prompts=2, n_models=2, per_group=1)
    user = project.annotators[0]
    api, token = held_task(project, user)
    api.force_login(user)
    api.handler.enforce_csrf_checks = True
    posted = api.post(f"/api/v1/tasks/{token}/annotations", {"answer": likert_payload(2)}, format="json")
    assert through_drf(posted) and posted.status_code == 403 and "CSRF" in posted.json()["detail"]
    assert not Annotation.objects.exists()


def test_refused_tokens_and_roles_get_drfs_answers(make_project, make_user):
    project = make_project(n_prompts=1, n_models=2, per_group=1)
    user = project.annotators[0]
    api, token = held_task(project, user)
    url = f"/api/v1/tasks/{token}/annotations"
    reviewer = token_client(make_user("reviewer"))
    refused = reviewer.post(url, {"answer": likert_payload(2)}, format="json")
    assert through_drf(refused) and refused.status_code == 403
    assert "annotator" in refused.json()["detail"]
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION="Token nope")
    refused = wrong.post(url, {"answer": likert_payload(2)}, format="json")
    assert through_drf(refused) and refused.status_code in (401, 403)
    assert refused.json()["detail"] == "Invalid token."
    lifetime = settings.API_TOKEN_LIFETIME_DAYS
    if lifetime:
        Token.objects.filter(user=user).update(created=timezone.now() - timedelta(days=lifetime + 1))
        refused = api.post(url, {"answer": likert_payload(2)}, format="json")
        assert through_drf(refused) and refused.status_code == 401 and "expired" in refused.json()["detail"]
    assert not Annotation.objects.exists()


def test_a_token_request_sets_no_cookie_and_carries_the_security_headers(make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=1)
    api, token = held_task(project, project.annotators[0])
    posted = api.post(
        f"/api/v1/tasks/{token}/annotations?next=1", {"answer": likert_payload(2)}, format="json"
    )
    assert posted.status_code == 201 and not through_drf(posted)
    assert not posted.cookies
    assert "Content-Security-Policy" in posted and "'nonce-" not in posted["Content-Security-Policy"]
    assert posted["X-Frame-Options"] == "DENY"
    assert posted["X-Content-Type-Options"] == "nosniff"
    assert posted["Referrer-Policy"] == "same-origin"
    assert posted["Content-Type"] == "application/json"
