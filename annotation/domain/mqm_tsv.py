"""The WMT / Anthea MQM TSV file: reading, checking and writing.

One error a line, tab-separated, with a header line. Required columns (any order, names compared in
lower case): ``system, doc, doc_id, seg_id, rater, source, target, category, severity``. The erroneous
text is wrapped in ``<v>...</v>`` inside ``target`` (or inside ``source`` for an omission); a line with
category and severity ``No-error`` says the rater found no error in the segment. Other columns
(``comment``, ``language``/``lp``, ``register``, ``score``, ``origin``, ``outcome``, ...) are kept as they
are and written back; ``language``/``lp`` and ``register`` feed the breakdowns, ``score`` is the ESA 0-100
score of the rater's segment (the same on each of its lines), ``origin`` and ``outcome`` the span's origin
and what became of a suggested span.

Cells are not quoted (a tab or a line break cannot occur inside one). Reading then writing gives the same
lines (the same bytes, apart from the order of the lines, with ``\\n`` line ends and a final line end).

A bad file raises ``TsvError`` listing every problem (up to ``MAX_ERRORS``) by line (the header is line 1)
and column; nothing is returned for it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from annotation.domain.error_spans import (
    NO_ERROR,
    ORIGINS,
    OUTCOMES,
    SOURCE,
    TARGET,
    ErrorSpan,
    MqmWeights,
    SegmentRating,
    severity_key,
)

__all__ = [
    "COLUMNS",
    "MAX_ERRORS",
    "MqmRow",
    "MqmTable",
    "TsvError",
    "ratings_from_rows",
    "read_mqm_tsv",
    "rows_sorted",
    "segment_key",
    "segment_texts",
    "write_mqm_tsv",
]

COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
# Columns that must not be empty in a line.
FILLED = ("system", "doc", "seg_id", "rater", "category", "severity")
LANGUAGE_COLUMNS = ("language", "lp")
OPEN, CLOSE = "<v>", "</v>"
MAX_ERRORS = 20


class TsvError(ValueError):
    """Every problem of a file, each ``line N, column C: what``; ``str()`` is the first with a count."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        more = len(self.errors) - 1
        super().__init__(
            self.errors[0] + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")
        )


@dataclass(frozen=True)
class MqmRow:
    """One line: the cells with ``source`` and ``target`` stripped of the span marks, and the span (None
    for a ``No-error`` line). ``extra``: the other columns' cells in header order."""

    line: int
    system: str
    doc: str
    doc_id: str
    seg_id: str
    rater: str
    source: str
    target: str
    category: str
    severity: str
    span: ErrorSpan | None
    extra: tuple[str, ...] = ()

    @property
    def no_error(self) -> bool:
        return self.span is None


@dataclass(frozen=True)
class MqmTable:
    """``header``: the column names as written; ``extra``: the lower-cased names of the other columns."""

    header: tuple[str, ...]
    rows: tuple[MqmRow, ...]

    @property
    def extra(self) -> tuple[str, ...]:
        return tuple(name.strip().lower() for name in self.header if name.strip().lower() not in COLUMNS)

    def extra_value(self, row: MqmRow, name: str) -> str:
        names = self.extra
        return row.extra[names.index(name)] if name in names else ""


def segment_key(doc: str, doc_id: str, seg_id: str) -> str:
    """The segment's identity across systems and raters (tabs cannot occur in cells, so it is unique)."""
    return f"{doc}\t{doc_id}\t{seg_id}"


def _unmark(text: str) -> tuple[str, tuple[int, int] | None, str | None]:
    """The text without the marks, the marked range, or the problem with the marks."""
    opens, closes = text.count(OPEN), text.count(CLOSE)
    if opens == 0 and closes == 0:
        return text, None, None
    if opens != 1 or closes != 1:
        return text, None, f"needs exactly one {OPEN} and one {CLOSE}; found {opens} and {closes}"
    start = text.index(OPEN)
    close = text.index(CLOSE)
    if close < start:
        return text, None, f"{CLOSE} comes before {OPEN}"
    clean = text[:start] + text[start + len(OPEN) : close] + text[close + len(CLOSE) :]
    return clean, (start, close - len(OPEN)), None


