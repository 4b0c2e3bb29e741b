"""The pages' Cancel and Retry of every controlled job kind (see :mod:`datasets_app.job_control`)."""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.refusals import shown
from datasets_app.job_control import JobControl, job_control
from datasets_app.jobs import CANCELLED, JobRefused


def _with_roles(view):
    """``view`` behind its kind's roles (``role_required``): the kind comes from the URL."""

    @wraps(view)
    def checked(request: HttpRequest, job: str, **kwargs) -> HttpResponse:
        control = job_control(job)
        return role_required(*control.roles)(view)(request, control, **kwargs)

    return checked


@require_POST
@_with_roles
def job_cancel_view(request: HttpRequest, control: JobControl, **kwargs) -> HttpResponse:
    """Cancel a queued job at once, or ask a running one to stop at its next step."""
    row = control.row_on_page(request, kwargs)
    try:
        row = control.do_cancel(row)
    except JobRefused:
        messages.error(request, control.texts.cancel_refused)
    else:
        done = row.status == CANCELLED
        messages.success(request, control.texts.cancelled if done else control.texts.stopping)
    return redirect(control.page(row))


@require_POST
@_with_roles
def job_retry_view(request: HttpRequest, control: JobControl, **kwargs) -> HttpResponse:
    """Queue a failed or cancelled job again."""
    row = control.row_on_page(request, kwargs)
    try:
        control.do_retry(row)
    except JobRefused:
        messages.error(request, control.texts.retry_refused)
    except control.refusals_on_retry() as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, control.texts.retried)
    return redirect(control.page(row))
