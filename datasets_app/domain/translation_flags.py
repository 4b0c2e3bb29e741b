"""Automatic flags shown to the reviewer of a translation unit (translation_review projects).

Each ``flag_*`` function looks for one kind of problem and returns a ``Flag`` or ``None``. Flags are hints
for a native-speaker reviewer, never verdicts: they are tuned to miss little that a reviewer would want to
look at, and every flag says in its ``details`` what triggered it so the reviewer can dismiss it quickly.

``compute_flags`` runs them all on one unit. What depends on the rest of the project (the typical length
ratio of the language pair, the register word lists the project manager edited, the measure and threshold
for a back-translation's similarity, and an embedding similarity computed outside) comes in through
``FlagContext``; a back-translation comes with the unit.
"""

from __future__ import annotations

import difflib
import math
import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from datasets_app.domain.languages import LANGUAGES, LATIN, expected_script, registers_for

# sacrebleu takes long to import: the functions that use it import it, so start-up (URL loading, a
# worker's boot) does not.
if TYPE_CHECKING:
    pass

# Flag codes (stable: stored with reviews and used in filters).
EMPTY = "empty"
TRUNCATED = "truncated"
UNTRANSLATED = "untranslated"
LENGTH_RATIO = "length_ratio"
NUMBER_MISMATCH = "number_mismatch"
SLASH_ALTERNATIVE = "slash_alternative"
BRACKET_ADDITION = "bracket_addition"
FOREIGN_SCRIPT = "foreign_script"
REGISTER_MISMATCH = "register_mismatch"
LOW_BACK_TRANSLATION = "low_back_translation"

FLAG_TITLES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        EMPTY: ("Empty translation", "Terjemahan kosong"),
        TRUNCATED: ("Possibly truncated", "Mungkin terpotong"),
        UNTRANSLATED: ("Same as the source", "Sama dengan sumber"),
        LENGTH_RATIO: ("Unusual length", "Panjang tidak wajar"),
        NUMBER_MISMATCH: ("Numbers differ", "Angka berbeda"),
        SLASH_ALTERNATIVE: ("Alternatives with '/'", "Pilihan dengan '/'"),
        BRACKET_ADDITION: ("Added brackets", "Tambahan dalam kurung"),
        FOREIGN_SCRIPT: ("Characters from another script", "Karakter aksara lain"),
        REGISTER_MISMATCH: ("Different register", "Ragam bahasa berbeda"),
        LOW_BACK_TRANSLATION: ("Back-translation differs", "Terjemahan balik berbeda"),
    }
)


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class Flag:
    """One automatic finding on a translation unit, with its message in English and Indonesian."""

    code: str
    severity: Severity
    message_en: str
    message_id: str
    details: Mapping[str, Any] = field(default_factory=dict)

    def message(self, ui_language: str = "en") -> str:
        """The message in the UI language (``"id"`` for Indonesian, anything else gives English)."""
        return self.message_id if ui_language == "id" else self.message_en


@dataclass(frozen=True)
class TranslationUnitInput:
    """The plain values of a translation unit that the flags look at."""

    source: str
    translation: str
    source_language: str
    target_language: str
    register: str | None = None
    back_translation: str | None = None


# --------------------------------------------------------------------------------------------------------
# Small text helpers


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _strip_marks(text: str) -> str:
    # "sarébu" and "sarebu", "bâ'na" and "ba'na" are the same word to a reader; spelling of diacritics varies
    # between writers of regional languages, so word lists are matched without them.
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


_APOSTROPHES = str.maketrans({"’": "'", "ʼ": "'", "‘": "'", "`": "'"})


def _fold(text: str) -> str:
    return _strip_marks(text).translate(_APOSTROPHES).casefold()


def _fmt(value: float, ui_language: str, digits: int = 2) -> str:
    text = f"{value:.{digits}f}"
    return text.replace(".", ",") if ui_language == "id" else text


# --------------------------------------------------------------------------------------------------------
# (a) Length ratio against the language pair's typical ratio

MAD_TO_SIGMA = 1.4826
DEFAULT_LENGTH_Z_THRESHOLD = 3.5
DEFAULT_MIN_PAIR_UNITS = 8


def text_length(text: str) -> int:
    """Characters after collapsing runs of whitespace: what the length ratio compares."""
    return len(_collapse(text))


@dataclass(frozen=True)
class PairLengthStats:
    """Robust location and spread of log(len(translation) / len(source)) over a project's units of one
    language pair (and register, when grouped so).

    ``scale`` is the MAD times 1.4826, which estimates the standard deviation for normally distributed
    log-ratios while ignoring the outliers we are looking for. With fewer than ``min_units`` usable units
    the statistics are not trusted (``usable`` is false) and no length flag is raised.
    """

    n: int
    median: float
    mad: float
    min_units: int = DEFAULT_MIN_PAIR_UNITS

    @property
    def scale(self) -> float:
        return MAD_TO_SIGMA * self.mad

    @property
    def usable(self) -> bool:
        return self.n >= self.min_units and self.scale > 0

    @property
    def typical_ratio(self) -> float:
        return math.exp(self.median)

    def robust_z(self, source: str, translation: str) -> float | None:
        """Robust z-score of the unit's log length ratio; ``None`` when either side is empty or the
        statistics are not usable."""
        log_ratio = _log_length_ratio(source, translation)
        if log_ratio is None or not self.usable:
            return None
        return (log_ratio - self.median) / self.scale


def _log_length_ratio(source: str, translation: str) -> float | None:
    source_len, translation_len = text_length(source), text_length(translation)
    if source_len == 0 or translation_len == 0:
        return None
    return math.log(translation_len / source_len)


def pair_length_stats(
    pairs: Iterable[tuple[str, str]], *, min_units: int = DEFAULT_MIN_PAIR_UNITS
) -> PairLengthStats:
    """Statistics of the length ratio from (source, translation) pairs of one language pair.

    Pairs where either side is empty are left out (they get the ``empty`` flag instead). The median and MAD
    are plain sample medians.
    """
    logs = [r for s, t in pairs if (r := _log_length_ratio(s, t)) is not None]
    if not logs:
        return PairLengthStats(n=0, median=0.0, mad=0.0, min_units=min_units)
    median = statistics.median(logs)
    mad = statistics.median(abs(x - median) for x in logs)
    return PairLengthStats(n=len(logs), median=median, mad=mad, min_units=min_units)


