"""Attention checks of error-span projects (MQM, ESA): a known error put into a copy of a target, with the
exact span an annotator is credited for marking.

Three kinds, each deterministic under a seed and each refusing (``None``) a target that has no place for it:

- ``number_swap``: one digit of one number of the target becomes another digit (never a leading zero), so
  the number keeps its length; the credited span is the whole changed number.
- ``negation_drop``: one negation word (``NEGATIONS``: Indonesian ``tidak``, ``tak``, ``bukan``,
  ``belum``, ``jangan``; English ``not``, ``never``; Javanese ``ora``; Sundanese ``henteu``) is removed with
  the space after it (before it, at the end of a clause). Nothing is left where it stood, so the credited
  span is the word the negation bore on: the word now standing in its place, or, when punctuation or the
  end of the text follows, the word before it. A sentence-initial capital moves to the word that follows.
- ``untranslated``: one lower-case target word of three letters or more is replaced by a lower-case source
  word of three letters or more that the target does not contain (the one nearest the same relative
  position), as if it were left in the source language; the credited span is the inserted word.

The expected category and severity of each kind are in ``EXPECTED``; credit does not depend on them unless
the scoring asks for a category match (``error_spans.attention_scores``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from annotation.domain.blinding import HashStream, Id, derive_key

__all__ = [
    "EXPECTED",
    "KINDS",
    "NEGATIONS",
    "NEGATION_DROP",
    "NUMBER_SWAP",
    "UNTRANSLATED",
    "Injection",
    "checks_choose",
    "inject",
]

NUMBER_SWAP = "number_swap"
NEGATION_DROP = "negation_drop"
UNTRANSLATED = "untranslated"
KINDS = (NUMBER_SWAP, NEGATION_DROP, UNTRANSLATED)

# (category, severity) an annotator is expected to give, in the MQM core typology's codes.
EXPECTED = {
    NUMBER_SWAP: ("accuracy/mistranslation", "major"),
    NEGATION_DROP: ("accuracy/mistranslation", "major"),
    UNTRANSLATED: ("accuracy/untranslated", "major"),
}

NEGATIONS = ("tidak", "tak", "bukan", "belum", "jangan", "not", "never", "ora", "henteu")

_NUMBER = re.compile(r"[0-9]+")
_NEGATION = re.compile(r"\b(?:" + "|".join(NEGATIONS) + r")\b", re.IGNORECASE)
_WORD = re.compile(r"\w+")
_LETTERS = re.compile(r"\b[^\W\d_]{3,}\b")


@dataclass(frozen=True)
class Injection:
    """``text``: the target with the error in it; ``start``/``end``: the credited span of ``text`` (code
    points, end exclusive); ``original``: what stood in the target (the number, the negation, the
    replaced word); ``inserted``: what stands there now (empty for a dropped negation); ``note``: the
    change in words, for the manager."""

    kind: str
    text: str
    start: int
    end: int
    category: str
    severity: str
    original: str
    inserted: str
    note: str


def _injection(
    kind: str, text: str, start: int, end: int, original: str, inserted: str, note: str
) -> Injection:
    category, severity = EXPECTED[kind]
    return Injection(kind, text, start, end, category, severity, original, inserted, note)


def _number_swap(target: str, stream: HashStream) -> Injection | None:
    numbers = list(_NUMBER.finditer(target))
    if not numbers:
        return None
    found = numbers[stream.randbelow(len(numbers))]
    digits = found.group()
    position = stream.randbelow(len(digits))
    allowed = [
        d
        for d in "0123456789"
        if d != digits[position] and not (d == "0" and position == 0 and len(digits) > 1)
    ]
    new = digits[:position] + allowed[stream.randbelow(len(allowed))] + digits[position + 1 :]
    text = target[: found.start()] + new + target[found.end() :]
    note = f"{digits} -> {new} (digit {position + 1} of {len(digits)})"
    return _injection(NUMBER_SWAP, text, found.start(), found.end(), digits, new, note)


def _negation_drop(target: str, stream: HashStream) -> Injection | None:
    candidates = []
    for found in _NEGATION.finditer(target):
        start, end = found.span()
        after = len(target[end:]) - len(target[end:].lstrip())
        before = len(target[:start]) - len(target[:start].rstrip())
        if after and _WORD.match(target, end + after):  # a word follows: drop the negation and its space
            cut = (start, end + after)
        elif before and _WORD.search(target[:start]):  # end of a clause: drop the space before it
            cut = (start - before, end)
        else:
            continue
        candidates.append((found, cut))
    if not candidates:
        return None
    found, (cut_start, cut_end) = candidates[stream.randbelow(len(candidates))]
    text = target[:cut_start] + target[cut_end:]
    following = _WORD.match(text, cut_start)
    if following is not None:
        start, end = following.span()
        if found.group()[0].isupper() and text[start].islower():
            text = text[:start] + text[start].upper() + text[start + 1 :]
    else:
        start, end = list(_WORD.finditer(text[:cut_start]))[-1].span()
    note = f"dropped {found.group()!r}"
    return _injection(NEGATION_DROP, text, start, end, found.group(), "", note)


def _untranslated(target: str, source: str, stream: HashStream) -> Injection | None:
    in_target = {m.group().casefold() for m in _WORD.finditer(target)}
    words = [m for m in _LETTERS.finditer(target) if m.group().islower()]
    foreign = [
        m for m in _LETTERS.finditer(source) if m.group().islower() and m.group().casefold() not in in_target
    ]
    if not words or not foreign:
        return None
    word = words[stream.randbelow(len(words))]
    where = word.start() / max(len(target), 1)
    chosen = min(foreign, key=lambda m: (abs(m.start() / max(len(source), 1) - where), m.start()))
    inserted = chosen.group()
    text = target[: word.start()] + inserted + target[word.end() :]
    note = f"{word.group()!r} -> {inserted!r}"
    return _injection(
        UNTRANSLATED, text, word.start(), word.start() + len(inserted), word.group(), inserted, note
    )


def inject(kind: str, *, target: str, source: str, seed: Id) -> Injection | None:
    """The target with an error of ``kind`` in it, or None when the target has no place for one. The same
    ``seed`` (and texts) always gives the same injection."""
    if kind not in KINDS:
        raise ValueError(f"unknown attention check kind {kind!r}; expected one of {', '.join(KINDS)}")
    stream = HashStream(derive_key("attention-check", kind, seed))
    if kind == NUMBER_SWAP:
        return _number_swap(target, stream)
    if kind == NEGATION_DROP:
        return _negation_drop(target, stream)
    return _untranslated(target, source, stream)


def checks_choose(
    units: Iterable[tuple[Id, str, str]],
    *,
    share: float,
    kinds: Sequence[str],
    seed: Id,
    count: int | None = None,
) -> list[tuple[Id, Injection]]:
    """Which units get a check and which: ``units`` are ``(id, target, source)``; ``round(share * n)``
    of the ``n`` units (or ``count`` when given) are taken in a seeded order, each trying the kinds in turn
    from a rotating first one so the kinds come out evenly; a unit where every kind refuses is passed over
    for the next. Fewer come back when too few units have a place for any kind."""
    if not 0 <= share <= 1:
        raise ValueError(f"the share of attention checks is between 0 and 1; got {share}")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown attention check kind {unknown[0]!r}; expected one of {', '.join(KINDS)}")
    pool = list(units)
    wanted = math.floor(share * len(pool) + 0.5) if count is None else count
    if wanted <= 0 or not kinds or not pool:
        return []
    HashStream(derive_key("attention-check-units", seed)).shuffle(pool)
    chosen: list[tuple[Id, Injection]] = []
    for unit_id, target, source in pool:
        for step in range(len(kinds)):
            kind = kinds[(len(chosen) + step) % len(kinds)]
            made = inject(kind, target=target, source=source, seed=f"{seed}:{unit_id}")
            if made is not None:
                chosen.append((unit_id, made))
                break
        if len(chosen) >= wanted:
            break
    return chosen
