"""Pages of annotation: the annotator's task loop (htmx), project management, review.

Annotator pages address work only by the assignment's random token and never render a model name,
response id, prompt id or dataset meta (``selectors.task_view`` does not carry them).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import get_language, gettext_lazy, gettext_noop
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import ANNOTATOR, PROJECT_MANAGER, REVIEWER
from annotation import selectors, services
from annotation.forms import (
    KIND_FIELDS,
    ConceptPairsForm,
    ErrorTaxonomyForm,
    FlagSettingsForm,
    GoldAnswerForm,
    GoldRateForm,
    GroupForm,
    MemberForm,
    ProjectCreateForm,
    QualificationForm,
    QualitySettingsForm,
    RubricForm,
    TaxonomyForm,
)
from annotation.models import JOB_KINDS, Assignment, FlagRecompute, Project
from datasets_app.domain.csv_cells import SafeDictWriter
from datasets_app.domain.questions import CHOICE_LABELS, OPTIONS, QUESTION, taxonomy_from_data
from datasets_app.jobs import JobRefused

# Stored in English; shown translated (``gettext_noop`` marks them for the catalogue).
SKIP_REASONS = (
    ("language", gettext_noop("I do not know this language or register well enough")),
    ("unclear", gettext_noop("The prompt is unclear or broken")),
    ("offensive", gettext_noop("The content is offensive or distressing")),
    ("other", gettext_noop("Another reason")),
)
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
        found.extend((label, shown(text)) for text in texts)
    return found


_JOB_FIELDS = {
    "translation": gettext_lazy("Translation"),
    "verdict": gettext_lazy("Verdict"),
    "error_categories": gettext_lazy("Error categories"),
    "fixed_text": gettext_lazy("Corrected translation"),
    "comment": gettext_lazy("Comment"),
    "text": gettext_lazy("Question"),
    "choices": gettext_lazy("Options"),
    "answer": gettext_lazy("Answer"),
    "distractor": gettext_lazy("Distractor"),
    "concept": gettext_lazy("Concept"),
    "choice": gettext_lazy("Your answer"),
}


def _job_context(view: selectors.JobTaskView, errors: dict | None, posted: dict | None) -> dict[str, Any]:
    values = posted if posted is not None else view.values
    found = []
    for field, texts in (errors or {}).items():
        if field.startswith("choices."):
            label = _("Option %(label)s") % {"label": field.split(".", 1)[1]}
        else:
            label = _JOB_FIELDS.get(field, field)
        found.extend((label, shown(text)) for text in texts)
    choices = values.get("choices") or {}
    return {
        "task": view,
        "values": values,
        "errors": found,
        "choice_rows": [(label, choices.get(label, "")) for label in CHOICE_LABELS],
        "skip_reasons": [(key, _(text)) for key, text in SKIP_REASONS],
        "lang": _lang(),
        "other_lang": "en" if _lang() == "id" else "id",
        "is_job": True,
    }


def _scale_choices(criterion: selectors.CriterionView) -> list[dict[str, Any]]:
    """One radio per value of the criterion's scale: its key, what it shows, its level text as a hint."""
    texts = dict(criterion.levels.get(_lang(), []))
    return [
        {
            "value": str(value),
            "key": key,
            "shown": criterion.scale.label(value, _lang()),
            "text": texts.get(value, ""),
        }
        for key, value in criterion.scale.keys()
    ]


def _response_rows(
    responses: list[selectors.ShownResponse],
    criteria: list[selectors.CriterionView],
    ratings: dict[str, Any],
    errors: dict | None = None,
) -> list[dict[str, Any]]:
    """Each shown response with one scale per criterion (the task page's cards, and the preview's)."""
    rows = []
    for response in responses:
        given = ratings.get(str(response.number)) or {}
        cells = [
            {
                "criterion": criterion,
                "name": f"r-{response.number}-{criterion.key}",
                "selected": str(given.get(criterion.key, "")),
                "choices": _scale_choices(criterion),
                "scale_kind": criterion.scale.kind,
                "error": (errors or {}).get(f"ratings.{response.number}.{criterion.key}"),
            }
            for criterion in criteria
        ]
        rows.append({"response": response, "cells": cells})
    return rows


