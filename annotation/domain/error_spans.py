"""Error spans of translations (MQM and ESA): the span, the category tree, the weights, the scores, the
agreement between raters on spans and the scoring of attention checks.

A span is a range of characters ``[start, end)`` of the stored text of one side of a segment (the target,
or the source for an omission), counted in Unicode code points (Python string indices), with a category
and a severity. A rating is one rater's answer on one segment of one system: its spans (none: "no
error"), and for ESA the 0-100 score.

MQM (Freitag et al. 2021, as WMT 2021 weighs it): each error costs points by its severity and category,
a rater's segment score is the sum of its errors' points, a segment's score the mean over its raters and
a system's score the mean over its segments (lower is better; 0 means no error found). The per category
and per severity breakdowns split the same mean, so each breakdown adds up to the system's score.

ESA (WMT 2024): raters mark spans with minor/major and then give the segment 0-100; a system's score is
the mean over its segments of the mean over raters (higher is better).

Both come with a seeded percentile bootstrap over the system's segments (95% interval).

Agreement between two raters of the same segment (``span_agreement``):

- character F1: with A and B the sets of characters the two raters marked on a side,
  ``2 * sum |A & B| / sum (|A| + |B|)`` over every rater pair of every shared segment and side (micro
  average; symmetric; 1 when they marked the same characters, 0 when no marked character is shared);
- severity-weighted agreement: every character gets, per rater, the severity weight of the heaviest
  span of that rater covering it (0 when none), then ``2 * sum min(wa, wb) / sum (wa + wb)``; equal to the
  character F1 when every span has the same severity, lower when the raters agree on where but not on how
  bad;
- span match: a span is matched when the other rater marked at least one of its characters on the same
  side; per pair, precision of B against A is the share of B's spans matched by A, recall the share of A's
  spans matched by B; overall the share of all spans matched.

Spans without offsets (an error the rater did not mark in the text) count in the scores, never in the
character measures.

Attention checks: an error injected at a known span is found by a rater who marked a span overlapping
it (or touching it, for an empty span) on the same side, whatever category or severity they chose.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where a bootstrap runs: the task pages import this module
    import numpy as np

__all__ = [
    "DEFAULT_TREE",
    "ESA_SEVERITIES",
    "MQM_SEVERITIES",
    "NO_ERROR",
    "ORIGINS",
    "OUTCOMES",
    "SIDES",
    "WMT21",
    "AttentionScore",
    "Category",
    "ErrorSpan",
    "EsaReport",
    "InjectedError",
    "MqmReport",
    "MqmWeights",
    "PairAgreement",
    "SegmentRating",
    "SpanAgreement",
    "SystemScore",
    "attention_scores",
    "bootstrap_ci",
    "category_key",
    "category_matches",
    "character_codes",
    "esa_report",
    "mqm_report",
    "rating_points",
    "severity_key",
    "span_agreement",
    "tree_codes",
    "tree_from_json",
    "tree_to_json",
    "weights_from_json",
]

TARGET = "target"
SOURCE = "source"
SIDES = (TARGET, SOURCE)

MAJOR = "major"
MINOR = "minor"
NEUTRAL = "neutral"
MQM_SEVERITIES = (MAJOR, MINOR, NEUTRAL)
ESA_SEVERITIES = (MAJOR, MINOR)
# Category and severity of the explicit "no error" answer in WMT/Anthea files (``No-error``).
NO_ERROR = "no-error"

# Where a span came from, and what the annotator did with a suggested one.
ORIGINS = ("annotator", "flags", "llm")
OUTCOMES = ("accepted", "edited", "removed")

DEFAULT_DRAWS = 1000


# --- the span and the rating ---------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorSpan:
    """One error. ``start``/``end`` are code-point offsets into the side's stored text (``end`` exclusive),
    both None when the error is not marked in the text. ``category`` and ``severity`` are kept as written
    (``Accuracy/Mistranslation``, ``Major``); compare them through ``category_key``/``severity_key``.

    ``origin``: who proposed the span (``annotator``; ``flags`` or ``llm`` for a suggestion);
    ``outcome``: for a suggested span, what the annotator did with it (``accepted``, ``edited`` or
    ``removed``; a removed span counts in no score); empty for the annotator's own spans."""

    start: int | None
    end: int | None
    side: str = TARGET
    category: str = ""
    severity: str = ""
    origin: str = "annotator"
    outcome: str = ""

    def __post_init__(self) -> None:
        if self.side not in SIDES:
            raise ValueError(f"span side must be one of {', '.join(SIDES)}; got {self.side!r}")
        if (self.start is None) != (self.end is None):
            raise ValueError("a span has both offsets or neither")
        if self.start is not None and self.end is not None and not 0 <= self.start <= self.end:
            raise ValueError(f"span offsets must satisfy 0 <= start <= end; got {self.start}, {self.end}")
        if self.origin not in ORIGINS:
            raise ValueError(f"span origin must be one of {', '.join(ORIGINS)}; got {self.origin!r}")
        if self.outcome and self.outcome not in OUTCOMES:
            raise ValueError(f"span outcome must be one of {', '.join(OUTCOMES)}; got {self.outcome!r}")

    @property
    def marked(self) -> bool:
        return self.start is not None

    @property
    def counts(self) -> bool:
        """Whether the span is an error of the submitted answer (a removed suggestion is not)."""
        return self.outcome != "removed"

    def chars(self) -> range:
        return range(self.start or 0, self.end or 0) if self.marked else range(0)

    def check_within(self, text: str) -> None:
        """ValueError when the span runs past the end of ``text`` (the stored text of its side)."""
        if self.end is not None and self.end > len(text):
            raise ValueError(
                f"span {self.start}-{self.end} runs past the {self.side} ({len(text)} characters)"
            )


