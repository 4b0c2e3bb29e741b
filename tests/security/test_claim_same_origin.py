"""``GET /api/v1/projects/{id}/next`` claims a task, so a browser-session call must show it came from one of
our pages.

The probe: a page on another site sent a logged-in annotator's browser to the claim URL (a top-level
navigation carries the session cookie); the task was claimed for them. The URL stays a GET for its token
clients; with the session it now needs the page's CSRF token in X-CSRFToken, or htmx's HX-Request header.
"""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation import services
from annotation.models import Assignment
from tests.annotation.conftest import build_dataset

pytestmark = pytest.mark.django_db

BODY_HEADERS = re.compile(r"""<body\b[^>]*hx-headers='(?P<json>[^']*)'""")
# What a browser sends when a link or form on another site opens the URL in a tab.
CROSS_SITE_NAVIGATION = {
    "HTTP_SEC_FETCH_SITE": "cross-site",
    "HTTP_SEC_FETCH_MODE": "navigate",
    "HTTP_REFERER": "https://attacker.example/lure.html",
}


@pytest.fixture
def annotator_session(make_user):
    annotator = make_user("annotator")
    project = services.project_create(
        dataset=build_dataset(n_prompts=3, n_models=2), name="claim", kind="likert", seed=5
    )
    services.project_member_add(project=project, user=annotator, group=project.groups.get())
    services.project_activate(project=project)
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator)
    return project, annotator, client


def _page_token(client: Client) -> str:
    """The CSRF token our pages give their scripts and htmx (``<body hx-headers>``)."""
    page = client.get("/")
    return json.loads(BODY_HEADERS.search(page.content.decode())["json"])["X-CSRFToken"]


def test_a_cross_site_navigation_claims_nothing(annotator_session):
    project, annotator, client = annotator_session
    response = client.get(f"/api/v1/projects/{project.pk}/next", **CROSS_SITE_NAVIGATION)
    assert response.status_code == 403
    assert "X-CSRFToken" in response.json()["detail"]
    response = client.get(f"/api/v1/projects/{project.pk}/next")
    assert response.status_code == 403
    assert not Assignment.objects.filter(annotator=annotator).exists()


def test_a_wrong_or_cross_origin_csrf_token_claims_nothing(annotator_session):
    project, annotator, client = annotator_session
    token = _page_token(client)
    url = f"/api/v1/projects/{project.pk}/next"
    assert client.get(url, HTTP_X_CSRFTOKEN="x" * 64).status_code == 403
    assert client.get(url, HTTP_X_CSRFTOKEN=token, HTTP_ORIGIN="https://attacker.example").status_code == 403
    assert client.get(url, HTTP_HX_REQUEST="false").status_code == 403
    assert not Assignment.objects.filter(annotator=annotator).exists()


def test_our_pages_claim_with_the_csrf_token_or_htmx(annotator_session):
    project, annotator, client = annotator_session
    url = f"/api/v1/projects/{project.pk}/next"
    first = client.get(url, HTTP_X_CSRFTOKEN=_page_token(client))
    assert first.status_code == 200
    assert Assignment.objects.filter(annotator=annotator).count() == 1
    again = client.get(url, HTTP_HX_REQUEST="true")
    assert again.status_code == 200 and again.json()["task"] == first.json()["task"]  # resumed, not a second


def test_token_clients_are_unchanged(annotator_session):
    project, annotator, _ = annotator_session
    key = Token.objects.create(user=annotator).key
    response = Client(enforce_csrf_checks=True).get(
        f"/api/v1/projects/{project.pk}/next", HTTP_AUTHORIZATION=f"Token {key}", **CROSS_SITE_NAVIGATION
    )
    assert response.status_code == 200
    assert Assignment.objects.filter(annotator=annotator).count() == 1
