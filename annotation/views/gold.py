"""Gold tasks of rating projects: a gold file's import, the gold rate, the task list and one task's
expected answer."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import PROJECT_MANAGER
from annotation import selectors, services
from annotation.forms import GoldAnswerForm, GoldRateForm
from annotation.models import Project
from annotation.views.common import GOLD_KINDS, form_errors_as_messages, manager_project

GOLD_PAGE_SIZE = 50


def _gold_project(project_id: int) -> Project:
    project = manager_project(project_id)
    if project.kind not in GOLD_KINDS:
        raise Http404("gold tasks exist only in rating projects")
    return project


@role_required(PROJECT_MANAGER)
@require_POST
def manage_gold_import(request: HttpRequest, project_id: int) -> HttpResponse:
    project = manager_project(project_id)
    upload = request.FILES.get("file")
    text = upload.read().decode("utf-8-sig", errors="replace") if upload else request.POST.get("text", "")
    try:
        n = services.gold_file_import(project=project, text=text)
    except ValueError as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("%(n)d gold task(s) set.") % {"n": n})
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_gold_rate(request: HttpRequest, project_id: int) -> HttpResponse:
    """The gold rate of a rating project, at any time before it closes: claims made afterwards follow it;
    tasks already given out stay as they are."""
    project = _gold_project(project_id)
    form = GoldRateForm(request.POST, project=project)
    if not form.is_valid():
        form_errors_as_messages(request, form)
    else:
        try:
            services.project_gold_rate_set(project=project, rate=form.cleaned_data["gold_rate"])
        except ValueError as exc:
            messages.error(request, shown(exc))
        else:
            messages.success(request, _("Gold rate saved; it applies to the tasks handed out from now on."))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
def manage_gold_tasks(request: HttpRequest, project_id: int) -> HttpResponse:
    """The tasks of a rating project, paged, each with its gold answer or a link to mark it."""
    project = _gold_project(project_id)
    tasks = selectors.gold_task_list(project=project)
    page = Paginator(tasks, GOLD_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "annotation/manage_gold.html", {"project": project, "page": page})


@role_required(PROJECT_MANAGER)
def manage_gold_task(request: HttpRequest, project_id: int, task_id: int) -> HttpResponse:
    """Mark one task as gold with the expected answer, or change a gold task's answer (rating projects
    until they close; once active, only a task nobody has claimed can become gold)."""
    project = _gold_project(project_id)
    task = get_object_or_404(project.tasks.select_related("prompt"), pk=task_id)
    scales = selectors.criterion_scales(project) if project.criteria else {}
    form = GoldAnswerForm(
        request.POST or None, project=project, n_responses=len(task.response_ids), scales=scales
    )
    if request.method == "POST" and form.is_valid():
        try:
            services.task_gold_mark(task=task, answer=form.answer())
        except ValueError as exc:
            form.add_error(None, shown(exc))
        else:
            messages.success(request, _("Task %(task)d is now a gold task.") % {"task": task.pk})
            return redirect("annotation:manage_gold_tasks", project_id=project.pk)
    context = {"project": project, "form": form, **selectors.gold_task_view(task=task)}
    return render(request, "annotation/manage_gold_task.html", context, status=400 if form.errors else 200)
