"""Agreement dashboards: one page per project (htmx polls its ``report`` fragment while computing), CSVs.

Project managers and researchers only; annotators get 403. The page never computes more than a small
project's report itself: larger ones are computed by ``evaluation.agreement_report`` on a worker while
the page shows a progress bar (and the previous report of older data, when there is one).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.roles import PROJECT_MANAGER, RESEARCHER
from analytics import services
from analytics.domain.agreement import LEVELS, NO_EXPECTED_DISAGREEMENT, NO_PAIRABLE_UNIT, NO_VARIATION
from analytics.downloads import csv_response
from analytics.labels import Labels
from annotation.models import Project
from datasets_app.jobs import JobRefused

ROLES = (PROJECT_MANAGER, RESEARCHER)
# Sections with a chart, and the table it draws.
CHARTS = {
    "alpha": "alpha",
    "trend": "trend",
    "distributions": "distributions",
    "annotators": "annotators",
    "bradley_terry": "ratings",
    "judges": "leaderboard",
    "conflicts": "conflicts",
}


def _level(request: HttpRequest) -> str | None:
    level = request.GET.get("level") or services.DEFAULT_LEVEL
    return level if level in LEVELS else None


# Why an alpha is undefined, as the page says it (the CSV and the API keep the domain's words).
_REASONS = {
    NO_PAIRABLE_UNIT: gettext_lazy("no pairable unit"),
    NO_VARIATION: gettext_lazy("no variation"),
    NO_EXPECTED_DISAGREEMENT: gettext_lazy("no expected disagreement"),
}


# Column and summary headings as the page shows them; the CSV downloads and the API keep the field names.
_HEADINGS = {
    "criterion": gettext_lazy("Criterion"),
    "level": gettext_lazy("Level"),
    "alpha": gettext_lazy("Alpha"),
    "ci_low": gettext_lazy("95% CI low"),
    "ci_high": gettext_lazy("95% CI high"),
    "q_below_0_667": gettext_lazy("Share of draws below 0.667"),
    "n_units": gettext_lazy("Units"),
    "n_coders": gettext_lazy("Annotators"),
    "n_pairable_values": gettext_lazy("Pairable values"),
    "percent_agreement": gettext_lazy("Percent agreement"),
    "ac1": gettext_lazy("Gwet's AC1"),
    "cohen_kappa": gettext_lazy("Cohen's kappa (two annotators)"),
    "fleiss_kappa": gettext_lazy("Fleiss' kappa (same number of ratings per unit)"),
    "undefined_reason": gettext_lazy("Why undefined"),
    "dimension": gettext_lazy("Dimension"),
    "group": gettext_lazy("Group"),
    "group_a": gettext_lazy("Group A"),
    "group_b": gettext_lazy("Group B"),
    "alpha_means": gettext_lazy("Alpha of group means"),
    "alpha_pooled": gettext_lazy("Alpha of pooled ratings"),
    "pearson_r": gettext_lazy("Pearson r"),
    "mean_offset": gettext_lazy("Mean offset"),
    "n_shared_units": gettext_lazy("Shared units"),
    "n_submissions": gettext_lazy("Submissions"),
    "submitted_until": gettext_lazy("Submitted until"),
    "coder": gettext_lazy("Annotator"),
    "n_values": gettext_lazy("Values"),
    "alpha_without": gettext_lazy("Alpha without the annotator"),
    "delta": gettext_lazy("Change in alpha"),
    "mean_abs_gap": gettext_lazy("Mean absolute gap"),
    "gold_items": gettext_lazy("Gold items"),
    "gold_accuracy": gettext_lazy("Gold accuracy"),
    "value": gettext_lazy("Value"),
    "count": gettext_lazy("Count"),
    "share": gettext_lazy("Share"),
    "model": gettext_lazy("Model"),
    "picks": gettext_lazy("Picks"),
    "tasks_shown": gettext_lazy("Tasks shown"),
    "item": gettext_lazy("Item"),
    "annotator": gettext_lazy("Annotator"),
    "vote": gettext_lazy("Vote"),
    "category": gettext_lazy("Category"),
    "n_items": gettext_lazy("Items"),
    "with_ties": gettext_lazy("Agreement with ties"),
    "n_with_ties": gettext_lazy("Items with ties"),
    "without_ties": gettext_lazy("Agreement without ties"),
    "n_without_ties": gettext_lazy("Items without ties"),
    "majority_with_ties": gettext_lazy("Majority agreement with ties"),
    "majority_n_with_ties": gettext_lazy("Majority items with ties"),
    "majority_without_ties": gettext_lazy("Majority agreement without ties"),
    "majority_n_without_ties": gettext_lazy("Majority items without ties"),
    "model_a": gettext_lazy("Model A"),
    "model_b": gettext_lazy("Model B"),
    "winner": gettext_lazy("Winner"),
    "rating": gettext_lazy("Rating"),
    "strength": gettext_lazy("Strength"),
    "wins": gettext_lazy("Wins"),
    "games": gettext_lazy("Games"),
    "judge": gettext_lazy("Judge"),
    "kind": gettext_lazy("Kind"),
    "accuracy": gettext_lazy("Accuracy"),
    "accuracy_raw": gettext_lazy("Raw accuracy"),
    "macro_accuracy": gettext_lazy("Macro accuracy"),
    "macro_accuracy_raw": gettext_lazy("Macro raw accuracy (IndoPref's Avg)"),
    "n": gettext_lazy("Number"),
    "n_valid": gettext_lazy("Valid verdicts"),
    "n_correct": gettext_lazy("Correct verdicts"),
    "n_parse_errors": gettext_lazy("Unreadable verdicts"),
    "n_human_ties": gettext_lazy("Human ties left out"),
    "n_left_out": gettext_lazy("Left out"),
    "n_items_excluded": gettext_lazy("Items not scored by every judge"),
    "consistent": gettext_lazy("Consistent"),
    "biased_first": gettext_lazy("Favours the first"),
    "biased_second": gettext_lazy("Favours the second"),
    "error": gettext_lazy("Error"),
    "creator": gettext_lazy("Creator"),
    "answerer": gettext_lazy("Answerer"),
    "n_answers": gettext_lazy("Answers"),
    "n_conflicts": gettext_lazy("Conflicts"),
    "n_blank": gettext_lazy("Blank answers"),
    "conflict_share": gettext_lazy("Share of conflicts"),
}


def heading(key: str) -> str:
    """A column's heading on the page; a field the list does not know yet reads as words, not a name."""
    return str(_HEADINGS[key]) if key in _HEADINGS else key.replace("_", " ").capitalize()


