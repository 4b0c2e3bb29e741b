"""Rotating one's own API token: the old key stops working at once, the new one is shown once."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.services import api_token_rotate

pytestmark = pytest.mark.django_db

ROTATE = "/api/v1/auth/token/rotate"
URL = "/api/v1/evaluation/endpoints/"


def _client(key: str) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return api


def test_rotating_returns_a_new_key_once_and_the_old_one_stops_working(make_user, settings):
    settings.API_TOKEN_LIFETIME_DAYS = 90
    user = make_user("researcher")
    old = Token.objects.create(user=user)
    response = _client(old.key).post(ROTATE)
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert set(body) == {"token", "created", "expires_at"}
    new = Token.objects.get(user=user)
    assert body["token"] == new.key != old.key
    expires = parse_datetime(body["expires_at"])
    assert expires - parse_datetime(body["created"]) == timedelta(days=90)
    assert _client(old.key).get(URL).status_code in (401, 403)
    assert _client(new.key).get(URL).status_code == 200
    assert Token.objects.filter(user=user).count() == 1


def test_rotation_renews_an_expired_key_through_a_session(make_user, settings):
    settings.API_TOKEN_LIFETIME_DAYS = 30
    user = make_user("annotator")
    old = Token.objects.create(user=user)
    Token.objects.filter(pk=old.pk).update(created=timezone.now() - timedelta(days=31))
    assert _client(old.key).post(ROTATE).status_code == 401  # an expired key cannot renew itself
    session = APIClient()
    session.force_login(user)
    response = session.post(ROTATE)
    assert response.status_code == 201
    assert _client(response.json()["token"]).post(ROTATE).status_code == 201


def test_a_user_without_a_token_gets_a_first_one_and_without_expiry_it_has_none(make_user, settings):
    settings.API_TOKEN_LIFETIME_DAYS = 0
    user = make_user("reviewer")
    session = APIClient()
    session.force_login(user)
    body = session.post(ROTATE).json()
    assert body["expires_at"] is None and Token.objects.get(user=user).key == body["token"]


def test_only_the_callers_own_token_is_replaced(make_user):
    me, other = make_user("researcher"), make_user("researcher")
    theirs = Token.objects.create(user=other)
    mine = api_token_rotate(user=me)
    assert Token.objects.get(user=other).key == theirs.key
    assert api_token_rotate(user=me).key != mine.key
    assert Token.objects.filter(user=me).count() == 1


def test_anonymous_callers_and_other_methods_are_refused(make_user):
    assert APIClient().post(ROTATE).status_code in (401, 403)
    token = Token.objects.create(user=make_user("researcher"))
    assert _client(token.key).get(ROTATE).status_code == 405
    assert Token.objects.get(pk=token.pk)  # a refused call changes nothing