@dataclass(frozen=True)
class SegmentRating:
    """One rater's answer on one segment of one system. ``segment`` identifies the source segment (the
    same for every system that translated it); no span means "no error". ``score``: the ESA 0-100 score
    (None for MQM). ``language`` and ``register`` feed the breakdowns (empty when unknown)."""

    system: str
    segment: str
    rater: str
    spans: tuple[ErrorSpan, ...] = ()
    score: float | None = None
    language: str = ""
    register: str = ""

    @property
    def errors(self) -> tuple[ErrorSpan, ...]:
        return tuple(span for span in self.spans if span.counts)


# --- the category tree -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Category:
    """A node of the error typology. ``code`` is the normalised path (``fluency/register``), ``label`` the
    WMT/Anthea spelling written to TSV files (``Fluency/Register``); names and help in English and
    Indonesian. ``register``: the node is about speech levels (Krama/Ngoko, Lemes/Loma, ...), shown
    first-class where the target language has registers. ``source_side``: marked on the source (omission)."""

    code: str
    label: str
    name_en: str
    name_id: str
    help_en: str
    help_id: str
    children: tuple[Category, ...] = ()
    register: bool = False
    source_side: bool = False

    def walk(self) -> Iterable[Category]:
        yield self
        for child in self.children:
            yield from child.walk()


def _c(
    code: str, label: str, names: tuple[str, str], helps: tuple[str, str], *children: Category, **kw: bool
) -> Category:
    return Category(code, label, names[0], names[1], helps[0], helps[1], tuple(children), **kw)


