"""Flag recomputations and study imports under the one job-control surface (datasets_app.job_control):
cancel and retry."""

from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from accounts.roles import PROJECT_MANAGER
from annotation.models import FlagRecompute, Project
from annotation.views.common import job_project
from datasets_app.job_control import JobControl, JobTexts, job_control_register


def _on_page(request, kwargs):
    """The page's lookup: a project the manager manages, of a translation kind, and its recomputation."""
    project = job_project(kwargs["project_id"], Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
    return get_object_or_404(FlagRecompute, pk=kwargs["run_id"], project=project)


def _live_progress(job) -> dict:
    """The step a running study import is at (kept in the cache by the worker)."""
    from annotation.services import study_import_progress_get

    return {"progress": study_import_progress_get(job=job)}


def _project_url(name: str):
    return lambda run: reverse(name, kwargs={"project_id": run.project_id, "run_id": run.pk})


FLAG_RECOMPUTE_CONTROL = job_control_register(
    JobControl(
        name="flag-recompute",
        model="annotation.FlagRecompute",
        id_kwarg="run_id",
        roles=(PROJECT_MANAGER,),
        cancel="annotation.services.flag_recompute_cancel",
        retry="annotation.services.flag_recompute_retry",
        retry_refusals=("annotation.services.AnnotationError",),
        service_arg="run",
        serializer="annotation.serializers.FlagRecomputeSerializer",
        find_on_page=_on_page,
        page=lambda run: reverse("annotation:manage_detail", kwargs={"project_id": run.project_id}),
        cancel_url=_project_url("annotation:manage_flags_cancel"),
        retry_url=_project_url("annotation:manage_flags_retry"),
        testid="recompute",
        texts=JobTexts(
            cancel_button=_("Cancel recomputation"),
            cancelling=_("Cancelling: the recomputation stops after its current batch."),
            cancel_refused=_("Only a queued or running recomputation can be cancelled."),
            cancelled=_("The recomputation of the flags was cancelled."),
            stopping=_("The recomputation of the flags was cancelled."),
            retry_refused=_("Only a failed or cancelled recomputation can be run again."),
            retried=_("Recomputing the flags of every unit in the background."),
        ),
    )
)


def _import_url(name: str):
    return lambda job: reverse(name, kwargs={"import_id": job.pk})


STUDY_IMPORT_CONTROL = job_control_register(
    JobControl(
        name="study-import",
        model="annotation.StudyImport",
        id_kwarg="import_id",
        roles=(PROJECT_MANAGER,),
        cancel="annotation.services.study_import_cancel",
        retry="annotation.services.study_import_retry",
        retry_refusals=("annotation.services.AnnotationError",),
        service_arg="job",
        serializer="annotation.serializers.StudyImportSerializer",
        detail_context=_live_progress,
        page=_import_url("annotation:study_import_detail"),
        cancel_url=_import_url("annotation:study_import_cancel"),
        retry_url=_import_url("annotation:study_import_retry"),
        testid="study-import",
        texts=JobTexts(
            cancel_button=_("Cancel import"),
            cancelling=_("Cancelling: the import stops before its next step."),
            cancel_refused=_("Only a queued or running import can be cancelled."),
            cancelled=_("Import cancelled."),
            stopping=_("The import stops before its next step; nothing of it is kept."),
            retry_refused=_("Only a failed or cancelled import can be run again."),
            retried=_("The study is imported again in the background."),
        ),
    )
)
