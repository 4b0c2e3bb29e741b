"""``manage.py judge_lab``: can an LLM judge stand in for people? Bias, calibration, length control and
prediction-powered estimates (``analytics.domain.judge_lab.lab_report``, the function the dashboard's Judge
lab and its API call).

Human CSV: ``item,annotator,vote`` as for ``judge_agreement`` (A/B/tie/both_bad). Judge CSV:
``item,judge,vote`` (A/B/tie, ``error`` or empty) or ``item,judge,score_a,score_b`` (verdict by
--tie-threshold), with optional ``order`` (ab: response A shown first, the default; ba) and ``sample`` (the
index of one of k sampled verdicts; k >= 3 gives calibration). Either file may carry ``turn`` (items are then
(item, turn)), ``category``, ``language``, ``register``, ``model_a``, ``model_b``, ``length_a``, ``length_b``
(one value per item; the human file's wins). ``--lengths`` adds ``item,length_a,length_b`` (and
``model_a,model_b``); ``--families`` maps names (judges, models) to model families: ``name,family``.

JSON output (``--json``): ``judges`` (per judge: accuracy against the human majority with a Wilson
interval, ``position``, ``length``, ``self_preference``, ``calibration``), ``human_length`` (the same
length figures for the human majority), ``judge_choice`` (per slice: every judge's accuracy and the best),
``length_controlled`` (per source and model against ``baseline``: raw and length-controlled win rates),
``ppi`` (per judge and model pair: the prediction-powered win rate, human-only and judge-only estimates, the
effective number of human labels), ``notes`` (what could not be computed and why).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser

from analytics.domain.csv_inputs import (
    InputError,
    families_map,
    lab_human_frame,
    lab_item_frame,
    lab_judge_frame,
    read_csv,
)
from analytics.domain.judge_lab import lab_report
from evaluation.management.commands import CsvCommand


class Command(CsvCommand):
    help = "Judge lab: position, length and self-preference bias, calibration, length-controlled and PPI win rates."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--human", required=True, help="CSV item,annotator,vote[,turn,category,...]")
        parser.add_argument(
            "--judge", required=True, help="CSV item,judge,vote or item,judge,score_a,score_b [,order,sample]"
        )
        parser.add_argument("--lengths", help="CSV item,length_a,length_b[,model_a,model_b]")
        parser.add_argument("--families", help="CSV name,family (judges and models)")
        parser.add_argument("--baseline", help="model the length-controlled win rates are against")
        parser.add_argument(
            "--ppi-human-share",
            type=float,
            help="use the human votes of only this share of items (seeded) for the PPI estimates",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--tie-threshold", type=float, default=1.0, help="scores differing by at most this are a tie"
        )
        parser.add_argument("--confidence", type=float, default=0.95)
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        share = options["ppi_human_share"]
        if share is not None and not 0 < share <= 1:
            raise self.bad_input("--ppi-human-share must be above 0 and at most 1")
        if not 0 < options["confidence"] < 1:
            raise self.bad_input("--confidence must be between 0 and 1")
        if options["tie_threshold"] < 0:
            raise self.bad_input("--tie-threshold must be 0 or more")
        try:
            report = self._compute(options)
        except (InputError, ValueError) as exc:
            raise self.bad_input(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False))
        else:
            self._write_summary(report)

    def _compute(self, options: dict[str, Any]) -> dict[str, Any]:
        raw_human = read_csv(options["human"])
        raw_judge = read_csv(options["judge"])
        if ("turn" in raw_human.columns) != ("turn" in raw_judge.columns):
            raise InputError("a 'turn' column must be in both files or in neither")
        human = lab_human_frame(raw_human, source=options["human"])
        judge = lab_judge_frame(raw_judge, tie_threshold=options["tie_threshold"], source=options["judge"])
        sources = [(raw_human, options["human"]), (raw_judge, options["judge"])]
        if options["lengths"]:
            raw_lengths = read_csv(options["lengths"])
            if "item" not in raw_lengths.columns or not {"length_a", "length_b"} <= set(raw_lengths.columns):
                raise InputError(f"{options['lengths']}: needs the columns item, length_a and length_b")
            sources.insert(0, (raw_lengths, options["lengths"]))
        items = lab_item_frame(sources)
        families = (
            families_map(read_csv(options["families"]), source=options["families"])
            if options["families"]
            else {}
        )
        if human.empty:
            raise InputError(f"{options['human']}: no votes")
        if judge.empty:
            raise InputError(f"{options['judge']}: no judge outputs")
        return lab_report(
            human,
            judge,
            items,
            families=families,
            baseline=options["baseline"],
            ppi_human_share=options["ppi_human_share"],
            seed=options["seed"],
            confidence=options["confidence"],
        )

    def _write_summary(self, report: dict[str, Any]) -> None:
        def pct(value: float | None) -> str:
            return "-" if value is None else f"{100 * value:.1f}%"

        lines = [f"{'judge':<24} {'accuracy':>9} {'first pos.':>10} {'longer wins':>11} {'ECE':>6}"]
        for name, entry in report["judges"].items():
            accuracy = entry["accuracy"]["accuracy"] if entry["accuracy"] else None
            longer = entry["length"]["longer_win_rate"] if entry["length"] else None
            ece = entry["calibration"]["ece"] if entry["calibration"] else None
            lines.append(
                f"{name:<24} {pct(accuracy):>9} {pct(entry['position']['first_position_rate']):>10} "
                f"{pct(longer):>11} {'-' if ece is None else f'{ece:.3f}':>6}"
            )
        for row in report["ppi"]:
            ppi, human = row["ppi"], row["human_only"]
            lines.append(
                f"PPI {row['judge']}: {row['model_x']} over {row['model_y']}: {pct(ppi['estimate'])} "
                f"[{pct(ppi['ci95'][0])}, {pct(ppi['ci95'][1])}] vs human-only {pct(human['estimate'])} "
                f"[{pct(human['ci95'][0])}, {pct(human['ci95'][1])}], worth {row['effective_n'] or 0:.0f} "
                f"human labels of {row['n_labeled']}"
            )
        lines += [f"note: {note}" for note in report["notes"]]
        self.stdout.write("\n".join(lines))
