"""Pages for researchers and project managers: endpoints, runs, one run with live progress and results."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import DATA_ROLES
from annotation.models import Project
from evaluation import selectors, services
from evaluation.domain.judge_templates import LANGUAGES, normalise_category
from evaluation.forms import RUN_FORMS, CategoryAspectsForm, EndpointForm, add_service_errors
from evaluation.models import BenchmarkRun, GenerationRun, JudgeRun, ModelEndpoint, PairVerdict

RUN_MODELS = {"generation": GenerationRun, "judge": JudgeRun, "benchmark": BenchmarkRun}
PAGE_SIZE = 50


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
    context = {"forms": forms, "selected": selected if selected in RUN_FORMS else "generation"}
    return render(request, "evaluation/run_start.html", context)


@role_required(*DATA_ROLES)
def run_list(request):
    return render(request, "evaluation/runs.html", {"runs": selectors.run_lists()})


@role_required(*DATA_ROLES)
def run_detail(request, kind: str, run_id: int):
    """The run page; htmx polls it for the ``progress`` fragment while the run is active."""
    run = selectors.run_live_progress(_run_or_404(kind, run_id))
    context = {
        "run": run,
        "kind": kind,
        "errors": selectors.run_chunk_errors(run=run),
        "recoveries": selectors.run_chunk_recoveries(run=run),
    }
    if request.htmx and request.GET.get("fragment") == "progress":
        return render(request, "evaluation/run.html#progress", context)
    if kind == "judge":
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
        rows = (
            selectors.pair_verdict_list(run=run)
            if run.judge_kind == "pairwise"
            else selectors.judgment_list(run=run)
        )
        context["page"] = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    elif kind == "benchmark":
        tables = selectors.benchmark_tables(run=run)
        context["tables"] = tables
        # Each breakdown's rows with the value of their own dimension as ``group``: a row by category has
        # no ``language`` key, and the template must not look one up.
        context["breakdowns"] = {
            dimension: [{"group": row[dimension], **row} for row in rows]
            for dimension, rows in tables.get("by", {}).items()
        }
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
