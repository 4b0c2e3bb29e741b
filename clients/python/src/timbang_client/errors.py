"""Exceptions of the client. Every error the API answered carries its status code and the API's error body."""

from __future__ import annotations

from typing import Any


class TimbangError(Exception):
    """Base of the client's exceptions."""


class ApiError(TimbangError):
    """The API answered with an error status. ``body`` is the decoded JSON error body (``{"detail": ...,
    "errors": ...}`` for most operations) or the text when it was not JSON."""

    def __init__(self, *, status_code: int, method: str, url: str, body: Any):
        self.status_code = status_code
        self.method = method
        self.url = url
        self.body = body
        detail = body.get("detail") if isinstance(body, dict) else None
        shown = detail if detail is not None else body
        super().__init__(f"{method} {url} -> {status_code}: {shown}")

    @property
    def detail(self) -> str | None:
        return self.body.get("detail") if isinstance(self.body, dict) else None

    @property
    def errors(self) -> Any:
        """Field errors: ``body["errors"]`` where the API sends them, else the body itself (DRF's field map)."""
        if isinstance(self.body, dict):
            return self.body.get("errors", self.body)
        return None


class BadRequest(ApiError):
    """400: the input was refused; ``errors`` says what and where."""


class Unauthorized(ApiError):
    """401: no token, or an expired or revoked one."""


class Forbidden(ApiError):
    """403: the token's user lacks the role."""


class NotFound(ApiError):
    """404: no such object, or not the caller's."""


class Conflict(ApiError):
    """409: the object's state does not allow it (a running job, a closed project)."""


class RetriesExhausted(ApiError):
    """429 or 503 after every retry."""


class JobFailed(TimbangError):
    """A waited-for job (import, export, run) ended without success; ``job`` is its last state."""

    def __init__(self, message: str, job: dict[str, Any]):
        self.job = job
        super().__init__(message)


class WaitTimeout(TimbangError):
    """A waited-for job did not end in time; ``job`` is its last state."""

    def __init__(self, message: str, job: dict[str, Any]):
        self.job = job
        super().__init__(message)


BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
}
