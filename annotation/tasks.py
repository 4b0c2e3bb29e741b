"""Celery tasks of annotation: thin, safe to run twice."""

from celery import shared_task

from annotation.services import leases_reclaim


@shared_task(name="annotation.leases_reclaim", queue="default", soft_time_limit=120, time_limit=180)
def leases_reclaim_task() -> int:
    """Return expired claims to the pool (claims also do this for their own project)."""
    return leases_reclaim()
