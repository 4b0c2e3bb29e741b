"""Celery task of the dashboards: compute one project's agreement report in the background.

Its name keeps the ``evaluation.`` prefix it was first registered under, so reports already queued by a
running deployment still run.
"""

from celery import shared_task

from analytics import services
from annotation.models import Project


@shared_task(
    bind=True,
    name="evaluation.agreement_report",
    soft_time_limit=20 * 60,
    time_limit=services.TASK_TIME_LIMIT_S,
)
def agreement_report(self, project_id: int, level: str, version: str) -> str | None:
    """Compute and cache the report unless the project is gone or this version is already cached.

    The report is computed on the project's current data; when answers arrived since the request was
    queued it is stored under the newer version and the next visit finds it. A redelivery after the
    worker died starts the computation again; a cancelled or ended report is left alone.
    """
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return None
    if services.cached_report(project_id=project_id, level=level, version=version) is not None:
        return version
    report = services.report_job_run(project=project, level=level, version=version, task_id=self.request.id)
    if report is None:
        return None
    if report["data_version"] != version:
        services.status_forget(project_id=project_id, level=level, version=version)
    return report["data_version"]
