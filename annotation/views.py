"""Pages of annotation: the annotator's task loop (htmx), project management, review.

Annotator pages address work only by the assignment's random token and never render a model name,
response id, prompt id or dataset meta (``selectors.task_view`` does not carry them).
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation import selectors, services
from annotation.forms import GroupForm, MemberForm, ProjectCreateForm
from annotation.models import Assignment, Project
from config.permissions import role_required
from config.roles import ANNOTATOR, PROJECT_MANAGER, REVIEWER

SKIP_REASONS = (
    ("language", "I do not know this language or register well enough"),
    ("unclear", "The prompt is unclear or broken"),
    ("offensive", "The content is offensive or distressing"),
    ("other", "Another reason"),
)
SCALE = (1, 2, 3, 4, 5)
_RATING_FIELD = re.compile(r"^r-(\d+)-([a-z_]+)$")


def _lang() -> str:
    return "id" if (get_language() or "en").startswith("id") else "en"


def _own(token: str, request: HttpRequest) -> Assignment:
    try:
        return selectors.assignment_for_user(token=token, user=request.user)
    except Assignment.DoesNotExist:
        raise Http404 from None


def _error_list(view: selectors.TaskView, errors: dict[str, list[str]]) -> list[tuple[str, str]]:
    """Validation messages with the names the annotator sees ("Response 2 · Fluency")."""
    labels = {str(r.number): r.label for r in view.responses}
    criteria = {c.key: c.label.get(_lang(), c.key) for c in view.criteria}
    named = {"best": _("Best response"), "vote": _("Vote"), "comment": _("Comment"), "rationale": _("Reason")}
    found = []
    for field, texts in errors.items():
        parts = field.split(".")
        if parts[0] == "ratings" and len(parts) == 3:
            label = f"{labels.get(parts[1], parts[1])} · {criteria.get(parts[2], parts[2])}"
        else:
            label = named.get(parts[0], field)
        found.extend((label, text) for text in texts)
    return found


def _task_context(
    assignment: Assignment, errors: dict | None = None, posted: dict | None = None
) -> dict[str, Any]:
    view = selectors.task_view(assignment=assignment, lang=_lang())
    values = posted if posted is not None else view.values
    ratings = values.get("ratings") or {}
    response_rows = []
    for response in view.responses:
        given = ratings.get(str(response.number)) or {}
        cells = [
            {
                "criterion": criterion,
                "name": f"r-{response.number}-{criterion.key}",
                "selected": str(given.get(criterion.key, "")),
                "choices": [(v, dict(criterion.levels.get(_lang(), [])).get(v, "")) for v in SCALE],
                "error": (errors or {}).get(f"ratings.{response.number}.{criterion.key}"),
            }
            for criterion in view.criteria
        ]
        response_rows.append({"response": response, "cells": cells})
    return {
        "task": view,
        "values": values,
        "selected_best": str(values.get("best", "")),
        "selected_vote": str(values.get("vote", "")),
        "response_rows": response_rows,
        "errors": _error_list(view, errors or {}),
        "skip_reasons": [(key, _(text)) for key, text in SKIP_REASONS],
        "lang": _lang(),
        "other_lang": "en" if _lang() == "id" else "id",
    }


def _payload_from_form(kind: str, best_pick: str, data) -> tuple[dict[str, Any], float | None]:
    """Form fields (``r-<n>-<criterion>``, ``best``, ``vote``, ``comment``) to the domain's payload."""
    payload: dict[str, Any] = {}
    if kind == Project.Kind.LIKERT:
        ratings: dict[str, dict[str, str]] = {}
        for name, value in data.items():
            match = _RATING_FIELD.match(name)
            if match:
                ratings.setdefault(match.group(1), {})[match.group(2)] = value
        payload["ratings"] = ratings
        if best_pick != Project.BestPick.OFF and data.get("best"):
            payload["best"] = data["best"]
        payload["comment"] = data.get("comment", "")
    elif kind == Project.Kind.BEST_OF_N:
        payload["best"] = data.get("best", "")
        payload["comment"] = data.get("comment", "")
    else:
        payload["vote"] = data.get("vote", "")
        payload["rationale"] = data.get("rationale", "")
    try:
        seconds = float(data.get("seconds", ""))
    except ValueError:
        seconds = None
    return payload, seconds


