"""Pages for researchers and project managers: endpoints, runs, one run with live progress and results."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import get_language, gettext_lazy, ngettext
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import DATA_ROLES
from annotation.models import SPAN_KINDS, Project
from datasets_app.domain.languages import language_register_name
from evaluation import selectors, services
from evaluation.domain.benchmark_metrics import MISSING_LEVEL
from evaluation.domain.judge_templates import LANGUAGES, normalise_category
from evaluation.domain.language_tables import AVG, CORPUS_CHRF_PP, MEAN_GRADE, OVERALL
from evaluation.domain.presets import PRESETS
from evaluation.domain.sampling import (
    SOURCE_DEFAULT,
    SOURCE_ENDPOINT,
    SOURCE_RUN,
    SOURCE_TEMPLATE,
    SOURCED_PARAMETERS,
)
from evaluation.forms import (
    RUN_FORMS,
    CategoryAspectsForm,
    EndpointForm,
    PromptTemplateForm,
    add_service_errors,
)
from evaluation.models import (
    BenchmarkRun,
    GenerationRun,
    JudgeRun,
    ModelEndpoint,
    PairVerdict,
    PromptTemplate,
)
from evaluation.services.span_prefill import SpanPrefillRefused, span_judgment_counts, span_prefill_queue

# Dimensions of a benchmark's breakdowns whose groups are languages (or languages with a register).
LANGUAGE_DIMENSIONS = ("language", "language_register")
RUN_MODELS = {"generation": GenerationRun, "judge": JudgeRun, "benchmark": BenchmarkRun}
PAGE_SIZE = 50

SAMPLING_SOURCE_LABELS = {
    SOURCE_RUN: gettext_lazy("set for this run"),
    SOURCE_TEMPLATE: gettext_lazy("the judge template"),
    SOURCE_ENDPOINT: gettext_lazy("the endpoint's default"),
    SOURCE_DEFAULT: gettext_lazy("Timbang's default"),
}


def sampling_rows(sampling: dict | None, sources: dict | None) -> list[dict]:
    """The sampling a run used, a row per parameter (``stop`` only when set), with where the value came from
    (empty for a run started before sources were recorded)."""
    sampling = sampling or {}
    rows = []
    for name in SOURCED_PARAMETERS:
        if name not in sampling or (name == "stop" and not sampling[name]):
            continue
        value = sampling[name]
        source = (sources or {}).get(name)
        rows.append(
            {
                "name": name,
                "value": ", ".join(map(str, value)) if isinstance(value, list) else value,
                "source": SAMPLING_SOURCE_LABELS.get(source, ""),
            }
        )
    return rows


def _run_or_404(kind: str, run_id: int):
    model = RUN_MODELS.get(kind)
    if model is None:
        raise Http404
    return get_object_or_404(model, pk=run_id)


@role_required(*DATA_ROLES)
def endpoint_list(request):
    endpoints = list(selectors.endpoint_list())
    for endpoint in endpoints:
        endpoint.policy_errors = selectors.endpoint_policy_errors(endpoint)
    return render(request, "evaluation/endpoints.html", {"endpoints": endpoints})


def _endpoint_form_page(request: HttpRequest, endpoint: ModelEndpoint | None) -> HttpResponse:
    """Create (``endpoint`` None) or edit through the endpoint services; their errors land on the fields."""
    form = EndpointForm(request.POST or None, endpoint=endpoint)
    if request.method == "POST" and form.is_valid():
        try:
            if endpoint is None:
                saved = services.endpoint_create(user=request.user, **form.service_fields())
            else:
                saved = services.endpoint_update(endpoint=endpoint, **form.service_fields())
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            messages.success(request, _("Endpoint %(slug)s saved.") % {"slug": saved.slug})
            return redirect("evaluation:endpoints")
    return render(request, "evaluation/endpoint_form.html", {"form": form, "endpoint": endpoint})


@role_required(*DATA_ROLES)
def endpoint_create(request: HttpRequest) -> HttpResponse:
    return _endpoint_form_page(request, None)


@role_required(*DATA_ROLES)
def endpoint_edit(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    return _endpoint_form_page(request, get_object_or_404(ModelEndpoint, pk=endpoint_id))


RUN_STARTERS = {
    "generation": services.generation_run_start,
    "judge": services.judge_run_start,
    "benchmark": services.benchmark_run_start,
}


@role_required(*DATA_ROLES)
def run_start(request: HttpRequest) -> HttpResponse:
    """One form per run kind on one page; a POST names its kind and starts that run through its service."""
    posted = request.POST.get("kind") if request.method == "POST" else None
    if posted is not None and posted not in RUN_FORMS:
        raise Http404
    forms = {
        kind: form_class(request.POST if kind == posted else None, prefix=kind)
        for kind, form_class in RUN_FORMS.items()
    }
    if posted is not None:
        form = forms[posted]
        if form.is_valid():
            try:
                run = RUN_STARTERS[posted](user=request.user, **form.service_kwargs())
            except services.RunConfigError as exc:
                form.add_error(None, shown(exc))
            else:
                messages.success(request, _("Run started."))
                return redirect("evaluation:run", kind=posted, run_id=run.pk)
    selected = posted or request.GET.get("kind")
    preset = PRESETS.get(request.GET.get("preset", "")) if posted is None else None
    if preset is not None:
        # The preset's rules as the form's starting values; each stays changeable before the run starts.
        forms[preset.kind] = RUN_FORMS[preset.kind](
            prefix=preset.kind, initial={**preset.values, "preset": preset.id}
        )
        selected = preset.kind
    context = {
        "forms": forms,
        "selected": selected if selected in RUN_FORMS else "generation",
        "preset": preset,
        "all_presets": list(PRESETS.values()),
    }
    return render(request, "evaluation/run_start.html", context)


@role_required(*DATA_ROLES)
def run_list(request):
    return render(request, "evaluation/runs.html", {"runs": selectors.run_lists()})


def group_label(group: str | None) -> str:
    """A language group (``jav``, ``jav / krama``) by its name in the page's language."""
    if not group or group == MISSING_LEVEL:
        return _("No language")
    return language_register_name(group, get_language() or "en")