DEFAULT_TREE: tuple[Category, ...] = (
    _c(
        "accuracy",
        "Accuracy",
        ("Accuracy", "Akurasi"),
        (
            "The target does not say what the source says.",
            "Terjemahan tidak menyampaikan apa yang dikatakan teks sumber.",
        ),
        _c(
            "accuracy/mistranslation",
            "Accuracy/Mistranslation",
            ("Mistranslation", "Salah terjemah"),
            (
                "The words carry a different meaning from the source (a wrong word, number, negation or name).",
                "Kata-katanya bermakna lain dari sumber (kata, angka, negasi, atau nama yang keliru).",
            ),
        ),
        _c(
            "accuracy/addition",
            "Accuracy/Addition",
            ("Addition", "Penambahan"),
            (
                "The target says something the source does not.",
                "Terjemahan memuat sesuatu yang tidak ada di sumber.",
            ),
        ),
        _c(
            "accuracy/omission",
            "Accuracy/Omission",
            ("Omission", "Penghilangan"),
            (
                "Something in the source is missing from the target; mark it on the source.",
                "Ada bagian sumber yang hilang dari terjemahan; tandai bagian itu pada teks sumber.",
            ),
            source_side=True,
        ),
        _c(
            "accuracy/untranslated",
            "Accuracy/Untranslated",
            ("Untranslated", "Tidak diterjemahkan"),
            (
                "A part is left in the source language although it should be translated.",
                "Sebagian teks dibiarkan dalam bahasa sumber padahal seharusnya diterjemahkan.",
            ),
        ),
    ),
    _c(
        "fluency",
        "Fluency",
        ("Fluency", "Kelancaran"),
        (
            "The target is not well-formed in the target language, whatever the source says.",
            "Terjemahan tidak tertata baik dalam bahasa sasaran, terlepas dari isi sumbernya.",
        ),
        _c(
            "fluency/grammar",
            "Fluency/Grammar",
            ("Grammar", "Tata bahasa"),
            (
                "Wrong word form, affix, agreement or word order.",
                "Bentuk kata, imbuhan, kesesuaian, atau urutan kata yang salah.",
            ),
        ),
        _c(
            "fluency/spelling",
            "Fluency/Spelling",
            ("Spelling", "Ejaan"),
            (
                "A misspelt word, or wrong capitals or diacritics.",
                "Kata salah eja, atau huruf kapital dan diakritik yang salah.",
            ),
        ),
        _c(
            "fluency/punctuation",
            "Fluency/Punctuation",
            ("Punctuation", "Tanda baca"),
            (
                "Missing, extra or wrong punctuation or spacing around it.",
                "Tanda baca yang hilang, berlebih, atau salah, termasuk spasi di sekitarnya.",
            ),
        ),
        _c(
            "fluency/register",
            "Fluency/Register",
            ("Register", "Tingkat tutur"),
            (
                "The wrong speech level or politeness for the requested register "
                "(for example Ngoko where Krama was asked, Loma where Lemes was asked).",
                "Tingkat tutur atau kesantunan tidak sesuai dengan ragam yang diminta "
                "(misalnya Ngoko padahal diminta Krama, Loma padahal diminta Lemes).",
            ),
            register=True,
        ),
        _c(
            "fluency/inconsistency",
            "Fluency/Inconsistency",
            ("Inconsistency", "Ketidakkonsistenan"),
            (
                "The same thing is said or spelt differently within the text.",
                "Hal yang sama ditulis atau disebut secara berbeda di dalam teks.",
            ),
        ),
    ),
    _c(
        "terminology",
        "Terminology",
        ("Terminology", "Terminologi"),
        (
            "A term that is wrong or inappropriate for the field or context.",
            "Istilah yang salah atau tidak tepat untuk bidang atau konteksnya.",
        ),
    ),
    _c(
        "style",
        "Style",
        ("Style", "Gaya bahasa"),
        (
            "Correct but awkward or unnatural wording.",
            "Benar tetapi janggal atau tidak wajar.",
        ),
    ),
    _c(
        "locale-convention",
        "Locale convention",
        ("Locale convention", "Konvensi lokal"),
        (
            "Dates, numbers, currency, addresses or names not written the way the target locale writes them.",
            "Tanggal, angka, mata uang, alamat, atau nama tidak ditulis sesuai kebiasaan setempat.",
        ),
    ),
    _c(
        "non-translation",
        "Non-translation!",
        ("Non-translation", "Bukan terjemahan"),
        (
            "The target is too garbled or unrelated to mark single errors; mark the whole target once.",
            "Terjemahan terlalu rusak atau tidak berhubungan sehingga kesalahannya tidak bisa ditandai satu "
            "per satu; tandai seluruh terjemahan sekali saja.",
        ),
    ),
    _c(
        "other",
        "Other",
        ("Other", "Lainnya"),
        ("An error that fits no other category.", "Kesalahan yang tidak masuk kategori lain."),
    ),
)


@lru_cache(maxsize=4096)
def category_key(label: str) -> str:
    """The normalised form of a category label: lower case, no trailing ``!``, words joined by ``-`` and
    levels by ``/`` (``Locale convention/Currency format`` -> ``locale-convention/currency-format``)."""
    parts = [re.sub(r"[\s_]+", "-", part.strip().lower()) for part in label.strip().rstrip("!").split("/")]
    return "/".join(part for part in parts if part)


@lru_cache(maxsize=256)
def severity_key(severity: str) -> str:
    return re.sub(r"[\s_]+", "-", severity.strip().lower())


def tree_codes(tree: Sequence[Category] = DEFAULT_TREE) -> tuple[str, ...]:
    return tuple(node.code for top in tree for node in top.walk())


def tree_to_json(tree: Sequence[Category] = DEFAULT_TREE) -> list[dict[str, Any]]:
    def node(c: Category) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": c.code,
            "label": c.label,
            "name": {"en": c.name_en, "id": c.name_id},
            "help": {"en": c.help_en, "id": c.help_id},
        }
        if c.register:
            out["register"] = True
        if c.source_side:
            out["source_side"] = True
        if c.children:
            out["children"] = [node(child) for child in c.children]
        return out

    return [node(top) for top in tree]


