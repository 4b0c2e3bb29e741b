"""Everyone's own account page: change the password, create and revoke their API token."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def _api(key: str) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return api


def test_create_shows_the_key_once_and_revoke_makes_it_fail_at_the_api(role_client):
    client = role_client("annotator")
    created = client.post("/account/token")
    assert created.status_code == 200 and created["Cache-Control"] == "no-store"
    key = Token.objects.get(user=client.user).key
    assert key.encode() in created.content
    assert key.encode() not in client.get("/account/").content
    assert _api(key).get("/api/v1/projects/").status_code == 200

    assert client.post("/account/token/revoke").status_code == 302
    assert not Token.objects.filter(user=client.user).exists()
    assert _api(key).get("/api/v1/projects/").status_code in (401, 403)


def test_change_password_keeps_the_session_and_checks_the_old_one(role_client):
    client = role_client("annotator")
    wrong = client.post(
        "/account/",
        {"old_password": "nope", "new_password1": "Angklung-Sunda-7", "new_password2": "Angklung-Sunda-7"},
    )
    assert "old_password" in wrong.context["password_form"].errors
    ok = client.post(
        "/account/",
        {
            "old_password": "correct-horse-battery",
            "new_password1": "Angklung-Sunda-7",
            "new_password2": "Angklung-Sunda-7",
        },
    )
    assert ok.status_code == 302
    assert client.get("/account/").status_code == 200  # still logged in
    assert Client().login(username=client.user.username, password="Angklung-Sunda-7")


def test_the_account_page_needs_a_login():
    assert Client().get("/account/").status_code == 302
    assert Client().post("/account/token").status_code == 302
