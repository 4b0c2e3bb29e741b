"""Celery task of exports: an export id in, re-fetch, return early unless it is queued, one service call.

The task keeps the name it was first registered under (``datasets_app.export_run``), so exports already
queued by a running deployment still run.
"""

from celery import shared_task

from exports.models import Export
from exports.services import export_run


@shared_task(name="datasets_app.export_run", soft_time_limit=3600, time_limit=3600 + 60)
def export_run_task(export_id: int) -> str | None:
    record = Export.objects.filter(pk=export_id).first()
    if record is None or record.status != Export.Status.QUEUED:
        return None
    return export_run(export=record).status