def tree_from_json(data: Any) -> tuple[Category, ...]:
    """A category tree from its JSON form (a project setting); ValueError naming the bad node."""

    def text(obj: Any, key: str, where: str) -> tuple[str, str]:
        value = obj.get(key)
        if isinstance(value, str):
            return value, value
        if not isinstance(value, dict) or not all(isinstance(value.get(lang), str) for lang in ("en", "id")):
            raise ValueError(f"{where}: {key!r} must be a text or {{'en': ..., 'id': ...}}")
        return value["en"], value["id"]

    seen: set[str] = set()

    def node(obj: Any, where: str, parent: str) -> Category:
        if not isinstance(obj, dict):
            raise ValueError(f"{where}: a category must be an object")
        label = obj.get("label")
        if not isinstance(label, str) or not category_key(label):
            raise ValueError(f"{where}: 'label' must be a non-empty text")
        code = category_key(label)
        if parent and not code.startswith(parent + "/"):
            code = f"{parent}/{code.rsplit('/', 1)[-1]}"
        if code in seen:
            raise ValueError(f"{where}: category {code!r} appears twice")
        seen.add(code)
        names = text(obj, "name", where) if "name" in obj else (label, label)
        helps = text(obj, "help", where) if "help" in obj else ("", "")
        children = obj.get("children", [])
        if not isinstance(children, list):
            raise ValueError(f"{where}: 'children' must be a list")
        return Category(
            code,
            label,
            names[0],
            names[1],
            helps[0],
            helps[1],
            tuple(node(child, f"{where}.children[{i}]", code) for i, child in enumerate(children)),
            register=bool(obj.get("register", False)),
            source_side=bool(obj.get("source_side", False)),
        )

    if not isinstance(data, list) or not data:
        raise ValueError("the category tree must be a non-empty list")
    return tuple(node(obj, f"categories[{i}]", "") for i, obj in enumerate(data))


# --- weights ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MqmWeights:
    """Points per error. The most specific rule wins: for the category's path from the leaf up
    (``fluency/punctuation``, then ``fluency``), a (category, severity) weight, then a category weight
    (any severity); at last the severity's weight. ``severity`` lists the severities a file may use."""

    name: str
    severity: Mapping[str, float]
    category: Mapping[str, float] = field(default_factory=dict)
    category_severity: Mapping[tuple[str, str], float] = field(default_factory=dict)

    def weight(self, category: str, severity: str) -> float:
        sev = severity_key(severity)
        if sev not in self.severity:
            known = ", ".join(self.severity)
            raise ValueError(f"severity {severity!r} has no weight (the weights know {known})")
        path = category_key(category).split("/")
        for depth in range(len(path), 0, -1):
            prefix = "/".join(path[:depth])
            if (prefix, sev) in self.category_severity:
                return self.category_severity[(prefix, sev)]
            if prefix in self.category:
                return self.category[prefix]
        return self.severity[sev]

    def as_json(self) -> dict[str, Any]:
        nested: dict[str, dict[str, float]] = {}
        for (cat, sev), value in self.category_severity.items():
            nested.setdefault(cat, {})[sev] = value
        return {
            "name": self.name,
            "severity": dict(self.severity),
            "category": dict(self.category),
            "category_severity": nested,
        }


# Freitag et al. (2021) / WMT 2021: Major 5, Minor 1, Neutral 0, minor Fluency/Punctuation 0.1,
# Non-translation 25.
WMT21 = MqmWeights(
    name="wmt21",
    severity={MAJOR: 5.0, MINOR: 1.0, NEUTRAL: 0.0},
    category={"non-translation": 25.0},
    category_severity={("fluency/punctuation", MINOR): 0.1},
)


def _weight_value(value: Any, where: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"weights: {where} must be a number >= 0; got {value!r}")
    return float(value)


def weights_from_json(data: Any, *, name: str = "custom") -> MqmWeights:
    """Weights from ``{"severity": {"major": 5, ...}, "category": {"non-translation": 25},
    "category_severity": {"fluency/punctuation": {"minor": 0.1}}}``; ValueError naming the bad key."""
    if not isinstance(data, dict):
        raise ValueError("weights: the file must hold a JSON object")
    unknown = sorted(set(data) - {"name", "severity", "category", "category_severity"})
    if unknown:
        raise ValueError(
            f"weights: unknown key {unknown[0]!r} (known: severity, category, category_severity)"
        )
    severity = data.get("severity")
    if not isinstance(severity, dict) or not severity:
        raise ValueError("weights: 'severity' must be an object of severity -> points")
    sev = {severity_key(k): _weight_value(v, f"severity.{k}") for k, v in severity.items()}
    if NO_ERROR in sev:
        raise ValueError(f"weights: {NO_ERROR!r} is an answer, not a severity")
    category = data.get("category", {})
    if not isinstance(category, dict):
        raise ValueError("weights: 'category' must be an object of category -> points")
    cat = {category_key(k): _weight_value(v, f"category.{k}") for k, v in category.items()}
    nested = data.get("category_severity", {})
    if not isinstance(nested, dict):
        raise ValueError("weights: 'category_severity' must be an object of category -> {severity: points}")
    cat_sev: dict[tuple[str, str], float] = {}
    for cat_label, inner in nested.items():
        if not isinstance(inner, dict):
            raise ValueError(
                f"weights: category_severity.{cat_label} must be an object of severity -> points"
            )
        for sev_label, value in inner.items():
            if severity_key(sev_label) not in sev:
                raise ValueError(f"weights: category_severity.{cat_label}.{sev_label}: unknown severity")
            cat_sev[(category_key(cat_label), severity_key(sev_label))] = _weight_value(
                value, f"category_severity.{cat_label}.{sev_label}"
            )
    given = data.get("name", name)
    return MqmWeights(name=str(given), severity=sev, category=cat, category_severity=cat_sev)