def _next_or_done(request: HttpRequest, project: Project) -> HttpResponse:
    """After a submit or skip: the next task's fragment (htmx) or a redirect to it."""
    try:
        assignment = services.assignment_claim(project=project, user=request.user)
    except services.AnnotationError as exc:
        assignment = None
        messages.info(request, str(exc))
    if assignment is None:
        if request.htmx:
            return render(request, "annotation/task.html#done", {"project": project})
        return redirect("annotation:start", project_id=project.pk)
    url = reverse("annotation:task", args=[assignment.token])
    if not request.htmx:
        return redirect(url)
    response = render(request, "annotation/task.html#task", _task_context(assignment))
    response["HX-Push-Url"] = url
    return response


# --- annotators --------------------------------------------------------------------------------------


@role_required(ANNOTATOR)
def project_start(request: HttpRequest, project_id: int) -> HttpResponse:
    """GET: the project's instructions and the caller's progress. POST: claim and go to the task."""
    membership = selectors.membership_for(project_id=project_id, user=request.user)
    if membership is None:
        raise Http404
    project = membership.project
    if request.method == "POST":
        try:
            assignment = services.assignment_claim(project=project, user=request.user)
        except services.AnnotationError as exc:
            messages.error(request, str(exc))
            return redirect("annotation:start", project_id=project.pk)
        if assignment is None:
            messages.info(request, _("Nothing is left for you in this project. Thank you!"))
            return redirect("annotation:start", project_id=project.pk)
        return redirect("annotation:task", token=assignment.token)
    context = {
        "project": project,
        "done": selectors.done_count(project_id=project.pk, user_id=request.user.pk),
        "instructions": project.instructions_id if _lang() == "id" else project.instructions_en,
    }
    return render(request, "annotation/start.html", context)


@role_required(ANNOTATOR)
def task_page(request: HttpRequest, token: str) -> HttpResponse:
    assignment = _own(token, request)
    return render(request, "annotation/task.html", _task_context(assignment))


@role_required(ANNOTATOR)
@require_POST
def task_submit(request: HttpRequest, token: str) -> HttpResponse:
    assignment = _own(token, request)
    project = assignment.project
    payload, seconds = _payload_from_form(project.kind, project.best_pick, request.POST)
    try:
        result = services.assignment_submit(token=token, user=request.user, payload=payload, seconds=seconds)
    except services.SubmissionInvalid as exc:
        context = _task_context(assignment, errors=exc.errors, posted=payload)
        template = "annotation/task.html#task" if request.htmx else "annotation/task.html"
        return render(request, template, context)
    except services.AnnotationError as exc:
        messages.error(request, str(exc))
        return _next_or_done(request, project)
    if result.outcome == "edited":
        messages.success(request, _("Your answer was updated."))
    return _next_or_done(request, project)


@role_required(ANNOTATOR)
@require_POST
def task_skip(request: HttpRequest, token: str) -> HttpResponse:
    assignment = _own(token, request)
    reasons = dict(SKIP_REASONS)
    reason = reasons.get(request.POST.get("reason", "other"), reasons["other"])
    note = request.POST.get("note", "").strip()
    try:
        services.assignment_skip(
            token=token, user=request.user, reason=f"{reason}: {note}" if note else reason
        )
    except services.AnnotationError as exc:
        messages.error(request, str(exc))
    return _next_or_done(request, assignment.project)


# --- project managers -----------------------------------------------------------------------------------


