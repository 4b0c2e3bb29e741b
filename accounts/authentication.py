"""DRF authentication: API tokens that expire, and the browser session with its CSRF check.

Tokens are DRF's ``authtoken`` rows, made in the admin, with ``manage.py drf_create_token`` or by rotation
(``accounts.api``); a token's ``created`` time is when it was made or last rotated.
:class:`ExpiringTokenAuthentication` refuses a token older than ``API_TOKEN_LIFETIME_DAYS`` (0: tokens never
expire) with 401. This module is imported by DRF's settings, so it must not import ``rest_framework.views``.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta

import drf_spectacular.authentication
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions, status
from rest_framework.authentication import CSRFCheck, TokenAuthentication
from rest_framework.authtoken.models import Token

from accounts.sql import UserColumns, instance_loaded, prepared_cursor


def token_expires_at(created: datetime, lifetime_days: int) -> datetime | None:
    """When a token made at ``created`` stops working; None when tokens do not expire (lifetime 0)."""
    if lifetime_days < 0:
        raise ValueError(
            f"API_TOKEN_LIFETIME_DAYS must be 0 (never) or a number of days, got {lifetime_days}"
        )
    if lifetime_days == 0:
        return None
    return created + timedelta(days=lifetime_days)


def token_expired(created: datetime, *, now: datetime, lifetime_days: int) -> bool:
    expires = token_expires_at(created, lifetime_days)
    return expires is not None and now >= expires


class TokenExpired(exceptions.APIException):
    """401 with ``WWW-Authenticate: Token`` (DRF would answer 403 for an ``AuthenticationFailed`` here,
    because session authentication comes first and has no challenge to offer)."""

    status_code = status.HTTP_401_UNAUTHORIZED
    default_code = "token_expired"
    auth_header = "Token"


class ExpiringTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``, refused once the token is older than ``API_TOKEN_LIFETIME_DAYS``.

    The token, its user and the user's roles come from one statement (``token_with_user``): every API
    request of the annotation loop pays for it."""

    def authenticate_credentials(self, key: str) -> tuple[AbstractBaseUser, Token]:
        found = token_with_user(key)
        if found is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user, token = found
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        lifetime = settings.API_TOKEN_LIFETIME_DAYS
        if token_expired(token.created, now=timezone.now(), lifetime_days=lifetime):
            expired_on = token_expires_at(token.created, lifetime)
            raise TokenExpired(
                _(
                    "This API token expired on %(date)s (tokens last %(days)d days). Log in and rotate it with "
                    "POST /api/v1/auth/token/rotate, or ask an administrator for a new one."
                )
                % {"date": expired_on.date().isoformat(), "days": lifetime}
            )
        return user, token


def token_caller(request: HttpRequest) -> AbstractBaseUser | None:
    """The caller of an API request authenticated by its token alone, as the API's authentication
    classes would find them (``ExpiringTokenAuthentication``, one statement), for a view that answers
    without DRF's request machinery.

    ``None`` whenever DRF could decide otherwise or must answer itself: a session cookie (session
    authentication comes first), no ``Token`` header or a malformed one, an unknown, inactive or expired
    token. The caller then hands the request to DRF, which gives the usual answer.
    """
    if settings.SESSION_COOKIE_NAME in request.COOKIES:
        return None
    parts = request.META.get("HTTP_AUTHORIZATION", "").split()
    if len(parts) != 2 or parts[0] != "Token" or not parts[1].isascii():
        return None
    try:
        user, _token = ExpiringTokenAuthentication().authenticate_credentials(parts[1])
    except exceptions.APIException:
        return None
    return user


def token_with_user(key: str) -> tuple[AbstractBaseUser, Token] | None:
    """The token ``key`` with its user, the user's roles already read (``accounts.roles.user_roles``)."""
    user_model = get_user_model()
    conn = connections[DEFAULT_DB_ALIAS]
    statement = _token_statements.get(conn.vendor)
    if statement is None:
        statement = _token_statements[conn.vendor] = _TokenStatement(user_model, conn)
    with prepared_cursor() as cursor:
        cursor.execute(statement.sql, [*statement.columns.params, key])
        row = cursor.fetchone()
    if row is None:
        return None
    user = statement.columns.user(row[1:], conn)
    created = row[0]
    for convert in statement.created_converters:
        created = convert(created, statement.created_col, conn)
    token = instance_loaded(Token, _TOKEN_FIELDS, [key, user.pk, created])
    Token.user.field.set_cached_value(token, user)
    return user, token


class _TokenStatement:
    """``token_with_user``'s statement, made once per database vendor (every API request runs it)."""

    def __init__(self, user_model: type[AbstractBaseUser], conn: BaseDatabaseWrapper):
        quote = conn.ops.quote_name
        self.columns = UserColumns(user_model, conn)
        self.sql = (
            f"SELECT t.created, {self.columns.select}"
            f" FROM {quote(Token._meta.db_table)} t JOIN {quote(user_model._meta.db_table)} u ON u.id = t.user_id"
            " WHERE t.key = %s"
        )
        created_field = Token._meta.get_field("created")
        self.created_col = created_field.get_col(Token._meta.db_table)
        self.created_converters = conn.ops.get_db_converters(self.created_col)


_token_statements: dict[str, _TokenStatement] = {}
_TOKEN_FIELDS = ("key", "user_id", "created")


class SessionAuthentication(authentication.SessionAuthentication):
    """DRF's session authentication with the CSRF check made on Django's request.

    DRF hands its own request to Django's CSRF check, which reads ``request.POST``; on DRF's request that
    runs the view's parsers, so a body the view does not accept failed with 415 during authentication,
    before the permission check could answer 403 to a caller without the role. Django's request reads a
    form body only (the token of any other body comes from the ``X-CSRFToken`` header), and DRF takes the
    parsed form from it afterwards, so nothing is parsed twice.
    """

    def enforce_csrf(self, request):
        return super().enforce_csrf(request._request)


def session_request_same_origin(request) -> bool:
    """For a DRF request authenticated by the browser session: whether it shows it came from one of our own
    pages, by an ``HX-Request`` header (htmx) or a valid CSRF token in the ``X-CSRFToken`` header. A
    cross-site page can send neither: a top-level navigation carries no custom header, and a cross-origin
    request with one needs a CORS preflight this server never grants. Requests authenticated otherwise (API
    tokens) are not asked.

    For reads with an effect (claiming a task) that must stay GET for their clients: Django checks the CSRF
    token of unsafe methods only."""
    if not isinstance(request.successful_authenticator, SessionAuthentication):
        return True
    django_request = request._request
    if django_request.headers.get("HX-Request") == "true":
        return True
    # Django's CSRF check of a POST (Origin or Referer, then the X-CSRFToken header's token against the
    # cookie's), made on a copy so that this request stays a GET. Like every CSRF check, it lets Django's
    # test client opt out (``Client(enforce_csrf_checks=False)``).
    probe = copy.copy(django_request)
    probe.method = "POST"
    probe.csrf_processing_done = False  # set by the check this GET passed already
    return CSRFCheck(lambda _request: None).process_view(probe, None, (), {}) is None


class SessionScheme(drf_spectacular.authentication.SessionScheme):
    """The OpenAPI schema describes it as the cookie session it is."""

    target_class = "accounts.authentication.SessionAuthentication"
