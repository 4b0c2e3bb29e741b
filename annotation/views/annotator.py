"""The annotator's pages: a project's start page, the task loop (htmx: task, submit, skip) and My work.

They address work only by the assignment's random token and never render a model name, response id,
prompt id or dataset meta (``selectors.task_view`` does not carry them).
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import ANNOTATOR
from annotation import selectors, services
from annotation.domain.span_settings import OMISSION_CATEGORY
from annotation.models import SPAN_KINDS, Assignment, Project
from annotation.views.common import current_lang, response_rows
from datasets_app.domain.questions import CHOICE_LABELS

# Stored in English; shown translated (``gettext_noop`` marks them for the catalogue).
SKIP_REASONS = (
    ("language", gettext_noop("I do not know this language or register well enough")),
    ("unclear", gettext_noop("The prompt is unclear or broken")),
    ("offensive", gettext_noop("The content is offensive or distressing")),
    ("other", gettext_noop("Another reason")),
)
_RATING_FIELD = re.compile(r"^r-(\d+)-([a-z_]+)$")


def _own(token: str, request: HttpRequest) -> Assignment:
    try:
        return selectors.assignment_for_user(token=token, user=request.user)
    except Assignment.DoesNotExist:
        raise Http404 from None


def _skip_reasons() -> list[tuple[str, str]]:
    """The skip form's reasons in the active language (called by the template when the kept skip row is
    rendered anew)."""
    return [(key, _(text)) for key, text in SKIP_REASONS]


def _error_list(view: selectors.TaskView, errors: dict[str, list[str]]) -> list[tuple[str, str]]:
    """Validation messages with the names the annotator sees ("Response 2 · Fluency")."""
    if not errors:
        return []
    labels = {str(r.number): r.label for r in view.responses}
    criteria = {c.key: c.label.get(current_lang(), c.key) for c in view.criteria}
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
    "spans": gettext_lazy("Marked errors"),
    "no_error": gettext_lazy("No error"),
    "score": gettext_lazy("Score"),
}


def _span_data(view: selectors.JobTaskView, values: dict[str, Any]) -> dict[str, Any]:
    """What the span marking script reads from the page (texts, categories, suggestions, the spans so far
    and its words in the page's language)."""
    item = view.item
    spans = values.get("spans")
    return {
        "source": item["source"],
        "target": item["translation"],
        "categories": item["categories"],
        "suggestions": item["suggestions"],
        "spans": spans if isinstance(spans, list) else [],
        "answered": bool(view.values),
        "omission_category": OMISSION_CATEGORY,
        "labels": {
            "minor": _("Minor"),
            "major": _("Major"),
            "edit": _("Edit"),
            "remove": _("Remove"),
            "accept": _("Accept"),
            "suggested": _("Suggested"),
            "omission": _("omission, in the source"),
            "select_first": _("Select the words of the error first."),
            "category_first": _("Choose a category first (1–9, or c for the list)."),
        },
    }


def _job_context(view: selectors.JobTaskView, errors: dict | None, posted: dict | None) -> dict[str, Any]:
    values = posted if posted is not None else view.values
    found = []
    for field, texts in (errors or {}).items():
        if field.startswith("choices."):
            label = _("Option %(label)s") % {"label": field.split(".", 1)[1]}
        elif field.startswith("spans."):
            label = _("Error %(n)s") % {"n": int(field.split(".")[1]) + 1}
        else:
            label = _JOB_FIELDS.get(field, field)
        found.extend((label, shown(text)) for text in texts)
    choices = values.get("choices") or {}
    return {
        "task": view,
        "values": values,
        "errors": found,
        "choice_rows": [(label, choices.get(label, "")) for label in CHOICE_LABELS],
        "skip_reasons": _skip_reasons,
        "lang": current_lang(),
        "other_lang": "en" if current_lang() == "id" else "id",
        "is_job": True,
        "is_span": view.kind in SPAN_KINDS,
        "span_data": _span_data(view, values) if view.kind in SPAN_KINDS else None,
    }


def _task_context(
    assignment: Assignment, errors: dict | None = None, posted: dict | None = None
) -> dict[str, Any]:
    view = selectors.task_view(assignment=assignment, lang=current_lang())
    if isinstance(view, selectors.JobTaskView):
        return _job_context(view, errors, posted)
    values = posted if posted is not None else view.values
    return {
        "task": view,
        "values": values,
        "selected_best": str(values.get("best", "")),
        "selected_vote": str(values.get("vote", "")),
        "response_rows": response_rows(view.responses, view.criteria, values.get("ratings") or {}, errors),
        "errors": _error_list(view, errors or {}),
        "skip_reasons": _skip_reasons,
        "lang": current_lang(),
        "other_lang": "en" if current_lang() == "id" else "id",
    }


def _payload_from_form(kind: str, best_pick: str, data) -> dict[str, Any]:
    """Form fields (``r-<n>-<criterion>``, ``best``, ``vote``, ``comment``) to the domain's payload."""
    payload: dict[str, Any] = {}
    if kind in SPAN_KINDS:
        try:
            spans = json.loads(data.get("spans", "") or "[]")
        except ValueError:
            spans = "unreadable"
        payload = {"spans": spans, "no_error": data.get("no_error") == "on"}
        if kind == Project.Kind.TRANSLATION_ESA:
            payload["score"] = data.get("score", "")
    elif kind == Project.Kind.TRANSLATION:
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
    return payload


def _seconds_from_form(data) -> float | None:
    """The time the page measured the task in view (``seconds``), if it sent one."""
    try:
        return float(data.get("seconds", ""))
    except ValueError:
        return None


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


@role_required(ANNOTATOR)
def project_start(request: HttpRequest, project_id: int) -> HttpResponse:
    """GET: the project's instructions and the caller's progress. POST: claim and go to the task."""
    membership = selectors.membership_for(project_id=project_id, user=request.user)
    if membership is None:
        raise Http404
    project = membership.project
    if project.kind == Project.Kind.ARENA:  # battles are made on the arena's own page, never claimed
        return redirect("arena:project", project_id=project.pk)
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
        "instructions": project.instructions_id if current_lang() == "id" else project.instructions_en,
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
    seconds = _seconds_from_form(request.POST)
    from_my_work = request.POST.get("from") == FROM_MY_WORK
    posted: list[dict[str, Any]] = []

    def payload_for(project: Project) -> dict[str, Any]:
        posted.append(_payload_from_form(project.kind, project.best_pick, request.POST))
        return posted[0]

    try:
        if from_my_work:
            assignment = _own(token, request)
            project = assignment.project
            services.assignment_submit(
                token=token, user=request.user, payload=payload_for(project), seconds=seconds
            )
            return _back_to_my_work(request, project)
        # The answer and the claim of the next task in one transaction: the loop is one request. The
        # form is read with the project of the locked assignment, not by a read of its own before.
        result = services.assignment_submit_next(
            token=token, user=request.user, payload_for=payload_for, seconds=seconds
        )
    except Assignment.DoesNotExist:
        raise Http404 from None
    except services.SubmissionInvalid as exc:
        context = _task_context(_own(token, request), errors=exc.errors, posted=posted[0])
        context["from_my_work"] = from_my_work
        template = "annotation/task.html#task" if request.htmx else "annotation/task.html"
        return render(request, template, context)
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
        return _next_or_done(request, _own(token, request).project)
    if result.submitted.outcome == "edited":
        messages.success(request, _("Your answer was updated."))
    project = result.submitted.assignment.project
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
