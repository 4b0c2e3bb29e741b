"""Translation flags of translation projects: recompute them in the background (cancel, retry,
progress) and their settings."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import PROJECT_MANAGER
from annotation import services
from annotation.forms import FlagSettingsForm
from annotation.models import Project
from annotation.views.common import job_project


@role_required(PROJECT_MANAGER)
@require_POST
def manage_flags_recompute(request: HttpRequest, project_id: int) -> HttpResponse:
    project = job_project(project_id, Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
    try:
        services.flag_recompute_queue(project=project, user=request.user)
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("Recomputing the flags of every unit in the background."))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
def manage_flags_progress(request: HttpRequest, project_id: int) -> HttpResponse:
    """The progress bar of the latest recomputation (polled by htmx while it runs)."""
    project = job_project(project_id, Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
    context = {"project": project, "recompute": project.flag_recomputes.first()}
    return render(request, "annotation/_manage_translation.html#recompute", context)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_flag_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    project = job_project(project_id, Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
    form = FlagSettingsForm(request.POST, project=project)
    if not form.is_valid():
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect("annotation:manage_detail", project_id=project.pk)
    try:
        services.project_update(project=project, flag_settings=form.flag_settings())
    except services.ProjectInvalid as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("Flag settings saved. Recompute the flags to apply them to every unit."))
    return redirect("annotation:manage_detail", project_id=project.pk)
