"""Template tags of background jobs (``datasets_app.jobs``), shared by the pages of every kind."""

from django import template

from datasets_app.jobs import job_recovery as recovery_of

register = template.Library()


@register.inclusion_tag("jobs/_recovery.html")
def job_recovery(job) -> dict:
    """A line saying when the worker running the job stopped and what became of the job."""
    return {"recovery": recovery_of(job)}
