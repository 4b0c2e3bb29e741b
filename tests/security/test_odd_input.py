"""Odd input across the pages and the API: a NUL byte in the path, a query parameter, a cookie, a form field
or a JSON body, JSON nested too deep, a body over the size limit, odd import files. Each answers 400 (413
for the size) with a message that says what is wrong: pages a small HTML page, the API a JSON body. Never
a 500, and nothing is written.

The walks go through the permission matrix's tables, so every GET page and API operation is tried with the
list filters (``q``, ``category``, ``language``), and every POST operation with a NUL and a deep body, as a
role that may use it.
"""

from __future__ import annotations

import html
import json
from typing import Any
from urllib.parse import urlencode

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Annotation, Assignment
from datasets_app.domain.untrusted_json import MAX_JSON_DEPTH
from datasets_app.models import Dataset, Prompt
from tests.security.conftest import ROLES, World, connection_kept_open
from tests.security.test_permission_matrix import API, PAGES, Row, _request

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000
FILTERS = ("q", "category", "language")


def allowed_role(row: Row) -> str:
    """The first role the table lets through (anonymous for public pages)."""
    for role, cell in zip(ROLES, row.cells.split(), strict=True):
        if cell in ("A", "P"):
            return role
    raise AssertionError(f"no role may use {row}")


def client_for(world: World, role: str, *, api: bool) -> Any:
    if role == "anonymous":
        return APIClient() if api else Client()
    if api:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens[role]}")
        return client
    client = Client()
    client.force_login(world.users[role])
    return client


def page_message(response) -> str:
    assert response["Content-Type"].startswith("text/html"), response["Content-Type"]
    return html.unescape(response.content.decode())


def api_message(response) -> tuple[str, str]:
    assert response["Content-Type"] == "application/json", response["Content-Type"]
    body = response.json()
    return body["detail"], body["code"]


def send(client, method: str, url: str, data: dict | None = None, *, as_json: bool, raw: str | None = None):
    """One request in a savepoint that is rolled back (as in the permission matrix); ``raw`` is sent as
    the JSON body as it is."""
    if raw is None:
        return _request(client, Row(method, ""), url, data or {}, as_json=as_json)
    with transaction.atomic():
        try:
            response = getattr(client, method.lower())(url, raw, content_type="application/json")
        finally:
            transaction.set_rollback(True)
    with connection_kept_open():
        response.close()
    return response


# -- NUL in the query string: every GET page and API operation, with each list filter ----------------------


def test_nul_in_a_list_filter_is_a_400_on_every_page(world):
    failures = []
    for name, row in sorted(PAGES.items()):
        if row.method != "GET":
            continue
        role = allowed_role(row)
        url = reverse(name, kwargs=row.kwargs(world))
        for param in FILTERS:
            client = client_for(world, role, api=False)
            query = urlencode({param: "a\x00b"})
            response = send(client, "GET", f"{url}?{query}", as_json=False)
            expected = f'The query parameter "{param}" contains a NUL character'
            if response.status_code != 400 or expected not in page_message(response):
                failures.append(f"{name}?{param}: {response.status_code}")
    assert failures == []


def test_nul_in_a_list_filter_is_a_json_400_on_every_api_operation(world):
    failures = []
    for name, row in sorted(API.items()):
        if row.method != "GET":
            continue
        role = allowed_role(row)
        url = reverse(name, kwargs=row.kwargs(world))
        for param in FILTERS:
            response = send(client_for(world, role, api=True), "GET", f"{url}?{param}=%00", as_json=True)
            detail, code = api_message(response)
            if response.status_code != 400 or code != "nul_character" or f'"{param}"' not in detail:
                failures.append(f"{name}?{param}: {response.status_code} {detail}")
    assert failures == []


def test_the_dataset_page_filters_work_without_the_nul(world):
    """The same filters without a NUL are served: the 400 is about the NUL, not the parameters."""
    client = client_for(world, "project_manager", api=False)
    url = reverse("datasets:detail", args=[world.dataset.pk])
    for param in FILTERS:
        assert client.get(url, {param: "ab"}).status_code == 200
        response = client.get(url, {param: "a\x00b"})
        assert response.status_code == 400
        assert f'The query parameter "{param}" contains a NUL character (%00)' in page_message(response)


# -- NUL in the path ---------------------------------------------------------------------------------------


def test_nul_in_a_task_token_is_a_400_page(world):
    client = client_for(world, "annotator", api=False)
    token = world.own_assignment.token
    for url in (f"/annotate/t/{token}%00/", f"/annotate/t/%00{token}/submit", f"/annotate/t/{token}%00/skip"):
        method = "GET" if url.endswith("/") else "POST"
        response = send(client, method, url, as_json=False)
        assert response.status_code == 400, url
        assert "The address contains a NUL character (%00)" in page_message(response)


