"""Agreement dashboards: one page per project (htmx polls its ``report`` fragment while computing), CSVs.

Project managers and researchers only; annotators get 403. The page never computes more than a small
project's report itself: larger ones are computed by ``evaluation.agreement_report`` on a worker while
the page shows a progress bar (and the previous report of older data, when there is one).
"""

from __future__ import annotations

from typing import Any

import numpy as np
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
from analytics.domain.leaderboard import (
    ARENA_STYLE_FEATURES,
    Leaderboard,
    LeaderboardError,
    leaderboard_options,
)
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
    "language": gettext_lazy("Language"),
    "register": gettext_lazy("Register"),
    "language_register": gettext_lazy("Language and register"),
    "avg": gettext_lazy("Avg (mean over languages)"),
    "overall": gettext_lazy("All items"),
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
            # Tables with a column per language (SeaBench's): those columns are named by their languages.
            by_language = table_name in services.LANGUAGE_COLUMN_TABLES
            tables.append(
                {
                    "name": table_name,
                    "columns": [
                        labels.language(c) if by_language and c not in _HEADINGS else heading(c)
                        for c in columns
                    ],
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
    arenas = Project.objects.filter(kind=Project.Kind.ARENA).order_by("-created_at", "-id")
    return render(request, "analytics/list.html", {"projects": projects, "arenas": arenas})


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


# -- judge lab ----------------------------------------------------------------------------------------------

# The domain's notes (English, stable) as the page says them.
_LAB_NOTES = {
    "calibration needs at least 3 sampled verdicts per item (a sample column)": gettext_lazy(
        "Calibration needs a judge run that sampled at least 3 verdicts per item (Verdicts per item on the "
        "judge run form, with a temperature above 0)."
    ),
    "length bias and length-controlled win rates need length_a and length_b per item": gettext_lazy(
        "Length bias and length-controlled win rates need the lengths of both answers."
    ),
    "self-preference needs model_a, model_b and the model families of the judges": gettext_lazy(
        "Self-preference needs the model family of the judge's endpoint (Model family on the endpoint form)."
    ),
    "No pairwise judge has run on this project's responses yet.": gettext_lazy(
        "No pairwise judge has run on this project's responses yet."
    ),
    "There are no human preferences to compare the judges with yet.": gettext_lazy(
        "There are no human preferences to compare the judges with yet."
    ),
}


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _with_ci(value: float | None, ci: list[float | None] | None, digits: int = 3) -> str:
    """``0.815 [0.788, 0.840]``, or a dash when there is no value."""
    if value is None:
        return "–"
    if not ci or ci[0] is None:
        return _num(value, digits)
    return f"{value:.{digits}f} [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def _slice_label(labels: Labels, group: str, value: str) -> str:
    if group == "all":
        return _("All items")
    if group in ("language", "language_register"):
        return labels.language(value)
    return value or "–"


def lab_context(report: dict[str, Any]) -> dict[str, Any]:
    """The judge lab's tables (formatted cells) and chart rows, in the page's language."""
    labels = Labels()
    people = _("People")
    judges = []
    reliability: list[dict[str, Any]] = []
    lengths: list[dict[str, Any]] = []
    calibration_rows = []
    for judge_name, entry in report.get("judges", {}).items():
        name = labels.judge(judge_name)
        accuracy = entry.get("accuracy") or {}
        position = entry["position"]
        length = entry.get("length")
        self_pref = entry.get("self_preference")
        calibration = entry.get("calibration")
        consistency = position.get("consistency") or {}
        judges.append(
            {
                "judge": name,
                "accuracy": _with_ci(
                    accuracy.get("accuracy"), [accuracy.get("ci_low"), accuracy.get("ci_high")]
                ),
                "n": accuracy.get("n", 0),
                "first": _with_ci(position["first_position_rate"], position["ci95"]),
                "consistent": _num(consistency.get("consistent")),
                "longer": _with_ci(length["longer_win_rate"], length["longer_ci95"]) if length else "–",
                "slope": _with_ci(length["slope"], length["slope_ci95"], 2) if length else "–",
                "self_judge": _with_ci(self_pref["judge_rate"], self_pref["judge_ci95"])
                if self_pref
                else "–",
                "self_human": _with_ci(self_pref["human_rate"], self_pref["human_ci95"])
                if self_pref
                else "–",
                "family": entry.get("family") or "–",
                "ece": _num(calibration["ece"]) if calibration else "–",
                "brier": _num(calibration["brier"]) if calibration else "–",
            }
        )
        if calibration:
            reliability += [
                {"judge": name, "confidence": b["confidence"], "accuracy": b["accuracy"], "n": b["n"]}
                for b in calibration["bins"]
            ]
            calibration_rows += [
                {
                    "judge": name,
                    "category": row["category"] or "–",
                    "n": row["n"],
                    "ece": _num(row["ece"]),
                    "brier": _num(row["brier"]),
                    "confidence": _num(row["confidence"]),
                    "accuracy": _num(row["accuracy"]),
                }
                for row in calibration["by_category"]
            ]
        if length:
            lengths += [{"source": name, **point} for point in length["curve"] if point["n"]]
    if report.get("human_length"):
        lengths += [{"source": people, **point} for point in report["human_length"]["curve"] if point["n"]]
    human_length = report.get("human_length")
    controlled = report.get("length_controlled") or {}
    lc_rows = [
        {
            "source": people if row["kind"] == "human" else labels.judge(row["source"]),
            "model": row["model"],
            "n": row["n"],
            "raw": _with_ci(row["raw"], row["raw_ci95"]),
            "lc": _("undefined: the lengths alone split wins from losses")
            if row.get("separated")
            else _with_ci(row["length_controlled"], row["lc_ci95"]),
        }
        for row in controlled.get("rows", [])
    ]
    ppi_rows, ppi_chart = [], []
    for row in report.get("ppi", []):
        comparison = _("%(x)s over %(y)s") % {"x": row["model_x"], "y": row["model_y"]}
        ppi_rows.append(
            {
                "judge": labels.judge(row["judge"]),
                "comparison": comparison,
                "ppi": _with_ci(row["ppi"]["estimate"], row["ppi"]["ci95"]),
                "human": _with_ci(row["human_only"]["estimate"], row["human_only"]["ci95"]),
                "judge_only": _with_ci(row["judge_only"]["estimate"], row["judge_only"]["ci95"]),
                "human_all": _with_ci(row["human_all"]["estimate"], row["human_all"]["ci95"])
                if row.get("human_all")
                else None,
                "n_labeled": row["n_labeled"],
                "n_unlabeled": row["n_unlabeled"],
                "effective_n": _num(row["effective_n"], 1),
                "wider": row["wider_than_human_only"],
            }
        )
        label = f"{labels.judge(row['judge'])}: {comparison}"
        for estimator, estimate in (
            (_("Prediction-powered"), row["ppi"]),
            (_("People only"), row["human_only"]),
            (_("Judge only"), row["judge_only"]),
        ):
            if estimate["estimate"] is not None:
                ppi_chart.append(
                    {
                        "comparison": label,
                        "estimator": estimator,
                        "estimate": estimate["estimate"],
                        "ci_low": estimate["ci95"][0],
                        "ci_high": estimate["ci95"][1],
                    }
                )
    ratings = [
        {
            "judge": labels.judge(entry["judge"]),
            "n_labeled": entry["n_labeled"],
            "n_unlabeled": entry["n_unlabeled"],
            "rows": [
                {
                    "model": row["model"],
                    "ppi": _with_ci(row["ppi"], row["ppi_ci95"], 0),
                    "human": _with_ci(row["human_only"], row["human_only_ci95"], 0),
                    "judge_only": _with_ci(row["judge_only"], row["judge_only_ci95"], 0),
                }
                for row in entry["rows"]
            ],
        }
        for entry in report.get("ppi_ratings", [])
    ]
    choice = {
        group: [
            {
                "slice": _slice_label(labels, group, row["slice"]),
                "judge": labels.judge(row["judge"]),
                "n": row["n"],
                "accuracy": _with_ci(row["accuracy"], [row["ci_low"], row["ci_high"]]),
                "best": row["best"],
                "clear": row["clear"],
            }
            for row in rows
        ]
        for group, rows in (report.get("judge_choice") or {}).items()
    }
    choice_titles = {
        "all": _("All items"),
        "category": _("By category"),
        "language": _("By language"),
        "language_register": _("By language and register"),
    }
    return {
        "judges": judges,
        "human_longer": _with_ci(human_length["longer_win_rate"], human_length["longer_ci95"])
        if human_length
        else None,
        "human_slope": _with_ci(human_length["slope"], human_length["slope_ci95"], 2)
        if human_length
        else None,
        "calibration_rows": calibration_rows,
        "lc_rows": lc_rows,
        "lc_baseline": controlled.get("baseline"),
        "ppi_rows": ppi_rows,
        "ppi_ratings": ratings,
        "choice": [(choice_titles.get(group, group), rows) for group, rows in choice.items()],
        "notes": [str(_LAB_NOTES.get(note, note)) for note in report.get("notes", [])],
        "charts": {"reliability": reliability, "length_bias": lengths, "ppi": ppi_chart},
    }


def _lab_params(request: HttpRequest) -> tuple[str | None, float | None]:
    baseline = request.GET.get("baseline") or None
    share_text = request.GET.get("ppi_share") or ""
    try:
        share = float(share_text) if share_text else None
    except ValueError:
        share = -1.0  # refused by the service with its message
    return baseline, share


@role_required(*ROLES)
def judge_lab(request: HttpRequest, project_id: int) -> HttpResponse:
    """The judge lab of a project: biases, calibration, length-controlled and prediction-powered win
    rates of its pairwise judges against its people."""
    project = get_object_or_404(Project, pk=project_id, kind__in=services.DASHBOARD_KINDS)
    baseline, share = _lab_params(request)
    try:
        report = services.judge_lab_report(project=project, baseline=baseline, ppi_human_share=share)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc))
    context = {
        "project": project,
        "report": report,
        "baseline": baseline,
        "share": share,
        "shares": services.LAB_PPI_SHARES,
        "chart_titles": chart_titles()
        | {
            "judge": _("Judge"),
            "confidence": _("Confidence (share of the majority verdict)"),
            "accuracy": _("Agreement with the human majority"),
            "centre": _("Relative length difference (A - B) / (A + B)"),
            "win_rate_a": _("Share of verdicts for A"),
            "comparison": _("Comparison"),
            "estimator": _("Estimate"),
            "estimate": _("Win rate"),
            "n": _("Items"),
        },
        **lab_context(report),
    }
    return render(request, "analytics/judge_lab.html", context)


