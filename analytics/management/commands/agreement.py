"""``manage.py agreement``: Krippendorff's alpha with a bootstrap interval from a long CSV file.

Input columns: ``unit,coder,value`` and optionally ``criterion,group,category,language,register``; an
empty value is a missing rating.

With ``--json`` the output is one JSON object. Without a ``criterion`` column it is the report itself;
with one, it is an object keyed by criterion whose values are reports (each also names its criterion).
A report holds: level, alpha, ci95 ([lo, hi] or null), n_units, n_coders, n_pairable_values,
observed_disagreement, expected_disagreement, undefined_reason, bootstrap (draws, n_defined, seed),
q_below (share of bootstrap draws with alpha below each --alpha-min, keyed by the threshold),
percent_agreement, ac1 (nominal level only, else null), leave_one_out (per coder: alpha without the
coder and the change, largest rise first; null beyond 50 coders), breakdowns (alpha per value of each of group, category,
language, register present) and between_groups (when the group column holds exactly two groups and the
level is not nominal; else null).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from django.core.management.base import CommandParser

from analytics.domain.agreement import (
    LEVELS,
    Reliability,
    alpha_breakdowns,
    between_group_agreement,
    gwet_ac1,
    kappas,
    leave_one_out_alpha,
    percent_agreement,
)
from analytics.domain.csv_inputs import InputError, agreement_frame, read_csv
from evaluation.management.commands import CsvCommand, json_safe

DEFAULT_ALPHA_MIN = (0.667, 0.8)
# Each left-out coder costs a full recomputation; crowd files with many coders skip it (null).
LEAVE_ONE_OUT_MAX_CODERS = 50


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: json_safe(v) for k, v in row.items()} for row in table.to_dict(orient="records")]


def agreement_report(
    frame: pd.DataFrame, level: str, *, draws: int, seed: int, alpha_min: list[float]
) -> dict[str, Any]:
    """Everything the command prints for one criterion (or for the whole file)."""
    prepared = Reliability.from_long(frame, level)
    result = prepared.alpha()
    boot = prepared.bootstrap(draws=draws, seed=seed, alpha_min=alpha_min) if draws else None
    ac1 = gwet_ac1(frame).value if level == "nominal" else None
    report: dict[str, Any] = {
        "level": level,
        "alpha": json_safe(result.alpha),
        "ci95": list(boot.ci) if boot and boot.ci else None,
        "n_units": result.n_units,
        "n_coders": result.n_coders,
        "n_pairable_values": result.n_pairable_values,
        "observed_disagreement": json_safe(result.observed_disagreement),
        "expected_disagreement": json_safe(result.expected_disagreement),
        "undefined_reason": result.undefined_reason,
        "bootstrap": {"draws": draws, "n_defined": boot.n_defined if boot else 0, "seed": seed},
        "q_below": {f"{a:g}": (boot.q_below[float(a)] if boot else None) for a in alpha_min},
        "percent_agreement": json_safe(percent_agreement(frame)),
        "ac1": json_safe(ac1),
    }
    kappa = kappas(frame)
    report["cohen_kappa"] = json_safe(kappa.cohen)
    report["fleiss_kappa"] = json_safe(kappa.fleiss)
    report["kappa_undefined_reasons"] = {"cohen": kappa.cohen_reason, "fleiss": kappa.fleiss_reason}
    report["leave_one_out"] = None
    if result.n_coders <= LEAVE_ONE_OUT_MAX_CODERS:
        loo = leave_one_out_alpha(frame, level)
        report["leave_one_out"] = _records(loo[["coder", "alpha", "delta", "n_units", "undefined_reason"]])
    breakdowns = alpha_breakdowns(frame, level, within=())
    report["breakdowns"] = {
        dimension: _records(part.drop(columns=["dimension"]))
        for dimension, part in breakdowns.groupby("dimension", sort=False)
    }
    report["between_groups"] = None
    if "group" in frame.columns and level != "nominal" and frame["group"].nunique() == 2:
        between = between_group_agreement(frame, level)
        report["between_groups"] = {
            "groups": [json_safe(g) for g in between.groups],
            "alpha_means": json_safe(between.alpha_means.alpha),
            "alpha_means_undefined_reason": between.alpha_means.undefined_reason,
            "alpha_pooled": json_safe(between.alpha_pooled.alpha),
            "pearson_r": json_safe(between.pearson_r),
            "mean_offset": json_safe(between.mean_offset),
            "n_shared_units": between.n_shared_units,
        }
    return report


def _fmt(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


class Command(CsvCommand):
    help = "Krippendorff's alpha (with a seeded bootstrap interval) of a long CSV file unit,coder,value."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--input", required=True, help="long CSV: unit,coder,value[,criterion,group,...]")
        parser.add_argument("--level", required=True, choices=LEVELS, help="level of measurement")
        parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap draws (0: none)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
        parser.add_argument(
            "--alpha-min",
            type=float,
            nargs="+",
            default=list(DEFAULT_ALPHA_MIN),
            help="thresholds for q(alpha < alpha_min)",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["bootstrap"] < 0:
            raise self.bad_input("--bootstrap must be 0 or more")
        try:
            frame = agreement_frame(read_csv(options["input"]), options["level"], source=options["input"])
        except InputError as exc:
            raise self.bad_input(str(exc)) from exc
        settings = {"draws": options["bootstrap"], "seed": options["seed"], "alpha_min": options["alpha_min"]}
        try:
            if "criterion" in frame.columns:
                output: dict[str, Any] = {}
                for criterion, part in frame.groupby("criterion", sort=True):
                    report = agreement_report(part.drop(columns="criterion"), options["level"], **settings)
                    output[str(criterion)] = {"criterion": str(criterion), **report}
            else:
                output = agreement_report(frame, options["level"], **settings)
        except ValueError as exc:
            raise self.bad_input(f"{options['input']}: {exc}") from exc
        if options["json"]:
            self.stdout.write(json.dumps(output, ensure_ascii=False))
            return
        reports = output.values() if "criterion" in frame.columns else [output]
        for report in reports:
            self._write_table(report)

    def _write_table(self, report: dict[str, Any]) -> None:
        title = f"criterion {report['criterion']}" if "criterion" in report else "all ratings"
        ci = report["ci95"]
        lines = [
            f"{title} ({report['level']})",
            f"  alpha              {_fmt(report['alpha'])}"
            + (f"  ({report['undefined_reason']})" if report["undefined_reason"] else ""),
            f"  95% CI             {'-' if ci is None else f'{ci[0]:.3f} .. {ci[1]:.3f}'}"
            f"  ({report['bootstrap']['draws']} draws, seed {report['bootstrap']['seed']})",
            f"  units / coders     {report['n_units']} / {report['n_coders']}",
            f"  pairable values    {report['n_pairable_values']}",
            f"  percent agreement  {_fmt(report['percent_agreement'])}",
        ]
        if report["level"] == "nominal":
            lines.append(f"  Gwet's AC1         {_fmt(report['ac1'])}")
        reasons = report["kappa_undefined_reasons"]
        for label, key, reason in (
            ("Cohen's kappa", "cohen_kappa", "cohen"),
            ("Fleiss' kappa", "fleiss_kappa", "fleiss"),
        ):
            why = f"  ({reasons[reason]})" if report[key] is None and reasons[reason] else ""
            lines.append(f"  {label:<18} {_fmt(report[key])}{why}")
        for threshold, q in report["q_below"].items():
            lines.append(f"  q(alpha < {threshold:<5})   {_fmt(q)}")
        for dimension, rows in report["breakdowns"].items():
            lines.append(f"  by {dimension}:")
            for row in rows:
                lines.append(f"    {str(row['group']):<20} {_fmt(row['alpha'])}  ({row['n_units']} units)")
        if report["leave_one_out"]:
            lines.append("  without coder (change):")
            for row in report["leave_one_out"]:
                lines.append(f"    {str(row['coder']):<20} {_fmt(row['alpha'])}  ({_fmt(row['delta'])})")
        if report["between_groups"]:
            between = report["between_groups"]
            lines.append(
                f"  between groups {between['groups'][0]} / {between['groups'][1]}: "
                f"alpha of means {_fmt(between['alpha_means'])}, pooled {_fmt(between['alpha_pooled'])}, "
                f"r {_fmt(between['pearson_r'])}, offset {_fmt(between['mean_offset'])}"
            )
        self.stdout.write("\n".join(lines))