PairKey = tuple[str, str, str | None]


def pair_key(unit: TranslationUnitInput, *, by_register: bool = True) -> PairKey:
    """Key under which a unit's length statistics are grouped: Krama Javanese runs longer than Ngoko, so by
    default registers are kept apart."""
    return (unit.source_language, unit.target_language, unit.register if by_register else None)


def pair_length_stats_by_pair(
    units: Iterable[TranslationUnitInput],
    *,
    by_register: bool = True,
    min_units: int = DEFAULT_MIN_PAIR_UNITS,
) -> dict[PairKey, PairLengthStats]:
    """``pair_length_stats`` for every language pair (and register) among a project's units."""
    grouped: dict[PairKey, list[tuple[str, str]]] = {}
    for unit in units:
        grouped.setdefault(pair_key(unit, by_register=by_register), []).append(
            (unit.source, unit.translation)
        )
    return {key: pair_length_stats(pairs, min_units=min_units) for key, pairs in grouped.items()}


def flag_length_ratio(
    source: str,
    translation: str,
    stats: PairLengthStats | None,
    *,
    threshold: float = DEFAULT_LENGTH_Z_THRESHOLD,
) -> Flag | None:
    """Flag a translation whose length ratio to the source lies more than ``threshold`` robust standard
    deviations from the pair's median (3.5 is the usual cut-off for modified z-scores)."""
    if stats is None:
        return None
    z = stats.robust_z(source, translation)
    if z is None or abs(z) <= threshold:
        return None
    ratio = text_length(translation) / text_length(source)
    typical = stats.typical_ratio
    longer = z > 0
    return Flag(
        LENGTH_RATIO,
        Severity.WARNING,
        f"The translation is much {'longer' if longer else 'shorter'} than usual for this language pair "
        f"(length ratio {_fmt(ratio, 'en')}, typical {_fmt(typical, 'en')}).",
        f"Terjemahan jauh lebih {'panjang' if longer else 'pendek'} daripada biasanya untuk pasangan bahasa "
        f"ini (rasio panjang {_fmt(ratio, 'id')}, biasanya {_fmt(typical, 'id')}).",
        {
            "ratio": round(ratio, 4),
            "typical_ratio": round(typical, 4),
            "z": round(z, 3),
            "threshold": threshold,
            "n_units": stats.n,
        },
    )


# --------------------------------------------------------------------------------------------------------
# (b) Numbers present on one side only
#
# Digits are read in the notation of the side's language. Indonesian and the regional languages write "."
# between thousands and "," before decimals ("1.500" = 1500, "7,5" = 7.5); English does the reverse
# ("1,500" = 1500, "7.5" = 7.5). Only a single separator followed by exactly three digits is ambiguous
# ("1.500", "1,500"): there the side's language decides, and a text of unknown language reads it as a
# thousands separator. Everything else reads the same in both notations: "2,5" and "2.5" are two and a half
# (a thousands group has three digits), "1.000.000" and "1,000,000" are a million, "1.234,5" and "1,234.5"
# are the same number (the last separator is the decimal one), "0,500" is a half.
#
# Times of day are compared as times, not as numbers: "7:30" in any language, and "7.30" after "pukul",
# "jam" or "tabuh" in a text that is not English (Indonesian writes "pukul 7.30" for 7:30). A time on the
# hour is its number of hours, so "pukul 09.00", "9:00" and "9 am" all give 9. The 24-hour clock is not
# converted: "pukul 19.00" against "7 pm" is reported.
#
# Number words come from small lists: 0-10, the teens and tens markers, hundred, thousand, million, and the
# word for a half. Where either language has no list, only digits are compared (and scale words such as
# "juta" are ignored on both sides), so that "dua puluh" in Indonesian against an unknown Balinese "duang
# dasa" is not reported as a missing 20; likewise a half is only read when both lists have a word for it. The
# regional lists include the scale words borrowed from Indonesian (juta, miliar, triliun).
#
# A half after a number adds to it ("dua setengah" = 2.5, "satu setengah juta" = 1,500,000; in English only
# after "and a": "two and a half"); right after a scale word it is half of that scale ("dua juta setengah" =
# 2,500,000); on its own it is 0.5 ("setengah jam", "half an hour", "setengah juta" = 500,000). A half right
# before a plain number is not read at all: "setengah tujuh" is half past six.
#
# A number written only as the word for "one" is not compared: "satu", "siji", "hiji" double as the article
# and are routinely rendered by a prefix (satu hari -> sedina, sadinten).


_HALF = Decimal("0.5")


@dataclass(frozen=True)
class _NumberWord:
    # "value", "teen" (+10), "tens" (x10), "hundreds" (x100), "big" (x value, closes a group), "half" (0.5),
    # "join" (a word that may link two parts of one number, English "and", "a"; ``word`` says which)
    kind: str
    value: Decimal
    word: str = ""


def _lexicon(
    values: Mapping[str, int],
    teens: Iterable[str] = (),
    tens: Iterable[str] = (),
    hundreds: Iterable[str] = (),
    big: Mapping[str, int] | None = None,
    fused: Mapping[str, str] | None = None,
    halves: Iterable[str] = (),
    joins: Iterable[str] = (),
) -> Mapping[str, tuple[_NumberWord, ...]]:
    lexicon: dict[str, tuple[_NumberWord, ...]] = {
        w: (_NumberWord("value", Decimal(v)),) for w, v in values.items()
    }
    for kind, words in (("teen", teens), ("tens", tens), ("hundreds", hundreds)):
        for w in words:
            lexicon[w] = (_NumberWord(kind, Decimal(0)),)
    for w, v in (big or {}).items():
        lexicon[w] = (_NumberWord("big", Decimal(v)),)
    # Fused forms are "one" + a scale word: seratus = se + ratus, sewu = se + ewu.
    for w, scale in (fused or {}).items():
        lexicon[w] = (_NumberWord("value", Decimal(1)), *lexicon[scale])
    for w in halves:
        lexicon[w] = (_NumberWord("half", _HALF),)
    for w in joins:
        lexicon[w] = (_NumberWord("join", Decimal(0), w),)
    return MappingProxyType(lexicon)


