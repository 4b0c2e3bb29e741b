"""Site-wide middleware: a clear 503 when the database cannot be reached, a clear 429 for a locked login."""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts.backends import LoginThrottled

logger = logging.getLogger(__name__)

# Seconds a client is asked to wait before sending the request again.
RETRY_AFTER_S = 5


def _wants_json(request: HttpRequest) -> bool:
    if request.path.startswith("/api/"):
        return True
    accept = request.headers.get("Accept", "")
    return "application/json" in accept and "text/html" not in accept


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
        else:
            # The page's one inline <style> carries the request's Content-Security-Policy nonce.
            nonce = str(request.csp_nonce) if hasattr(request, "csp_nonce") else ""
            context = {"message": message, "csp_nonce": nonce}
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