def read_mqm_tsv(text: str) -> MqmTable:
    """The table of a TSV file's text; ``TsvError`` naming every bad line and column."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if not lines or not lines[0].strip():
        raise TsvError(["line 1: the file is empty (a header line is needed)"])
    header = tuple(lines[0].split("\t"))
    names = [name.strip().lower() for name in header]
    errors: list[str] = []
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise TsvError([f"line 1: missing column {missing[0]!r} (needs {', '.join(COLUMNS)})"])
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise TsvError([f"line 1: column {doubled[0]!r} appears twice"])
    index = {name: names.index(name) for name in COLUMNS}
    extra_at = [i for i, name in enumerate(names) if name not in COLUMNS]
    origin_at = names.index("origin") if "origin" in names else None
    outcome_at = names.index("outcome") if "outcome" in names else None
    rows: list[MqmRow] = []
    for number, line in enumerate(lines[1:], start=2):
        if len(errors) >= MAX_ERRORS:
            break
        cells = line.split("\t")
        if len(cells) != len(header):
            errors.append(f"line {number}: {len(cells)} columns, the header has {len(header)}")
            continue
        value = {name: cells[i] for name, i in index.items()}
        bad = [f"line {number}, column {c}: empty" for c in FILLED if not value[c].strip()]
        if bad:
            errors.extend(bad)
            continue
        source, source_span, source_problem = _unmark(value["source"])
        target, target_span, target_problem = _unmark(value["target"])
        for column, problem in (("source", source_problem), ("target", target_problem)):
            if problem:
                errors.append(f"line {number}, column {column}: {problem}")
        if source_problem or target_problem:
            continue
        no_error_cat = severity_key(value["category"]) == NO_ERROR
        no_error_sev = severity_key(value["severity"]) == NO_ERROR
        if no_error_cat != no_error_sev:
            column = "severity" if no_error_cat else "category"
            errors.append(
                f"line {number}, column {column}: a No-error line has No-error as category and severity"
            )
            continue
        if source_span and target_span:
            errors.append(f"line {number}, column source: a line marks one span, here both source and target")
            continue
        origin = cells[origin_at].strip() if origin_at is not None else ""
        outcome = cells[outcome_at].strip() if outcome_at is not None else ""
        if origin and origin not in ORIGINS:
            errors.append(f"line {number}, column origin: {origin!r} is not one of {', '.join(ORIGINS)}")
            continue
        if outcome and outcome not in OUTCOMES:
            errors.append(f"line {number}, column outcome: {outcome!r} is not one of {', '.join(OUTCOMES)}")
            continue
        span = None
        if no_error_cat:
            if source_span or target_span:
                errors.append(f"line {number}, column target: a No-error line marks no span")
                continue
        else:
            marked = target_span or source_span
            span = ErrorSpan(
                start=marked[0] if marked else None,
                end=marked[1] if marked else None,
                side=SOURCE if source_span else TARGET,
                category=value["category"],
                severity=value["severity"],
                origin=origin or "annotator",
                outcome=outcome,
            )
        rows.append(
            MqmRow(
                line=number,
                system=value["system"],
                doc=value["doc"],
                doc_id=value["doc_id"],
                seg_id=value["seg_id"],
                rater=value["rater"],
                source=source,
                target=target,
                category=value["category"],
                severity=value["severity"],
                span=span,
                extra=tuple(cells[i] for i in extra_at),
            )
        )
    if errors:
        raise TsvError(errors[:MAX_ERRORS])
    if not rows:
        raise TsvError(["line 2: the file has a header but no rating"])
    return MqmTable(header=header, rows=tuple(rows))


def _mark(text: str, span: ErrorSpan | None, side: str) -> str:
    if span is None or span.side != side or not span.marked:
        return text
    start, end = span.start or 0, span.end or 0
    return text[:start] + OPEN + text[start:end] + CLOSE + text[end:]


def write_mqm_tsv(table: MqmTable) -> str:
    """The file's text: the header, then one line per row with the span marked again."""
    names = [name.strip().lower() for name in table.header]
    out = ["\t".join(table.header)]
    for row in table.rows:
        values = {
            "system": row.system,
            "doc": row.doc,
            "doc_id": row.doc_id,
            "seg_id": row.seg_id,
            "rater": row.rater,
            "source": _mark(row.source, row.span, SOURCE),
            "target": _mark(row.target, row.span, TARGET),
            "category": row.category,
            "severity": row.severity,
        }
        extra = iter(row.extra)
        cells = [values[name] if name in values else next(extra, "") for name in names]
        for cell in cells:
            if "\t" in cell or "\n" in cell or "\r" in cell:
                raise ValueError(f"{row.system} {row.seg_id}: a cell holds a tab or a line break")
        out.append("\t".join(cells))
    return "\n".join(out) + "\n"


