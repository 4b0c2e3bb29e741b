"""A database that cannot be reached gives a clear 503, on the API and on pages, instead of a 500."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from django.db import InterfaceError, OperationalError, ProgrammingError, connection
from django.test import Client
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db


@contextmanager
def database_down(error: type[Exception] = OperationalError):
    """Every query of this thread fails the way it does while PostgreSQL restarts."""

    def refuse(execute, sql, params, many, context):
        raise error("terminating connection due to administrator command")

    with connection.execute_wrapper(refuse):
        yield


@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
def test_the_api_answers_503_with_a_json_message(make_user, error):
    token = Token.objects.create(user=make_user("annotator")).key
    client = Client(headers={"Authorization": f"Token {token}"})

    with database_down(error):
        response = client.get("/api/v1/projects/1/next")

    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert int(response["Retry-After"]) > 0
    body = response.json()
    assert body["code"] == "database_unavailable"
    assert body["detail"].startswith("The database is unavailable at the moment.")
    assert "sending the same answer again is safe" in body["detail"]


def test_a_page_answers_503_with_a_page_that_needs_no_database(client, make_user):
    user = make_user("annotator")
    client.force_login(user)

    with database_down():
        response = client.get("/", headers={"Accept-Language": "en"})

    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    assert "Retry-After" in response
    text = response.content.decode()
    assert "Temporarily unavailable" in text and "The database is unavailable at the moment." in text
    assert user.username not in text  # the page reads no user and no session


def test_an_htmx_request_gets_the_message_without_a_style(client, make_user):
    client.force_login(make_user("annotator"))

    with database_down():
        response = client.post("/", headers={"HX-Request": "true", "Accept-Language": "en"})

    assert response.status_code == 503 and "Retry-After" in response
    text = response.content.decode()
    assert 'data-role="database-unavailable"' in text
    assert "The database is unavailable at the moment." in text
    # The page that asked reads the message out of this; a <style> there would break its own policy.
    assert "<style" not in text and "<html" not in text
    assert "'nonce-" not in response["Content-Security-Policy"]


def test_the_message_follows_the_language_of_the_page(client):
    client.cookies["django_language"] = "id"
    with database_down():
        response = client.post("/accounts/login/", {"username": "ani", "password": "x"})

    assert response.status_code == 503
    assert "Basis data sedang tidak tersedia" in response.content.decode()


def test_other_database_errors_stay_server_errors(make_user):
    token = Token.objects.create(user=make_user("annotator")).key
    client = Client(headers={"Authorization": f"Token {token}"}, raise_request_exception=False)

    with database_down(ProgrammingError):
        response = client.get("/api/v1/projects/1/next")

    assert response.status_code == 500