def rating_points(rating: SegmentRating, weights: MqmWeights) -> float:
    """A rater's MQM points on one segment: the sum of the weights of its errors."""
    return sum(weights.weight(span.category, span.severity) for span in rating.errors)


# --- scores per system -----------------------------------------------------------------------------


def bootstrap_ci(
    values: Sequence[float], *, draws: int, rng: np.random.Generator
) -> tuple[float, float] | None:
    """95% percentile interval of the mean of ``values`` resampled with replacement ``draws`` times."""
    import numpy as np

    data = np.asarray(values, dtype=float)
    if draws <= 0 or data.size == 0:
        return None
    means = np.empty(draws)
    # Chunks keep memory bounded for systems with many segments.
    chunk = max(1, 2_000_000 // data.size)
    for lo in range(0, draws, chunk):
        hi = min(draws, lo + chunk)
        means[lo:hi] = data[rng.integers(0, data.size, size=(hi - lo, data.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


@dataclass(frozen=True)
class SystemScore:
    """``score``: MQM points per segment (lower is better) or ESA mean (higher is better); ``by_category``
    and ``by_severity`` (MQM) split ``score`` and add up to it; ``errors`` counts the error spans."""

    system: str
    score: float
    ci95: tuple[float, float] | None
    segments: int
    ratings: int
    by_category: dict[str, float] = field(default_factory=dict)
    by_severity: dict[str, float] = field(default_factory=dict)
    errors: int = 0

    def as_dict(self, score_name: str = "mqm", rank: int | None = None) -> dict[str, Any]:
        """The JSON form the page, the API and ``manage.py mqm_scores`` share (``score_name``: ``mqm`` or
        ``esa``)."""
        out: dict[str, Any] = {"rank": rank} if rank is not None else {}
        out.update(
            {
                "system": self.system,
                score_name: self.score,
                "ci95": list(self.ci95) if self.ci95 else None,
                "segments": self.segments,
                "ratings": self.ratings,
                "errors": self.errors,
            }
        )
        if score_name == "mqm":
            out["by_category"] = dict(self.by_category)
            out["by_severity"] = dict(self.by_severity)
        return out


def _ranked_json(systems: Sequence[SystemScore], score_name: str) -> list[dict[str, Any]]:
    return [system.as_dict(score_name, rank) for rank, system in enumerate(systems, start=1)]


def _segment_rows(ratings: Iterable[SegmentRating]) -> dict[tuple[str, str], list[SegmentRating]]:
    rows: dict[tuple[str, str], list[SegmentRating]] = defaultdict(list)
    seen: set[tuple[str, str, str]] = set()
    for rating in ratings:
        key = (rating.system, rating.segment, rating.rater)
        if key in seen:
            raise ValueError(
                f"rater {rating.rater!r} rated segment {rating.segment!r} of {rating.system!r} twice"
            )
        seen.add(key)
        rows[(rating.system, rating.segment)].append(rating)
    return rows


def _mqm_systems(
    ratings: Sequence[SegmentRating], weights: MqmWeights, *, draws: int, seed: int
) -> list[SystemScore]:
    import numpy as np

    per_system: dict[str, list[tuple[float, dict[str, float], dict[str, float], int, int]]] = defaultdict(
        list
    )
    memo: dict[tuple[str, str], float] = {}
    for (system, _segment), raters in sorted(_segment_rows(ratings).items()):
        n = len(raters)
        total = 0.0
        cats: dict[str, float] = defaultdict(float)
        sevs: dict[str, float] = defaultdict(float)
        errors = 0
        for rating in raters:
            for span in rating.errors:
                key = (span.category, span.severity)
                if key not in memo:
                    memo[key] = weights.weight(*key)
                points = memo[key] / n
                total += points
                cats[span.category] += points
                sevs[severity_key(span.severity)] += points
                errors += 1
        per_system[system].append((total, cats, sevs, n, errors))
    rng = np.random.default_rng(seed)
    out = []
    for system in sorted(per_system):
        rows = per_system[system]
        m = len(rows)
        by_category: dict[str, float] = defaultdict(float)
        by_severity: dict[str, float] = defaultdict(float)
        for _, cats, sevs, _, _ in rows:
            for key, value in cats.items():
                by_category[key] += value / m
            for key, value in sevs.items():
                by_severity[key] += value / m
        values = [row[0] for row in rows]
        out.append(
            SystemScore(
                system=system,
                score=float(np.mean(values)),
                ci95=bootstrap_ci(values, draws=draws, rng=rng),
                segments=m,
                ratings=sum(row[3] for row in rows),
                by_category=dict(sorted(by_category.items())),
                by_severity=dict(sorted(by_severity.items())),
                errors=sum(row[4] for row in rows),
            )
        )
    return out


def _by(ratings: Sequence[SegmentRating], attribute: str) -> dict[str, list[SegmentRating]]:
    groups: dict[str, list[SegmentRating]] = defaultdict(list)
    for rating in ratings:
        value = getattr(rating, attribute)
        if value:
            groups[value].append(rating)
    return dict(sorted(groups.items()))


@dataclass(frozen=True)
class MqmReport:
    """Systems best first (lowest MQM), and the same per language and per register where known."""

    weights: MqmWeights
    systems: tuple[SystemScore, ...]
    by_language: dict[str, tuple[SystemScore, ...]]
    by_register: dict[str, tuple[SystemScore, ...]]
    draws: int
    seed: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "weights": self.weights.as_json(),
            "bootstrap": {"draws": self.draws, "seed": self.seed},
            "systems": _ranked_json(self.systems, "mqm"),
            "by_language": {k: _ranked_json(v, "mqm") for k, v in self.by_language.items()},
            "by_register": {k: _ranked_json(v, "mqm") for k, v in self.by_register.items()},
        }


def _ranked(scores: list[SystemScore], *, higher_is_better: bool) -> tuple[SystemScore, ...]:
    return tuple(sorted(scores, key=lambda s: (-s.score if higher_is_better else s.score, s.system)))


def mqm_report(
    ratings: Iterable[SegmentRating],
    weights: MqmWeights = WMT21,
    *,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
) -> MqmReport:
    """MQM per system (mean over segments of the mean over raters of the weighted error points), with a
    seeded bootstrap interval over segments, breakdowns, and the same per language and register."""
    ratings = list(ratings)
    if not ratings:
        raise ValueError("no ratings to score")

    def ranked(part: Sequence[SegmentRating]) -> tuple[SystemScore, ...]:
        return _ranked(_mqm_systems(part, weights, draws=draws, seed=seed), higher_is_better=False)

    return MqmReport(
        weights=weights,
        systems=ranked(ratings),
        by_language={k: ranked(v) for k, v in _by(ratings, "language").items()},
        by_register={k: ranked(v) for k, v in _by(ratings, "register").items()},
        draws=draws,
        seed=seed,
    )


@dataclass(frozen=True)
class EsaReport:
    """Systems best first (highest mean ESA score), and per language and register where known."""

    systems: tuple[SystemScore, ...]
    by_language: dict[str, tuple[SystemScore, ...]]
    by_register: dict[str, tuple[SystemScore, ...]]
    draws: int
    seed: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "bootstrap": {"draws": self.draws, "seed": self.seed},
            "systems": _ranked_json(self.systems, "esa"),
            "by_language": {k: _ranked_json(v, "esa") for k, v in self.by_language.items()},
            "by_register": {k: _ranked_json(v, "esa") for k, v in self.by_register.items()},
        }


def _esa_systems(ratings: Sequence[SegmentRating], *, draws: int, seed: int) -> list[SystemScore]:
    import numpy as np

    per_system: dict[str, list[tuple[float, int, int]]] = defaultdict(list)
    for (system, segment), raters in sorted(_segment_rows(ratings).items()):
        for rating in raters:
            if rating.score is None or not 0 <= rating.score <= 100:
                raise ValueError(
                    f"rater {rating.rater!r} on segment {segment!r} of {system!r}: an ESA score must be 0-100"
                )
        mean = sum(float(r.score or 0) for r in raters) / len(raters)
        per_system[system].append((mean, len(raters), sum(len(r.errors) for r in raters)))
    rng = np.random.default_rng(seed)
    out = []
    for system in sorted(per_system):
        values = [row[0] for row in per_system[system]]
        out.append(
            SystemScore(
                system=system,
                score=float(np.mean(values)),
                ci95=bootstrap_ci(values, draws=draws, rng=rng),
                segments=len(values),
                ratings=sum(row[1] for row in per_system[system]),
                errors=sum(row[2] for row in per_system[system]),
            )
        )
    return out


def esa_report(ratings: Iterable[SegmentRating], *, draws: int = DEFAULT_DRAWS, seed: int = 0) -> EsaReport:
    """ESA per system: the mean over segments of the mean 0-100 score over raters, with a seeded bootstrap
    interval over segments, and the same per language and register."""
    ratings = list(ratings)
    if not ratings:
        raise ValueError("no ratings to score")

    def ranked(part: Sequence[SegmentRating]) -> tuple[SystemScore, ...]:
        return _ranked(_esa_systems(part, draws=draws, seed=seed), higher_is_better=True)

    return EsaReport(
        systems=ranked(ratings),
        by_language={k: ranked(v) for k, v in _by(ratings, "language").items()},
        by_register={k: ranked(v) for k, v in _by(ratings, "register").items()},
        draws=draws,
        seed=seed,
    )


# --- agreement on spans ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PairAgreement:
    """Two raters over the segments they both rated. ``precision``: share of ``rater_b``'s spans matched by
    ``rater_a``'s; ``recall``: share of ``rater_a``'s spans matched by ``rater_b``'s (None without spans)."""

    rater_a: str
    rater_b: str
    segments: int
    char_f1: float | None
    severity_weighted: float | None
    precision: float | None
    recall: float | None


@dataclass(frozen=True)
class SpanAgreement:
    """Micro averages over every pair of raters of every shared segment (None when nobody marked a
    character, or no span was marked); ``pairs`` per rater pair."""

    char_f1: float | None
    severity_weighted: float | None
    span_match: float | None
    n_segments: int
    n_pairs: int
    pairs: tuple[PairAgreement, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "char_f1": self.char_f1,
            "severity_weighted": self.severity_weighted,
            "span_match": self.span_match,
            "n_segments": self.n_segments,
            "n_pairs": self.n_pairs,
            "pairs": [asdict(pair) for pair in self.pairs],
        }


def _char_weights(spans: Iterable[ErrorSpan], side: str, weights: MqmWeights) -> dict[int, float]:
    heaviest: dict[int, float] = {}
    for span in spans:
        if span.side != side or not span.marked:
            continue
        w = weights.severity.get(severity_key(span.severity))
        if w is None:
            raise ValueError(f"severity {span.severity!r} has no weight")
        for c in span.chars():
            heaviest[c] = max(heaviest.get(c, 0.0), w)
    return heaviest


def _overlaps(a: ErrorSpan, b: ErrorSpan) -> bool:
    if a.side != b.side or not a.marked or not b.marked:
        return False
    a0, a1, b0, b1 = a.start or 0, a.end or 0, b.start or 0, b.end or 0
    if a0 == a1 or b0 == b1:  # an empty span touches a point
        return a0 <= b1 and b0 <= a1
    return a0 < b1 and b0 < a1


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def span_agreement(ratings: Iterable[SegmentRating], weights: MqmWeights = WMT21) -> SpanAgreement:
    """Character F1, severity-weighted agreement and span match between the raters of each segment (see the
    module docstring for the definitions)."""
    segments = _segment_rows(ratings)
    # per pair: inter, total, wmin, wsum, matched_b, spans_b, matched_a, spans_a, segments
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0] * 9)
    n_segments = 0
    for raters in segments.values():
        if len(raters) < 2:
            continue
        n_segments += 1
        raters = sorted(raters, key=lambda r: r.rater)
        chars = [{side: _char_weights(r.errors, side, weights) for side in SIDES} for r in raters]
        for i, a in enumerate(raters):
            for j in range(i + 1, len(raters)):
                b = raters[j]
                acc = sums[(a.rater, b.rater)]
                acc[8] += 1
                for side in SIDES:
                    wa, wb = chars[i][side], chars[j][side]
                    acc[0] += len(wa.keys() & wb.keys())
                    acc[1] += len(wa) + len(wb)
                    acc[2] += sum(min(wa.get(c, 0.0), wb.get(c, 0.0)) for c in wa.keys() | wb.keys())
                    acc[3] += sum(wa.values()) + sum(wb.values())
                spans_a = [s for s in a.errors if s.marked]
                spans_b = [s for s in b.errors if s.marked]
                acc[4] += sum(any(_overlaps(s, t) for t in spans_a) for s in spans_b)
                acc[5] += len(spans_b)
                acc[6] += sum(any(_overlaps(s, t) for t in spans_b) for s in spans_a)
                acc[7] += len(spans_a)
    pairs = tuple(
        PairAgreement(
            rater_a=a,
            rater_b=b,
            segments=int(acc[8]),
            char_f1=_ratio(2 * acc[0], acc[1]),
            severity_weighted=_ratio(2 * acc[2], acc[3]),
            precision=_ratio(acc[4], acc[5]),
            recall=_ratio(acc[6], acc[7]),
        )
        for (a, b), acc in sorted(sums.items())
    )
    total = [sum(acc[k] for acc in sums.values()) for k in range(9)]
    return SpanAgreement(
        char_f1=_ratio(2 * total[0], total[1]),
        severity_weighted=_ratio(2 * total[2], total[3]),
        span_match=_ratio(total[4] + total[6], total[5] + total[7]),
        n_segments=n_segments,
        n_pairs=int(total[8]),
        pairs=pairs,
    )