def _rule_value_shown(field: forms.Field | None, value: Any) -> str:
    """A rule's value as the run form names it (a choice by its label), lists joined."""
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value) or "—"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if field is not None and getattr(field, "choices", None):
        labels = {str(code): label for code, label in field.choices}
        if str(value) in labels:
            return str(labels[str(value)])
    return str(value)


def rules_shown(kind: str, rules: dict[str, Any]) -> dict[str, Any]:
    """The rules in force of a run, labelled as on its run form, each with how it stands to the preset."""
    fields = RUN_FORMS[kind]().fields
    extra = {"ensemble_rule": _("Ensemble of judges (dashboard)"), "templates": _("Prompt templates")}
    rows = []
    for row in rules["rows"]:
        field = fields.get(row["field"])
        if row["field"] == "ensemble_rule":
            value = _("an item counts only when every judge scored it (SeaBench)")
        else:
            value = _rule_value_shown(field, row["value"])
        rows.append(
            {
                **row,
                "label": extra.get(row["field"]) or (field.label if field is not None else row["field"]),
                "shown": value,
                "preset_shown": None
                if row["preset_value"] is None
                else _rule_value_shown(field, row["preset_value"]),
            }
        )
    return {"preset": rules["preset"], "rows": rows}


def language_table_shown(table: dict[str, Any], label=None) -> dict[str, Any]:
    """A per-language table as the page draws it: language columns by their names, then Avg and Overall;
    ``label(row)`` names each row (default: its model), ``url`` links it when the row has a run."""
    languages = list(table["languages"])
    return {
        "metric": table["metric"],
        "digits": 2 if table["metric"] in (CORPUS_CHRF_PP, MEAN_GRADE) else 3,
        "languages": [{"code": code, "name": group_label(code)} for code in languages],
        "rows": [
            {
                "label": label(row) if label else row.get("model", ""),
                "url": reverse("evaluation:run", kwargs={"kind": "benchmark", "run_id": row["run"]})
                if "run" in row
                else None,
                "cells": [row.get(code) for code in languages],
                "avg": row.get(AVG),
                "overall": row.get(OVERALL),
                "n": row.get("n"),
            }
            for row in table["rows"]
        ],
    }


def _compared_run_label(row: dict[str, Any]) -> str:
    label = _("%(model)s (run %(run)s)") % {"model": row["model"], "run": row["run"]}
    return f"{label}: {row['name']}" if row.get("name") else label


