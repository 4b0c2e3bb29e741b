"""A project's quality controls: the thresholds of the annotator signals, the qualification gate and
the signals per member as CSV."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import PROJECT_MANAGER
from annotation import selectors, services
from annotation.forms import QualificationForm, QualitySettingsForm
from annotation.views.common import form_errors_as_messages, manager_project
from datasets_app.domain.csv_cells import SafeDictWriter


@role_required(PROJECT_MANAGER)
@require_POST
def manage_quality_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    project = manager_project(project_id)
    form = QualitySettingsForm(request.POST, project=project)
    if not form.is_valid():
        form_errors_as_messages(request, form)
    else:
        services.project_quality_settings_set(project=project, settings=form.cleaned_data)
        messages.success(request, _("Quality thresholds saved."))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_qualification(request: HttpRequest, project_id: int) -> HttpResponse:
    project = manager_project(project_id)
    form = QualificationForm(request.POST, project=project)
    if not form.is_valid():
        form_errors_as_messages(request, form)
        return redirect("annotation:manage_detail", project_id=project.pk)
    try:
        services.project_qualification_set(
            project=project, n_tasks=form.cleaned_data["n_tasks"], pass_mark=form.cleaned_data["pass_mark"]
        )
    except ValueError as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("Qualification saved."))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
def manage_quality_csv(request: HttpRequest, project_id: int) -> HttpResponse:
    project = manager_project(project_id)
    rows = selectors.quality_rows(selectors.quality_report(project=project))
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="project-{project.pk}-quality.csv"'
    writer = SafeDictWriter(response, fieldnames=list(selectors.QUALITY_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows({**row, "flags": ";".join(row["flags"])} for row in rows)
    return response