# fmt: off
_UNITS_EN = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}
# fmt: on

# fmt: off
NUMBER_LEXICONS: Mapping[str, Mapping[str, tuple[_NumberWord, ...]]] = MappingProxyType(
    {
        "ind": _lexicon(
            {"nol": 0, "satu": 1, "dua": 2, "tiga": 3, "empat": 4, "lima": 5, "enam": 6, "tujuh": 7,
             "delapan": 8, "sembilan": 9},
            teens=("belas",),
            tens=("puluh",),
            hundreds=("ratus",),
            big={"ribu": 1000, "juta": 1_000_000, "miliar": 1_000_000_000, "milyar": 1_000_000_000,
                 "triliun": 10**12},
            fused={"sepuluh": "puluh", "sebelas": "belas", "seratus": "ratus", "seribu": "ribu",
                   "sejuta": "juta"},
            halves=("setengah", "separuh"),
        ),
        # Ngoko and Krama forms together; "rong", "telung", ... are the forms used before puluh/atus/ewu.
        # "loro" is also a common spelling of "lara" (ill), a known source of false hits.
        "jav": _lexicon(
            {"siji": 1, "setunggal": 1, "loro": 2, "kalih": 2, "rong": 2, "telu": 3, "tiga": 3,
             "telung": 3, "papat": 4, "sekawan": 4, "patang": 4, "lima": 5, "gangsal": 5, "limang": 5,
             "enem": 6, "nem": 6, "pitu": 7, "pitung": 7, "wolu": 8, "wolung": 8, "sanga": 9,
             "sangang": 9, "sewelas": 11, "rolas": 12, "telulas": 13, "patbelas": 14, "limalas": 15,
             "nembelas": 16, "pitulas": 17, "wolulas": 18, "sangalas": 19, "selikur": 21, "selawe": 25,
             "selangkung": 25, "seket": 50, "sewidak": 60},
            tens=("puluh", "dasa"),
            hundreds=("atus",),
            big={"ewu": 1000, "yuta": 1_000_000, "juta": 1_000_000, "miliar": 1_000_000_000,
                 "milyar": 1_000_000_000, "triliun": 10**12},
            fused={"sepuluh": "puluh", "sedasa": "dasa", "satus": "atus", "sewu": "ewu", "sayuta": "yuta",
                   "sejuta": "juta"},
            halves=("setengah", "separo"),
        ),
        "sun": _lexicon(
            {"nol": 0, "hiji": 1, "dua": 2, "tilu": 3, "opat": 4, "lima": 5, "genep": 6, "tujuh": 7,
             "dalapan": 8, "salapan": 9},
            teens=("welas", "belas"),
            tens=("puluh",),
            hundreds=("ratus",),
            big={"rebu": 1000, "juta": 1_000_000, "miliar": 1_000_000_000, "milyar": 1_000_000_000,
                 "triliun": 10**12},
            fused={"sapuluh": "puluh", "sabelas": "belas", "saratus": "ratus", "sarebu": "rebu"},
            halves=("satengah",),
        ),
        "eng": _lexicon(
            _UNITS_EN,
            hundreds=("hundred",),
            big={"thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000, "trillion": 10**12},
            halves=("half",),
            # "three hundred and twenty-five", "two and a half", "half a million"
            joins=("and", "a"),
        ),
    }
)
# fmt: on

_NUMBER_TOKEN = re.compile(
    r"(?P<time>(?<![\d.,:])\d{1,2}:\d{2}(?![\d:]|[.,]\d))"
    r"|(?P<digits>\d+(?:[.,]\d+)*)"
    r"|(?P<word>[^\W\d_]+(?:['’ʼ-][^\W\d_]+)*)"
)
_DOTTED_TIME = re.compile(r"(\d{1,2})\.(\d{2})")
# Words after which "7.30" is a time of day, in texts that are not English.
_TIME_WORDS = frozenset({"pukul", "jam", "tabuh"})

# How a language writes a number: "id" ("." thousands, "," decimals) or "en" ("," thousands, "." decimals).
_ENGLISH_NOTATION = frozenset({"eng"})


def _notation(language: str | None) -> str | None:
    if language in _ENGLISH_NOTATION:
        return "en"
    if language in LANGUAGES:
        return "id"
    return None


def _parse_digits(token: str, notation: str | None = None) -> list[Decimal]:
    parts = re.split(r"[.,]", token)
    seps = re.findall(r"[.,]", token)
    if not seps:
        return [Decimal(token)]
    if len(set(seps)) == 1:
        if len(seps) == 1:
            whole, rest = parts
            thousands_sep = {"id": ".", "en": ","}.get(notation or "", seps[0])
            if len(rest) == 3 and whole != "0" and seps[0] == thousands_sep:
                return [Decimal(whole + rest)]
            return [Decimal(f"{whole}.{rest}")]
        if all(len(p) == 3 for p in parts[1:]):
            return [Decimal("".join(parts))]
        return [Decimal(p) for p in parts]
    decimal_sep = seps[-1]
    grouped = seps.count(decimal_sep) == 1 and all(len(p) == 3 for p in parts[1:-1])
    if grouped:
        return [Decimal("".join(parts[:-1]) + "." + parts[-1])]
    return [Decimal(p) for p in parts]


def _time_of_day(hours: str, minutes: str) -> tuple[int, int] | None:
    h, m = int(hours), int(minutes)
    if m > 59 or h > 24 or (h == 24 and m):
        return None
    return h, m


class _NumberReader:
    """Reads a stream of number tokens into values, one number per run of adjacent tokens.

    ``half_needs_join``: a half adds to the number before it only after a join word (English "two and a
    half"; "one half" is a half); in Indonesian and the regional languages it follows the number directly.
    """

    def __init__(self, *, half_needs_join: bool = False) -> None:
        self.values: set[Decimal] = set()
        self.half_needs_join = half_needs_join
        self._reset()

    def _reset(self) -> None:
        self.total = Decimal(0)  # completed thousands/millions
        self.group = Decimal(0)  # below the last big scale word
        self.pending: Decimal | None = None  # last value not yet multiplied
        self.active = False
        self.has_digits = False
        self.n_items = 0
        self.last_kind = ""
        self.last_big = Decimal(0)
        self.joined: list[str] = []  # join words read since the last number word
        self.discard = False  # the run cannot be read ("setengah tujuh")

    def close(self) -> None:
        if self.active and not self.discard:
            value = self.total + self.group + (self.pending or 0)
            if self.has_digits or not (value == 1 and self.n_items == 1):
                self.values.add(value.normalize())
        self._reset()

    def _start_value(self, value: Decimal) -> None:
        pending = self.pending
        if pending is not None and 20 <= pending < 100 and pending % 10 == 0 and value < 10:
            self.pending = pending + value  # "twenty-five", "seket loro"
        else:
            if pending is not None:
                self.close()  # "dua tiga", "2 3": two numbers
            self.pending = value
        self.active = True
        self.n_items += 1
        self.last_kind = "value"

    def digits(self, value: Decimal) -> None:
        if self.pending is not None or self.joined:
            self.close()
        self._start_value(value)
        self.has_digits = True

    def _join_allowed(self, joined: tuple[str, ...], item: _NumberWord) -> bool:
        if joined == ("and",):  # "three hundred and twenty-five", "two thousand and five"
            return item.kind == "value" and item.value < 100 and self.last_kind in ("hundreds", "big")
        if joined == ("and", "a"):  # "two and a half"
            return item.kind == "half"
        if joined == ("a",):  # "half a million"
            return item.kind in ("hundreds", "big") and self.last_kind == "half"
        return False

    def _half(self) -> None:
        if not self.active or self.last_kind == "half":
            self.close()
            self.pending, self.active, self.n_items, self.last_kind = _HALF, True, 1, "half"
            return
        if self.pending is not None:
            self.pending += _HALF  # "dua setengah", "two and a half"
        elif self.last_kind == "big":
            self.total += _HALF * self.last_big  # "dua juta setengah"
        else:
            self.group += _HALF  # "dua belas setengah"
        self.n_items += 1
        self.last_kind = "half"

    def word(self, item: _NumberWord) -> None:
        if item.kind == "join":
            if self.active:
                self.joined.append(item.word)
            return
        if self.joined:
            joined, self.joined = tuple(self.joined), []
            if not self._join_allowed(joined, item):
                self.close()
        elif item.kind == "half" and self.half_needs_join and self.active:
            self.close()  # "one half" is a half
        elif self.last_kind == "half" and self.n_items == 1 and item.kind not in ("big", "half"):
            # A half before a plain number: "setengah tujuh" is half past six, not 0.5 and 7.
            self.pending, self.discard = None, True
        if item.kind == "half":
            self._half()
            return
        if item.kind == "value":
            self._start_value(item.value)
            return
        if item.kind == "big":
            base = self.group + (self.pending or 0)
            self.total += (base or 1) * item.value
            self.group, self.pending, self.active = Decimal(0), None, True
            self.n_items += 1
            self.last_kind, self.last_big = "big", item.value
            return
        if self.pending is None and item.kind == "hundreds" and self.group == 0:
            self.pending = Decimal(1)  # "a hundred", "hundred thousand"
        if self.pending is None:
            return  # "belas" or "puluh" with no number before it: nothing to read
        multiplier = {"teen": None, "tens": 10, "hundreds": 100}[item.kind]
        self.group += self.pending + 10 if multiplier is None else self.pending * multiplier
        self.pending = None
        self.active = True
        self.n_items += 1
        self.last_kind = item.kind


@dataclass(frozen=True)
class _NumbersRead:
    numbers: frozenset[Decimal]
    times: frozenset[tuple[int, int]]


def _lexicon_has(lexicon: Mapping[str, tuple[_NumberWord, ...]], kind: str) -> bool:
    return any(item.kind == kind for items in lexicon.values() for item in items)


def _read_numbers(text: str, language: str | None, *, words: bool, halves: bool) -> _NumbersRead:
    lexicon = NUMBER_LEXICONS.get(language or "", {}) if words else {}
    if not halves:
        lexicon = {w: items for w, items in lexicon.items() if items[0].kind != "half"}
    notation = _notation(language)
    reader = _NumberReader(half_needs_join=_lexicon_has(lexicon, "join"))
    times: set[tuple[int, int]] = set()
    last_end = 0
    after_time_word = False
    for match in _NUMBER_TOKEN.finditer(text):
        gap = text[last_end : match.start()]
        if gap.strip(" \t-") or "\n" in gap:
            reader.close()
        follows_time_word = after_time_word and not gap.strip()
        after_time_word = False
        last_end = match.end()
        token = match.group("time") or match.group("digits")
        dotted = match.group("digits") and _DOTTED_TIME.fullmatch(token)
        if match.group("time") or (dotted and follows_time_word and notation != "en"):
            hours, minutes = re.split(r"[:.]", token)
            time = _time_of_day(hours, minutes)
            if time is not None:
                reader.close()
                if time[1]:
                    times.add(time)
                else:
                    reader.digits(Decimal(time[0]))  # "pukul 09.00" is 9, like "9 am"
                    reader.close()
                continue
        if match.group("time"):  # "25:70" is no time: two numbers, as any other "a:b"
            reader.digits(Decimal(hours))
            reader.close()
            reader.digits(Decimal(minutes))
            continue
        if match.group("digits"):
            numbers = _parse_digits(token, notation)
            for number in numbers[:-1]:
                reader.digits(number)
                reader.close()
            reader.digits(numbers[-1])
            continue
        word = _fold(match.group("word"))
        after_time_word = word in _TIME_WORDS
        parts = word.split("-")
        words_ = parts if len(parts) > 1 and all(p in lexicon for p in parts) else [word]
        if not all(w in lexicon for w in words_):
            reader.close()
            continue
        for w in words_:
            for item in lexicon[w]:
                reader.word(item)
    reader.close()
    return _NumbersRead(frozenset(reader.values), frozenset(times))


def extract_numbers(text: str, language: str | None, *, words: bool = True) -> set[Decimal]:
    """Numbers written in ``text``: digits read in the notation of ``language``, plus number words when
    ``language`` has a word list and ``words`` is true. Times of day are left out (see ``extract_times``).

    Adjacent number tokens separated only by spaces or hyphens combine ("dua puluh lima" = 25, "1,5 juta" =
    1,500,000, "twenty-five" = 25); anything else between them starts a new number. A number made only of
    the word for one is left out (see the note above).
    """
    return set(_read_numbers(text, language, words=words, halves=True).numbers)


def extract_times(text: str, language: str | None) -> set[tuple[int, int]]:
    """Times of day in ``text`` that are not on the hour, as (hours, minutes): "7:30", and "pukul 7.30" in a
    language other than English."""
    return set(_read_numbers(text, language, words=False, halves=False).times)


def _show(values: Iterable[Decimal]) -> list[str]:
    return [format(v, "f") for v in sorted(values)]


def _show_times(times: Iterable[tuple[int, int]]) -> list[str]:
    return [f"{h}:{m:02d}" for h, m in sorted(times)]


def flag_numbers(
    source: str, translation: str, *, source_language: str | None, target_language: str | None
) -> Flag | None:
    """Flag numbers that appear on one side only (compared as values, so 1.000 = 1,000 = seribu, and
    times of day as times, so 7:30 = pukul 7.30)."""
    both_have_words = source_language in NUMBER_LEXICONS and target_language in NUMBER_LEXICONS
    halves = both_have_words and all(
        _lexicon_has(NUMBER_LEXICONS[lang], "half") for lang in (source_language, target_language)
    )
    in_source = _read_numbers(source, source_language, words=both_have_words, halves=halves)
    in_translation = _read_numbers(translation, target_language, words=both_have_words, halves=halves)
    missing = _show(in_source.numbers - in_translation.numbers) + _show_times(
        in_source.times - in_translation.times
    )
    extra = _show(in_translation.numbers - in_source.numbers) + _show_times(
        in_translation.times - in_source.times
    )
    if not missing and not extra:
        return None
    missing_text, extra_text = ", ".join(missing), ", ".join(extra)
    en_parts, id_parts = [], []
    if missing:
        en_parts.append(f"missing from the translation: {missing_text}")
        id_parts.append(f"tidak ada di terjemahan: {missing_text}")
    if extra:
        en_parts.append(f"only in the translation: {extra_text}")
        id_parts.append(f"hanya ada di terjemahan: {extra_text}")
    return Flag(
        NUMBER_MISMATCH,
        Severity.WARNING,
        "Numbers differ between source and translation (" + "; ".join(en_parts) + ").",
        "Angka pada sumber dan terjemahan berbeda (" + "; ".join(id_parts) + ").",
        {
            "missing_in_translation": missing,
            "extra_in_translation": extra,
            "number_words_compared": both_have_words,
        },
    )


# --------------------------------------------------------------------------------------------------------
# (c) "/" offering alternatives

_URL = re.compile(r"(?:https?://|www\.)\S+|\b[\w-]+(?:\.[\w-]+)+/\S*", re.IGNORECASE)
_SLASH_PAIR = re.compile(
    r"(?<![\w/])([^\W\d_]{2,}(?:-[^\W\d_]+)*)[ \t]?/[ \t]?([^\W\d_]{2,}(?:-[^\W\d_]+)*)(?![\w/])"
)
# Abbreviations of units written with a slash ("km/jam", "mg/kg") are not alternatives.
_UNIT_WORDS = frozenset({"km", "kg", "cm", "mm", "ml", "mg", "kwh", "mph", "kmh", "jam", "hr", "sec", "min"})


def slash_alternatives(text: str) -> list[str]:
    """``word/word`` pairs in ``text``, leaving out URLs and paths, dates and fractions (digits), one-letter
    abbreviations such as "s/d" and "d/a", and units ("60 km/jam")."""
    cleaned = _URL.sub(" ", text)
    found = []
    for match in _SLASH_PAIR.finditer(cleaned):
        left, right = match.group(1).casefold(), match.group(2).casefold()
        if left in _UNIT_WORDS or right in _UNIT_WORDS:
            continue
        if re.search(r"\d\s*$", cleaned[: match.start()]):
            continue
        found.append(match.group(0))
    return found


def flag_slash_alternatives(source: str, translation: str) -> Flag | None:
    """Flag a translation that offers more "/" alternatives than the source (``dan/atau`` for ``and/or``
    is a faithful translation, ``rumah/griya`` is the translator hedging)."""
    in_translation = slash_alternatives(translation)
    in_source = slash_alternatives(source)
    if len(in_translation) <= len(in_source):
        return None
    shown = ", ".join(in_translation)
    return Flag(
        SLASH_ALTERNATIVE,
        Severity.INFO,
        f"The translation offers alternatives with '/': {shown}. Choose one unless the source does the same.",
        f"Terjemahan memberi pilihan dengan '/': {shown}. Pilih salah satu kecuali sumbernya juga begitu.",
        {"alternatives": in_translation, "in_source": in_source},
    )


# --------------------------------------------------------------------------------------------------------
# (d) Bracketed clarifications added by the translator

_BRACKETS = re.compile(r"\(([^()]*)\)|\[([^\[\]]*)\]")


def bracketed(text: str) -> list[str]:
    """Contents of the (round) and [square] bracket groups in ``text``."""
    return [m.group(1) if m.group(1) is not None else m.group(2) for m in _BRACKETS.finditer(text)]


def flag_bracket_additions(source: str, translation: str) -> Flag | None:
    """Flag a translation with more bracket groups than its source: usually a clarification or an
    alternative wording the translator added, which the reviewer should keep or drop deliberately."""
    in_translation = bracketed(translation)
    in_source = bracketed(source)
    if len(in_translation) <= len(in_source):
        return None
    shown = "; ".join(f"({c})" for c in in_translation)
    return Flag(
        BRACKET_ADDITION,
        Severity.INFO,
        f"The translation has text in brackets that the source does not: {shown}.",
        f"Terjemahan memuat teks dalam kurung yang tidak ada di sumber: {shown}.",
        {"in_translation": in_translation, "in_source": in_source},
    )


# --------------------------------------------------------------------------------------------------------
# (e) Translation identical or nearly identical to the source

DEFAULT_IDENTICAL_SIMILARITY = 0.9
DEFAULT_IDENTICAL_MIN_WORDS = 4


# Character-level matching is quadratic in the worst case; past this many characters the texts are
# compared word by word, which is as telling for long passages and stays fast.
CHARACTER_COMPARISON_LIMIT = 600


def _comparable(text: str) -> str:
    return _collapse(re.sub(r"[^\w\s]", " ", text.casefold()))


def _matcher(a: str, b: str) -> difflib.SequenceMatcher:
    a, b = _comparable(a), _comparable(b)
    if max(len(a), len(b)) <= CHARACTER_COMPARISON_LIMIT:
        return difflib.SequenceMatcher(None, a, b, autojunk=False)
    return difflib.SequenceMatcher(None, a.split(), b.split(), autojunk=False)


def similarity(a: str, b: str) -> float:
    """difflib ratio of the two texts after case folding, dropping punctuation and collapsing spaces
    (over characters, or over words for texts longer than ``CHARACTER_COMPARISON_LIMIT``)."""
    return _matcher(a, b).ratio()


def flag_untranslated(
    source: str,
    translation: str,
    *,
    threshold: float = DEFAULT_IDENTICAL_SIMILARITY,
    min_words: int = DEFAULT_IDENTICAL_MIN_WORDS,
) -> Flag | None:
    """Flag a translation (nearly) identical to its source.

    Sources shorter than ``min_words`` words are never flagged: names, numbers, titles and short loanword
    phrases are often rightly the same in Indonesian and a regional language.
    """
    if len(_comparable(source).split()) < min_words or not translation.strip():
        return None
    matcher = _matcher(source, translation)
    # The quick ratios are upper bounds of ratio(): most real translations are ruled out in linear time.
    if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
        return None
    score = matcher.ratio()
    if score < threshold:
        return None
    identical = _comparable(source) == _comparable(translation)
    return Flag(
        UNTRANSLATED,
        Severity.WARNING,
        "The translation is identical to the source."
        if identical
        else f"The translation is almost identical to the source (similarity {_fmt(score, 'en')}).",
        "Terjemahan sama persis dengan sumber."
        if identical
        else f"Terjemahan hampir sama dengan sumber (kemiripan {_fmt(score, 'id')}).",
        {"similarity": round(score, 4), "identical": identical, "threshold": threshold},
    )


# --------------------------------------------------------------------------------------------------------
# (f) Empty or truncated

DEFAULT_TRUNCATION_RATIO = 0.5
_CLOSERS = "\"'”’»)]} \t\n"
_TERMINAL = (".", "!", "?", "…", "。")
_TRANSLATION_END = (*_TERMINAL, ":", ";")


def _ends_with(text: str, endings: tuple[str, ...]) -> bool:
    return text.rstrip(_CLOSERS).endswith(endings)


def _ends_with_ellipsis(text: str) -> bool:
    return text.rstrip(_CLOSERS).endswith(("...", "…"))


def flag_empty(source: str, translation: str) -> Flag | None:
    """Flag a translation that is empty or only whitespace while the source is not."""
    if translation.strip() or not source.strip():
        return None
    return Flag(EMPTY, Severity.ERROR, "The translation is empty.", "Terjemahan kosong.", {})


def flag_truncated(
    source: str,
    translation: str,
    *,
    typical_ratio: float = 1.0,
    ratio: float = DEFAULT_TRUNCATION_RATIO,
) -> Flag | None:
    """Flag a translation that looks cut off.

    Two signs: it ends with "..." or "…" where the source does not; or the source ends a sentence (. ! ?)
    while the translation ends without one and is shorter than ``ratio`` times the expected length (the
    source length times the pair's ``typical_ratio``).
    """
    if not translation.strip():
        return None
    if _ends_with_ellipsis(translation) and not _ends_with_ellipsis(source):
        return Flag(
            TRUNCATED,
            Severity.WARNING,
            "The translation ends with '...' but the source does not.",
            "Terjemahan diakhiri '...' padahal sumbernya tidak.",
            {"reason": "ellipsis"},
        )
    if not _ends_with(source, _TERMINAL) or _ends_with(translation, _TRANSLATION_END):
        return None
    expected = text_length(source) * typical_ratio
    share = text_length(translation) / expected if expected else 1.0
    if share >= ratio:
        return None
    return Flag(
        TRUNCATED,
        Severity.WARNING,
        f"The translation stops mid-sentence and is only {share:.0%} of the expected length.",
        f"Terjemahan berhenti di tengah kalimat dan panjangnya hanya {share:.0%} dari panjang yang "
        "diharapkan.",
        {"reason": "ends_mid_sentence", "length_share": round(share, 4), "ratio": ratio},
    )


# --------------------------------------------------------------------------------------------------------
# (g) Characters outside the target script


def _is_latin_friendly(ch: str) -> bool:
    category = unicodedata.category(ch)
    code = ord(ch)
    if category[0] == "L":
        if 0x02B0 <= code <= 0x02FF:  # modifier letters such as the ʼ of some Madurese spellings
            return True
        name = unicodedata.name(ch, "")
        return name.startswith(("LATIN ", "FULLWIDTH LATIN "))
    if category[0] == "M":
        # Combining diacritics (decomposed é, è, ê, â); marks of other scripts (Javanese sandhangan) are not.
        return 0x0300 <= code <= 0x036F or 0x1AB0 <= code <= 0x1AFF or 0x1DC0 <= code <= 0x1DFF
    if category == "Nd":
        return "0" <= ch <= "9"
    return True  # punctuation, symbols, spaces, other number forms


def _script_label(ch: str) -> str:
    name = unicodedata.name(ch, "UNKNOWN")
    return name.split(" ")[0]


def flag_foreign_script(translation: str, *, script: str = LATIN) -> Flag | None:
    """Flag letters, marks or digits from a script other than the expected one (only Latin is checked;
    punctuation, symbols and ASCII digits are always fine)."""
    if script != LATIN:
        return None
    foreign = [ch for ch in translation if not _is_latin_friendly(ch)]
    if not foreign:
        return None
    distinct = list(dict.fromkeys(foreign))
    scripts = sorted({_script_label(ch) for ch in distinct})
    shown = " ".join(distinct[:10])
    return Flag(
        FOREIGN_SCRIPT,
        Severity.WARNING,
        f"The translation contains characters outside the Latin script: {shown}.",
        f"Terjemahan memuat karakter di luar aksara Latin: {shown}.",
        {"characters": distinct[:20], "count": len(foreign), "scripts": scripts},
    )


# --------------------------------------------------------------------------------------------------------
# (h) Register different from the one asked
#
# Marker words are words that belong to one register only. The lists are deliberately short: a word goes in
# only when a speaker would not use it in the other register of the same language. Words shared with
# Indonesian ("apa", "bisa") are left out because code-mixing would count them. Entries ending in "-" are
# prefixes (Krama passive "dipun-"); entries with a space are phrases. Matching ignores case, diacritics
# (sarébu = sarebu) and the apostrophe variant (’ ʼ '). Project managers can pass their own lists.

# fmt: off
DEFAULT_REGISTER_MARKERS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        # Javanese
        "krama": ("kula", "panjenengan", "menapa", "punapa", "boten", "mboten", "sampun", "nggih", "inggih",
                  "badhe", "saged", "wonten", "saking", "kaliyan", "ingkang", "dipun-"),
        "ngoko": ("aku", "kowe", "ora", "wis", "uwis", "arep", "iki", "kuwi", "saka", "karo", "dheweke",
                  "piye", "endi", "uga", "wae", "banget", "mangan"),
        # Sundanese
        "lemes": ("abdi", "sumping", "dongkap", "tuang", "neda", "bade", "sanes", "parantos", "nembe",
                  "wartos", "rorompok", "linggih", "mios", "hoyong", "kantos", "teu acan"),
        "loma": ("aing", "maneh", "dahar", "geus", "hayang", "rek", "arek", "lain", "imah", "datang", "indit",
                 "kakara", "beja", "kungsi"),
        # Madurese: the registers are named after their words for "yes" and "no"
        "engghi_ethen": ("engghi", "enten", "abdhina", "sampeyan", "panjenengan", "ponapa"),
        "enja_iya": ("iya", "enja'", "sengko'", "engko'", "ba'na", "kakeh"),
    }
)
# fmt: on

