"""Flag recomputations under the one job-control surface (datasets_app.job_control): cancel and retry."""

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