# Counts that can hold halves (a tie is half a win for each side): whole numbers print without decimals.
_HALF_COUNTS = {"wins"}


def _cell(value: Any, column: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and column in _HALF_COUNTS and (2 * value).is_integer():
        return str(int(value)) if value.is_integer() else f"{value:.1f}"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, str) and value in _REASONS:
        return str(_REASONS[value])
    return str(value)


def panels(
    report: dict[str, Any], project_id: int, level: str, labels: Labels | None = None
) -> list[dict[str, Any]]:
    """Sections as the template draws them: title, note, tables with formatted cells (codes shown by their
    labels) and CSV links."""
    labels = labels or Labels()
    out = []
    for name, section in report["sections"].items():
        tables = []
        for table_name, rows in section["tables"].items():
            columns = list(dict.fromkeys(key for row in rows for key in row))
            tables.append(
                {
                    "name": table_name,
                    "columns": [heading(c) for c in columns],
                    "rows": [[_cell(labels.value(c, row.get(c), row), c) for c in columns] for row in rows],
                    "csv": reverse(
                        "analytics:csv",
                        kwargs={"project_id": project_id, "section": name, "table": table_name},
                    )
                    + f"?level={level}",
                }
            )
        summary = section.get("summary")
        out.append(
            {
                "name": name,
                "title": _(services.SECTIONS[name]),
                "note": labels.note(section["note"]) if section.get("note") else None,
                "summary": [(heading(k), _cell(v)) for k, v in summary.items()] if summary else [],
                "partial": [_unfinished_line(run, labels) for run in section.get("partial", [])],
                "tables": tables,
                "chart": name if name in CHARTS and section["tables"].get(CHARTS[name]) else None,
            }
        )
    return out