_MARKER_TOKEN = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*'?")


def _marker_tokens(text: str) -> list[str]:
    return _MARKER_TOKEN.findall(_fold(text))


def count_register_markers(text: str, markers: Iterable[str]) -> Counter[str]:
    """How often each marker (word, ``prefix-`` or multi-word phrase) occurs in ``text``."""
    tokens = _marker_tokens(text)
    counts: Counter[str] = Counter()
    for marker in markers:
        folded = _fold(marker).strip()
        if not folded:
            continue
        if folded.endswith("-"):
            prefix = folded[:-1]
            n = sum(1 for t in tokens if t.startswith(prefix) and len(t) > len(prefix))
        elif " " in folded:
            phrase = folded.split()
            n = sum(1 for i in range(len(tokens) - len(phrase) + 1) if tokens[i : i + len(phrase)] == phrase)
        else:
            # A closing quote glued to a word ("'kula'") reads as a trailing apostrophe.
            n = sum(1 for t in tokens if t == folded or t.rstrip("'") == folded)
        if n:
            counts[marker] = n
    return counts


def flag_register(
    translation: str,
    *,
    language: str,
    register: str | None,
    markers: Mapping[str, Sequence[str]] = DEFAULT_REGISTER_MARKERS,
) -> Flag | None:
    """Flag a translation where the marker words of another register of the same language outnumber those
    of the register asked for."""
    if not register:
        return None
    siblings = [r.code for r in registers_for(language)]
    if register not in siblings:
        return None
    counts = {code: count_register_markers(translation, markers.get(code, ())) for code in siblings}
    asked = sum(counts[register].values())
    others = {code: sum(c.values()) for code, c in counts.items() if code != register}
    if not others:
        return None
    found_code, found = max(others.items(), key=lambda item: item[1])
    if found <= asked:
        return None
    words = ", ".join(sorted(counts[found_code]))
    return Flag(
        REGISTER_MISMATCH,
        Severity.WARNING,
        f"The translation reads like the '{found_code}' register, not '{register}' (words: {words}).",
        f"Terjemahan lebih mirip ragam '{found_code}', bukan '{register}' (kata: {words}).",
        {
            "asked": register,
            "detected": found_code,
            "counts": {code: sum(c.values()) for code, c in counts.items()},
            "markers": {code: dict(c) for code, c in counts.items()},
        },
    )


