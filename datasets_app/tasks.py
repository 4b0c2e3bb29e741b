"""Celery tasks of datasets_app: ids in, re-fetch, one service call."""

from celery import shared_task

from datasets_app.models import DatasetImport
from datasets_app.services import dataset_import_run


@shared_task(name="datasets_app.dataset_import_run", soft_time_limit=3 * 3600, time_limit=3 * 3600 + 60)
def dataset_import_run_task(import_id: int) -> str | None:
    record = DatasetImport.objects.filter(pk=import_id).first()
    if record is None or record.status != DatasetImport.Status.QUEUED:
        return None
    return dataset_import_run(record=record).status
