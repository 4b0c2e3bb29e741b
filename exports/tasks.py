"""Celery tasks of exports: an export id in, re-fetch, return early unless it is queued or running, one
service call; and the periodic sweep of exports whose task is gone.

The export task keeps the name it was first registered under (``datasets_app.export_run``), so exports
already queued by a running deployment still run.
"""

from celery import shared_task

from datasets_app.jobs import jobs_requeue_stale
from exports.models import Export
from exports.services import EXPORT_JOB, export_run


@shared_task(bind=True, name="datasets_app.export_run", soft_time_limit=3600, time_limit=3600 + 60)
def export_run_task(self, export_id: int) -> str | None:
    record = Export.objects.filter(pk=export_id).first()
    if record is None or record.status not in (Export.Status.QUEUED, Export.Status.RUNNING):
        return None
    return export_run(export=record, task_id=self.request.id).status


@shared_task(name="exports.jobs_requeue_stale", ignore_result=True, soft_time_limit=120, time_limit=180)
def jobs_requeue_stale_task() -> dict:
    """Periodic (beat): send again, or fail, the exports whose task is gone."""
    return {"exports": jobs_requeue_stale(kind=EXPORT_JOB)}