# --------------------------------------------------------------------------------------------------------
# (i) Back-translation similarity

# How a back-translation is compared with its source: ``embedding`` is id-csqa's rule (the cosine of two
# sentence embeddings, here multilingual-e5-small, computed outside this module and passed in); ``chrf`` is
# chrF++, a character-level overlap computed here without a model.
BACK_TRANSLATION_EMBEDDING = "embedding"
BACK_TRANSLATION_CHRF = "chrf"
BACK_TRANSLATION_MEASURES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        BACK_TRANSLATION_EMBEDDING: (
            "sentence embedding (multilingual-e5-small)",
            "embedding kalimat (multilingual-e5-small)",
        ),
        BACK_TRANSLATION_CHRF: ("chrF++", "chrF++"),
    }
)
DEFAULT_BACK_TRANSLATION_MEASURE = BACK_TRANSLATION_EMBEDDING
# id-csqa's 0.9 on either measure (each has its own setting: the two scales differ).
DEFAULT_BACK_TRANSLATION_THRESHOLD = 0.9
DEFAULT_BACK_TRANSLATION_EMBEDDING_THRESHOLD = 0.9


def back_translation_similarity(source: str, back_translation: str) -> float:
    """chrF++ (sacrebleu: character n-grams 1-6, word n-grams 1-2, beta 2) of the back-translation against the
    source, divided by 100 so that it lies in 0-1 (1: the same text).

    id-csqa compared a back-translation with its source by embedding similarity and kept items at 0.9 or
    above; that is the ``embedding`` measure, whose number comes from outside. chrF++ is the alternative that
    needs no model. The two scales differ: chrF++ is far lower than an embedding cosine for a good paraphrase
    (other words, same meaning), so a project using it may want a lower threshold than 0.9.
    """
    from sacrebleu.metrics import CHRF

    if not source.strip() or not back_translation.strip():
        raise ValueError("back-translation similarity needs a non-empty source and back-translation")
    return float(CHRF(word_order=2).sentence_score(back_translation, [source]).score) / 100


