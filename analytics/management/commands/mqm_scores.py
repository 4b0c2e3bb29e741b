"""``manage.py mqm_scores``: MQM scores per system from a WMT/Anthea MQM TSV file.

Input: the TSV of ``annotation.domain.mqm_tsv`` (``system, doc, doc_id, seg_id, rater, source, target,
category, severity``, the span in ``<v>...</v>``). ``--weights wmt21`` (the default) or a JSON file of
weights (``annotation.domain.error_spans.weights_from_json``).

With ``--json`` the output is one object: ``weights``, ``bootstrap`` (draws, seed), ``systems`` (best
first: rank, system, mqm, ci95, segments, ratings, errors, by_category, by_severity), ``by_language`` and
``by_register`` (the same per value of a ``language``/``lp`` or ``register`` column), ``agreement`` (span
agreement between raters of the same segment; Krippendorff's interval alpha of the raters' segment
points: ``segment_alpha``; with ``--character-alpha``, over characters, nominal alpha of error / no error
and ordinal alpha of the severity weight: ``character_alpha``, else null), ``attention`` (with
``--attention FILE.tsv`` of injected errors: per rater ``checked``, ``found``, ``share``; else null), ``esa`` (when the file has a ``score`` column: ESA mean per system) and the
counts ``n_lines``, ``n_ratings``, ``n_segments``, ``n_raters``.

A bad file or bad weights: exit code 2 and one line naming the file, line and column.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from analytics.domain.agreement import Reliability
from annotation.domain.error_spans import (
    WMT21,
    InjectedError,
    MqmWeights,
    SegmentRating,
    attention_scores,
    character_codes,
    esa_report,
    mqm_report,
    rating_points,
    span_agreement,
    weights_from_json,
)
from annotation.domain.mqm_tsv import TsvError, ratings_from_rows, read_mqm_tsv, segment_key
from evaluation.management.commands import CsvCommand, json_safe

PRESETS = {"wmt21": WMT21}


def segment_alpha(ratings: list[SegmentRating], weights: MqmWeights) -> dict[str, Any]:
    """Krippendorff's interval alpha of the raters' points per (system, segment)."""
    import pandas as pd

    frame = pd.DataFrame(
        {
            "unit": [f"{r.system}\t{r.segment}" for r in ratings],
            "coder": [r.rater for r in ratings],
            "value": [rating_points(r, weights) for r in ratings],
        }
    )
    result = Reliability.from_long(frame, "interval").alpha()
    return {
        "alpha": json_safe(result.alpha),
        "n_units": result.n_units,
        "n_coders": result.n_coders,
        "undefined_reason": result.undefined_reason,
    }


def character_alpha(
    ratings: list[SegmentRating], lengths: dict[tuple[str, str], dict[str, int]], weights: MqmWeights
) -> dict[str, Any]:
    """Krippendorff's alpha over characters: nominal on error / no error, ordinal on the severity weight."""
    import pandas as pd

    units, raters, errors, severities = character_codes(ratings, lengths, weights)
    out: dict[str, Any] = {"n_characters": len(set(units))}
    for name, values, level in (("error", errors, "nominal"), ("severity", severities, "ordinal")):
        frame = pd.DataFrame({"unit": units, "coder": raters, "value": values})
        result = Reliability.from_long(frame, level).alpha()
        out[name] = {
            "alpha": json_safe(result.alpha),
            "level": level,
            "undefined_reason": result.undefined_reason,
        }
    return out


def read_weights(value: str) -> MqmWeights:
    if value in PRESETS:
        return PRESETS[value]
    path = Path(value)
    if not path.is_file():
        raise ValueError(f"--weights: {value!r} is neither a preset ({', '.join(PRESETS)}) nor a file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{value}: not a JSON file ({exc})") from exc
    try:
        return weights_from_json(data, name=path.stem)
    except ValueError as exc:
        raise ValueError(f"{value}: {exc}") from exc


def attention_report(text: str, ratings: list[SegmentRating]) -> list[dict[str, Any]]:
    """Per rater: the segments with an injected error they rated, and in how many they marked it. The
    injected errors come as an MQM TSV file, one line per error (its span in ``<v>...</v>``; the rater
    column names who injected it and is not used)."""
    injected = [
        InjectedError(row.system, segment_key(row.doc, row.doc_id, row.seg_id), row.span, kind=row.category)
        for row in read_mqm_tsv(text).rows
        if row.span is not None
    ]
    if not injected:
        raise TsvError(["line 2: the attention file lists no injected error"])
    unmarked = [i for i in injected if not i.span.marked]
    if unmarked:
        raise TsvError([f"an injected error in segment {unmarked[0].segment!r} marks no <v> span"])
    return [
        {"rater": s.rater, "checked": s.checked, "found": s.found, "share": s.share}
        for s in attention_scores(injected, ratings)
    ]


