"""Site-wide middleware: a clear 503 when the database cannot be reached, a clear 429 for a locked login, a
400 for input no view can use, and the Content-Security-Policy header."""

from __future__ import annotations

import functools
import logging

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.signals import setting_changed
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.template.defaultfilters import filesizeformat
from django.template.loader import render_to_string
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts.backends import LoginThrottled
from datasets_app.domain.untrusted_json import MAX_JSON_DEPTH, NUL, UnsafeJson, loads

logger = logging.getLogger(__name__)

# Seconds a client is asked to wait before sending the request again.
RETRY_AFTER_S = 5


def _wants_json(request: HttpRequest) -> bool:
    if request.path.startswith("/api/"):
        return True
    accept = request.headers.get("Accept", "")
    return "application/json" in accept and "text/html" not in accept


# What a view may set on its response to change the policy (django-csp's decorators).
_POLICY_CHANGES = (
    "_csp_config",
    "_csp_update",
    "_csp_replace",
    "_csp_config_ro",
    "_csp_update_ro",
    "_csp_replace_ro",
)


@functools.cache
def _settings_policies() -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
    """(header, policy, exemption attribute, excluded path prefixes) of the enforced and the report-only
    policy of the settings, for responses that change neither."""
    found = []
    for header, setting, exempt, report_only in (
        (HEADER, "CONTENT_SECURITY_POLICY", "_csp_exempt", False),
        (HEADER_REPORT_ONLY, "CONTENT_SECURITY_POLICY_REPORT_ONLY", "_csp_exempt_ro", True),
    ):
        policy = build_policy(report_only=report_only)
        if policy:
            prefixes = (getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES", None) or ()
            found.append((header, policy, exempt, tuple(prefixes)))
    return tuple(found)


def _policy_setting_changed(*, setting: str, **kwargs: object) -> None:
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        _settings_policies.cache_clear()


setting_changed.connect(_policy_setting_changed)


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware, with the settings' policy built once per process.

    django-csp builds the header again for every response (twice: enforced and report-only). Most
    responses neither use the request's nonce nor change the policy with a decorator, and theirs is the
    same every time; the others are left to django-csp.
    """

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if getattr(request, "_csp_nonce", None) is not None or any(
            getattr(response, name, None) is not None for name in _POLICY_CHANGES
        ):
            return super().process_response(request, response)
        if settings.DEBUG and response.status_code in (500, 404):
            return response
        for header, policy, exempt, excluded in _settings_policies():
            if header not in response and getattr(response, exempt, False) is False:
                if not request.path_info.startswith(excluded):
                    response[header] = policy
        # As django-csp does: a nonce asked for after the header was written is an error.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response


class DatabaseUnavailableMiddleware:
    """Answer ``503 Service Unavailable`` when a view fails because the database is unreachable.

    A restarting or stopped PostgreSQL raises ``OperationalError`` (or ``InterfaceError`` on a connection
    it closed) inside the view; the view's transaction is rolled back by the server, so nothing of the
    request was written. Instead of the generic 500 page the client is told that the database is
    unavailable and that sending the same request again is safe (a submit is idempotent). The HTML page
    touches no database: no user, no session, no context processors. Django drops the broken connection
    at the end of the request, and the next request opens a fresh one.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.warning(
            "database unavailable for %s %s: %s", request.method, request.path, str(exception).strip()
        )
        message = _(
            "The database is unavailable at the moment. Please try again in a few seconds; "
            "sending the same answer again is safe."
        )
        if _wants_json(request):
            response: HttpResponse = JsonResponse({"detail": message, "code": "database_unavailable"})
        elif request.headers.get("HX-Request") == "true":
            # htmx asked from a page of ours: the message alone, with no <style> for that page to refuse.
            response = HttpResponse(render_to_string("errors/503.html#message", {"message": message}))
        else:
            # The page's one inline <style> carries the request's Content-Security-Policy nonce.
            context = {"message": message, "csp_nonce": _csp_nonce(request)}
            response = HttpResponse(render_to_string("errors/503.html", context))
        response.status_code = 503
        response["Retry-After"] = str(RETRY_AFTER_S)
        return response


class LoginThrottleMiddleware:
    """Answer ``429 Too Many Requests`` to a login refused by ``accounts.backends``.

    The message says, in the language of the page, in how many minutes the lock lifts; ``Retry-After``
    gives the same in seconds. API requests get ``{"detail", "code": "login_throttled", "retry_after"}``.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, LoginThrottled):
            return None
        minutes = -(-exception.retry_after // 60)
        message = ngettext(
            "Too many login attempts. Try again in %(minutes)d minute.",
            "Too many login attempts. Try again in %(minutes)d minutes.",
            minutes,
        ) % {"minutes": minutes}
        if _wants_json(request):
            response: HttpResponse = JsonResponse(
                {"detail": message, "code": "login_throttled", "retry_after": exception.retry_after}
            )
        else:
            response = HttpResponse(
                render_to_string("errors/429.html", {"message": message}, request=request)
            )
        response.status_code = 429
        response["Retry-After"] = str(exception.retry_after)
        return response


# -- malformed input ---------------------------------------------------------------------------------------

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
FORM_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})


class MalformedInputMiddleware:
    """Answer ``400`` (``413`` for a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``) with a message, before any
    view runs, for input that no view can store or safely decode:

    - a NUL character in the path, a query parameter, a cookie, a form field (name, value or uploaded file
      name) or anywhere in a JSON body (PostgreSQL refuses NUL in text and ``jsonb``, so it would fail as a
      500 deep inside the view);
    - a JSON body nested deeper than ``MAX_JSON_DEPTH`` levels (the decoder and every recursive step after
      it would run out of stack);
    - a form with more fields or files than Django allows, or a malformed multipart body.

    API paths and JSON clients get ``{"detail", "code"}`` (see ``_wants_json``), pages a small error page.
    A JSON body is decoded here once more than the view will; request bodies are capped in size, so that
    costs little.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            problem = _malformed_input(request)
        except RequestDataTooBig:
            limit = filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
            problem = (
                413,
                "body_too_large",
                _("The request body is larger than the limit of %(limit)s.") % {"limit": limit},
            )
        except (TooManyFieldsSent, TooManyFilesSent):
            problem = (400, "too_many_fields", _("The request has more fields or files than allowed."))
        except MultiPartParserError as exc:
            problem = (
                400,
                "malformed_body",
                _("The multipart body cannot be read: %(error)s") % {"error": exc},
            )
        if problem is None:
            return self.get_response(request)
        status, code, message = problem
        logger.info("refused %s %s: %s", request.method, request.path.replace(NUL, "%00"), code)
        if _wants_json(request):
            response: HttpResponse = JsonResponse({"detail": message, "code": code}, status=status)
        else:
            title = _("Request too large") if status == 413 else _("Bad request")
            context = {"title": title, "message": message, "csp_nonce": _csp_nonce(request)}
            html = render_to_string("errors/400.html", context)
            response = HttpResponse(html, status=status)
        return response


def _csp_nonce(request: HttpRequest) -> str:
    """The request's Content-Security-Policy nonce, for the one inline <style> of the error pages."""
    return str(request.csp_nonce) if hasattr(request, "csp_nonce") else ""


def _shown(name: str) -> str:
    return name.replace(NUL, "%00")


def _malformed_input(request: HttpRequest) -> tuple[int, str, str] | None:
    """``(status, code, message)`` for the first problem found, else ``None``."""
    if NUL in request.path_info or NUL in request.path:
        return 400, "nul_character", _("The address contains a NUL character (%00), which is not allowed.")
    for name, values in request.GET.lists():
        if NUL in name or any(NUL in value for value in values):
            message = _(
                'The query parameter "%(name)s" contains a NUL character (%%00), which is not allowed.'
            )
            return 400, "nul_character", message % {"name": _shown(name)}
    for name, value in request.COOKIES.items():
        if NUL in name or NUL in value:
            message = _('The cookie "%(name)s" contains a NUL character, which is not allowed.')
            return 400, "nul_character", message % {"name": _shown(name)}
    if request.method not in BODY_METHODS:
        return None
    content_type = request.content_type or ""
    if content_type in FORM_TYPES:
        for name, values in request.POST.lists():
            if NUL in name or any(NUL in value for value in values):
                message = _('The form field "%(name)s" contains a NUL character, which is not allowed.')
                return 400, "nul_character", message % {"name": _shown(name)}
        for name, files in request.FILES.lists():
            if NUL in name or any(NUL in (upload.name or "") for upload in files):
                message = _(
                    'The file sent as "%(name)s" has a NUL character in its name, which is not allowed.'
                )
                return 400, "nul_character", message % {"name": _shown(name)}
    elif content_type == "application/json" or content_type.endswith("+json"):
        body = request.body
        if b"\x00" in body:
            return 400, "nul_character", _("The JSON body contains a NUL byte, which is not allowed.")
        if b"\\u0000" not in body and body.count(b"{") + body.count(b"[") <= MAX_JSON_DEPTH:
            # A NUL character can only be written \u0000 in JSON, and nesting is never deeper than the
            # brackets that open it: nothing to find, so no decoding here (the loop's answers take this way).
            return None
        try:
            loads(body)
        except UnsafeJson as exc:
            where = exc.problem.path
            if exc.problem.code == "nul":
                if where:
                    message = _(
                        'The JSON body contains a NUL character (\\u0000) in "%(path)s", which is not allowed.'
                    )
                else:
                    message = _("The JSON body contains a NUL character (\\u0000), which is not allowed.")
                return 400, "nul_character", message % {"path": _shown(where)}
            message = _("The JSON body is nested deeper than %(depth)d levels.") % {"depth": MAX_JSON_DEPTH}
            return 400, "json_too_deep", message
        except ValueError:
            return None  # not JSON at all: the view's parser says so in its own words
    return None