# --- the arena leaderboard ----------------------------------------------------------------------------

_PLOT_WIDTH = 640
_PLOT_ROW = 22
_PLOT_LEFT = 190


def _rating_plot(board: Leaderboard) -> dict[str, Any] | None:
    """Coordinates of the ratings with their intervals, one row per rated model (an SVG drawn by the page)."""
    rated = [row for row in board.models if row.rating is not None]
    if not rated:
        return None
    values = [v for row in rated for v in (row.ci95 or (row.rating, row.rating))]
    low, high = min(values), max(values)
    span = max(high - low, 1.0)
    low, high = low - 0.05 * span, high + 0.05 * span
    width = _PLOT_WIDTH - _PLOT_LEFT - 20

    def x(value: float) -> float:
        return round(_PLOT_LEFT + (value - low) / (high - low) * width, 1)

    rows = []
    for n, row in enumerate(rated):
        y = 20 + n * _PLOT_ROW
        lo, hi = row.ci95 or (row.rating, row.rating)
        rows.append(
            {"model": row.model, "y": y, "x": x(row.rating), "x1": x(lo), "x2": x(hi), "label_y": y + 4}
        )
    ticks = [
        {"x": x(value), "label": f"{value:.0f}"}
        for value in np.linspace(low, high, 5)  # five evenly spaced rating marks
    ]
    height = 20 + len(rated) * _PLOT_ROW + 20
    return {"rows": rows, "ticks": ticks, "width": _PLOT_WIDTH, "height": height, "axis_y": height - 12}