def character_codes(
    ratings: Iterable[SegmentRating],
    lengths: Mapping[tuple[str, str], Mapping[str, int]],
    weights: MqmWeights = WMT21,
) -> tuple[list[int], list[str], list[int], list[float]]:
    """Every character of every side of each segment rated by two raters or more, coded per rater: whether
    it is inside one of the rater's error spans (1/0), and the severity weight of the rater's heaviest span
    covering it (0 when none). ``lengths`` gives each (system, segment)'s text lengths by side. Returned as
    columns (unit number, rater, error, severity) for Krippendorff's alpha: nominal on ``error``, ordinal on
    ``severity``."""
    units: list[int] = []
    raters: list[str] = []
    errors: list[int] = []
    severities: list[float] = []
    base = 0
    for key, rated in sorted(_segment_rows(ratings).items()):
        if len(rated) < 2:
            continue
        size = lengths.get(key)
        if size is None:
            raise ValueError(f"no text length for segment {key[1]!r} of {key[0]!r}")
        for side in SIDES:
            n = int(size.get(side, 0))
            for rating in rated:
                marked = _char_weights(rating.errors, side, weights)
                if marked and max(marked) >= n:
                    raise ValueError(f"a span of rater {rating.rater!r} runs past the {side} of {key[1]!r}")
                units.extend(range(base, base + n))
                raters.extend([rating.rater] * n)
                errors.extend(1 if c in marked else 0 for c in range(n))
                severities.extend(marked.get(c, 0.0) for c in range(n))
            base += n
    return units, raters, errors, severities


