"""CSRF: every POST form carries the token, htmx sends it from ``<body hx-headers>``, and the middleware
refuses a POST without it on real pages and on the session-authenticated API."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from tests.security.conftest import World

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
FORM = re.compile(r"<form\b(?P<tag>[^>]*)>(?P<body>.*?)</form>", re.DOTALL | re.IGNORECASE)
POST = re.compile(r"""\bmethod\s*=\s*["']?post\b""", re.IGNORECASE)
HTMX_WRITE = re.compile(r"\bhx-(post|put|patch|delete)\s*=", re.IGNORECASE)
EXTENDS_BASE = re.compile(r"""{%\s*extends\s+["']base\.html["']\s*%}""")
BODY_HEADERS = re.compile(r"""<body\b[^>]*hx-headers='(?P<json>[^']*)'""")


def _templates() -> dict[str, str]:
    return {str(p.relative_to(TEMPLATES)): p.read_text() for p in sorted(TEMPLATES.rglob("*.html"))}


def test_every_post_form_in_the_templates_has_a_csrf_token():
    missing, n_post = [], 0
    for name, text in _templates().items():
        for form in FORM.finditer(text):
            if POST.search(form["tag"]):
                n_post += 1
                if "{% csrf_token %}" not in form["body"]:
                    line = text[: form.start()].count("\n") + 1
                    missing.append(f"{name}:{line}")
    assert not missing, f"POST forms without {{% csrf_token %}}: {missing}"
    assert n_post >= 20  # 21 when this was written: the scan must be finding the forms


def test_htmx_writes_only_from_pages_whose_body_sends_the_token():
    templates = _templates()
    body = BODY_HEADERS.search(templates["base.html"])
    assert body and json.loads(body["json"].replace("{{ csrf_token }}", "x")) == {"X-CSRFToken": "x"}
    # A template reaches base.html by extending it, or by being included only from templates that do.
    reaches_base = {name for name, text in templates.items() if EXTENDS_BASE.search(text)}
    changed = True
    while changed:
        changed = False
        for name in set(templates) - reaches_base:
            includers = [n for n, t in templates.items() if re.search(rf"""["']{re.escape(name)}["']""", t)]
            if includers and all(n in reaches_base for n in includers):
                reaches_base.add(name)
                changed = True
    writers = [name for name, text in templates.items() if HTMX_WRITE.search(text)]
    assert writers, "the scan must find the htmx forms"
    assert [name for name in writers if name not in reaches_base] == []


def _client(world: World, role: str | None) -> Client:
    client = Client(enforce_csrf_checks=True)
    if role:
        client.force_login(world.users[role])
    return client


def _page_token(client: Client, url: str) -> str:
    """The token htmx sends, read from the rendered page's ``<body hx-headers>``."""
    page = client.get(url)
    assert page.status_code == 200, url
    return json.loads(BODY_HEADERS.search(page.content.decode())["json"])["X-CSRFToken"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "role,name,kwargs,data",
    [
        (None, "login", lambda w: {}, lambda w: {"username": "sec-admin", "password": "x"}),
        ("annotator", "logout", lambda w: {}, lambda w: {}),
        ("annotator", "set_language", lambda w: {}, lambda w: {"language": "id"}),
        ("annotator", "annotation:start", lambda w: {"project_id": w.rating.pk}, lambda w: {}),
        ("annotator", "annotation:submit", lambda w: {"token": w.own_assignment.token}, lambda w: {}),
        ("project_manager", "annotation:manage_status", lambda w: {"project_id": w.rating.pk}, lambda w: {}),
        (
            "reviewer",
            "annotation:review_submit",
            lambda w: {"assignment_id": w.peer_assignment.pk},
            lambda w: {},
        ),
        ("researcher", "exports:export_new", lambda w: {"project_id": w.rating.pk}, lambda w: {}),
        (
            "researcher",
            "evaluation:run-cancel",
            lambda w: {"kind": "judge", "run_id": w.judge_run.pk},
            lambda w: {},
        ),
        ("project_manager", "api-project-status", lambda w: {"project_id": w.rating.pk}, lambda w: {}),
    ],
)
def test_a_post_without_the_token_is_refused(world, role, name, kwargs, data):
    url = reverse(name, kwargs=kwargs(world))
    refused = _client(world, role).post(url, data(world))
    assert refused.status_code == 403
    if name.startswith("api-"):
        assert "CSRF" in refused.json()["detail"]
    else:
        assert b"CSRF" in refused.content


@pytest.mark.django_db
def test_the_token_from_the_page_lets_htmx_and_forms_through(world):
    annotator = _client(world, "annotator")
    task = reverse("annotation:task", args=[world.own_assignment.token])
    token = _page_token(annotator, task)
    submitted = annotator.post(
        reverse("annotation:submit", args=[world.own_assignment.token]),
        {},
        HTTP_HX_REQUEST="true",
        HTTP_X_CSRFTOKEN=token,
    )
    assert submitted.status_code == 200  # the form again, with its validation errors

    manager = _client(world, "project_manager")
    detail = reverse("annotation:manage_detail", args=[world.rating.pk])
    form_token = _page_token(manager, detail)
    paused = manager.post(
        reverse("annotation:manage_status", args=[world.rating.pk]),
        {"action": "pause", "csrfmiddlewaretoken": form_token},
    )
    assert paused.status_code == 302
    world.rating.refresh_from_db()
    assert world.rating.status == "paused"

    api = manager.post(
        reverse("api-project-status", args=[world.rating.pk]),
        {"action": "activate"},
        HTTP_X_CSRFTOKEN=form_token,
    )
    assert api.status_code == 200, api.content


@pytest.mark.django_db
def test_token_authentication_needs_no_csrf_token(world):
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        reverse("api-project-status", args=[world.rating.pk]),
        {"action": "pause"},
        HTTP_AUTHORIZATION=f"Token {world.tokens['project_manager']}",
    )
    assert response.status_code == 200, response.content