@role_required(*DATA_ROLES)
def run_detail(request, kind: str, run_id: int):
    """The run page; htmx polls it for the ``progress`` fragment while the run is active."""
    run = selectors.run_live_progress(_run_or_404(kind, run_id))
    context = {
        "run": run,
        "kind": kind,
        "errors": selectors.run_chunk_errors(run=run),
        "recoveries": selectors.run_chunk_recoveries(run=run),
        "queues_without_worker": services.run_queues_without_worker(run),
    }
    if request.htmx and request.GET.get("fragment") == "progress":
        return render(request, "evaluation/run.html#progress", context)
    if kind in ("judge", "benchmark"):
        context["rules"] = rules_shown(kind, selectors.run_rules(run))
    if kind == "judge":
        context["sampling_rows"] = sampling_rows(
            run.config.get("sampling"), run.config.get("sampling_sources")
        )
        summary = selectors.judge_run_summary(run=run)
        context["summary"] = summary
        # The counts by their labels; the API and the command keep the codes.
        context["summary_shown"] = {
            "verdicts": [(PairVerdict.Verdict(v).label, n) for v, n in summary.get("verdicts", {}).items()],
            "consistency": [
                (PairVerdict.Consistency(c).label, n) for c, n in summary.get("consistency", {}).items()
            ],
        }
        context["unparsed"] = selectors.judgments_unparsed(run=run) if summary["n_parse_errors"] else []
        if summary.get("by_language"):
            context["language_table"] = language_table_shown(summary["by_language"])
        rows = (
            selectors.pair_verdict_list(run=run)
            if run.judge_kind == "pairwise"
            else selectors.judgment_list(run=run)
        )
        context["page"] = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    elif kind == "benchmark":
        if run.config.get("judge_sampling"):
            context["sampling_rows"] = sampling_rows(
                run.config["judge_sampling"], run.config.get("judge_sampling_sources")
            )
        tables = selectors.benchmark_tables(run=run)
        context["tables"] = tables
        # Each breakdown's rows with the value of their own dimension as ``group``: a row by category has
        # no ``language`` key, and the template must not look one up.
        context["breakdowns"] = {
            dimension: [
                {
                    "group": row[dimension],
                    "label": group_label(row[dimension]) if dimension in LANGUAGE_DIMENSIONS else None,
                    **row,
                }
                for row in rows
            ]
            for dimension, rows in tables.get("by", {}).items()
        }
        context["chrf_by_group"] = [
            {"label": group_label(row["group"]), **row}
            for row in tables.get("corpus_chrf_pp_by_language_register", [])
        ]
        if tables.get("by_language"):
            context["language_table"] = language_table_shown(tables["by_language"])
        if tables.get("templates"):
            sets = tables["templates"]
            shown = language_table_shown(sets["table"], lambda row: row["variant"])
            combined = {**sets["combined"], "variant": _("Combined")}
            shown["rows"] += language_table_shown(
                {**sets["table"], "rows": [combined]}, lambda row: row["variant"]
            )["rows"]
            context["template_table"] = shown
            context["template_best"] = [
                {"language": group_label(code), "template": template}
                for code, template in sets["combined"].get("best", {}).items()
            ]
        context["template_ids"], context["template_aggregation"] = selectors.run_template_set(run)
        comparison = selectors.benchmark_comparison(run=run)
        if comparison:
            context["comparison"] = language_table_shown(comparison, _compared_run_label)
        context["page"] = Paginator(selectors.benchmark_result_list(run=run), PAGE_SIZE).get_page(
            request.GET.get("page")
        )
    else:
        responses = run.responses.select_related("prompt").order_by("prompt_id", "model_name")
        context["page"] = Paginator(responses, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "evaluation/run.html", context)


@require_POST
@role_required(*DATA_ROLES)
def run_cancel(request, kind: str, run_id: int):
    run = _run_or_404(kind, run_id)
    services.run_cancel(run=run)
    if request.htmx:
        return render(request, "evaluation/run.html#progress", {"run": run, "kind": kind, "errors": []})
    return redirect("evaluation:run", kind=kind, run_id=run.pk)


@require_POST
@role_required(*DATA_ROLES)
def run_retry(request, kind: str, run_id: int):
    run = _run_or_404(kind, run_id)
    try:
        n = services.run_retry_not_done(run=run)
    except services.RunConfigError as exc:
        messages.error(request, shown(exc))
    else:
        if n:
            messages.success(
                request,
                ngettext(
                    "%(n)s item without a result was queued again.",
                    "%(n)s items without a result were queued again.",
                    n,
                )
                % {"n": n},
            )
        else:
            messages.info(request, _("Every item of this run has its result; nothing was queued."))
    return redirect("evaluation:run", kind=kind, run_id=run.pk)


@role_required(*DATA_ROLES)
def prompt_templates(request):
    """The benchmark prompt templates, shipped and added, and a form to add one."""
    form = PromptTemplateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.prompt_template_create(**form.cleaned_data, user=request.user)
        except services.RunConfigError as exc:
            form.add_error(None, shown(exc))
        else:
            messages.success(
                request, _("Prompt template %(slug)s added.") % {"slug": form.cleaned_data["slug"]}
            )
            return redirect("evaluation:prompt-templates")
    added = {row.slug: row for row in PromptTemplate.objects.all()}
    rows = [
        {"task": task_label, "template": template, "row": added.get(template.id)}
        for task, task_label in BenchmarkRun.Task.choices
        for template in services.templates_available(task)
    ]
    return render(request, "evaluation/prompt_templates.html", {"form": form, "rows": rows})