def _manager_project(project_id: int) -> Project:
    return get_object_or_404(Project.objects.select_related("dataset"), pk=project_id)


@role_required(PROJECT_MANAGER)
def manage_list(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/manage_list.html", {"projects": selectors.project_list()})


@role_required(PROJECT_MANAGER)
def manage_create(request: HttpRequest) -> HttpResponse:
    form = ProjectCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = services.project_create(created_by=request.user, **form.service_kwargs())
        except services.ProjectInvalid as exc:
            for name, message in exc.errors.items():
                form.add_error(name if name in form.fields else None, message)
        else:
            messages.success(
                request,
                _("Project created with %(n)d tasks. Add annotators, then activate it.")
                % {"n": project.n_tasks},
            )
            return redirect("annotation:manage_detail", project_id=project.pk)
    return render(request, "annotation/manage_create.html", {"form": form})


@role_required(PROJECT_MANAGER)
def manage_detail(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _manager_project(project_id)
    context = {
        "project": project,
        "report": selectors.progress_report(project=project),
        "members": selectors.project_members(project=project),
        "groups": project.groups.order_by("id"),
        "group_form": GroupForm(),
        "member_form": MemberForm(project=project),
    }
    template = "annotation/manage_detail.html#progress" if request.htmx else "annotation/manage_detail.html"
    return render(request, template, context)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_status(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _manager_project(project_id)
    try:
        services.project_status_set(project=project, action=request.POST.get("action", ""))
    except services.AnnotationError as exc:
        messages.error(request, str(exc))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_group_add(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _manager_project(project_id)
    form = GroupForm(request.POST)
    if form.is_valid():
        try:
            services.annotator_group_create(project=project, name=form.cleaned_data["name"])
        except services.ProjectInvalid as exc:
            messages.error(request, str(exc))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_member_add(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _manager_project(project_id)
    form = MemberForm(request.POST, project=project)
    if not form.is_valid():
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect("annotation:manage_detail", project_id=project.pk)
    added = 0
    for user in form.cleaned_data["users"]:
        try:
            services.project_member_add(project=project, user=user, group=form.cleaned_data["group"])
            added += 1
        except services.ProjectInvalid as exc:
            messages.error(request, f"{user.get_username()}: {exc}")
    if added:
        messages.success(request, _("%(n)d annotator(s) added.") % {"n": added})
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_member_remove(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _manager_project(project_id)
    user = get_object_or_404(get_user_model(), pk=request.POST.get("user"))
    services.project_member_remove(project=project, user=user)
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_reclaim(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _manager_project(project_id)
    n = services.leases_reclaim(project=project)
    messages.success(request, _("%(n)d expired claim(s) returned to the pool.") % {"n": n})
    return redirect("annotation:manage_detail", project_id=project.pk)


# --- reviewers ------------------------------------------------------------------------------------------


@role_required(REVIEWER, PROJECT_MANAGER)
def review_list(request: HttpRequest) -> HttpResponse:
    project_id = request.GET.get("project")
    project = get_object_or_404(Project, pk=project_id) if project_id and project_id.isdigit() else None
    queue = selectors.review_queue(project=project).exclude(annotator_id=request.user.pk)[:20]
    items = [(a, selectors.task_view(assignment=a, lang=_lang())) for a in queue]
    return render(request, "annotation/review.html", {"items": items, "project": project})


@role_required(REVIEWER, PROJECT_MANAGER)
@require_POST
def review_submit(request: HttpRequest, assignment_id: int) -> HttpResponse:
    assignment = get_object_or_404(Assignment, pk=assignment_id)
    try:
        services.review_create(
            assignment=assignment,
            reviewer=request.user,
            verdict=request.POST.get("verdict", ""),
            comment=request.POST.get("comment", ""),
        )
    except services.AnnotationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("Review saved."))
    url = reverse("annotation:review")
    if request.POST.get("project", "").isdigit():
        url += f"?project={request.POST['project']}"
    return redirect(url)