# --- attention checks ------------------------------------------------------------------------------


@dataclass(frozen=True)
class InjectedError:
    """An error put into a target on purpose (``kind``: ``number``, ``negation``, ``untranslated``, ...)
    at ``span`` of segment ``segment`` of system ``system``."""

    system: str
    segment: str
    span: ErrorSpan
    kind: str = ""


@dataclass(frozen=True)
class AttentionScore:
    """``checked``: injected errors in segments the rater rated (seen); ``found``: those credited;
    ``missed``: the rest."""

    rater: str
    checked: int
    found: int

    @property
    def missed(self) -> int:
        return self.checked - self.found

    @property
    def share(self) -> float | None:
        return self.found / self.checked if self.checked else None


def category_matches(expected: str, marked: str) -> bool:
    """Whether a marked category agrees with an expected one: the same node, or one is the other's
    ancestor (``Accuracy`` agrees with ``Accuracy/Mistranslation``, and the other way round)."""
    a, b = category_key(expected), category_key(marked)
    return bool(a and b) and (a == b or a.startswith(b + "/") or b.startswith(a + "/"))


def attention_scores(
    injected: Iterable[InjectedError], ratings: Iterable[SegmentRating], *, match_category: bool = False
) -> tuple[AttentionScore, ...]:
    """Per rater who rated a segment with an injected error: how many such segments they rated and in how
    many they marked a span overlapping the injected one (same side, any category or severity). With
    ``match_category`` the overlapping span must also carry an agreeing category (``category_matches``)."""
    checks: dict[tuple[str, str], list[InjectedError]] = defaultdict(list)
    for item in injected:
        if not item.span.marked:
            raise ValueError(f"the injected error in segment {item.segment!r} of {item.system!r} has no span")
        checks[(item.system, item.segment)].append(item)
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for rating in ratings:
        for item in checks.get((rating.system, rating.segment), ()):
            acc = tally[rating.rater]
            acc[0] += 1
            acc[1] += any(
                _overlaps(item.span, span)
                and (not match_category or category_matches(item.span.category, span.category))
                for span in rating.errors
            )
    return tuple(AttentionScore(rater, acc[0], acc[1]) for rater, acc in sorted(tally.items()))