def test_nul_in_a_task_token_is_a_json_400_on_the_api(world):
    client = client_for(world, "annotator", api=True)
    for url in (f"/api/v1/tasks/{world.own_assignment.token}%00/annotations", "/api/v1/tasks/%00/skip"):
        response = send(client, "POST", url, {"reason": "other"}, as_json=True)
        assert response.status_code == 400
        assert api_message(response) == (
            "The address contains a NUL character (%00), which is not allowed.",
            "nul_character",
        )


def test_nul_in_a_cookie_is_a_400(world):
    client = client_for(world, "annotator", api=False)
    client.cookies["sessionid"] = "abcdefgh\x00ijkl"
    response = client.get("/")
    assert response.status_code == 400
    assert 'The cookie "sessionid" contains a NUL character' in page_message(response)


# -- NUL and deep nesting in bodies ------------------------------------------------------------------------


def test_nul_in_an_annotation_comment_is_refused_and_nothing_is_stored(world):
    assignment = world.own_assignment
    n = len(assignment.permutation)
    form = {f"r-{i + 1}-{c}": "3" for i in range(n) for c in ("relevance", "fluency")}
    form["comment"] = "bagus\x00"
    page = client_for(world, "annotator", api=False)
    response = page.post(reverse("annotation:submit", args=[assignment.token]), form)
    assert response.status_code == 400
    assert 'The form field "comment" contains a NUL character' in page_message(response)

    answer = {"ratings": {str(i + 1): {"relevance": 3, "fluency": 3} for i in range(n)}, "comment": "x\x00"}
    api = client_for(world, "annotator", api=True)
    response = api.post(f"/api/v1/tasks/{assignment.token}/annotations", {"answer": answer}, format="json")
    assert response.status_code == 400
    detail, code = api_message(response)
    assert code == "nul_character"
    assert (
        detail
        == 'The JSON body contains a NUL character (\\u0000) in "answer.comment", which is not allowed.'
    )

    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED
    assert not Annotation.objects.filter(assignment=assignment).exists()


def test_nul_in_a_form_field_is_a_400_on_every_post_page(world):
    failures = []
    for name, row in sorted(PAGES.items()):
        if row.method != "POST":
            continue
        role = allowed_role(row)
        url = reverse(name, kwargs=row.kwargs(world))
        data = {**row.data(world), "note": "a\x00b"}
        response = send(client_for(world, role, api=False), "POST", url, data, as_json=False)
        if response.status_code != 400 or 'The form field "note" contains a NUL' not in page_message(
            response
        ):
            failures.append(f"{name}: {response.status_code}")
    assert failures == []


def test_nul_and_deep_json_are_json_400s_on_every_api_write(world):
    failures = []
    for name, row in sorted(API.items()):
        if row.method not in ("POST", "PATCH", "PUT"):
            continue
        role = allowed_role(row)
        url = reverse(name, kwargs=row.kwargs(world))
        client = client_for(world, role, api=True)
        nul = send(client, row.method, url, {**row.data(world), "name": "a\x00b"}, as_json=True)
        detail, code = api_message(nul)
        if nul.status_code != 400 or code != "nul_character" or '"name"' not in detail:
            failures.append(f"{name} NUL: {nul.status_code} {detail}")
        deep = send(client, row.method, url, as_json=True, raw='{"name": ' + DEEP + "}")
        detail, code = api_message(deep)
        if (
            deep.status_code != 400
            or detail != f"The JSON body is nested deeper than {MAX_JSON_DEPTH} levels."
        ):
            failures.append(f"{name} deep: {deep.status_code} {detail}")
    assert failures == []


def test_a_raw_nul_byte_in_a_json_body_is_a_400(world):
    client = client_for(world, "project_manager", api=True)
    response = send(client, "POST", reverse("api-project-create"), as_json=True, raw='{"name": "a\x00"}')
    assert response.status_code == 400
    assert api_message(response) == (
        "The JSON body contains a NUL byte, which is not allowed.",
        "nul_character",
    )