def _unfinished_line(run: dict[str, Any], labels: Labels) -> str:
    """A judge run feeding the leaderboard before it succeeded: a cancelled run says it was cancelled (it
    will not finish), a working or failed one that it is partial."""
    values = {"judge": labels.judge(run["judge"]), "done": run["n_done"], "total": run["n_total"]}
    if run.get("status") == "cancelled":
        return _("%(judge)s: cancelled: %(done)s of %(total)s done") % values
    return _("%(judge)s: partial: %(done)s of %(total)s items") % values


def chart_data(report: dict[str, Any], labels: Labels | None = None) -> dict[str, list[dict[str, Any]]]:
    """The rows each chart draws, their codes shown by their labels (a judge's ``kind`` stays a code: the
    chart leaves the human row out by it)."""
    labels = labels or Labels()
    return {
        name: [labels.row(row, keep=("kind",)) for row in report["sections"][name]["tables"].get(table, [])]
        for name, table in CHARTS.items()
        if name in report["sections"]
    }


def chart_titles() -> dict[str, str]:
    """Axis, legend and tooltip titles of the charts' fields, in the page's language."""
    return {key: str(value) for key, value in _HEADINGS.items()} | {
        "measure": _("Measure"),
        "source": _("Source"),
    }


@role_required(*ROLES)
def project_list(request: HttpRequest) -> HttpResponse:
    projects = (
        Project.objects.filter(kind__in=services.DASHBOARD_KINDS)
        .select_related("dataset")
        .order_by("-created_at", "-id")
    )
    return render(request, "analytics/list.html", {"projects": projects})


@role_required(*ROLES)
def project_dashboard(request: HttpRequest, project_id: int) -> HttpResponse:
    """The dashboard; with htmx (polling) only its ``report`` fragment."""
    project = get_object_or_404(Project, pk=project_id, kind__in=services.DASHBOARD_KINDS)
    level = _level(request)
    if level is None:
        return HttpResponseBadRequest(_("Unknown level of measurement."))
    state = services.report_state(project=project, level=level)
    shown = state.report or state.previous
    labels = Labels() if shown else None
    context = {
        "project": project,
        "state": state,
        "level": level,
        "levels": LEVELS,
        "panels": panels(shown, project.pk, level, labels) if shown else [],
        "charts": chart_data(shown, labels) if shown else {},
        "chart_titles": chart_titles(),
        "shown": shown,
    }
    if request.htmx:
        return render(request, "analytics/dashboard.html#report", context)
    return render(request, "analytics/dashboard.html", context)


@role_required(*ROLES)
def section_csv(request: HttpRequest, project_id: int, section: str, table: str) -> HttpResponse:
    project = get_object_or_404(Project, pk=project_id, kind__in=services.DASHBOARD_KINDS)
    level = _level(request)
    if level is None or section not in services.SECTIONS:
        raise Http404
    state = services.report_state(project=project, level=level)
    if not state.ready:
        return HttpResponse(_("The report is being computed; try again in a moment."), status=409)
    try:
        _name, rows = services.section_table(state.report, section, table)
    except KeyError:
        raise Http404 from None
    return csv_response(rows, f"project-{project.pk}-{section}-{table}.csv")


@require_POST
@role_required(*ROLES)
def report_retry(request: HttpRequest, project_id: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=project_id, kind__in=services.DASHBOARD_KINDS)
    level = _level(request) or services.DEFAULT_LEVEL
    services.report_retry(project=project, level=level)
    return redirect(reverse("analytics:project", kwargs={"project_id": project.pk}) + f"?level={level}")


@require_POST
@role_required(*ROLES)
def report_cancel(request: HttpRequest, project_id: int) -> HttpResponse:
    """Cancel the background computation of the report (a queued one at once, a running one at its next
    step)."""
    project = get_object_or_404(Project, pk=project_id, kind__in=services.DASHBOARD_KINDS)
    level = _level(request) or services.DEFAULT_LEVEL
    try:
        services.report_cancel(project=project, level=level)
    except JobRefused:
        messages.error(request, _("No report of this project is being computed."))
    return redirect(reverse("analytics:project", kwargs={"project_id": project.pk}) + f"?level={level}")
