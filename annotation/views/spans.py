"""Error-span jobs (MQM, ESA) for managers: the system ranking with its chart, breakdowns per category,
severity, language and register, the raters' agreement on spans, the span settings and the attention
checks."""

from __future__ import annotations

import json

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import PROJECT_MANAGER
from annotation import selectors, services
from annotation.forms import AttentionCheckForm
from annotation.models import SPAN_KINDS
from annotation.views.common import current_lang, form_errors_as_messages, job_project

# The page's bootstrap: enough draws for a stable interval on a page that recomputes on every visit.
PAGE_DRAWS = 1000


@role_required(PROJECT_MANAGER)
def manage_span_scores(request: HttpRequest, project_id: int) -> HttpResponse:
    project = job_project(project_id, *SPAN_KINDS)
    report = selectors.span_scores_report(project, lang=current_lang(), draws=PAGE_DRAWS, seed=project.seed)
    context = {
        "project": project,
        "report": report,
        "chart": selectors.score_bars(report["systems"]),
        "breakdowns": [("language", report["by_language"]), ("register", report["by_register"])],
    }
    return render(request, "annotation/span_scores.html", context)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_span_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    """Save the project's category tree and weights, given as one JSON object (``{"categories": [...],
    "weights": {...}}``; empty: the defaults). A bad object is refused with what is wrong, nothing saved."""
    project = job_project(project_id, *SPAN_KINDS)
    text = request.POST.get("span_settings", "").strip()
    try:
        settings = json.loads(text) if text else {}
    except ValueError as exc:
        messages.error(request, _("The settings are not JSON: %(error)s") % {"error": exc})
        return redirect("annotation:manage_detail", project_id=project.pk)
    if not isinstance(settings, dict):
        messages.error(request, _("The settings are one JSON object with categories and weights."))
        return redirect("annotation:manage_detail", project_id=project.pk)
    try:
        services.project_update(project=project, span_settings=settings)
    except services.ProjectInvalid as exc:
        for message in exc.errors.values():
            messages.error(request, shown(message))
    else:
        messages.success(request, _("Error categories and weights saved."))
    return redirect("annotation:manage_detail", project_id=project.pk)


@role_required(PROJECT_MANAGER)
@require_POST
def manage_attention_checks(request: HttpRequest, project_id: int) -> HttpResponse:
    """Save the attention-check setting and add the checks it asks for that the project lacks (a new task
    per check, k places per group). A bad setting, or a closed project, is refused and nothing is saved."""
    project = job_project(project_id, *SPAN_KINDS)
    form = AttentionCheckForm(
        request.POST, project=project, checks=selectors.span_config_of(project).checks.as_json()
    )
    if not form.is_valid():
        form_errors_as_messages(request, form)
        return redirect("annotation:manage_detail", project_id=project.pk)
    try:
        with transaction.atomic():
            settings = {**(project.span_settings or {}), "attention_checks": form.settings()}
            services.project_update(project=project, span_settings=settings)
            added = services.attention_checks_add(project=project)
    except services.ProjectInvalid as exc:
        for message in exc.errors.values():
            messages.error(request, shown(message))
    except services.AnnotationError as exc:
        messages.error(request, shown(exc))
    else:
        messages.success(
            request,
            ngettext(
                "Attention checks saved; %(n)d check added.",
                "Attention checks saved; %(n)d checks added.",
                added,
            )
            % {"n": added},
        )
    return redirect("annotation:manage_detail", project_id=project.pk)
