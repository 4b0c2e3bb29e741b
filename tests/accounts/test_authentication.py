"""API tokens expire after API_TOKEN_LIFETIME_DAYS: an expired token answers 401 with a clear message."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.authentication import token_expired, token_expires_at

URL = "/api/v1/evaluation/endpoints/"


def test_expiry_is_the_creation_time_plus_the_lifetime_and_zero_means_never():
    made = datetime(2026, 1, 1, 12, tzinfo=UTC)
    assert token_expires_at(made, 90) == datetime(2026, 4, 1, 12, tzinfo=UTC)
    assert token_expires_at(made, 0) is None
    assert not token_expired(made, now=made + timedelta(days=90, seconds=-1), lifetime_days=90)
    assert token_expired(made, now=made + timedelta(days=90), lifetime_days=90)
    assert not token_expired(made, now=made + timedelta(days=10_000), lifetime_days=0)
    with pytest.raises(ValueError, match="API_TOKEN_LIFETIME_DAYS"):
        token_expires_at(made, -1)


def _client(key: str) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return api


def _age(token: Token, days: float) -> None:
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - timedelta(days=days))


@pytest.mark.django_db
def test_a_token_works_until_its_lifetime_is_over_then_answers_401(make_user, settings):
    settings.API_TOKEN_LIFETIME_DAYS = 30
    token = Token.objects.create(user=make_user("researcher"))
    _age(token, 29.9)
    assert _client(token.key).get(URL).status_code == 200
    _age(token, 30.1)
    response = _client(token.key).get(URL)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    detail = response.json()["detail"]
    assert "expired" in detail and "30 days" in detail and "/api/v1/auth/token/rotate" in detail
    expired_on = (timezone.now() - timedelta(days=0.1)).date().isoformat()
    assert expired_on in detail


@pytest.mark.django_db
def test_the_default_lifetime_is_90_days_and_zero_turns_expiry_off(make_user, settings):
    token = Token.objects.create(user=make_user("researcher"))
    _age(token, 91)
    assert settings.API_TOKEN_LIFETIME_DAYS == 90
    assert _client(token.key).get(URL).status_code == 401
    settings.API_TOKEN_LIFETIME_DAYS = 0
    assert _client(token.key).get(URL).status_code == 200


@pytest.mark.django_db
def test_tokens_made_with_drf_create_token_still_authenticate_and_replace_resets_the_clock(make_user):
    user = make_user("researcher", username="peneliti")
    call_command("drf_create_token", "peneliti", verbosity=0)
    token = Token.objects.get(user=user)
    assert _client(token.key).get(URL).status_code == 200
    _age(token, 120)
    assert _client(token.key).get(URL).status_code == 401
    call_command("drf_create_token", "peneliti", "-r", verbosity=0)
    fresh = Token.objects.get(user=user)
    assert fresh.key != token.key and _client(fresh.key).get(URL).status_code == 200


@pytest.mark.django_db
def test_an_unknown_token_is_still_refused_and_sessions_are_unaffected(make_user, settings):
    settings.API_TOKEN_LIFETIME_DAYS = 1
    assert _client("0" * 40).get(URL).status_code in (401, 403)
    api = APIClient()
    api.force_login(make_user("researcher"))
    assert api.get(URL).status_code == 200
