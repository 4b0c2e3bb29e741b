"""``manage.py judge_agreement``: how often LLM judges agree with human pairwise votes.

Human CSV: ``item,annotator,vote`` (A/B/tie/both_bad; both_bad reads as tie). Judge CSV:
``item,judge,vote`` (A/B/tie, ``error`` or empty for an unparsed output) or ``item,judge,score_a,score_b``
(empty score = unparsed output; verdict by --tie-threshold). Both may carry ``turn`` (then items are
(item, turn) and both files need it), ``category``, ``language`` and ``register`` (one per item; the human
file's wins; ``register`` may be empty).

JSON output: ``{"judges": {name: {...}}, "human_human": {...}, "tie_threshold", "human_aggregate",
"random_baseline": {"with_ties": 1/3, "without_ties": 1/2}}``. Per judge: with_ties, without_ties,
n_with_ties, n_without_ties (trials defined by --human-aggregate: ``each`` = one trial per human vote,
FastChat's definition; ``majority`` = one trial per item against the human majority), the
majority_* figures always, accuracy (against the human majority, items with a human tie excluded,
parse errors excluded), accuracy_raw (parse errors counted wrong), macro_accuracy(_raw),
accuracy_by_category, and counts. ``human_human`` is over unordered pairs of distinct annotators.

With a ``language`` column each judge also has ``accuracy_by_language`` and
``accuracy_by_language_register`` (groups ``jav / krama``, or the language alone) shaped like
``accuracy_by_category``, and the output has ``by_language``: judges as rows, a column per language (the
judge's accuracy on that language's items), ``avg`` (the unweighted mean over languages, as SeaBench and
LoraxBench report) and ``overall``; and ``language_avg``: each judge's ``avg``.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from django.core.management.base import CommandParser

from analytics.domain.csv_inputs import InputError, human_votes_frame, judge_frame, read_csv
from analytics.domain.judge_agreement import (
    ENSEMBLE_RULES,
    RANDOM_BASELINE_WITH_TIES,
    RANDOM_BASELINE_WITHOUT_TIES,
    AgreementRate,
    JudgeAccuracy,
    accuracy_language_table,
    ensemble_scores,
    human_human_agreement,
    human_judge_agreement,
    judge_accuracy,
    majority_agreement,
    verdicts_from_scores,
)
from evaluation.domain.benchmark_metrics import MISSING_LEVEL
from evaluation.domain.language_tables import language_register
from evaluation.management.commands import CsvCommand, json_safe

ENSEMBLE = "ensemble"


def _rates(rate: AgreementRate, prefix: str = "") -> dict[str, Any]:
    return {
        f"{prefix}with_ties": rate.with_ties,
        f"{prefix}without_ties": rate.without_ties,
        f"{prefix}n_with_ties": rate.n_with_ties,
        f"{prefix}n_without_ties": rate.n_without_ties,
    }


def _accuracy_groups(accuracy: JudgeAccuracy) -> dict[str, dict[str, Any]]:
    return {
        str(row.category): {
            "accuracy": json_safe(row.accuracy),
            "accuracy_raw": json_safe(row.accuracy_raw),
            "n": int(row.n),
            "n_valid": int(row.n_valid),
        }
        for row in accuracy.by_category.itertuples()
    }


def judge_report(
    human: pd.DataFrame, verdicts: pd.DataFrame, keys: list[str], aggregate: str
) -> dict[str, Any]:
    """Agreement and accuracy of one judge; ``verdicts`` has the keys and ``vote``. With a ``language``
    column in ``human``, also its accuracy by language and by language with register."""
    each = human_judge_agreement(human, verdicts, keys=keys)
    majority = majority_agreement(human, verdicts, keys=keys)
    accuracy = judge_accuracy(human, verdicts, keys=keys)
    headline = each if aggregate == "each" else majority
    by_category = _accuracy_groups(accuracy)
    by_language: dict[str, Any] = {}
    if "language" in human.columns:
        for column in ("language", "language_register"):
            grouped = judge_accuracy(human, verdicts, keys=keys, category=column)
            by_language[f"accuracy_by_{column}"] = _accuracy_groups(grouped)
    return {
        "human_aggregate": aggregate,
        **_rates(headline),
        "n_items": headline.n_items,
        "n_judge_errors": headline.n_judge_errors,
        **_rates(majority, "majority_"),
        "accuracy": accuracy.accuracy,
        "accuracy_raw": accuracy.accuracy_raw,
        "macro_accuracy": accuracy.macro_accuracy,
        "macro_accuracy_raw": accuracy.macro_accuracy_raw,
        "n_accuracy_items": accuracy.n_valid + accuracy.n_parse_errors,
        "n_parse_errors": accuracy.n_parse_errors,
        "n_human_ties_excluded": accuracy.n_human_ties,
        "n_not_judged": accuracy.n_not_judged,
        "accuracy_by_category": by_category,
        **by_language,
    }


def _attach(human: pd.DataFrame, judge: pd.DataFrame, keys: list[str], column: str) -> pd.DataFrame:
    """Give the human votes a ``column`` (category, language, register) taken from the judge file when only
    it has one."""
    if column in human.columns or column not in judge.columns:
        return human
    per_item = judge[[*keys, column]].drop_duplicates()
    if per_item.duplicated(keys).any():
        raise InputError(f"judge CSV: an item has more than one {column}")
    return human.merge(per_item, on=keys, how="left")


def _with_language_register(human: pd.DataFrame) -> pd.DataFrame:
    """The ``language_register`` group of each vote (``jav / krama``, or the language alone)."""
    if "language" not in human.columns:
        return human
    registers = human["register"] if "register" in human.columns else pd.Series("", index=human.index)
    languages = human["language"].fillna("").replace("", MISSING_LEVEL)
    return human.assign(
        language=languages,
        language_register=[
            language_register(language, register)
            for language, register in zip(languages, registers.fillna(""), strict=True)
        ],
    )


class Command(CsvCommand):
    help = "Agreement of LLM judges with human pairwise votes (with and without ties), accuracy, human-human."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--human", required=True, help="CSV item,annotator,vote[,turn,category,language,register]"
        )
        parser.add_argument(
            "--judge", required=True, help="CSV item,judge,vote or item,judge,score_a,score_b"
        )
        parser.add_argument(
            "--tie-threshold", type=float, default=1.0, help="scores differing by at most this are a tie"
        )
        parser.add_argument("--human-aggregate", choices=("each", "majority"), default="each")
        parser.add_argument(
            "--ensemble", action="store_true", help="add a judge averaging all score-based judges' scores"
        )
        parser.add_argument(
            "--ensemble-rule",
            choices=ENSEMBLE_RULES,
            default="all_judges",
            help="all_judges (SeaBench): an item counts only when every judge scored it; "
            "any_parsed: the mean of whichever judges scored it",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["tie_threshold"] < 0:
            raise self.bad_input("--tie-threshold must be 0 or more")
        try:
            output = self._compute(options)
        except (InputError, ValueError) as exc:
            raise self.bad_input(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(output, ensure_ascii=False))
        else:
            self._write_table(output)

    def _compute(self, options: dict[str, Any]) -> dict[str, Any]:
        human = human_votes_frame(read_csv(options["human"]), source=options["human"])
        judge = judge_frame(read_csv(options["judge"]), source=options["judge"])
        if ("turn" in human.columns) != ("turn" in judge.columns):
            raise InputError("a 'turn' column must be in both files or in neither")
        keys = ["item", "turn"] if "turn" in human.columns else ["item"]
        for column in ("category", "language", "register"):
            human = _attach(human, judge, keys, column)
        human = _with_language_register(human)
        scored = "score_a" in judge.columns
        if options["ensemble"] and not scored:
            raise InputError("--ensemble needs a judge CSV with score_a and score_b")
        verdicts: dict[str, pd.DataFrame] = {}
        extra: dict[str, dict[str, Any]] = {}
        for name, part in judge.groupby("judge", sort=True):
            if scored:
                vote = verdicts_from_scores(
                    part["score_a"], part["score_b"], tie_threshold=options["tie_threshold"]
                )
                part = part.assign(vote=vote)
            verdicts[str(name)] = part[[*keys, "vote"]]
        if options["ensemble"]:
            if ENSEMBLE in verdicts:
                raise InputError(f"a judge is already called {ENSEMBLE!r}")
            ensemble = ensemble_scores(judge, keys=keys, rule=options["ensemble_rule"])
            averaged = ensemble.scores
            vote = verdicts_from_scores(
                averaged["score_a"], averaged["score_b"], tie_threshold=options["tie_threshold"]
            )
            verdicts[ENSEMBLE] = averaged.assign(vote=vote)[[*keys, "vote"]]
            extra[ENSEMBLE] = {
                "n_left_out": ensemble.n_left_out,
                "n_items_without_score": ensemble.n_items_without_score,
                "rule": ensemble.rule,
                "n_items_excluded": ensemble.n_items_excluded,
                "n_items_used": ensemble.n_items_used,
                "members": sorted(str(j) for j in judge["judge"].unique()),
            }
        judges = {
            name: judge_report(human, frame, keys, options["human_aggregate"]) | extra.get(name, {})
            for name, frame in verdicts.items()
        }
        pairs = human_human_agreement(human, keys=keys)
        languages: dict[str, Any] = {}
        if "language" in human.columns:
            per_language = {
                name: judge_accuracy(human, frame, keys=keys, category="language")
                for name, frame in verdicts.items()
            }
            table = accuracy_language_table(per_language)
            languages = {
                "by_language": table,
                "language_avg": {row["judge"]: row["avg"] for row in table["rows"]},
            }
        return {
            "judges": judges,
            "human_human": {
                **_rates(pairs),
                "n_items": pairs.n_items,
                "pairs": "unordered pairs of distinct annotators",
            },
            "tie_threshold": options["tie_threshold"] if scored else None,
            "human_aggregate": options["human_aggregate"],
            "random_baseline": {
                "with_ties": RANDOM_BASELINE_WITH_TIES,
                "without_ties": RANDOM_BASELINE_WITHOUT_TIES,
            },
            **languages,
        }

    def _write_table(self, output: dict[str, Any]) -> None:
        def pct(value: float | None) -> str:
            return "-" if value is None else f"{100 * value:.1f}%"

        lines = [
            f"{'judge':<20} {'w/ ties':>9} {'(n)':>7} {'w/o ties':>9} {'(n)':>7} {'accuracy':>9} {'raw':>7}"
        ]
        for name, report in output["judges"].items():
            lines.append(
                f"{name:<20} {pct(report['with_ties']):>9} {report['n_with_ties']:>7} "
                f"{pct(report['without_ties']):>9} {report['n_without_ties']:>7} "
                f"{pct(report['accuracy']):>9} {pct(report['accuracy_raw']):>7}"
            )
        pairs = output["human_human"]
        lines.append(
            f"{'human-human':<20} {pct(pairs['with_ties']):>9} {pairs['n_with_ties']:>7} "
            f"{pct(pairs['without_ties']):>9} {pairs['n_without_ties']:>7}"
        )
        lines.append(f"trials: {output['human_aggregate']} (random baseline 33.3% with ties, 50.0% without)")
        self.stdout.write("\n".join(lines))