def _measure_checked(measure: str) -> str:
    if measure not in BACK_TRANSLATION_MEASURES:
        known = ", ".join(repr(m) for m in BACK_TRANSLATION_MEASURES)
        raise ValueError(f"unknown back-translation measure {measure!r}; expected one of {known}")
    return measure


def flag_back_translation(
    back_similarity: float | None,
    *,
    threshold: float = DEFAULT_BACK_TRANSLATION_THRESHOLD,
    measure: str = DEFAULT_BACK_TRANSLATION_MEASURE,
) -> Flag | None:
    """Flag a unit whose back-translation is less similar to the source than ``threshold`` by ``measure``
    (a similarity equal to the threshold passes, as id-csqa kept items at 0.9 or above). The flag names the
    measure, in both languages, so a reviewer reads the number on the right scale."""
    _measure_checked(measure)
    if back_similarity is None:
        return None
    if math.isnan(back_similarity):
        raise ValueError("back-translation similarity is NaN")
    if back_similarity >= threshold:
        return None
    name_en, name_id = BACK_TRANSLATION_MEASURES[measure]
    return Flag(
        LOW_BACK_TRANSLATION,
        Severity.WARNING,
        f"The back-translation is not close to the source ({name_en} similarity "
        f"{_fmt(back_similarity, 'en', 3)}, threshold {_fmt(threshold, 'en')}).",
        f"Terjemahan balik kurang mirip dengan sumber (kemiripan {name_id} "
        f"{_fmt(back_similarity, 'id', 3)}, ambang {_fmt(threshold, 'id')}).",
        {
            "similarity": round(back_similarity, 4),
            "threshold": threshold,
            "measure": measure,
        },
    )


