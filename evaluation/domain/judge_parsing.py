"""Turning a judge model's raw text into a verdict or a score, without ever guessing.

Judges answer in many shapes: clean JSON, JSON in a Markdown fence, JSON wrapped in prose, Python-style
dicts, Indonesian keys, MT-Bench style ``[[7]]``, or only a sentence ("Respons 2 lebih baik"). The parser
tries, in order, and stops at the first step that finds a score field or a keyword:

1. drop reasoning sections (``<think>...</think>``, an orphan ``</think>`` whose opening tag was in the
   prompt, an unterminated ``<think>`` that ran out of tokens);
2. fenced code blocks (```` ```json ```` or bare ```` ``` ````);
3. the whole text as JSON;
4. the balanced ``{...}`` objects in the text, left to right;
5. keyword rules ("Response 1 is better", "Respons 2 lebih baik", "[[7]]", "Rating: [[7]]", "Score: 7/10").

Graded judges may give a decimal score within the range: ``[[7.5]]``, ``Rating: 7.5``, ``{"score": 7.5}``,
and with the Indonesian decimal comma ``Skor: 7,5``. A whole score reads as an ``int``, any other as a
``float``.

A step that finds a score field is decisive: if that score is out of range, or two candidates of that step
disagree, the result is an error and later steps are not consulted, so a malformed score never turns into
a number read from the explanation. A text that names both responses as the better one is an error.

Pairwise judges come in two families (see ``judge_templates``): without a tie (IndoPref: "Response 1" /
"Respon 1" / "Respons 1" / "1", or a letter "A" / "[[B]]" naming the shown position) and with a tie
(MT-bench: "A" / "B" / "tie", in Indonesian "seri"; "[[C]]" also reads as a tie). ``allow_tie`` says which
family asked: for a judge that was told not to give a tie, "tie" is a parse error (status kept, raw text
kept), never a verdict. Parsing never raises; the raw text is kept on every result.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from accounts.domain.echo import clipped
from evaluation.domain.judge_templates import (
    FACTUAL,
    PAIRWISE,
    RESPONSE_1,
    RESPONSE_2,
    SCORE_RANGES,
    SINGLE_GRADE,
    TIE,
)

OK = "ok"
ERROR = "error"

SCORE_KEYS = (
    "score",
    "skor",
    "nilai",
    "verdict",
    "putusan",
    "keputusan",
    "rating",
    "penilaian",
    "grade",
    "winner",
    "pemenang",
)
EXPLANATION_KEYS = ("explanation", "penjelasan", "alasan", "reason", "reasoning", "rationale")

# Bounds on the balanced-object scan, so a degenerate output (a model looping on "{") costs milliseconds:
# at most this many opening braces are tried, each for an object of at most this many characters.
_MAX_OBJECT_STARTS = 50
_MAX_OBJECT_CHARS = 20_000


@dataclass(frozen=True)
class ParseResult:
    """Outcome of parsing one judge output.

    ``value`` is ``"Response 1"``/``"Response 2"`` (or ``"tie"`` when ties are allowed) for pairwise judges
    and a number for graded ones (an ``int`` when whole, else a ``float`` such as 7.5), or ``None`` on error. ``reason`` names the step that matched (``json_fenced``, ``json_whole``,
    ``json_object``, ``keyword``) or says why parsing failed.
    """

    status: Literal["ok", "error"]
    value: str | int | float | None
    reason: str
    raw: str
    explanation: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK


# --------------------------------------------------------------------------------------------------
# Reasoning sections

_REASONING_TAGS = r"(?:think|thinking|reasoning)"
_CLOSED_BLOCK = re.compile(rf"<{_REASONING_TAGS}>.*?</{_REASONING_TAGS}>", re.IGNORECASE | re.DOTALL)
_CLOSE_TAG = re.compile(rf"</{_REASONING_TAGS}>", re.IGNORECASE)
_OPEN_TAG = re.compile(rf"<{_REASONING_TAGS}>", re.IGNORECASE)


def _strip_reasoning(text: str) -> tuple[str, bool]:
    """The text without reasoning sections, and whether a reasoning section never ended."""
    text = _CLOSED_BLOCK.sub("", text)
    closes = list(_CLOSE_TAG.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opening = _OPEN_TAG.search(text)
    if opening:
        return text[: opening.start()], True
    return text, False


def strip_reasoning(text: str) -> str:
    """Remove reasoning sections; an unterminated one is cut from its opening tag to the end."""
    return _strip_reasoning(text)[0]


# --------------------------------------------------------------------------------------------------
# JSON candidates

_FENCE = re.compile(r"```[ \t]*(?:json5?|javascript|js|python)?[ \t]*\n?(.*?)```", re.IGNORECASE | re.DOTALL)


def _load_object(text: str) -> dict[str, Any] | None:
    """``text`` as a dict: JSON first (control characters allowed), then a Python literal dict."""
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        loaded = json.loads(text, strict=False)
    except (ValueError, RecursionError):
        try:
            loaded = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    return loaded if isinstance(loaded, dict) else None


def _balanced_objects(text: str) -> list[str]:
    """Top-level ``{...}`` spans of ``text``, honouring quoted strings and escapes."""
    spans: list[str] = []
    start = text.find("{")
    tries = 0
    while start != -1 and tries < _MAX_OBJECT_STARTS:
        tries += 1
        end = _matching_brace(text, start)
        if end is None:
            start = text.find("{", start + 1)
            continue
        spans.append(text[start : end + 1])
        start = text.find("{", end + 1)
    return spans


def _matching_brace(text: str, start: int) -> int | None:
    depth = 0
    quote: str | None = None
    escaped = False
    for index in range(start, min(len(text), start + _MAX_OBJECT_CHARS)):
        char = text[index]
        if quote is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
        elif char in "\"'":
            # An apostrophe in prose between keys would open a bogus string; only treat ' as a quote
            # where a Python-style dict could have one (after {, :, , or whitespace).
            previous = text[index - 1] if index > start else "{"
            if char == '"' or previous in "{:,[ \t\n":
                quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def _fenced_objects(text: str) -> list[dict[str, Any]]:
    objects = []
    for block in _FENCE.findall(text):
        loaded = _load_object(block)
        if loaded is None:
            loaded = next((obj for span in _balanced_objects(block) if (obj := _load_object(span))), None)
        if loaded is not None:
            objects.append(loaded)
    return objects


def _whole_object(text: str) -> list[dict[str, Any]]:
    loaded = _load_object(text)
    return [loaded] if loaded is not None else []


def _embedded_objects(text: str) -> list[dict[str, Any]]:
    return [obj for span in _balanced_objects(text) if (obj := _load_object(span)) is not None]


# --------------------------------------------------------------------------------------------------
# Reading values

_Interpreted = tuple[str | int | float | None, str | None]  # (value, error reason); exactly one is None

_RESPONSE_WORD = r"(?:response|respons|respon|jawaban|tanggapan|answer|assistant|asisten)"
# A response is named by its number (IndoPref's family: "Response 1") or by its shown letter (the with-tie
# family: "Response A", "Respons B"); the letter is upper case only, so "answer a question" names nothing.
_RESPONSE = rf"{_RESPONSE_WORD}\s*#?\s*([12]|(?-i:[AB]))"
_EXACT_RESPONSE = re.compile(rf"^\W*(?:the\s+)?{_RESPONSE}\W*$", re.IGNORECASE)
_EXACT_NUMBER = re.compile(r"^\W*([12])\W*$")
_EXACT_LETTER = re.compile(r"^\W*([AB])\W*$")
_MENTION = re.compile(rf"\b{_RESPONSE}\b", re.IGNORECASE)
_TIE_WORDS = re.compile(
    r"^\W*(?:tie|draw|equal|both|neither|none|seri|sama|imbang|keduanya|tidak\s+ada)\b", re.IGNORECASE
)
_TIE_BRACKET = re.compile(r"\[\[\s*(?:C|tie|seri|imbang)\s*\]\]", re.IGNORECASE)
_TIE_PHRASES = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\b(?:final\s+)?(?:verdict|decision|keputusan|putusan|hasil|skor|score)(?:\s+akhir)?\s*"
        r"(?:is|adalah|:|=)\s*(?:a\s+)?[*\"'\[]*\s*(?:tie|seri|imbang|draw)\b",
        r"\b(?:it\s*(?:'|’)?s|it\s+is)\s+a\s+(?:tie|draw)\b",
        r"\bhasilnya\s+(?:adalah\s+)?(?:seri|imbang)\b",
        # "Kedua respons sama baik(nya)", "kedua jawaban setara", "both responses are equally good".
        r"\bkedua(?:nya)?\s+(?:(?:respons|respon|jawaban|tanggapan)\s+)?(?:sama\s+(?:baik|bagus|buruk)|setara|imbang)",
        r"\bboth\s+(?:responses\s+|answers\s+)?(?:are\s+)?(?:equally\s+(?:good|bad|strong|weak)|tied)\b",
    )
)


def _position_name(number: str) -> str:
    return RESPONSE_1 if number in ("1", "A", "a") else RESPONSE_2


def _tie(allow_tie: bool, value: object) -> _Interpreted:
    if allow_tie:
        return TIE, None
    return None, f"verdict {value!r} is a tie, which this judge was asked not to give"


def _interpret_pairwise(value: object, allow_tie: bool = False) -> _Interpreted:
    if isinstance(value, bool) or value is None:
        return None, f"verdict {value!r} is not a response"
    if isinstance(value, int | float):
        if value in (1, 2):
            return _position_name(str(int(value))), None
        return None, f"verdict {value!r} is not 1 or 2"
    if not isinstance(value, str):
        return None, f"verdict of type {type(value).__name__} is not a response"
    for pattern in (_EXACT_RESPONSE, _EXACT_NUMBER, _EXACT_LETTER):
        match = pattern.match(value)
        if match:
            return _position_name(match.group(1)), None
    if _TIE_WORDS.match(value) or _TIE_BRACKET.fullmatch(value.strip()):
        return _tie(allow_tie, value)
    found = _pairwise_keywords(value, allow_tie)
    if found is not None:
        return found
    named = {match.group(1) for match in _MENTION.finditer(value)}
    if len(named) == 1:
        return _position_name(named.pop()), None
    if len(named) == 2:
        return None, f"verdict {value!r} names both responses"
    return None, f"verdict {value!r} names no response"


_NUMBER = r"(-?\d+(?:[.,]\d+)?)(?![.,]?\d)"  # the lookahead stops backtracking to a shorter number
_SCORE_STRING = re.compile(rf"^\W*?{_NUMBER}\s*\]*\s*(?:(?:/|out\s+of|dari)\s*(\d+))?\W*$", re.IGNORECASE)


def _as_number(text: str) -> float:
    """A score as written: ``7``, ``7.5`` or, with the Indonesian decimal comma, ``7,5``."""
    return float(text.replace(",", "."))


def plain_score(number: float | None) -> int | float | None:
    """A score as an ``int`` when it is whole (7.0 -> 7) and as a ``float`` otherwise (7.5); ``None`` stays."""
    if number is None:
        return None
    return int(number) if float(number).is_integer() else float(number)


def _check_range(number: float, low: int, high: int) -> _Interpreted:
    if not low <= number <= high:
        return None, f"score {clipped(repr(plain_score(number)))} is outside {low}-{high}"
    return plain_score(number), None


def _check_scale(denominator: str | None, high: int) -> str | None:
    if denominator is not None and int(denominator) != high:
        return f"score is given out of {denominator}, expected out of {high}"
    return None


def _interpret_grade(value: object, low: int, high: int) -> _Interpreted:
    if isinstance(value, bool) or value is None:
        return None, f"score {value!r} is not a number"
    if isinstance(value, int | float):
        if value != value or value in (float("inf"), float("-inf")):
            return None, f"score {value!r} is not a number"
        if isinstance(value, int) and not low <= value <= high:
            return None, f"score {clipped(repr(value))} is outside {low}-{high}"  # may be too big for a float
        return _check_range(float(value), low, high)
    if isinstance(value, str):
        match = _SCORE_STRING.match(value)
        if match:
            scale_error = _check_scale(match.group(2), high)
            if scale_error:
                return None, scale_error
            return _check_range(_as_number(match.group(1)), low, high)
    return None, f"score {value!r} is not a number"


def _explanation_of(obj: dict[str, Any]) -> str | None:
    lowered = {str(key).strip().lower(): value for key, value in obj.items()}
    for key in EXPLANATION_KEYS:
        if isinstance(lowered.get(key), str):
            return lowered[key]
    return None


def _score_field(obj: dict[str, Any]) -> tuple[bool, object]:
    lowered = {str(key).strip().lower(): value for key, value in obj.items()}
    for key in SCORE_KEYS:
        if key in lowered:
            return True, lowered[key]
    return False, None


# --------------------------------------------------------------------------------------------------
# Keyword rules

_PAIRWISE_BRACKET = re.compile(rf"\[\[\s*(?:{_RESPONSE_WORD}\s*)?([12AB])\s*\]\]", re.IGNORECASE)
_DEGREE = r"(?:(?:clearly|much|slightly|somewhat|significantly|far|overall|definitely)\s+)?"
_PAIRWISE_PHRASES = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"\b{_RESPONSE}\s+(?:is|was|seems|appears)\s+(?:to\s+be\s+)?{_DEGREE}(?:the\s+)?"
        r"(?:better|superior|preferred|preferable|stronger|best|winner)\b",
        rf"\b{_RESPONSE}\s+wins\b",
        rf"\b{_RESPONSE}\s+(?:(?:jauh|sedikit|jelas|secara\s+keseluruhan)\s+)?(?:adalah\s+)?(?:yang\s+)?"
        r"(?:lebih\s+(?:baik|bagus|unggul)|terbaik|unggul|menang)\b",
        r"\b(?:better|best|preferred|stronger|superior|winning)\s+(?:response|answer|one)\s+"
        rf"(?:is|would\s+be|:)\s*(?:the\s+)?[*\"'\[]*{_RESPONSE}",
        r"\b(?:respons|respon|jawaban|tanggapan)\s+(?:yang\s+)?(?:lebih\s+(?:baik|bagus|unggul)|terbaik|unggul)\s*"
        rf"(?:adalah|ialah|yaitu|:)?\s*[*\"'\[]*{_RESPONSE}",
        r"\b(?:final\s+)?(?:verdict|winner|decision|choice|keputusan|putusan|pemenang|pilihan|skor|score)"
        rf"(?:\s+akhir)?\s*(?:is|adalah|:|=)\s*[*\"'\[]*\s*{_RESPONSE}",
        rf"\bI\s+(?:would\s+)?(?:prefer|choose|pick|select)\s+{_RESPONSE}",
        rf"\b(?:saya\s+)?(?:lebih\s+)?(?:memilih|pilih)\s+{_RESPONSE}",
        # A verdict naming the shown letter alone: "Verdict: B", "Pilihan: A", "Jawaban akhir: **B**".
        r"\b(?:final\s+)?(?:verdict|winner|decision|choice|keputusan|putusan|pemenang|pilihan|jawaban\s+akhir)"
        r"(?:\s+(?:akhir|saya))?\s*(?:is|adalah|:|=)\s*[*\"'\[(]*\s*(?-i:([AB]))\b",
        # "A lebih baik", "B is better", "B lebih baik daripada A": the letter first, then the comparison.
        r"^\W*(?-i:([AB]))\s+(?:(?:jauh|sedikit|jelas)\s+)?(?:is\s+)?"
        r"(?:lebih\s+(?:baik|bagus|unggul)|better|wins|menang|unggul)\b",
    )
)


def _pairwise_keywords(text: str, allow_tie: bool = False) -> _Interpreted | None:
    """A verdict from keyword rules, an error if they name both responses (or a response and a tie), None
    if they find nothing."""
    bracketed = {_position_name(m.group(1)) for m in _PAIRWISE_BRACKET.finditer(text)}
    if _TIE_BRACKET.search(text):
        bracketed.add(TIE)
    named = bracketed or {_position_name(m.group(1)) for p in _PAIRWISE_PHRASES for m in p.finditer(text)}
    if not named and any(p.search(text) for p in _TIE_PHRASES):
        named = {TIE}
    if named == {RESPONSE_1, RESPONSE_2}:
        return None, "both responses are named as the better one"
    if len(named) > 1:
        return None, "a response and a tie are both named as the verdict"
    if named == {TIE} or (not named and _TIE_WORDS.match(text)):
        if allow_tie:
            return TIE, None
        return None, "the judge gave a tie, which this judge was asked not to give"
    if named:
        return named.pop(), None
    # The whole reply is a response's name or letter alone ("Respons B", "A").
    for pattern in (_EXACT_RESPONSE, _EXACT_LETTER):
        match = pattern.match(text)
        if match:
            return _position_name(match.group(1)), None
    return None


_GRADE_BRACKET = re.compile(rf"\[\[\s*{_NUMBER}\s*(?:/\s*(\d+))?\s*\]\]")
_GRADE_LABELLED = re.compile(
    r"\b(?:score|rating|grade|skor|nilai|penilaian)(?:\s+(?:akhir|keseluruhan|final))?\s*"
    r"(?:(?:is|adalah|of|sebesar)\s*)?[:=]?\s*[*\[(\"']*\s*"
    rf"{_NUMBER}(?!\s*(?:-|–|to|sampai|hingga)\s*\d)\s*(?:(?:/|out\s+of|dari)\s*(\d+))?",
    re.IGNORECASE,
)
_GRADE_FRACTION = re.compile(rf"(?<![\d.,/]){_NUMBER}\s*/\s*(\d+)(?![\d/])")


def _grade_keywords(text: str, low: int, high: int) -> _Interpreted | None:
    for pattern in (_GRADE_BRACKET, _GRADE_LABELLED, _GRADE_FRACTION):
        matches = list(pattern.finditer(text))
        if pattern is _GRADE_FRACTION:
            matches = [m for m in matches if int(m.group(2)) == high]
        if not matches:
            continue
        outcomes = []
        for match in matches:
            scale_error = _check_scale(match.group(2), high)
            outcomes.append(
                (None, scale_error) if scale_error else _check_range(_as_number(match.group(1)), low, high)
            )
        return _decide(outcomes, what="scores")
    return None


# --------------------------------------------------------------------------------------------------
# The chain


def _decide(outcomes: list[_Interpreted], what: str) -> _Interpreted:
    values = {value for value, _ in outcomes if value is not None}
    errors = [error for _, error in outcomes if error is not None]
    if len(values) == 1 and not errors:
        return values.pop(), None
    if len(values) > 1 or (values and errors):
        return None, f"conflicting {what}: " + ", ".join(
            repr(value) if value is not None else str(error) for value, error in outcomes
        )
    return None, errors[0]


_STAGES: tuple[tuple[str, Callable[[str], list[dict[str, Any]]]], ...] = (
    ("json_fenced", _fenced_objects),
    ("json_whole", _whole_object),
    ("json_object", _embedded_objects),
)


# The parse error of a reply that the model stopped at its token limit: the verdict was likely never written.
TRUNCATED = "truncated"


def _parse(
    raw: object,
    interpret: Callable[[object], _Interpreted],
    keywords: Callable[[str], Any],
    truncated: bool = False,
) -> ParseResult:
    parsed = _parse_text(raw, interpret, keywords)
    if truncated and not parsed.ok:
        return ParseResult(ERROR, None, TRUNCATED, parsed.raw)
    return parsed


def _parse_text(
    raw: object, interpret: Callable[[object], _Interpreted], keywords: Callable[[str], Any]
) -> ParseResult:
    if not isinstance(raw, str):
        return ParseResult(ERROR, None, "no output text", "" if raw is None else repr(raw))
    text, unterminated = _strip_reasoning(raw)
    if not text.strip():
        reason = "reasoning section never ended" if unterminated else "empty output"
        return ParseResult(ERROR, None, reason, raw)
    for stage, find in _STAGES:
        scored = [(obj, field) for obj in find(text) for has, field in [_score_field(obj)] if has]
        if not scored:
            continue
        value, error = _decide([interpret(field) for _, field in scored], what="values")
        if error is not None:
            return ParseResult(ERROR, None, f"{stage}: {error}", raw)
        explanation = next((e for obj, _ in scored if (e := _explanation_of(obj)) is not None), None)
        return ParseResult(OK, value, stage, raw, explanation)
    found = keywords(text)
    if found is None:
        return ParseResult(ERROR, None, "no verdict or score found", raw)
    value, error = found
    if error is not None:
        return ParseResult(ERROR, None, f"keyword: {error}", raw)
    return ParseResult(OK, value, "keyword", raw)


def parse_pairwise(raw: object, *, allow_tie: bool = False, truncated: bool = False) -> ParseResult:
    """Parse a pairwise judge's output into ``"Response 1"`` or ``"Response 2"`` (positions as shown), or
    ``"tie"`` when ``allow_tie`` (the with-tie template family asked for one). ``truncated``: the reply was
    cut off at the token limit; a parse error then has the reason ``"truncated"``."""
    return _parse(
        raw,
        lambda value: _interpret_pairwise(value, allow_tie),
        lambda text: _pairwise_keywords(text, allow_tie),
        truncated,
    )


def parse_grade(raw: object, low: int, high: int, *, truncated: bool = False) -> ParseResult:
    """Parse a graded judge's output into a score in ``low..high``, whole or decimal (``7``, ``7.5``,
    ``7,5``), an ``int`` when whole (``truncated`` as in :func:`parse_pairwise`)."""
    if low > high:
        raise ValueError(f"empty score range {low}-{high}")
    return _parse(
        raw,
        lambda value: _interpret_grade(value, low, high),
        lambda text: _grade_keywords(text, low, high),
        truncated,
    )


def parse_judge_output(
    raw: object, kind: str, *, allow_tie: bool = False, truncated: bool = False
) -> ParseResult:
    """Parse the output of a judge of ``kind`` (``pairwise``, ``single_grade`` or ``factual``);
    ``allow_tie`` applies to pairwise judges of the with-tie family; ``truncated``: the reply was cut off at
    the token limit, so a parse error says so."""
    if kind == PAIRWISE:
        return parse_pairwise(raw, allow_tie=allow_tie, truncated=truncated)
    if kind in (SINGLE_GRADE, FACTUAL):
        low, high = SCORE_RANGES[kind]
        return parse_grade(raw, low, high, truncated=truncated)
    raise ValueError(f"unknown judge kind {kind!r}")


def normalised_factual_score(
    score: int | float | None, scale_max: int = SCORE_RANGES[FACTUAL][1]
) -> float | None:
    """A 1-5 factual-correctness score divided by 5 (``None`` stays ``None``: an error is not a score)."""
    return None if score is None else score / scale_max


# --------------------------------------------------------------------------------------------------
# Pairwise judges run in both orders

VERDICT_A = "A"
VERDICT_B = "B"
VERDICT_TIE = "tie"
VERDICT_ERROR = "error"

CONSISTENT = "consistent"
BIASED_FIRST = "biased_first"
BIASED_SECOND = "biased_second"
CONSISTENCY_ERROR = "error"


@dataclass(frozen=True)
class CombinedVerdict:
    """Canonical verdict over two orders, and what the pair of verdicts says about position bias."""

    verdict: Literal["A", "B", "tie", "error"]
    consistency: Literal["consistent", "biased_first", "biased_second", "error"]
    reason: str


def _shown_position(verdict: ParseResult | str | None) -> str | None:
    if isinstance(verdict, ParseResult):
        verdict = verdict.value if verdict.ok else None
    return verdict if verdict in (RESPONSE_1, RESPONSE_2, TIE) else None


def canonical_verdict(shown: str, order: Literal["ab", "ba"]) -> str:
    """``"A"``, ``"B"`` or ``"tie"`` for a shown verdict in an order (``ab``: A shown as Response 1)."""
    if shown == TIE:
        return VERDICT_TIE
    first_shown_is_a = order == "ab"
    return VERDICT_A if (shown == RESPONSE_1) == first_shown_is_a else VERDICT_B


# Votes for the first shown position: +1 for it, -1 for the second, 0 for a tie (the sum rule of
# analytics.domain.judge_agreement.position_outcome, so both count bias the same way).
_FIRST_SHOWN = {RESPONSE_1: 1, RESPONSE_2: -1, TIE: 0}


def combine_two_orders(
    verdict_order1: ParseResult | str | None,
    verdict_order2: ParseResult | str | None,
    *,
    on_one_error: Literal["use_other", "error"] = "use_other",
) -> CombinedVerdict:
    """Combine a pairwise judge's verdicts from both presentation orders.

    Order 1 shows canonical A as "Response 1" and B as "Response 2"; order 2 shows them swapped. Each
    verdict is a :class:`ParseResult`, a ``"Response 1"``/``"Response 2"``/``"tie"`` string, or ``None`` for
    a failed parse. The rule:

    - both give the same canonical verdict (A/A, B/B, tie/tie): that verdict, ``consistent``;
    - they disagree (the same shown position twice, or a response once and a tie once): ``tie`` (the judge
      could not tell the responses apart beyond their position), ``biased_first`` when the first shown
      position got more votes over the two orders (+1 for it, -1 for the second, 0 for a tie), else
      ``biased_second``;
    - one order failed to parse: by default (``on_one_error="use_other"``) the other order's verdict, since
      it is an ordinary single-order verdict, with consistency ``error`` because position bias cannot be
      checked; with ``on_one_error="error"`` the combined verdict is ``error``;
    - both failed: ``error`` / ``error``.
    """
    if on_one_error not in ("use_other", "error"):
        raise ValueError(f"on_one_error must be 'use_other' or 'error', got {on_one_error!r}")
    first = _shown_position(verdict_order1)
    second = _shown_position(verdict_order2)
    canonical_first = None if first is None else canonical_verdict(first, "ab")
    canonical_second = None if second is None else canonical_verdict(second, "ba")

    if canonical_first is None and canonical_second is None:
        return CombinedVerdict(VERDICT_ERROR, CONSISTENCY_ERROR, "both orders failed to parse")
    if canonical_first is None or canonical_second is None:
        failed = "order 1" if canonical_first is None else "order 2"
        if on_one_error == "error":
            return CombinedVerdict(VERDICT_ERROR, CONSISTENCY_ERROR, f"{failed} failed to parse")
        kept = canonical_first or canonical_second
        return CombinedVerdict(
            kept, CONSISTENCY_ERROR, f"{failed} failed to parse; verdict from the other order"
        )
    if canonical_first == canonical_second:
        return CombinedVerdict(canonical_first, CONSISTENT, "both orders agree")
    favours_first = _FIRST_SHOWN[first] + _FIRST_SHOWN[second] > 0
    position = "first" if favours_first else "second"
    if first == second:
        reason = f"the {position} shown response won in both orders"
    else:
        reason = f"one order gave a tie, the other the {position} shown response"
    return CombinedVerdict(VERDICT_TIE, BIASED_FIRST if favours_first else BIASED_SECOND, reason)


# --------------------------------------------------------------------------------------------------
# Error spans (``evaluation.domain.span_judge``): {"errors": [{"text", "category", "severity"}]}

_ERROR_LIST_KEYS = ("errors", "kesalahan", "spans", "issues")
_SPAN_SEVERITY_WORDS = {
    "minor": "minor",
    "ringan": "minor",
    "major": "major",
    "berat": "major",
    "critical": "major",
}


@dataclass(frozen=True)
class SpanFound:
    """An error the judge named, placed in the translation: ``[start, end)`` characters."""

    start: int
    end: int
    category: str
    severity: str
    text: str


@dataclass(frozen=True)
class SpanParseResult:
    """``status`` ok or error; ``reason`` the stage that read the list, or why nothing could be read;
    ``dropped`` how many listed errors were left out (words not in the translation, no severity)."""

    status: str
    spans: tuple[SpanFound, ...]
    reason: str
    raw: str
    dropped: int = 0

    @property
    def ok(self) -> bool:
        return self.status == OK


def _span_category(value: object, categories: Mapping[str, str], fallback: str) -> str:
    """A category code from what the judge wrote: a code, or a name, compared without case and spaces."""
    if not isinstance(value, str):
        return fallback
    key = re.sub(r"[\s_·]+", "-", value.strip().lower()).strip("-!")
    for code, name in categories.items():
        names = {code, re.sub(r"[\s_·]+", "-", name.strip().lower())}
        if key in names or key.replace("-/-", "/") in names:
            return code
    for code in categories:
        if key and (code.endswith("/" + key) or code == key.split("/")[-1]):
            return code
    return fallback


def parse_spans(
    raw: object, *, target: str, categories: Mapping[str, str], fallback_category: str = "other"
) -> SpanParseResult:
    """Read an error-span judge's reply: the first JSON object (fenced, whole, then embedded) that holds a
    list of errors. Each error's ``text`` is looked up in ``target`` (exactly, then ignoring case; the
    first place not already taken); errors whose words are not there, or without a known severity, are
    dropped and counted. An empty list is a valid "no error" answer. ``categories`` maps codes to names;
    an unknown category becomes ``fallback_category``."""
    if not isinstance(raw, str):
        return SpanParseResult(ERROR, (), "no output text", "" if raw is None else repr(raw))
    text, unterminated = _strip_reasoning(raw)
    if not text.strip():
        return SpanParseResult(
            ERROR, (), "reasoning section never ended" if unterminated else "empty output", raw
        )
    for stage, find in _STAGES:
        for obj in find(text):
            items = next((obj[k] for k in _ERROR_LIST_KEYS if isinstance(obj.get(k), list)), None)
            if items is None:
                continue
            found: list[SpanFound] = []
            taken: set[tuple[int, int]] = set()
            dropped = 0
            lowered = target.lower()
            for item in items:
                words = item.get("text") if isinstance(item, dict) else None
                severity = (
                    _SPAN_SEVERITY_WORDS.get(str(item.get("severity", "")).strip().lower())
                    if isinstance(item, dict)
                    else None
                )
                if not isinstance(words, str) or not words.strip() or severity is None:
                    dropped += 1
                    continue
                words = words.strip()
                place = None
                for haystack, needle in ((target, words), (lowered, words.lower())):
                    start = haystack.find(needle)
                    while start != -1 and (start, start + len(needle)) in taken:
                        start = haystack.find(needle, start + 1)
                    if start != -1:
                        place = (start, start + len(needle))
                        break
                if place is None:
                    dropped += 1
                    continue
                taken.add(place)
                category = _span_category(item.get("category"), categories, fallback_category)
                found.append(SpanFound(place[0], place[1], category, severity, target[place[0] : place[1]]))
            return SpanParseResult(OK, tuple(found), stage, raw, dropped)
    return SpanParseResult(ERROR, (), "no list of errors found", raw)