def mqm_scores_report(
    text: str, weights: MqmWeights, *, draws: int, seed: int, characters: bool = False
) -> dict[str, Any]:
    """Everything the command prints, from the TSV file's text (``TsvError`` on a bad file)."""
    table = read_mqm_tsv(text)
    ratings = ratings_from_rows(table, weights)
    report = mqm_report(ratings, weights, draws=draws, seed=seed).as_dict()
    report["agreement"] = span_agreement(ratings, weights).as_dict()
    report["agreement"]["segment_alpha"] = segment_alpha(ratings, weights)
    report["agreement"]["character_alpha"] = None
    if characters:
        lengths: dict[tuple[str, str], dict[str, int]] = {}
        for row in table.rows:
            key = (row.system, segment_key(row.doc, row.doc_id, row.seg_id))
            lengths.setdefault(key, {"source": len(row.source), "target": len(row.target)})
        report["agreement"]["character_alpha"] = character_alpha(ratings, lengths, weights)
    scored = [r for r in ratings if r.score is not None]
    report["esa"] = esa_report(scored, draws=draws, seed=seed).as_dict() if scored else None
    report["n_lines"] = len(table.rows)
    report["n_ratings"] = len(ratings)
    report["n_segments"] = len({r.segment for r in ratings})
    report["n_raters"] = len({r.rater for r in ratings})
    return report


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


class Command(CsvCommand):
    help = "MQM scores per system (WMT 2021 weights by default) from a WMT/Anthea MQM TSV file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--input", required=True, help="MQM TSV: system, doc, doc_id, seg_id, rater, ...")
        parser.add_argument("--weights", default="wmt21", help="wmt21 (default) or a JSON file of weights")
        parser.add_argument(
            "--bootstrap", type=int, default=1000, help="bootstrap draws over segments (0: none)"
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
        parser.add_argument(
            "--character-alpha",
            action="store_true",
            help="also Krippendorff's alpha over characters (one value per character and rater: slow on big files)",
        )
        parser.add_argument(
            "--attention",
            help="MQM TSV of injected errors (attention checks): each rater's found / checked is reported",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def _attention(self, name: str, text: str, weights: MqmWeights) -> list[dict[str, Any]]:
        path = Path(name)
        if not path.is_file():
            raise self.bad_input(f"--attention: {path}: no such file")
        try:
            checks = path.read_text(encoding="utf-8")
            return attention_report(checks, ratings_from_rows(read_mqm_tsv(text), weights))
        except UnicodeDecodeError as exc:
            raise self.bad_input(f"{path}: not UTF-8 text (byte {exc.start})") from exc
        except TsvError as exc:
            raise self.bad_input(f"{path}: {exc}") from exc

    def handle(self, *args: Any, **options: Any) -> None:
        if options["bootstrap"] < 0:
            raise self.bad_input("--bootstrap must be 0 or more")
        path = Path(options["input"])
        if not path.is_file():
            raise self.bad_input(f"{path}: no such file")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise self.bad_input(f"{path}: not UTF-8 text (byte {exc.start})") from exc
        try:
            weights = read_weights(options["weights"])
            report = mqm_scores_report(
                text,
                weights,
                draws=options["bootstrap"],
                seed=options["seed"],
                characters=options["character_alpha"],
            )
            report["attention"] = None
            if options["attention"]:
                report["attention"] = self._attention(options["attention"], text, weights)
        except TsvError as exc:
            raise self.bad_input(f"{path}: {exc}") from exc
        except ValueError as exc:
            raise self.bad_input(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False))
            return
        lines = [f"MQM ({report['weights']['name']} weights; lower is better)"]
        for row in report["systems"]:
            ci = row["ci95"]
            interval = f"{ci[0]:.3f} .. {ci[1]:.3f}" if ci else "-"
            lines.append(
                f"  {row['rank']:>3}. {row['system']:<24} {row['mqm']:.3f}  [{interval}]  "
                f"{row['segments']} segments, {row['errors']} errors"
            )
        agreement = report["agreement"]
        lines.append(
            f"span agreement: character F1 {_fmt(agreement['char_f1'])}, severity-weighted "
            f"{_fmt(agreement['severity_weighted'])}, span match {_fmt(agreement['span_match'])} "
            f"({agreement['n_pairs']} rater pairs)"
        )
        self.stdout.write("\n".join(lines))