# --------------------------------------------------------------------------------------------------------
# All flags


@dataclass(frozen=True)
class FlagConfig:
    """Thresholds of the flags; a project can override any of them."""

    length_z_threshold: float = DEFAULT_LENGTH_Z_THRESHOLD
    identical_similarity: float = DEFAULT_IDENTICAL_SIMILARITY
    identical_min_words: int = DEFAULT_IDENTICAL_MIN_WORDS
    truncation_ratio: float = DEFAULT_TRUNCATION_RATIO
    back_translation_measure: str = DEFAULT_BACK_TRANSLATION_MEASURE
    back_translation_threshold: float = DEFAULT_BACK_TRANSLATION_THRESHOLD  # on chrF++
    back_translation_embedding_threshold: float = DEFAULT_BACK_TRANSLATION_EMBEDDING_THRESHOLD

    def __post_init__(self) -> None:
        _measure_checked(self.back_translation_measure)

    @property
    def back_translation_cutoff(self) -> float:
        """The threshold of the chosen back-translation measure."""
        if self.back_translation_measure == BACK_TRANSLATION_EMBEDDING:
            return self.back_translation_embedding_threshold
        return self.back_translation_threshold


@dataclass(frozen=True)
class FlagContext:
    """What the flags need beyond the unit itself.

    ``pair_stats``: length statistics of the unit's language pair (``pair_length_stats_by_pair``), or
    ``None`` to skip the length flag. ``register_markers``: the project's word lists per register code.
    ``back_translation_similarity``: the similarity of the unit's back-translation to its source by the
    config's measure, computed elsewhere; ``None`` computes chrF++ here when the measure is chrF++ and the unit
    has a back-translation. An embedding similarity always comes from outside (the model is not pure code).
    """

    pair_stats: PairLengthStats | None = None
    register_markers: Mapping[str, Sequence[str]] = field(default_factory=lambda: DEFAULT_REGISTER_MARKERS)
    back_translation_similarity: float | None = None
    config: FlagConfig = field(default_factory=FlagConfig)


