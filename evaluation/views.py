"""Pages for researchers and project managers: endpoints, runs, one run with live progress and results."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from config.permissions import role_required
from config.roles import DATA_ROLES
from evaluation import selectors, services
from evaluation.models import BenchmarkRun, GenerationRun, JudgeRun

RUN_MODELS = {"generation": GenerationRun, "judge": JudgeRun, "benchmark": BenchmarkRun}
PAGE_SIZE = 50


def _run_or_404(kind: str, run_id: int):
    model = RUN_MODELS.get(kind)
    if model is None:
        raise Http404
    return get_object_or_404(model, pk=run_id)


@role_required(*DATA_ROLES)
def endpoint_list(request):
    return render(request, "evaluation/endpoints.html", {"endpoints": selectors.endpoint_list()})


@role_required(*DATA_ROLES)
def run_list(request):
    return render(request, "evaluation/runs.html", {"runs": selectors.run_lists()})


@role_required(*DATA_ROLES)
def run_detail(request, kind: str, run_id: int):
    """The run page; htmx polls it for the ``progress`` fragment while the run is active."""
    run = _run_or_404(kind, run_id)
    context = {"run": run, "kind": kind, "errors": selectors.run_chunk_errors(run=run)}
    if request.htmx and request.GET.get("fragment") == "progress":
        return render(request, "evaluation/run.html#progress", context)
    if kind == "judge":
        context["summary"] = selectors.judge_run_summary(run=run)
        rows = (
            selectors.pair_verdict_list(run=run)
            if run.judge_kind == "pairwise"
            else selectors.judgment_list(run=run)
        )
        context["page"] = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    elif kind == "benchmark":
        context["tables"] = selectors.benchmark_tables(run=run)
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
