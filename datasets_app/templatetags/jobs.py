"""Template tags of background jobs (``datasets_app.jobs``), shared by the pages of every kind."""

from django import template

from datasets_app.job_control import job_control
from datasets_app.jobs import CANCELLED, FAILED, QUEUED, RUNNING
from datasets_app.jobs import job_recovery as recovery_of

register = template.Library()


@register.inclusion_tag("jobs/_recovery.html")
def job_recovery(job) -> dict:
    """A line saying when the worker running the job stopped and what became of the job."""
    return {"recovery": recovery_of(job)}


@register.inclusion_tag("jobs/_controls.html", takes_context=True)
def job_controls(context, job, kind: str) -> dict:
    """Cancel while the job is queued or running (or that it is being cancelled), Run again once it failed
    or was cancelled: the same fragment for every kind (``datasets_app.job_control``)."""
    control = job_control(kind)
    active = job.status in (QUEUED, RUNNING)
    return {
        "csrf_token": context.get("csrf_token"),
        "job": job,
        "texts": control.texts,
        "testid": control.testid,
        "active": active,
        "cancelling": active and getattr(job, "cancel_requested", False),
        "cancel_url": control.cancel_url(job) if active else "",
        "retry_url": (
            control.retry_url(job) if control.retry_url and job.status in (FAILED, CANCELLED) else ""
        ),
    }