def _task_context(
    assignment: Assignment, errors: dict | None = None, posted: dict | None = None
) -> dict[str, Any]:
    view = selectors.task_view(assignment=assignment, lang=_lang())
    if isinstance(view, selectors.JobTaskView):
        return _job_context(view, errors, posted)
    values = posted if posted is not None else view.values
    return {
        "task": view,
        "values": values,
        "selected_best": str(values.get("best", "")),
        "selected_vote": str(values.get("vote", "")),
        "response_rows": _response_rows(view.responses, view.criteria, values.get("ratings") or {}, errors),
        "errors": _error_list(view, errors or {}),
        "skip_reasons": [(key, _(text)) for key, text in SKIP_REASONS],
        "lang": _lang(),
        "other_lang": "en" if _lang() == "id" else "id",
    }


def _payload_from_form(kind: str, best_pick: str, data) -> tuple[dict[str, Any], float | None]:
    """Form fields (``r-<n>-<criterion>``, ``best``, ``vote``, ``comment``) to the domain's payload."""
    payload: dict[str, Any] = {}
    if kind == Project.Kind.TRANSLATION:
        payload["translation"] = data.get("translation", "")
    elif kind == Project.Kind.TRANSLATION_REVIEW:
        payload = {
            "verdict": data.get("verdict", ""),
            "fixed_text": data.get("fixed_text", ""),
            "error_categories": data.getlist("error_categories"),
            "comment": data.get("comment", ""),
        }
    elif kind == Project.Kind.QUESTION_AUTHORING:
        payload = {
            "question": data.get("question", ""),
            "choices": {label: data.get(f"choice_{label}", "") for label in CHOICE_LABELS},
            "answer": data.get("answer", ""),
            "distractor": data.get("distractor", ""),
            "concept_override": data.get("concept_override") == "on",
            "override_comment": data.get("override_comment", ""),
        }
    elif kind == Project.Kind.MCQ_ANSWER:
        payload = {
            "choice": data.get("choice", ""),
            "ambiguous": data.get("ambiguous") == "on",
            "comment": data.get("comment", ""),
        }
    elif kind == Project.Kind.LIKERT:
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
        return _show_next(request, project, None, refused=shown(exc))
    return _show_next(request, project, assignment)


def _show_next(
    request: HttpRequest, project: Project, assignment: Assignment | None, refused: str = ""
) -> HttpResponse:
    """The claimed next task's fragment (htmx) or a redirect to it; when none, the done fragment, or the
    reason the project refused the next task (``refused``, shown in place of "All done")."""
    if assignment is None:
        if request.htmx:
            return render(request, "annotation/task.html#done", {"project": project, "refused": refused})
        if refused:
            messages.info(request, refused)
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
            messages.error(request, shown(exc))
            return redirect("annotation:start", project_id=project.pk)
        if assignment is None:
            messages.info(request, _("Nothing is left for you in this project. Thank you!"))
            return redirect("annotation:start", project_id=project.pk)
        return redirect("annotation:task", token=assignment.token)
    context = {
        "project": project,
        "done": selectors.done_count(project_id=project.pk, user_id=request.user.pk),
        "sent_back": selectors.sent_back_count(project_id=project.pk, user_id=request.user.pk),
        "instructions": project.instructions_id if _lang() == "id" else project.instructions_en,
    }
    return render(request, "annotation/start.html", context)


# A task opened from "My work" (``?from=mine``) goes back there once submitted, instead of to the next task.
FROM_MY_WORK = "mine"


@role_required(ANNOTATOR)
def task_page(request: HttpRequest, token: str) -> HttpResponse:
    assignment = _own(token, request)
    context = _task_context(assignment)
    context["from_my_work"] = request.GET.get("from") == FROM_MY_WORK
    return render(request, "annotation/task.html", context)