def test_a_json_body_over_the_size_limit_is_a_json_413(world, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    client = client_for(world, "annotator", api=True)
    url = f"/api/v1/tasks/{world.own_assignment.token}/annotations"
    response = client.post(url, {"answer": {"comment": "x" * 4096}}, format="json")
    assert response.status_code == 413
    assert api_message(response) == (
        "The request body is larger than the limit of 2.0\xa0KB.",
        "body_too_large",
    )


def test_a_form_over_the_size_limit_is_a_413_page(world, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    client = client_for(world, "annotator", api=False)
    response = client.post(
        reverse("annotation:submit", args=[world.own_assignment.token]), {"comment": "x" * 4096}
    )
    assert response.status_code == 413
    assert "The request body is larger than the limit of 2.0\xa0KB." in page_message(response)


def test_json_clients_of_pages_get_json(world):
    client = client_for(world, "project_manager", api=False)
    url = reverse("datasets:detail", args=[world.dataset.pk])
    response = client.get(url, {"q": "\x00"}, HTTP_ACCEPT="application/json")
    assert response.status_code == 400
    assert api_message(response)[1] == "nul_character"


# -- the import API ----------------------------------------------------------------------------------------

IMPORT = "/api/v1/datasets/import"


def jsonl(lines: list[str], name: str = "data.jsonl"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, ("\n".join(lines) + "\n").encode(), content_type="application/x-ndjson")


def prompt_line(i: int, **fields) -> str:
    row = {"id": f"p{i}", "category": "math", "language": "ind", "prompt": f"{i} + {i}?", **fields}
    return json.dumps(row)


@pytest.fixture
def uploads(settings, tmp_path):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    return settings.UPLOADS_DIR


def test_nul_in_an_import_file_is_a_line_numbered_400(world, uploads):
    client = client_for(world, "project_manager", api=True)
    before = Dataset.objects.count(), Prompt.objects.count()
    upload = jsonl([prompt_line(1), prompt_line(2, prompt="a\x00b")])
    response = client.post(IMPORT, {"file": upload, "name": "nul"}, format="multipart")
    assert response.status_code == 400
    body = response.json()
    assert body["errors"] == [
        {
            "location": "line 2",
            "field": "prompt",
            "message": "holds a NUL character (\\u0000), which cannot be stored",
        }
    ]
    assert body["detail"].startswith("line 2: prompt: holds a NUL character")
    assert (Dataset.objects.count(), Prompt.objects.count()) == before
    assert list(uploads.iterdir()) == []


def test_deep_nesting_in_an_import_file_is_a_line_numbered_400(world, uploads):
    client = client_for(world, "project_manager", api=True)
    upload = jsonl([DEEP, prompt_line(2)])
    response = client.post(IMPORT, {"file": upload, "name": "deep"}, format="multipart")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"location": "line 1", "field": "", "message": f"is nested deeper than {MAX_JSON_DEPTH} levels"}
    ]
    assert not Dataset.objects.filter(name="deep").exists()


def test_import_errors_name_the_file_that_was_sent(world, uploads):
    client = client_for(world, "project_manager", api=True)
    response = client.post(
        IMPORT, {"file": jsonl([prompt_line(1)], "my prompts.txt"), "name": "x"}, format="multipart"
    )
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert (
        detail
        == "file: my prompts.txt: cannot tell the format from the extension; pass --format jsonl|csv|hf"
    )


def test_an_annotator_posting_json_to_the_import_api_is_told_403_not_415(world):
    token = client_for(world, "annotator", api=True)
    response = token.post(IMPORT, {"name": "x"}, format="json")
    assert response.status_code == 403
    session = Client(enforce_csrf_checks=True)
    session.force_login(world.users["annotator"])
    session.get("/")
    csrf = session.cookies["csrftoken"].value
    response = session.post(
        IMPORT, json.dumps({"name": "x"}), content_type="application/json", HTTP_X_CSRFTOKEN=csrf
    )
    assert response.status_code == 403
    assert "project_manager" in response.json()["detail"]
    # The role that may import still hears that the body is of the wrong type.
    manager = Client(enforce_csrf_checks=True)
    manager.force_login(world.users["project_manager"])
    manager.get("/")
    csrf = manager.cookies["csrftoken"].value
    response = manager.post(
        IMPORT, json.dumps({"name": "x"}), content_type="application/json", HTTP_X_CSRFTOKEN=csrf
    )
    assert response.status_code == 415


def test_the_message_is_in_the_callers_language(world):
    client = client_for(world, "project_manager", api=False)
    url = reverse("datasets:detail", args=[world.dataset.pk])
    response = client.get(url, {"language": "\x00"}, HTTP_ACCEPT_LANGUAGE="id")
    assert response.status_code == 400
    assert 'Parameter kueri "language" berisi karakter NUL (%00)' in page_message(response)


@pytest.mark.parametrize(
    ("body", "refused"),
    [
        ("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH, False),  # as deep as allowed: no decoding needed
        ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), True),
        ('{"a": "[[[[' + "[" * MAX_JSON_DEPTH + '"}', False),  # brackets in a string do not nest
        ('{"a": "x\\u0000y"}', True),
        ('{"a": "x\\\\u0000y"}', False),  # a backslash and "u0000", not a NUL
    ],
)
def test_the_json_check_decodes_only_what_could_hold_a_problem(rf, body, refused):
    from config.middleware import _malformed_input

    request = rf.post("/api/v1/projects/create", data=body, content_type="application/json")
    assert (_malformed_input(request) is not None) is refused
