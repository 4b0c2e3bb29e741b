"""Error-span answers (MQM and ESA) as plain values: reading a submitted answer, what became of each
suggested span, and spans suggested from a unit's automatic flags.

A span is ``start``/``end`` character offsets (end exclusive) in the stored text of its side: the target
(the translation) or, for an omission, the source. The category tree and severities are passed in, so
a project's own tree is checked the same way as the default one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MQM = "mqm"
ESA = "esa"
TARGET = "target"
SOURCE = "source"
SIDES = (TARGET, SOURCE)

ACCEPTED = "accepted"
EDITED = "edited"
REMOVED = "removed"

MAX_SPANS = 200
MAX_COMMENT = 500


@dataclass(frozen=True)
class MarkedSpan:
    """A span as the annotator left it: where, which error, how bad, and the suggestion it came from."""

    side: str
    start: int
    end: int
    category: str
    severity: str
    suggestion: int | None = None
    comment: str = ""


@dataclass(frozen=True)
class SuggestedSpan:
    """A span offered before the annotator starts (``id`` is the stored suggestion's, None before storing)."""

    side: str
    start: int
    end: int
    category: str
    severity: str
    note: str = ""
    id: int | None = None


@dataclass(frozen=True)
class SpanAnswer:
    """A checked answer: the spans (empty with ``no_error``), ESA's 0-100 score (None under MQM), and for
    every suggestion of the task what the annotator did with it (accepted / edited / removed)."""

    protocol: str
    no_error: bool
    spans: tuple[MarkedSpan, ...]
    score: int | None
    outcomes: Mapping[int, str] = field(default_factory=dict)


class SpanAnswerInvalid(ValueError):
    """The answer cannot be stored; ``errors`` maps a field (``spans.2.category``) to its messages."""

    def __init__(self, errors: Mapping[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = dict(errors)


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
        return int(value)
    return None


def _checked_span(
    raw: object,
    where: str,
    *,
    texts: Mapping[str, str],
    categories: frozenset[str],
    severities: Sequence[str],
    protocol: str,
    suggestion_ids: frozenset[int],
    errors: dict[str, list[str]],
) -> MarkedSpan | None:
    if not isinstance(raw, Mapping):
        errors[where] = ["A span is an object with side, start, end, category and severity."]
        return None
    side = raw.get("side", TARGET) or TARGET
    if side not in SIDES:
        errors[f"{where}.side"] = [f"The side is 'target' or 'source', not {str(side)[:40]!r}."]
        return None
    start, end = _int(raw.get("start")), _int(raw.get("end"))
    length = len(texts[side])
    if start is None or end is None or not 0 <= start < end <= length:
        errors[f"{where}.start"] = [
            f"The span must lie inside the {'source' if side == SOURCE else 'translation'} "
            f"(0 to {length} characters, start before end); got {raw.get('start')!r} to {raw.get('end')!r}."
        ]
        return None
    severity = raw.get("severity", "")
    if severity not in severities:
        errors[f"{where}.severity"] = [
            f"Severity is one of {', '.join(severities)}; got {str(severity)[:40]!r}."
        ]
        return None
    category = raw.get("category", "") or ""
    if protocol == MQM and category not in categories:
        errors[f"{where}.category"] = [
            f"Choose an error category; {str(category)[:80]!r} is not one of this project's."
        ]
        return None
    if protocol == ESA and category and category not in categories:
        errors[f"{where}.category"] = [
            f"{str(category)[:80]!r} is not one of this project's error categories."
        ]
        return None
    suggestion = raw.get("suggestion")
    suggestion_id = _int(suggestion) if suggestion not in (None, "") else None
    if suggestion not in (None, "") and (suggestion_id is None or suggestion_id not in suggestion_ids):
        errors[f"{where}.suggestion"] = ["The span refers to a suggestion this task does not have."]
        return None
    comment = raw.get("comment", "") or ""
    if not isinstance(comment, str) or len(comment) > MAX_COMMENT:
        errors[f"{where}.comment"] = [f"A span's note is text of at most {MAX_COMMENT} characters."]
        return None
    return MarkedSpan(side, start, end, str(category), str(severity), suggestion_id, comment.strip())


def suggestion_outcomes(spans: Iterable[MarkedSpan], suggestions: Iterable[SuggestedSpan]) -> dict[int, str]:
    """What became of each suggestion: accepted (a span kept it as it was), edited (a span came from it
    with another place, category or severity), removed (no span came from it)."""
    kept = {s.suggestion: s for s in spans if s.suggestion is not None}
    outcomes = {}
    for suggestion in suggestions:
        if suggestion.id is None:
            continue
        span = kept.get(suggestion.id)
        if span is None:
            outcomes[suggestion.id] = REMOVED
        elif (span.side, span.start, span.end, span.category, span.severity) == (
            suggestion.side,
            suggestion.start,
            suggestion.end,
            suggestion.category,
            suggestion.severity,
        ):
            outcomes[suggestion.id] = ACCEPTED
        else:
            outcomes[suggestion.id] = EDITED
    return outcomes


def read_span_answer(
    payload: Mapping[str, Any],
    *,
    protocol: str,
    target: str,
    source: str,
    categories: Iterable[str],
    severities: Sequence[str],
    suggestions: Sequence[SuggestedSpan] = (),
) -> SpanAnswer:
    """Check an answer ``{"spans": [...], "no_error": bool, "score": 0-100 (ESA)}``.

    "No error" is an explicit answer: an answer with neither spans nor ``no_error`` is refused, and so is
    one with both. Two spans of one suggestion, or the same span twice, are refused. Raises
    ``SpanAnswerInvalid`` with every problem found.
    """
    errors: dict[str, list[str]] = {}
    raw_spans = payload.get("spans", [])
    if raw_spans in (None, ""):
        raw_spans = []
    if not isinstance(raw_spans, list):
        raise SpanAnswerInvalid({"spans": ["Spans are a list."]})
    if len(raw_spans) > MAX_SPANS:
        raise SpanAnswerInvalid({"spans": [f"At most {MAX_SPANS} spans per segment."]})
    no_error = payload.get("no_error") in (True, "true", "on", "1", 1)
    texts = {TARGET: target, SOURCE: source}
    known = frozenset(categories)
    ids = frozenset(s.id for s in suggestions if s.id is not None)
    spans: list[MarkedSpan] = []
    for i, raw in enumerate(raw_spans):
        span = _checked_span(
            raw,
            f"spans.{i}",
            texts=texts,
            categories=known,
            severities=severities,
            protocol=protocol,
            suggestion_ids=ids,
            errors=errors,
        )
        if span is not None:
            spans.append(span)
    seen_places: set[tuple] = set()
    seen_suggestions: set[int] = set()
    for span in spans:
        place = (span.side, span.start, span.end, span.category)
        if place in seen_places:
            errors.setdefault("spans", []).append("The same span is marked twice with the same category.")
        seen_places.add(place)
        if span.suggestion is not None:
            if span.suggestion in seen_suggestions:
                errors.setdefault("spans", []).append("Two spans come from one suggestion.")
            seen_suggestions.add(span.suggestion)
    if no_error and raw_spans:
        errors["no_error"] = ["“No error” cannot go with marked spans: remove the spans or untick it."]
    if not no_error and not raw_spans:
        errors["no_error"] = ["Mark at least one error, or answer “No error”."]
    score = None
    if protocol == ESA:
        raw_score = payload.get("score")
        score = _int(raw_score)
        if score is None or not 0 <= score <= 100:
            errors["score"] = [f"Give the translation a score from 0 to 100; got {str(raw_score)[:20]!r}."]
    if errors:
        raise SpanAnswerInvalid(errors)
    ordered = tuple(sorted(spans, key=lambda s: (s.side != TARGET, s.start, s.end, s.category)))
    return SpanAnswer(protocol, no_error, ordered, score, suggestion_outcomes(ordered, suggestions))


# --- suggestions from the automatic flags ----------------------------------------------------------------


@dataclass(frozen=True)
class FlagCategories:
    """The categories of the project's tree that flags map to (codes of the tree in use)."""

    mistranslation: str
    addition: str
    untranslated: str
    register: str
    style: str
    non_translation: str


def _find_all(text: str, needle: str) -> list[tuple[int, int]]:
    """Places of ``needle`` in ``text`` as a whole token (not inside a longer word or number)."""
    if not needle:
        return []
    pattern = re.compile(r"(?<![\w.,])" + re.escape(needle) + r"(?![\w])", re.IGNORECASE)
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def spans_from_flags(
    *, target: str, flags: Sequence[Mapping[str, Any]], categories: FlagCategories, minor: str, major: str
) -> list[SuggestedSpan]:
    """Spans the stored flags of a unit point at in its translation (``flag_as_dict`` rows).

    A number only in the translation is a likely mistranslation; a "/" alternative, a style error; text in
    brackets the source lacks, an addition; register words of another register, a register error; a
    translation that is the source again, a non-translation of the whole text. Flags with no place in the
    text (length, back-translation) suggest nothing.
    """
    found: dict[tuple[int, int, str], SuggestedSpan] = {}

    def add(start: int, end: int, category: str, severity: str, note: str) -> None:
        key = (start, end, category)
        if key not in found and 0 <= start < end <= len(target):
            found[key] = SuggestedSpan(TARGET, start, end, category, severity, note[:300])

    for flag in flags:
        code = flag.get("code")
        details = flag.get("details") or {}
        if code == "number_mismatch":
            for number in details.get("extra_in_translation") or []:
                for start, end in _find_all(target, str(number)):
                    add(start, end, categories.mistranslation, major, code)
        elif code == "slash_alternative":
            for alternative in details.get("alternatives") or []:
                index = target.find(alternative)
                if index >= 0:
                    add(index, index + len(alternative), categories.style, minor, code)
        elif code == "bracket_addition":
            for match in re.finditer(r"\(([^()]*)\)|\[([^\[\]]*)\]", target):
                inner = match.group(1) if match.group(1) is not None else match.group(2)
                if inner in (details.get("in_source") or []):
                    continue
                add(match.start(), match.end(), categories.addition, minor, code)
        elif code == "register_mismatch":
            found_code = details.get("detected")
            markers = details.get("markers") or {}
            for register, words in markers.items():
                if found_code is not None and register != found_code:
                    continue
                for word in words or {}:
                    for start, end in _find_all(target, str(word)):
                        add(start, end, categories.register, minor, code)
        elif code == "untranslated" and target.strip():
            lead = len(target) - len(target.lstrip())
            add(lead, len(target.rstrip()), categories.non_translation, major, code)
    return sorted(found.values(), key=lambda s: (s.start, s.end, s.category))


def text_pieces(text: str, spans: Sequence[tuple[int, int, str]]) -> list[dict[str, Any]]:
    """``text`` cut at every span boundary, each piece with the numbers (1-based, in the order given) of
    the spans covering it and the worst severity among them, for showing marked spans in a page."""
    cuts = sorted({0, len(text), *(p for s, e, _ in spans for p in (s, e) if 0 <= p <= len(text))})
    pieces = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        covering = [i + 1 for i, (s, e, _) in enumerate(spans) if s <= a and b <= e]
        severities = {spans[n - 1][2] for n in covering}
        worst = "major" if "major" in severities else ("minor" if severities else "")
        pieces.append({"text": text[a:b], "start": a, "end": b, "spans": covering, "severity": worst})
    return pieces