def _back_similarity(unit: TranslationUnitInput, context: FlagContext) -> float | None:
    if context.back_translation_similarity is not None:
        return context.back_translation_similarity
    if not (unit.back_translation and unit.back_translation.strip()):
        return None
    if context.config.back_translation_measure == BACK_TRANSLATION_CHRF:
        return back_translation_similarity(unit.source, unit.back_translation)
    raise ValueError(
        "the unit has a back-translation but no embedding similarity was given "
        "(FlagContext.back_translation_similarity)"
    )


def compute_flags(unit: TranslationUnitInput, *, context: FlagContext | None = None) -> list[Flag]:
    """All flags for one unit, in a fixed order (most serious first). An empty translation gets only the
    ``empty`` flag: the other checks say nothing useful about a missing text."""
    context = context or FlagContext()
    config = context.config
    empty = flag_empty(unit.source, unit.translation)
    if empty is not None:
        return [empty]
    stats = context.pair_stats
    typical = stats.typical_ratio if stats is not None and stats.usable else 1.0
    candidates = [
        flag_truncated(unit.source, unit.translation, typical_ratio=typical, ratio=config.truncation_ratio),
        flag_untranslated(
            unit.source,
            unit.translation,
            threshold=config.identical_similarity,
            min_words=config.identical_min_words,
        ),
        flag_length_ratio(unit.source, unit.translation, stats, threshold=config.length_z_threshold),
        flag_numbers(
            unit.source,
            unit.translation,
            source_language=unit.source_language,
            target_language=unit.target_language,
        ),
        flag_foreign_script(unit.translation, script=expected_script(unit.target_language)),
        flag_register(
            unit.translation,
            language=unit.target_language,
            register=unit.register,
            markers=context.register_markers,
        ),
        flag_slash_alternatives(unit.source, unit.translation),
        flag_bracket_additions(unit.source, unit.translation),
        flag_back_translation(
            _back_similarity(unit, context),
            threshold=config.back_translation_cutoff,
            measure=config.back_translation_measure,
        ),
    ]
    return [flag for flag in candidates if flag is not None]
