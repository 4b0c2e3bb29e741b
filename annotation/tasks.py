"""Celery tasks of annotation: thin, safe to run twice."""

from celery import shared_task

from annotation.models import FlagRecompute
from annotation.services.loop import leases_reclaim
from annotation.services.translation import flag_recompute_run


@shared_task(name="annotation.leases_reclaim", soft_time_limit=120, time_limit=180)
def leases_reclaim_task() -> int:
    """Return expired claims to the pool (claims also do this for their own project)."""
    return leases_reclaim()


@shared_task(
    name="annotation.translation_flags_recompute",
    queue="default",
    soft_time_limit=30 * 60,
    time_limit=35 * 60,
)
def translation_flags_recompute_task(run_id: int) -> str | None:
    """Recompute a translation project's flags; a run that is gone or no longer queued is left alone."""
    run = FlagRecompute.objects.filter(pk=run_id).first()
    if run is None or run.status != FlagRecompute.Status.QUEUED:
        return None
    return flag_recompute_run(run=run).status
