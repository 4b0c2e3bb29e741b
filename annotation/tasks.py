"""Celery tasks of annotation: thin, safe to run twice."""

from celery import shared_task

from annotation.models import FlagRecompute, StudyImport
from annotation.services.loop import leases_reclaim
from annotation.services.study_imports import STUDY_IMPORT_JOB, study_import_run
from annotation.services.translation import FLAG_RECOMPUTE_JOB, flag_recompute_run
from datasets_app.jobs import jobs_requeue_stale


@shared_task(name="annotation.leases_reclaim", soft_time_limit=120, time_limit=180)
def leases_reclaim_task() -> int:
    """Return expired claims to the pool (claims also do this for their own project)."""
    return leases_reclaim()


@shared_task(
    bind=True,
    name="annotation.translation_flags_recompute",
    queue="default",
    soft_time_limit=30 * 60,
    time_limit=35 * 60,
)
def translation_flags_recompute_task(self, run_id: int) -> str | None:
    """Recompute a translation project's flags; a run that is gone or has ended is left alone (a running
    one is started again only by a redelivery of its own task, whose earlier delivery died)."""
    run = FlagRecompute.objects.filter(pk=run_id).first()
    if run is None or run.status not in (FlagRecompute.Status.QUEUED, FlagRecompute.Status.RUNNING):
        return None
    return flag_recompute_run(run=run, task_id=self.request.id).status


@shared_task(
    name="annotation.flag_recomputes_requeue_stale", ignore_result=True, soft_time_limit=120, time_limit=180
)
def flag_recomputes_requeue_stale_task() -> dict:
    """Periodic (beat): send again, or fail, the flag recomputations whose task is gone."""
    return jobs_requeue_stale(kind=FLAG_RECOMPUTE_JOB)


@shared_task(
    bind=True,
    name="annotation.study_import_run",
    queue="default",
    soft_time_limit=3 * 3600,
    time_limit=3 * 3600 + 60,
)
def study_import_run_task(self, import_id: int) -> str | None:
    """Import a study from another tool; an import that is gone or has ended is left alone (a running one
    is started again only by a redelivery of its own task, whose earlier delivery died)."""
    job = StudyImport.objects.filter(pk=import_id).first()
    if job is None or job.status not in (StudyImport.Status.QUEUED, StudyImport.Status.RUNNING):
        return None
    return study_import_run(job=job, task_id=self.request.id).status


@shared_task(
    name="annotation.study_imports_requeue_stale", ignore_result=True, soft_time_limit=120, time_limit=180
)
def study_imports_requeue_stale_task() -> dict:
    """Periodic (beat): send again, or fail, the study imports whose task is gone."""
    return jobs_requeue_stale(kind=STUDY_IMPORT_JOB)
