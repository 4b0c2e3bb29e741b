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


@shared_task(name="datasets_app.export_run", soft_time_limit=3600, time_limit=3600 + 60)
def export_run_task(export_id: int) -> str | None:
    # Imported on use: the export stack (pandas, pyarrow, huggingface_hub) stays out of the import task's way.
    from datasets_app.exports import export_run
    from datasets_app.models import Export

    record = Export.objects.filter(pk=export_id).first()
    if record is None or record.status != Export.Status.QUEUED:
        return None
    return export_run(export=record).status
