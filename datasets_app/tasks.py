"""Celery tasks of datasets_app: ids in, re-fetch, one service call.

Both tasks are acknowledged late and rejected when their worker dies (the project's Celery settings): a
redelivered task restarts its job from a clean start, and ``datasets_app.jobs_requeue_stale`` sends again
the jobs whose task is gone (``datasets_app.jobs``).
"""

from celery import shared_task

from datasets_app.jobs import jobs_requeue_stale
from datasets_app.models import DatasetImport
from datasets_app.services import IMPORT_JOB, dataset_import_run


@shared_task(
    bind=True,
    name="datasets_app.dataset_import_run",
    soft_time_limit=3 * 3600,
    time_limit=3 * 3600 + 60,
)
def dataset_import_run_task(self, import_id: int) -> str | None:
    record = DatasetImport.objects.filter(pk=import_id).first()
    if record is None or record.status not in (DatasetImport.Status.QUEUED, DatasetImport.Status.RUNNING):
        return None
    return dataset_import_run(record=record, task_id=self.request.id).status


@shared_task(name="datasets_app.jobs_requeue_stale", ignore_result=True, soft_time_limit=120, time_limit=180)
def jobs_requeue_stale_task() -> dict:
    """Periodic (beat): send again, or fail, the imports whose task is gone."""
    return {"imports": jobs_requeue_stale(kind=IMPORT_JOB)}