def _aspect_project(request: HttpRequest) -> Project | None:
    """The annotation project named by ``?project=``, whose own aspects the page shows; None: the shared."""
    given = request.GET.get("project", "").strip()
    if not given:
        return None
    if not given.isdigit():
        raise Http404(f"project: {given!r} is not an annotation project id")
    return get_object_or_404(Project, pk=int(given))


def _aspects_url(name: str, project: Project | None, **kwargs: str) -> str:
    url = reverse(name, kwargs=kwargs or None)
    return f"{url}?{urlencode({'project': project.pk})}" if project is not None else url


@role_required(*DATA_ROLES)
def aspect_list(request: HttpRequest) -> HttpResponse:
    """Every category's priority aspects for single-answer judges, shipped or edited; with ``?project=``,
    as that annotation project's judge runs use them, its own marked."""
    project = _aspect_project(request)
    go_to = request.GET.get("category", "").strip()
    if go_to:
        key = normalise_category(go_to).replace("/", "_")
        return redirect(_aspects_url("evaluation:aspect-edit", project, category=key))
    rows = selectors.aspect_table(project_id=project.pk if project else None)
    return render(request, "evaluation/aspects.html", {"rows": rows, "project": project})


@role_required(*DATA_ROLES)
def aspect_edit(request: HttpRequest, category: str) -> HttpResponse:
    """Edit (or reset) the aspects of one category, in both languages at once: the shared ones, or with
    ``?project=`` that annotation project's own."""
    project = _aspect_project(request)
    key = normalise_category(category)
    if key != category:
        return redirect(_aspects_url("evaluation:aspect-edit", project, category=key))
    project_id = project.pk if project else None
    row = next((r for r in selectors.aspect_table(project_id=project_id) if r["category"] == key), None)
    back = _aspects_url("evaluation:aspects", project)
    if request.method == "POST" and request.POST.get("reset"):
        services.category_aspects_reset(category=key, project=project)
        if project is None:
            messages.success(
                request, _("The shipped aspects of %(category)s apply again.") % {"category": key}
            )
        else:
            messages.success(
                request,
                _("The shared aspects of %(category)s apply to %(project)s again.")
                % {"category": key, "project": project.name},
            )
        return redirect(back)
    initial = {}
    if row is not None:
        initial = {f"aspects_{language}": "\n".join(row[language]) for language in LANGUAGES}
    form = CategoryAspectsForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.category_aspects_update(
                category=key,
                aspects={language: form.aspects(language) for language in LANGUAGES},
                project=project,
            )
        except services.RunConfigError as exc:
            form.add_error(None, shown(exc))
        else:
            messages.success(request, _("Aspects of %(category)s saved.") % {"category": key})
            return redirect(back)
    can_reset = bool(row and (row["own"] if project else row["edited_en"] or row["edited_id"]))
    context = {
        "form": form,
        "category": key,
        "row": row,
        "project": project,
        "back": back,
        "can_reset": can_reset,
    }
    return render(request, "evaluation/aspect_form.html", context)


@role_required(*DATA_ROLES)
def span_prefill(request: HttpRequest, project_id: int) -> HttpResponse:
    """GET: the pre-fill of an MQM or ESA project's spans by a model, with the parse statuses so far.
    POST: hand it to a worker on the endpoint's queue."""
    project = get_object_or_404(Project, pk=project_id, kind__in=SPAN_KINDS)
    endpoints = ModelEndpoint.objects.order_by("slug")
    if request.method == "POST":
        endpoint = endpoints.filter(pk=request.POST.get("endpoint") or 0).first()
        lang = request.POST.get("language", "en")
        if endpoint is None or lang not in ("en", "id"):
            messages.error(request, _("Choose a model endpoint and the prompt's language."))
        else:
            try:
                span_prefill_queue(project=project, endpoint=endpoint, lang=lang)
            except SpanPrefillRefused as exc:
                messages.error(request, shown(exc))
            else:
                messages.success(
                    request,
                    _("%(model)s is suggesting spans for the %(n)d tasks; annotators see them as they come.")
                    % {"model": endpoint.slug, "n": project.n_tasks},
                )
        return redirect("evaluation:span-prefill", project_id=project.pk)
    context = {"project": project, "endpoints": endpoints, "counts": span_judgment_counts(project)}
    return render(request, "evaluation/span_prefill.html", context)
