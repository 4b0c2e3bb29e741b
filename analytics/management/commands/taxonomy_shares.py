"""``manage.py taxonomy_shares``: id-csqa's error-taxonomy table, one label per reviewed LLM-written question.

Input CSV: ``question_id,label``, as the "one label per question" download of an answering project writes it;
a label is a category code or ``no_error``. A question on several lines (one per reviewer) gets the label most
of its lines give (a tie: the first in taxonomy order, ``no_error`` last). ``--categories`` lists the
taxonomy's codes in its order (default: id-csqa's taxonomy, the default of a project).

JSON output: ``{"n_questions", "n_reviews", "n_fallback", "n_split", "rounding", "decimals", "rows":
[{"label", "count", "share", "percent"}]}``, one row per category in taxonomy order and then ``no_error``;
``share`` is the unrounded fraction, ``percent`` the percentage with one decimal, rounded by the
largest-remainder method so that the percentages add up to exactly 100.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser

from analytics.domain.csv_inputs import InputError, read_csv, taxonomy_label_frame
from annotation.domain.taxonomy import NO_ERROR, TaxonomyReview, taxonomy_shares
from datasets_app.domain.questions import DEFAULT_ERROR_TAXONOMY
from evaluation.management.commands import CsvCommand


class Command(CsvCommand):
    help = "Shares of the error-taxonomy labels, one label per reviewed question (adding up to 100%)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--input", required=True, help="CSV question_id,label")
        parser.add_argument(
            "--categories",
            default=",".join(c.code for c in DEFAULT_ERROR_TAXONOMY),
            help="the taxonomy's category codes in order, comma-separated (default: id-csqa's)",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        categories = [c.strip() for c in options["categories"].split(",")]
        if not all(categories):
            raise self.bad_input("--categories: an empty category code")
        try:
            frame = taxonomy_label_frame(
                read_csv(options["input"]), categories, NO_ERROR, source=options["input"]
            )
            reviews = [
                TaxonomyReview(question_id=qid, codes=() if label == NO_ERROR else (label,))
                for qid, label in zip(frame["question_id"], frame["label"], strict=True)
            ]
            shares = taxonomy_shares(reviews, categories)
        except InputError as exc:
            raise self.bad_input(str(exc)) from exc
        except ValueError as exc:
            raise self.bad_input(f"{options['input']}: {exc}") from exc
        if options["json"]:
            self.stdout.write(json.dumps(shares.as_dict(), ensure_ascii=False))
            return
        width = max(len(row.label) for row in shares.rows)
        for row in shares.rows:
            self.stdout.write(f"{row.label:<{width}}  {row.count:>6}  {row.percent:>5.{shares.decimals}f}%")
        self.stdout.write(f"{'total':<{width}}  {shares.n_questions:>6}  {100:>5.{shares.decimals}f}%")
