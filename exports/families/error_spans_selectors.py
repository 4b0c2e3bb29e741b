"""Reads of an error-span export: every counted answer of an MQM or ESA project with its unit and all its
spans (suggestions the annotator removed included, marked so), as plain rows; and the same as a WMT/Anthea
MQM TSV table.

The system of a unit is its translator (the model or person whose translation it is, as the project's
score page names it); the segment is what every system translated: for a project imported from an MQM
TSV file the file's doc, doc_id and seg_id (kept on the unit), otherwise the dataset's name as ``doc``
and a number per distinct (source language, target language, register, source text) as ``seg_id``.
Raters are the file's rater names for an imported project, else ``annotator_pseudonym``. Answers to
attention checks (targets with an injected error) are not exported: they are no rating of a system.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from annotation.domain.error_spans import ErrorSpan, MqmWeights, SegmentRating
from annotation.domain.mqm_tsv import COLUMNS, MqmRow, MqmTable, segment_key
from annotation.domain.span_marking import ESA, MQM
from annotation.models import Annotation, Project
from annotation.models import ErrorSpan as StoredSpan
from annotation.selectors.spans import span_config_of
from exports.selectors import annotator_pseudonym

# Columns of an export of a project that was not imported from a TSV file.
NATIVE_COLUMNS = (*COLUMNS, "comment", "lp", "register", "origin", "outcome")
_ORIGINS = {"flags": "flags", "llm": "llm"}


@dataclass(frozen=True)
class SpanRecord:
    """One counted answer: where (system, segment), who, the texts, the answer and its spans."""

    system: str
    doc: str
    doc_id: str
    seg_id: str
    rater: str
    source: str
    target: str
    source_language: str
    target_language: str
    register: str
    cells: dict[str, str]
    protocol: str
    no_error: bool
    score: int | None
    spans: tuple[ErrorSpan, ...]
    comments: tuple[str, ...]
    notes: tuple[str, ...]
    comment: str = ""
    columns: tuple[str, ...] = ()
    severity_spelling: dict[str, str] = field(default_factory=dict)

    @property
    def segment(self) -> str:
        return segment_key(self.doc, self.doc_id, self.seg_id)


def project_weights(project: Project) -> MqmWeights:
    """The project's MQM weights (its span settings; WMT 2021's by default)."""
    return span_config_of(project).weights


def category_labels(project: Project) -> dict[str, str]:
    """Category code -> the label an MQM TSV file spells it with (the tree node's label: the imported
    file's spelling, or WMT's for the default tree)."""
    return {node.code: node.label for top in span_config_of(project).tree for node in top.walk()}


def _origin(span: StoredSpan) -> str:
    if span.suggestion_id is None:
        return "annotator"
    return _ORIGINS.get(span.suggestion.source, "annotator")


def error_span_records(project: Project) -> list[SpanRecord]:
    """Every counted answer of the project in assignment order, attention checks left out: two queries."""
    answers = list(
        Annotation.objects.counted()
        .filter(
            assignment__project=project,
            criterion__in=(MQM, ESA),
            assignment__task__attention_check__isnull=True,
        )
        .select_related("assignment__task__translation_unit")
        .order_by("assignment_id")
    )
    stored: dict[tuple[int, int], list[StoredSpan]] = defaultdict(list)
    for span in (
        StoredSpan.objects.filter(assignment__project=project, assignment__task__attention_check__isnull=True)
        .select_related("suggestion")
        .order_by("assignment_id", "round", "side", "start", "end", "id")
    ):
        stored[(span.assignment_id, span.round)].append(span)
    segments: dict[tuple[str, str, str, str], str] = {}
    units = sorted({a.assignment.task.translation_unit for a in answers}, key=lambda u: u.pk)
    for unit in units:
        key = (unit.source_language, unit.target_language, unit.register, unit.source_text)
        segments.setdefault(key, str(len(segments) + 1))
    pseudonyms: dict[int, str] = {}
    records = []
    for answer in answers:
        assignment = answer.assignment
        unit = assignment.task.translation_unit
        meta = unit.meta or {}
        imported = meta.get("mqm_tsv") or {}
        rater = (imported.get("raters") or {}).get(str(assignment.annotator_id))
        if rater is None:
            if assignment.annotator_id not in pseudonyms:
                pseudonyms[assignment.annotator_id] = annotator_pseudonym(
                    project=project, user_id=assignment.annotator_id
                )
            rater = pseudonyms[assignment.annotator_id]
        spans = stored.get((assignment.pk, answer.round), [])
        records.append(
            SpanRecord(
                system=unit.translator_name or meta.get("system", "") or "-",
                doc=imported.get("doc", project.dataset.name),
                doc_id=imported.get("doc_id", ""),
                seg_id=imported.get(
                    "seg_id",
                    segments[(unit.source_language, unit.target_language, unit.register, unit.source_text)],
                ),
                rater=rater,
                source=unit.source_text,
                target=unit.translation_text,
                source_language=unit.source_language,
                target_language=unit.target_language,
                register=unit.register,
                cells=dict(imported.get("cells") or {}),
                protocol=answer.criterion,
                no_error=answer.choice == "no_error",
                score=answer.value_int if answer.criterion == ESA else None,
                spans=tuple(
                    ErrorSpan(
                        start=s.start,
                        end=s.end,
                        side=s.side,
                        category=s.category,
                        severity=s.severity,
                        origin=_origin(s),
                        outcome=s.outcome,
                    )
                    for s in spans
                ),
                comments=tuple(s.comment for s in spans),
                notes=tuple(s.suggestion.note if s.suggestion_id else "" for s in spans),
                comment=answer.comment,
                columns=tuple(imported.get("columns") or ()),
                severity_spelling=dict(imported.get("severities") or {}),
            )
        )
    return records


def segment_ratings(records: list[SpanRecord]) -> list[SegmentRating]:
    """The answers as the score functions read them."""
    return [
        SegmentRating(
            system=r.system,
            segment=r.segment,
            rater=r.rater,
            spans=r.spans,
            score=float(r.score) if r.score is not None else None,
            language=r.target_language,
            register=r.register,
        )
        for r in records
    ]


def error_span_table(project: Project, records: list[SpanRecord]) -> MqmTable:
    """The answers as an MQM TSV table: one line per span, a ``No-error`` line for an answer without one;
    the header of the imported file, else ``NATIVE_COLUMNS`` (with ``score`` for ESA); categories and
    severities spelt as the imported file spelt them, else as WMT does (``Accuracy/Mistranslation``,
    ``Major``). Suggestions the
    annotator removed are lines with outcome ``removed`` when the header has an ``outcome`` column."""
    header = tuple(next((r.columns for r in records if r.columns), ()))
    if not header:
        header = NATIVE_COLUMNS + (("score",) if project.kind == Project.Kind.TRANSLATION_ESA else ())
    names = [name.strip().lower() for name in header]
    extra = [name for name in names if name not in COLUMNS]
    labels = category_labels(project)
    rows: list[MqmRow] = []
    for record in records:

        def cells(comment: str, span: ErrorSpan | None, record: SpanRecord = record) -> tuple[str, ...]:
            values = {
                "comment": comment,
                "lp": record.cells.get("lp", f"{record.source_language}-{record.target_language}"),
                "language": record.cells.get("language", record.target_language),
                "register": record.register,
                "score": "" if record.score is None else str(record.score),
                "origin": span.origin if span is not None else "",
                "outcome": span.outcome if span is not None else "",
            }
            return tuple(values.get(name, "") for name in extra)

        kept = [
            (span, comment)
            for span, comment in zip(record.spans, record.comments, strict=True)
            if span.counts or "outcome" in extra
        ]
        base = dict(
            system=record.system,
            doc=record.doc,
            doc_id=record.doc_id,
            seg_id=record.seg_id,
            rater=record.rater,
            source=record.source,
            target=record.target,
        )
        if not any(span.counts for span, _ in kept):
            rows.append(
                MqmRow(
                    line=0,
                    category="No-error",
                    severity="No-error",
                    span=None,
                    extra=cells(record.comment, None),
                    **base,
                )
            )
        for span, comment in kept:
            rows.append(
                MqmRow(
                    line=0,
                    category=labels.get(span.category, span.category),
                    severity=record.severity_spelling.get(span.severity, span.severity.capitalize()),
                    span=span,
                    extra=cells(comment, span),
                    **base,
                )
            )
    return MqmTable(header=header, rows=tuple(rows))