def _drop_plot(board: Leaderboard) -> dict[str, Any] | None:
    """The leader's margin over the runner-up as votes are removed (the vote-drop search's path)."""
    drop = board.vote_drop
    if drop is None or len(drop.path) < 2:
        return None
    width, height, left, bottom = 420, 180, 50, 30
    most_votes = max(n for n, _ in drop.path) or 1
    gaps = [g for _, g in drop.path]
    top, floor = max(max(gaps), 0.0), min(min(gaps), 0.0)
    span = max(top - floor, 1e-9)

    def point(n: int, gap: float) -> tuple[float, float]:
        return (
            round(left + n / most_votes * (width - left - 10), 1),
            round(10 + (top - gap) / span * (height - bottom - 10), 1),
        )

    points = " ".join(f"{px},{py}" for px, py in (point(n, g) for n, g in drop.path))
    _, zero_y = point(0, 0.0)
    return {
        "points": points,
        "width": width,
        "height": height,
        "zero_y": zero_y,
        "left": left,
        "right": width - 10,
        "bottom_y": height - bottom + 14,
        "most_votes": most_votes,
        "top_gap": f"{top:.1f}",
    }


def _heat(count: int, most: int) -> int:
    return 0 if count == 0 or most == 0 else 1 + min(3, int(4 * count / (most + 1)))