def _back_to_my_work(request: HttpRequest, project: Project) -> HttpResponse:
    """After a change saved from "My work": that list again, saying so (a full page load under htmx)."""
    messages.success(request, _("Your change was saved."))
    url = reverse("annotation:my_work", args=[project.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


@role_required(ANNOTATOR)
@require_POST
def task_submit(request: HttpRequest, token: str) -> HttpResponse:
    assignment = _own(token, request)
    project = assignment.project
    payload, seconds = _payload_from_form(project.kind, project.best_pick, request.POST)
    from_my_work = request.POST.get("from") == FROM_MY_WORK
    try:
        if from_my_work:
            services.assignment_submit(token=token, user=request.user, payload=payload, seconds=seconds)
            return _back_to_my_work(request, project)
        # The answer and the claim of the next task in one transaction: the loop is one request.
        result = services.assignment_submit_next(
            token=token, user=request.user, payload=payload, seconds=seconds
        )
    except services.SubmissionInvalid as exc:
        context = _task_context(assignment, errors=exc.errors, posted=payload)
        context["from_my_work"] = from_my_work
        template = "annotation/task.html#task" if request.htmx else "annotation/task.html"
        return render(request, template, context)
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
        return _next_or_done(request, project)
    if result.submitted.outcome == "edited":
        messages.success(request, _("Your answer was updated."))
    return _show_next(request, project, result.next, refused=shown(result.next_refused))


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
        messages.error(request, shown(exc))
    return _next_or_done(request, assignment.project)


# --- project managers -----------------------------------------------------------------------------------


def _manager_project(project_id: int) -> Project:
    return get_object_or_404(Project.objects.select_related("dataset"), pk=project_id)


GOLD_KINDS = (Project.Kind.LIKERT, Project.Kind.BEST_OF_N, Project.Kind.PAIRWISE)


@role_required(PROJECT_MANAGER)
def manage_list(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/manage_list.html", {"projects": selectors.project_list()})


@role_required(PROJECT_MANAGER)
def rubric_list(request: HttpRequest) -> HttpResponse:
    services.rubric_defaults_ensure()  # IndoPref's relevance and fluency are always there to pick
    return render(request, "annotation/rubric_list.html", {"rubrics": selectors.rubric_summaries()})


def _rubric_form_page(request: HttpRequest, form: RubricForm, summary: Any) -> HttpResponse:
    if request.method == "POST" and form.is_valid():
        try:
            criterion, version, new_version = services.rubric_save(new=summary is None, **form.rubric_input())
        except services.RubricInvalid as exc:
            for name, message in exc.errors.items():
                field = name.replace(".", "_") if name.replace(".", "_") in form.fields else None
                form.add_error(field, shown(message) if field else f"{name}: {shown(message)}")
        else:
            if new_version:
                text = _(
                    "Saved %(criterion)s as version %(version)d; projects already under way keep "
                    "the version they started with."
                )
            else:
                text = _("Saved %(criterion)s (version %(version)d).")
            messages.success(request, text % {"criterion": criterion, "version": version})
            return redirect("annotation:rubric_list")
    return render(request, "annotation/rubric_edit.html", {"form": form, "rubric": summary})


@role_required(PROJECT_MANAGER)
def rubric_create(request: HttpRequest) -> HttpResponse:
    return _rubric_form_page(request, RubricForm(request.POST or None), None)


@role_required(PROJECT_MANAGER)
def rubric_edit(request: HttpRequest, criterion: str) -> HttpResponse:
    summary = selectors.rubric_detail(criterion)
    if summary is None:
        raise Http404
    initial = RubricForm.initial_for(summary)
    data = None
    if request.method == "POST":
        data = request.POST.copy()
        data["criterion"] = criterion
    return _rubric_form_page(request, RubricForm(data, initial=initial, editing=True), summary)


@role_required(PROJECT_MANAGER)
def manage_create(request: HttpRequest) -> HttpResponse:
    """A short wizard: choose the kind of job, then fill in only that kind's fields, seeing the chosen
    dataset's counts and one of its tasks as the annotator will see it."""
    kind = request.POST.get("kind") or request.GET.get("kind", "")
    if kind not in KIND_FIELDS:
        if kind:
            messages.error(
                request, _("Unknown project kind %(kind)s; choose one below.") % {"kind": repr(kind)}
            )
        return render(request, "annotation/manage_create.html", {"kinds": Project.Kind.choices})
    if request.method == "POST":
        form = ProjectCreateForm(request.POST, kind=kind)
    else:
        initial: dict[str, Any] = {"dataset": request.GET.get("dataset")}
        # The preview asks again with the form's choices (``from_form``): no criterion ticked is none, not
        # the default ones; "all bad" unticked is off.
        from_form = request.GET.get("from_form") == "1"
        if from_form or "criteria" in request.GET:
            initial["criteria"] = request.GET.getlist("criteria")
        if request.GET.get("best_pick") in Project.BestPick.values:
            initial["best_pick"] = request.GET["best_pick"]
        if from_form:
            initial["allow_all_bad"] = request.GET.get("allow_all_bad") == "on"
        form = ProjectCreateForm(initial=initial, kind=kind)
    if request.method == "POST" and form.is_valid():
        try:
            project = services.project_create(created_by=request.user, **form.service_kwargs())
        except services.ProjectInvalid as exc:
            for name, message in exc.errors.items():
                form.add_error(name if name in form.fields else None, shown(message))
        else:
            messages.success(
                request,
                _("Project created with %(n)d tasks. Add annotators, then activate it.")
                % {"n": project.n_tasks},
            )
            return redirect("annotation:manage_detail", project_id=project.pk)
    context = {"form": form, "kind": kind, "kind_label": Project.Kind(kind).label}
    chosen = form["dataset"].value()
    dataset = (
        form.fields["dataset"].queryset.filter(pk=chosen).first() if str(chosen or "").isdigit() else None
    )
    if dataset is not None:
        context["summary"] = selectors.dataset_summary(dataset=dataset)
        services.rubric_defaults_ensure()  # the default criteria's scales, before any rubric was opened
        criteria = form["criteria"].value() if "criteria" in form.fields else []
        if (
            criteria
        ):  # in the form's order, as the project would be created (htmx sends the clicked one first)
            order = {value: n for n, (value, _label) in enumerate(form.fields["criteria"].choices)}
            criteria = sorted(criteria, key=lambda c: order.get(c, len(order)))
        best_pick = form["best_pick"].value() if "best_pick" in form.fields else None
        preview = selectors.task_preview(
            dataset=dataset,
            kind=kind,
            lang=_lang(),
            criteria=criteria or [],
            best_pick=best_pick if best_pick in Project.BestPick.values else Project.BestPick.OPTIONAL,
            allow_all_bad="allow_all_bad" in form.fields and bool(form["allow_all_bad"].value()),
        )
        if preview and "responses" in preview:
            context["response_rows"] = _response_rows(preview["responses"], preview["criteria"], {})
        context["preview"] = preview
        context["lang"] = _lang()
    template = "annotation/manage_create.html#dataset" if request.htmx else "annotation/manage_create.html"
    return render(request, template, context)


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
        "is_job": project.kind in JOB_KINDS,
        "quality": selectors.quality_report(project=project),
        "quality_form": QualitySettingsForm(project=project),
        "qualification_form": QualificationForm(project=project),
        "gold_rate_form": GoldRateForm(project=project),
        "gold_open": project.kind in GOLD_KINDS and project.status != Project.Status.CLOSED,
    }
    if project.kind in (Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW):
        context["translation"] = selectors.translation_report(project=project, lang=_lang())
        context["unit_rounds"] = selectors.unit_round_table(project=project, lang=_lang(), limit=20)
        context["recompute"] = project.flag_recomputes.first()
        context["flag_form"] = FlagSettingsForm(project=project)
    elif project.kind == Project.Kind.QUESTION_AUTHORING:
        context["authoring"] = selectors.authoring_report(project=project)
        context["pairs_form"] = ConceptPairsForm()
    elif project.kind == Project.Kind.MCQ_ANSWER:
        context["mcq"] = selectors.mcq_report(project=project, lang=_lang())
        context["taxonomy_form"] = ErrorTaxonomyForm(project=project)
    template = "annotation/manage_detail.html#progress" if request.htmx else "annotation/manage_detail.html"
    return render(request, template, context)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_status(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _manager_project(project_id)
    try:
        services.project_status_set(project=project, action=request.POST.get("action", ""))
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
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
            messages.error(request, shown(exc))
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


def _form_errors_as_messages(request: HttpRequest, form) -> None:
    """Each field's errors as one message, named by the field's (translated) label."""
    for name, errors in form.errors.items():
        label = form.fields[name].label if name in form.fields else name
        messages.error(request, f"{label}: {' '.join(errors)}")


@role_required(PROJECT_MANAGER)
@require_POST
def manage_quality_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _manager_project(project_id)
    form = QualitySettingsForm(request.POST, project=project)
    if not form.is_valid():
        _form_errors_as_messages(request, form)
    else:
        services.project_quality_settings_set(project=project, settings=form.cleaned_data)
        messages.success(request, _("Quality thresholds saved."))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_qualification(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _manager_project(project_id)
    form = QualificationForm(request.POST, project=project)
    if not form.is_valid():
        _form_errors_as_messages(request, form)
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
@require_POST
def manage_gold_import(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _manager_project(project_id)
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
        _form_errors_as_messages(request, form)
    else:
        try:
            services.project_gold_rate_set(project=project, rate=form.cleaned_data["gold_rate"])
        except ValueError as exc:
            messages.error(request, shown(exc))
        else:
            messages.success(request, _("Gold rate saved; it applies to the tasks handed out from now on."))
    return redirect("annotation:manage_detail", project_id=project.pk)


GOLD_PAGE_SIZE = 50


def _gold_project(project_id: int) -> Project:
    project = _manager_project(project_id)
    if project.kind not in GOLD_KINDS:
        raise Http404("gold tasks exist only in rating projects")
    return project


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


@role_required(PROJECT_MANAGER)
def manage_quality_csv(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _manager_project(project_id)
    rows = selectors.quality_rows(selectors.quality_report(project=project))
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="project-{project.pk}-quality.csv"'
    writer = SafeDictWriter(response, fieldnames=list(selectors.QUALITY_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows({**row, "flags": ";".join(row["flags"])} for row in rows)
    return response


# --- reviewers ------------------------------------------------------------------------------------------


def _queue_url(query: str) -> str:
    url = reverse("annotation:review")
    return f"{url}?{query}" if query else url


@role_required(REVIEWER, PROJECT_MANAGER)
def review_list(request: HttpRequest) -> HttpResponse:
    """The review queue: filters, sort and paging in the query string; real annotators first, simulated
    ones only when asked; each item as its annotator saw it, with a box to accept many at once."""
    try:
        filters = selectors.ReviewFilter.from_query(request.GET)
    except selectors.ReviewFilterInvalid as exc:
        for name, message in exc.errors.items():
            messages.error(request, f"{name}: {message}")
        filters = selectors.ReviewFilter()
    flagged: dict[int, set[int]] = {}
    if filters.flagged:
        flagged = selectors.flagged_annotators(project_ids=[filters.project] if filters.project else None)
    queue = selectors.review_queue_filtered(filters=filters, reviewer_id=request.user.pk, flagged=flagged)
    page = selectors.review_page(queue, request.GET.get("page"))
    items = selectors.review_items(list(page.object_list), lang=_lang(), flagged=flagged)
    query = urlencode(filters.as_query())
    context = {
        "items": items,
        "page": page,
        "filters": filters,
        "query": query,
        "choices": selectors.review_filter_choices(filters=filters),
    }
    return render(request, "annotation/review.html", context)


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
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("Review saved."))
    return redirect(_queue_url(request.POST.get("query", "")))


@role_required(REVIEWER, PROJECT_MANAGER)
@require_POST
def review_accept_many(request: HttpRequest) -> HttpResponse:
    """Accept every selected item of the page, or none with the reason."""
    raw = request.POST.getlist("selected")
    bad = [value for value in raw if not value.isdigit()]
    if bad:
        messages.error(request, _("Selected item %(value)r is not an item number.") % {"value": bad[0]})
        return redirect(_queue_url(request.POST.get("query", "")))
    try:
        reviews = services.reviews_accept_many(assignment_ids=[int(v) for v in raw], reviewer=request.user)
    except services.AnnotationError as exc:
        messages.error(request, _("Nothing was accepted: %(reason)s") % {"reason": shown(exc)})
    else:
        messages.success(request, _("%(n)d item(s) accepted.") % {"n": len(reviews)})
    return redirect(_queue_url(request.POST.get("query", "")))


@role_required(ANNOTATOR)
def my_work(request: HttpRequest, project_id: int) -> HttpResponse:
    """The caller's submitted tasks in the project, each reopened in the same blinded order to change it."""
    membership = selectors.membership_for(project_id=project_id, user=request.user)
    if membership is None:
        raise Http404
    rows = selectors.my_work(user=request.user, project=membership.project)
    return render(request, "annotation/my_work.html", {"project": membership.project, "rows": rows})


@role_required(ANNOTATOR)
@require_POST
def my_work_edit(request: HttpRequest, token: str) -> HttpResponse:
    assignment = _own(token, request)
    try:
        services.assignment_edit_open(token=token, user=request.user)
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
        return redirect("annotation:my_work", project_id=assignment.project_id)
    return redirect(f"{reverse('annotation:task', args=[token])}?{urlencode({'from': FROM_MY_WORK})}")


# --- translation and question jobs (project managers, reviewers) -----------------------------------------


def _job_project(project_id: int, *kinds: str) -> Project:
    project = _manager_project(project_id)
    if project.kind not in kinds:
        raise Http404
    return project


@role_required(PROJECT_MANAGER)
@require_POST
def manage_flags_recompute(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _job_project(project_id, Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
    try:
        services.flag_recompute_queue(project=project, user=request.user)
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("Recomputing the flags of every unit in the background."))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_flags_cancel(request: HttpRequest, project_id: int, run_id: int) -> HttpResponse:
    project = _job_project(project_id, Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
    run = get_object_or_404(FlagRecompute, pk=run_id, project=project)
    try:
        services.flag_recompute_cancel(run=run)
    except JobRefused:
        messages.error(request, _("Only a queued or running recomputation can be cancelled."))
    else:
        messages.success(request, _("The recomputation of the flags was cancelled."))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_flags_retry(request: HttpRequest, project_id: int, run_id: int) -> HttpResponse:
    project = _job_project(project_id, Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
    run = get_object_or_404(FlagRecompute, pk=run_id, project=project)
    try:
        services.flag_recompute_retry(run=run)
    except JobRefused:
        messages.error(request, _("Only a failed or cancelled recomputation can be run again."))
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("Recomputing the flags of every unit in the background."))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
def manage_flags_progress(request: HttpRequest, project_id: int) -> HttpResponse:
    """The progress bar of the latest recomputation (polled by htmx while it runs)."""
    project = _job_project(project_id, Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
    context = {"project": project, "recompute": project.flag_recomputes.first()}
    return render(request, "annotation/_manage_translation.html#recompute", context)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_flag_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _job_project(project_id, Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
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


@role_required(PROJECT_MANAGER)
@require_POST
def manage_error_taxonomy(request: HttpRequest, project_id: int) -> HttpResponse:
    """Edit the error taxonomy LLM-written questions of an answering project are reviewed with."""
    project = _job_project(project_id, Project.Kind.MCQ_ANSWER)
    form = ErrorTaxonomyForm(request.POST, project=project)
    if not form.is_valid():
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect("annotation:manage_detail", project_id=project.pk)
    try:
        services.error_taxonomy_set(project=project, categories=form.cleaned_data["taxonomy"])
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("Error taxonomy saved."))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_pairs_upload(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _job_project(project_id, Project.Kind.QUESTION_AUTHORING)
    form = ConceptPairsForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect("annotation:manage_detail", project_id=project.pk)
    try:
        counts = services.concept_pairs_add(
            project=project, records=form.records(), language=form.cleaned_data["language"]
        )
    except services.PairsInvalid as exc:
        for location, field, message in exc.errors[:10]:
            messages.error(request, f"{location}: {field}: {message}" if field else f"{location}: {message}")
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(request, _("%(added)d pair(s) added, %(skipped)d already present.") % counts)
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
def manage_conflicts_csv(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _job_project(project_id, Project.Kind.MCQ_ANSWER)
    response = HttpResponse(
        selectors.conflict_matrix_csv(project=project), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="answer-conflicts-{project.pk}.csv"'
    return response


@role_required(REVIEWER, PROJECT_MANAGER)
def review_llm_questions(request: HttpRequest, project_id: int) -> HttpResponse:
    """Error-taxonomy review of the LLM-written questions of an answering project."""
    project = get_object_or_404(Project, pk=project_id, kind=Project.Kind.MCQ_ANSWER)
    categories = taxonomy_from_data(project.error_taxonomy)
    if request.method == "POST":
        form = TaxonomyForm(request.POST, categories=categories)
        question = project.dataset.questions.filter(pk=request.POST.get("question")).first()
        if question is None:
            raise Http404
        if form.is_valid():
            try:
                services.question_error_review_save(
                    project=project,
                    question=question,
                    reviewer=request.user,
                    errors=form.cleaned_data["error_types"],
                    option_errors=form.cleaned_data["option_error_types"],
                    comment=form.cleaned_data["comment"],
                )
            except services.AnnotationError as exc:
                messages.error(request, shown(exc))
            else:
                messages.success(request, _("Review saved."))
        else:
            messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect("annotation:review_llm", project_id=project.pk)
    items = selectors.llm_questions(project=project, reviewer_id=request.user.pk)
    report = selectors.mcq_report(project=project, lang=_lang())
    context = {
        "project": project,
        "items": items,
        "question_categories": [(c.code, c.label(_lang())) for c in categories if QUESTION in c.applies_to],
        "option_categories": [(c.code, c.label(_lang())) for c in categories if OPTIONS in c.applies_to],
        "report": report,
    }
    return render(request, "annotation/review_llm.html", context)
