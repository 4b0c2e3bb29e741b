"""The error spans of an MQM or ESA project: as a Hugging Face dataset with a card (``error-spans``, one row
per answer with its spans) or as a WMT/Anthea MQM TSV file with the same card (``mqm-tsv``).

Both record where each span came from (``annotator``, or a suggestion from the automatic ``flags`` or an
``llm`` judge) and what the annotator did with a suggestion (``accepted``, ``edited``, ``removed``); a
removed suggestion is kept, marked so, and counts in no score. The card gives the MQM (or ESA) score of
every system with its bootstrap interval over segments and the agreement between raters on spans, from the
same ``annotation.domain.error_spans`` functions as the score page and ``manage.py mqm_scores``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from annotation.domain.error_spans import esa_report, mqm_report, rating_points, span_agreement
from annotation.domain.mqm_tsv import write_mqm_tsv
from annotation.models import SPAN_KINDS, Project
from exports.domain.dataset_card import card_document
from exports.families import error_spans_selectors
from exports.families.base import Destination, Family, Step, kind_name
from exports.families.corpus import corpus_header, made_and_licensed_lines
from exports.options import ERROR_SPANS, MQM_TSV, ExportFailed, ExportOptions, corpus_options_resolve
from exports.writers import write_hf_folder

TSV_NAME = "mqm.tsv"
SPAN_TYPE = pa.struct(
    [
        ("side", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("text", pa.string()),
        ("category", pa.string()),
        ("severity", pa.string()),
        ("origin", pa.string()),
        ("outcome", pa.string()),
        ("comment", pa.string()),
        ("note", pa.string()),
    ]
)
ERROR_SPANS_SCHEMA = pa.schema(
    [
        ("system", pa.string()),
        ("doc", pa.string()),
        ("doc_id", pa.string()),
        ("seg_id", pa.string()),
        ("rater", pa.string()),
        ("source", pa.string()),
        ("target", pa.string()),
        ("source_language", pa.string()),
        ("target_language", pa.string()),
        ("register", pa.string()),
        ("protocol", pa.string()),
        ("no_error", pa.bool_()),
        ("esa_score", pa.int64()),
        ("mqm_points", pa.float64()),
        ("spans", pa.list_(SPAN_TYPE)),
    ]
)
COLUMN_TEXT = {
    "system": "Whose translation it is (the unit's translator: a model or a person).",
    "doc / doc_id / seg_id": "The segment: the same for every system that translated the same source.",
    "rater": "The rater: the imported file's name, else a pseudonym stable within this project.",
    "source / target": "The texts the spans point into.",
    "source_language / target_language / register": "ISO 639-3 codes and the register asked for.",
    "protocol": "`mqm` (spans with category and severity) or `esa` (spans, then a 0-100 score).",
    "no_error": "The rater answered that the translation has no error.",
    "esa_score": "ESA's 0-100 score (empty under MQM).",
    "mqm_points": "The rater's weighted error points on the segment (removed suggestions not counted).",
    "spans": "Each span: side (target, or source for an omission), start and end in characters (code points, "
    "end exclusive), the text, category, severity, origin (annotator / flags / llm), outcome of a "
    "suggestion (accepted / edited / removed, empty for the rater's own), the rater's comment and the "
    "suggestion's note.",
}


@dataclass
class SpansBuild:
    """The answers, and what goes out: the TSV table (``mqm-tsv``) or the dataset rows (``error-spans``)."""

    records: list[error_spans_selectors.SpanRecord]
    table: Any = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)


def offered(project: Project) -> bool:
    return project.kind in SPAN_KINDS


def resolve(*, project: Project, options: ExportOptions) -> ExportOptions:
    return corpus_options_resolve(project=project, options=options)


def _summary(project: Project, options: ExportOptions, records: list) -> dict[str, Any]:
    weights = error_spans_selectors.project_weights(project)
    ratings = error_spans_selectors.segment_ratings(records)
    outcomes = Counter((span.origin, span.outcome or "kept") for r in records for span in r.spans)
    summary: dict[str, Any] = {
        "format": options.kind,
        "rows": len(records),
        "spans": sum(1 for r in records for s in r.spans if s.counts),
        "suggestions": {
            f"{origin}:{outcome}": n
            for (origin, outcome), n in sorted(outcomes.items())
            if origin != "annotator"
        },
        "systems": len({r.system for r in records}),
        "segments": len({r.segment for r in records}),
        "raters": len({r.rater for r in records}),
    }
    if ratings:
        draws, seed = options.bootstrap_draws, int(options.seed or 0)
        summary["mqm"] = mqm_report(ratings, weights, draws=draws, seed=seed).as_dict()
        scored = [r for r in ratings if r.score is not None]
        summary["esa"] = esa_report(scored, draws=draws, seed=seed).as_dict() if scored else None
        agreement = span_agreement(ratings, weights).as_dict()
        agreement.pop("pairs")
        summary["agreement"] = agreement
    return summary


def preview(*, project: Project, options: ExportOptions) -> dict[str, Any]:
    records = error_spans_selectors.error_span_records(project)
    summary = _summary(project, options, records)
    return {
        k: summary[k] for k in ("format", "rows", "spans", "suggestions", "systems", "segments", "raters")
    }


def read(*, project: Project, options: ExportOptions, step: Step) -> list:
    step(5, "reading the answers")
    records = error_spans_selectors.error_span_records(project)
    if not records:
        raise ExportFailed("no answer of this project has been submitted yet; nothing was written")
    return records


def build(*, project: Project, options: ExportOptions, data: list, step: Step) -> SpansBuild:
    step(30, "building the rows")
    if options.kind == MQM_TSV:
        built = SpansBuild(records=data, table=error_spans_selectors.error_span_table(project, data))
    else:
        built = SpansBuild(records=data, rows=_rows(project, data))
    built.summary = _summary(project, options, data)
    return built


def _rows(project: Project, records: list) -> list[dict[str, Any]]:
    weights = error_spans_selectors.project_weights(project)
    ratings = error_spans_selectors.segment_ratings(records)
    rows = []
    for record, rating in zip(records, ratings, strict=True):
        rows.append(
            {
                "system": record.system,
                "doc": record.doc,
                "doc_id": record.doc_id,
                "seg_id": record.seg_id,
                "rater": record.rater,
                "source": record.source,
                "target": record.target,
                "source_language": record.source_language,
                "target_language": record.target_language,
                "register": record.register,
                "protocol": record.protocol,
                "no_error": record.no_error,
                "esa_score": record.score,
                "mqm_points": rating_points(rating, weights),
                "spans": [
                    {
                        "side": s.side,
                        "start": s.start,
                        "end": s.end,
                        "text": (record.source if s.side == "source" else record.target)[s.start : s.end],
                        "category": s.category,
                        "severity": s.severity,
                        "origin": s.origin,
                        "outcome": s.outcome,
                        "comment": comment,
                        "note": note,
                    }
                    for s, comment, note in zip(record.spans, record.comments, record.notes, strict=True)
                ],
            }
        )
    return rows


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _interval(ci: list[float] | None, digits: int = 3) -> str:
    return "-" if not ci else f"{ci[0]:.{digits}f} .. {ci[1]:.{digits}f}"


def card(*, project: Project, options: ExportOptions, built: SpansBuild, destination: Destination) -> str:
    summary = built.summary
    languages = sorted(
        {r.source_language for r in built.records} | {r.target_language for r in built.records}
    )
    header = corpus_header(
        options,
        languages=languages,
        rows=summary["rows"],
        extra={"task_categories": ["translation"], "tags": ["mqm", "error-spans", "human-evaluation"]},
    )
    if options.kind == MQM_TSV:
        # The TSV is the data; the card's data_files line points to no parquet file.
        header = header.split("configs:")[0]
    mqm = summary.get("mqm") or {"systems": [], "weights": {"name": "-"}, "bootstrap": {"draws": 0}}
    esa = summary.get("esa")
    agreement = summary.get("agreement") or {}
    what = (
        f"`{TSV_NAME}`, a WMT/Anthea MQM TSV file (one line per span, `<v>...</v>` marks the span, "
        "`No-error` lines for answers without an error)"
        if options.kind == MQM_TSV
        else "a Hugging Face dataset with one row per answer and its spans"
    )
    lines = [
        f"# {options.pretty_name}",
        "",
        f'The error spans of the {kind_name(project)} project "{project.name}" over the dataset '
        f'"{project.dataset.name}", exported by Timbang as {what}: {summary["rows"]:,} answers by '
        f"{summary['raters']} raters on {summary['segments']:,} segments of {summary['systems']} systems, "
        f"{summary['spans']:,} error spans.",
        "",
        "## Scores per system",
        "",
        f"MQM: weighted error points per segment, averaged over the segment's raters, then over the "
        f"system's segments (weights `{mqm['weights']['name']}`; lower is better); 95% interval from "
        f"{mqm['bootstrap']['draws']} bootstrap resamples of segments.",
        "",
        "| rank | system | MQM | 95% interval | segments |",
        "|---:|---|---:|---|---:|",
        *[
            f"| {s['rank']} | {s['system']} | {s['mqm']:.3f} | {_interval(s['ci95'])} | {s['segments']} |"
            for s in mqm["systems"]
        ],
        "",
    ]
    if esa:
        lines += [
            "ESA: the raters' 0-100 scores, averaged per segment, then over the system's segments "
            "(higher is better).",
            "",
            "| rank | system | ESA | 95% interval |",
            "|---:|---|---:|---|",
            *[
                f"| {s['rank']} | {s['system']} | {s['esa']:.1f} | {_interval(s['ci95'], 1)} |"
                for s in esa["systems"]
            ],
            "",
        ]
    lines += [
        "## Agreement on spans",
        "",
        f"Between the raters of the same segment ({agreement.get('n_pairs', 0)} rater pairs): character F1 "
        f"{_fmt(agreement.get('char_f1'))} (twice the characters both marked over the characters each "
        f"marked), severity-weighted {_fmt(agreement.get('severity_weighted'))} (the same with each "
        f"character weighted by its severity), span match {_fmt(agreement.get('span_match'))} (share of "
        "spans the other rater overlapped).",
        "",
        "## Suggested spans",
        "",
    ]
    if summary["suggestions"]:
        lines += [
            "Spans offered to the raters before they started, and what became of them:",
            "",
            "| origin | outcome | spans |",
            "|---|---|---:|",
            *[
                f"| {key.split(':')[0]} | {key.split(':')[1]} | {n:,} |"
                for key, n in summary["suggestions"].items()
            ],
            "",
        ]
    else:
        lines += ["No span was suggested to the raters.", ""]
    if options.kind != MQM_TSV:
        lines += [
            "## Columns",
            "",
            "| column | meaning |",
            "|---|---|",
            *[f"| {column} | {text} |" for column, text in COLUMN_TEXT.items()],
            "",
        ]
    lines += made_and_licensed_lines(project, options, ("bootstrap_draws",))
    return card_document(header, lines)


def write(*, destination: Destination, built: SpansBuild, card: Any, step: Step) -> dict[str, Any]:
    step(50, "writing the files")
    if built.table is not None:
        folder = destination.folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / TSV_NAME).write_text(write_mqm_tsv(built.table), encoding="utf-8", newline="\n")
    else:
        write_hf_folder(
            destination.folder,
            {"train": pa.Table.from_pylist(built.rows, schema=ERROR_SPANS_SCHEMA)},
            "",
            schema=ERROR_SPANS_SCHEMA,
            overwrite=True,
        )
    step(85, "writing the dataset card")
    (destination.folder / "README.md").write_text(card(), encoding="utf-8")
    counts = {k: v for k, v in built.summary.items() if k not in ("mqm", "esa", "agreement")}
    counts["scores"] = [
        {"system": s["system"], "mqm": s["mqm"], "ci95": s["ci95"]} for s in built.summary["mqm"]["systems"]
    ]
    return counts


FAMILY = Family(
    name="error_spans",
    formats=(ERROR_SPANS, MQM_TSV),
    offered=offered,
    resolve=resolve,
    preview=preview,
    read=read,
    build=build,
    card=card,
    write=write,
)