def _pair_rows(board: Leaderboard) -> list[dict[str, Any]]:
    most = max((max(row) for row in board.pair_votes), default=0)
    return [
        {"model": row.model, "cells": [(count, _heat(count, most)) for count in counts]}
        for row, counts in zip(board.models, board.pair_votes, strict=True)
    ]


_GROUP_TITLES = {
    "language": gettext_lazy("By language"),
    "register": gettext_lazy("By register"),
    "category": gettext_lazy("By category"),
}


@role_required(*ROLES)
def arena_leaderboard(request: HttpRequest, project_id: int) -> HttpResponse:
    """The arena's leaderboard: ratings with intervals, rank ranges and tiers; style coefficients; votes per
    pair; the vote-drop figure; the same per language, register and category. Options in the query."""
    project = get_object_or_404(Project, pk=project_id, kind=Project.Kind.ARENA)
    try:
        options = leaderboard_options(
            request.GET.get("ties"),
            request.GET.getlist("style"),
            request.GET.get("bootstrap"),
            request.GET.get("seed"),
        )
    except LeaderboardError as exc:
        return HttpResponseBadRequest(str(exc))
    board, problem = None, None
    try:
        board = services.arena_leaderboard(project=project, options=options)
    except LeaderboardError as exc:
        problem = str(exc)
    breakdowns = []
    if board is not None:
        for column, boards in board.breakdowns.items():
            breakdowns.append(
                {
                    "title": _GROUP_TITLES.get(column, column),
                    "column": column,
                    "groups": [
                        {
                            "value": value,
                            "board": None if isinstance(b, str) else b,
                            "reason": b if isinstance(b, str) else "",
                        }
                        for value, b in boards.items()
                    ],
                }
            )
    context = {
        "project": project,
        "options": options,
        "ties_choices": [("half", _("ties as half a win")), ("davidson", _("Davidson tie model"))],
        "style_choices": [(name, _STYLE_LABELS[name]) for name in ARENA_STYLE_FEATURES],
        "board": board,
        "problem": problem,
        "plot": _rating_plot(board) if board else None,
        "drop_plot": _drop_plot(board) if board else None,
        "pairs": _pair_rows(board) if board else [],
        "breakdowns": breakdowns,
        "api_query": request.GET.urlencode(),
    }
    return render(request, "analytics/leaderboard.html", context)


_STYLE_LABELS = {
    "length": gettext_lazy("answer length (tokens)"),
    "headers": gettext_lazy("markdown headers"),
    "bold": gettext_lazy("bold text"),
    "lists": gettext_lazy("list items"),
}