def segment_texts(table: MqmTable) -> dict[tuple[str, str], tuple[str, str]]:
    """(system, segment key) -> (source, target); ``TsvError`` when lines of one segment of one system
    disagree on the texts once the marks are removed."""
    texts: dict[tuple[str, str], tuple[str, str, int]] = {}
    errors: list[str] = []
    for row in table.rows:
        key = (row.system, segment_key(row.doc, row.doc_id, row.seg_id))
        first = texts.setdefault(key, (row.source, row.target, row.line))
        for column, mine, theirs in (("source", row.source, first[0]), ("target", row.target, first[1])):
            if mine != theirs and len(errors) < MAX_ERRORS:
                errors.append(
                    f"line {row.line}, column {column}: differs from line {first[2]} for the same segment of "
                    f"{row.system!r} (once the {OPEN} marks are removed)"
                )
    if errors:
        raise TsvError(errors)
    return {key: (source, target) for key, (source, target, _) in texts.items()}


def ratings_from_rows(table: MqmTable, weights: MqmWeights | None = None) -> list[SegmentRating]:
    """One rating per (system, segment, rater), its errors from the table's lines. With ``weights``, a
    severity without a weight is a ``TsvError`` naming the line."""
    errors: list[str] = []
    grouped: dict[tuple[str, str, str], list[MqmRow]] = defaultdict(list)
    for row in table.rows:
        if (
            weights is not None
            and row.span is not None
            and severity_key(row.severity) not in weights.severity
        ):
            if len(errors) < MAX_ERRORS:
                known = ", ".join(weights.severity)
                errors.append(
                    f"line {row.line}, column severity: {row.severity!r} has no weight "
                    f"(the {weights.name} weights know {known})"
                )
        grouped[(row.system, segment_key(row.doc, row.doc_id, row.seg_id), row.rater)].append(row)
    if errors:
        raise TsvError(errors)
    language_column = next((c for c in LANGUAGE_COLUMNS if c in table.extra), "")
    has_score = "score" in table.extra
    scores: dict[tuple[str, str, str], float | None] = {}
    for key, rows in grouped.items():
        scores[key] = None
        if not has_score:
            continue
        cells = {table.extra_value(row, "score").strip() for row in rows}
        if len(cells) > 1:
            errors.append(
                f"line {rows[-1].line}, column score: differs from line {rows[0].line} of the same rating"
            )
            continue
        cell = cells.pop()
        if cell == "":
            continue
        try:
            score = float(cell)
        except ValueError:
            score = float("nan")
        if not 0 <= score <= 100:
            errors.append(f"line {rows[0].line}, column score: {cell!r} is not a number from 0 to 100")
            continue
        scores[key] = score
        if len(errors) >= MAX_ERRORS:
            break
    if errors:
        raise TsvError(errors[:MAX_ERRORS])
    out = []
    for (system, segment, rater), rows in grouped.items():
        first = rows[0]
        out.append(
            SegmentRating(
                system=system,
                segment=segment,
                rater=rater,
                spans=tuple(row.span for row in rows if row.span is not None),
                language=table.extra_value(first, language_column) if language_column else "",
                register=table.extra_value(first, "register"),
                score=scores[(system, segment, rater)],
            )
        )
    return out


def rows_sorted(rows: Iterable[MqmRow]) -> list[MqmRow]:
    """Rows in a stable order: system, document, segment, rater, then span start."""
    return sorted(
        rows,
        key=lambda r: (
            r.system,
            r.doc,
            r.doc_id,
            r.seg_id,
            r.rater,
            -1 if r.span is None or r.span.start is None else r.span.start,
            r.line,
        ),
    )
