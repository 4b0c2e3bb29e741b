"""LLM-judge prompt templates as data, and their rendering into chat messages.

A template is plain data (kind, language, version, system text, user text, output JSON schema, sampling) so
that project managers can edit and version it like a rubric; a judgment records which version it used. The
system text, when not empty, is sent as the first (system) chat message. A template's ``sampling`` states the
sampling parameters its judge runs take unless the run sets them (temperature, top_p, top_k, max_tokens);
what it leaves out comes from the endpoint's defaults.
Placeholders are written ``{{name}}``: single braces stay literal, so a template can show the JSON it wants
back without escaping. Substitution is a single pass, so text inside a value (a response that happens to
contain ``{{answer}}``) is never expanded again.

Three kinds, after the studies we reproduce:

- ``pairwise``: which of two responses is better, in two families. Without a tie (IndoPref): JSON
  ``{"explanation", "score": "Response 1"|"Response 2"}`` (Indonesian: ``"Respon 1"|"Respon 2"``), the
  ``default`` templates. With a tie (MT-bench): ``{"explanation", "score": "A"|"B"|"tie"}`` (Indonesian:
  ``"seri"``), the ``with_tie`` templates. Multi-turn conversations are shown turn by turn; a verdict on one
  turn shows the whole conversation up to that turn, with both assistants' earlier answers, and asks about
  the last turn (as MT-bench's multi-turn templates do).
- ``single_grade``: one answer turn graded 1-10 against a reference answer and the category's priority
  aspects, JSON ``{"explanation", "score": 1..10}`` (SeaBench).
- ``factual``: factual correctness 1-5 against a gold answer, JSON ``{"explanation", "score": 1..5}``,
  divided by 5 for a benchmark score (LoraxBench open QA).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from evaluation.domain.sampling import SamplingParamsError, checked_template_sampling

PAIRWISE = "pairwise"
SINGLE_GRADE = "single_grade"
FACTUAL = "factual"
KINDS = (PAIRWISE, SINGLE_GRADE, FACTUAL)
LANGUAGES = ("en", "id")

RESPONSE_1 = "Response 1"
RESPONSE_2 = "Response 2"
TIE = "tie"

#: Pairwise template families: without a tie (IndoPref) and with one (MT-bench). A family is a template name.
NO_TIE = "no_tie"
WITH_TIE = "with_tie"
PAIRWISE_FAMILIES = (NO_TIE, WITH_TIE)
FAMILY_TEMPLATE_NAMES: Mapping[str, str] = MappingProxyType({NO_TIE: "default", WITH_TIE: "with_tie"})

#: The labels each family's templates ask the judge to answer with, per language (the parser reads more).
PAIRWISE_LABELS: Mapping[tuple[str, str], tuple[str, ...]] = MappingProxyType(
    {
        (NO_TIE, "en"): (RESPONSE_1, RESPONSE_2),
        (NO_TIE, "id"): ("Respon 1", "Respon 2"),
        (WITH_TIE, "en"): ("A", "B", TIE),
        (WITH_TIE, "id"): ("A", "B", "seri"),
    }
)


def pairwise_family_of(template_name: str) -> str:
    """The family of a pairwise template: ``with_tie`` for the templates named so, else ``no_tie``."""
    return WITH_TIE if template_name == FAMILY_TEMPLATE_NAMES[WITH_TIE] else NO_TIE


#: Inclusive score range of the graded kinds.
SCORE_RANGES: Mapping[str, tuple[int, int]] = MappingProxyType({SINGLE_GRADE: (1, 10), FACTUAL: (1, 5)})

#: Placeholders a template of each kind must contain, otherwise it cannot show the judge what to judge.
REQUIRED_PLACEHOLDERS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        PAIRWISE: frozenset({"question", "response_1", "response_2"}),
        SINGLE_GRADE: frozenset({"question", "answer"}),
        FACTUAL: frozenset({"question", "gold", "answer"}),
    }
)

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class TemplateError(ValueError):
    """A template is malformed, or rendering it lacks a value."""


def placeholders_in(text: str) -> frozenset[str]:
    """Names of the ``{{name}}`` placeholders in ``text``."""
    return frozenset(_PLACEHOLDER.findall(text))


def fill_placeholders(text: str, values: Mapping[str, object]) -> str:
    """Replace every ``{{name}}`` in ``text`` by ``values[name]`` in one pass.

    Raises :class:`TemplateError` naming every placeholder without a value. Values that are not text or
    numbers are refused, because ``str()`` of a list or a dict silently produces a wrong prompt.
    """
    missing = sorted(placeholders_in(text) - set(values))
    if missing:
        raise TemplateError(f"missing value(s) for placeholder(s): {', '.join(missing)}")

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        value = values[name]
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise TemplateError(f"placeholder {name!r} needs text, got {type(value).__name__}")
        return str(value)

    return _PLACEHOLDER.sub(substitute, text)


def json_schema_for(kind: str, labels: Sequence[str] | None = None) -> dict[str, Any]:
    """JSON schema of the judge's expected output, for structured-output requests.

    ``labels``: the pairwise verdict labels the template asks for (default ``Response 1``/``Response 2``).

    ``explanation`` comes first so that a grammar-constrained model writes its reasons before its verdict.
    Scores use ``enum`` rather than ``minimum``/``maximum`` because every constrained decoder we target
    (OpenAI strict mode, vLLM, SGLang, llama.cpp grammars) supports it.
    """
    if kind == PAIRWISE:
        score: dict[str, Any] = {"type": "string", "enum": list(labels or (RESPONSE_1, RESPONSE_2))}
        title = "pairwise_verdict"
    elif kind in SCORE_RANGES:
        low, high = SCORE_RANGES[kind]
        score = {"type": "integer", "enum": list(range(low, high + 1))}
        title = f"{kind}_score"
    else:
        raise TemplateError(f"unknown judge kind {kind!r}; expected one of {', '.join(KINDS)}")
    return {
        "title": title,
        "type": "object",
        "properties": {"explanation": {"type": "string"}, "score": score},
        "required": ["explanation", "score"],
        "additionalProperties": False,
    }


def with_explanation_limit(schema: Mapping[str, Any], max_chars: int) -> dict[str, Any]:
    """``schema`` with its ``explanation`` string capped at ``max_chars`` characters (``maxLength``).

    Under a grammar-constrained decoder the explanation then has to close after at most ``max_chars``
    characters and the verdict follows, so a reply fits in about ``max_chars`` + 20 tokens: a small model
    that repeats itself can no longer run out of tokens before its score. The input is not changed.
    """
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise TemplateError(f"the explanation limit must be a whole number >= 1, got {max_chars!r}")
    properties = dict(schema.get("properties") or {})
    if "explanation" not in properties:
        raise TemplateError("the output schema has no 'explanation' property to limit")
    properties["explanation"] = {**dict(properties["explanation"]), "maxLength": max_chars}
    return {**dict(schema), "properties": properties}


@dataclass(frozen=True)
class JudgeTemplate:
    """One judge prompt: editable data, identified by (name, kind, language, version)."""

    kind: str
    language: str
    version: int
    system: str
    user: str
    name: str = "default"
    output_schema: Mapping[str, Any] = field(default_factory=dict)
    sampling: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise TemplateError(f"unknown judge kind {self.kind!r}; expected one of {', '.join(KINDS)}")
        if self.language not in LANGUAGES:
            raise TemplateError(
                f"template language must be one of {', '.join(LANGUAGES)}, got {self.language!r}"
            )
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version < 1:
            raise TemplateError(f"template version must be an integer >= 1, got {self.version!r}")
        if not isinstance(self.user, str) or not self.user.strip():
            raise TemplateError("template user text must not be empty")
        if not isinstance(self.system, str):
            raise TemplateError("template system text must be a string (empty for none)")
        try:
            object.__setattr__(self, "sampling", checked_template_sampling(self.sampling))
        except SamplingParamsError as exc:
            raise TemplateError(f"template sampling: {exc}") from exc
        missing = sorted(REQUIRED_PLACEHOLDERS[self.kind] - self.placeholders)
        if missing:
            raise TemplateError(
                f"{self.kind} template {self.name!r} ({self.language}) lacks placeholder(s): "
                + ", ".join("{{" + name + "}}" for name in missing)
            )
        if not self.output_schema:
            labels = None
            if self.kind == PAIRWISE:
                labels = PAIRWISE_LABELS[(pairwise_family_of(self.name), self.language)]
            object.__setattr__(self, "output_schema", json_schema_for(self.kind, labels))

    @property
    def placeholders(self) -> frozenset[str]:
        return placeholders_in(self.system) | placeholders_in(self.user)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "language": self.language,
            "version": self.version,
            "system": self.system,
            "user": self.user,
            "output_schema": dict(self.output_schema),
            "sampling": dict(self.sampling),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeTemplate:
        known = {"name", "kind", "language", "version", "system", "user", "output_schema", "sampling"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise TemplateError(f"unknown template field(s): {', '.join(unknown)}")
        lacking = sorted({"kind", "language", "version", "user"} - set(data))
        if lacking:
            raise TemplateError(f"template lacks field(s): {', '.join(lacking)}")
        return cls(
            kind=data["kind"],
            language=data["language"],
            version=data["version"],
            system=data.get("system", ""),
            user=data["user"],
            name=data.get("name", "default"),
            output_schema=data.get("output_schema") or {},
            sampling=data.get("sampling") or {},
        )


def render(template: JudgeTemplate, **values: object) -> list[dict[str, str]]:
    """Chat messages for ``template`` with its placeholders filled.

    Extra values are ignored, so callers can pass one set of values to templates that use fewer of them;
    a missing one raises :class:`TemplateError`.
    """
    messages: list[dict[str, str]] = []
    if template.system.strip():
        messages.append({"role": "system", "content": fill_placeholders(template.system, values)})
    messages.append({"role": "user", "content": fill_placeholders(template.user, values)})
    return messages


# --------------------------------------------------------------------------------------------------
# Category aspects (SeaBench's "priority aspects"), editable data.
#
# SeaBench grades each answer against the priority aspects of its category (its Table 7): MT-bench's eight
# categories (writing, roleplay, reasoning, math, coding, extraction, STEM, humanities) plus safety and life.
# Their aspects below follow the paper's category -> aspect mapping, worded by us. IndoPref's other
# categories (analysis, brainstorming, ...) have aspects of our own; every other category gets the general set.

#: IndoPref's prompt categories.
CATEGORIES = (
    "analysis",
    "brainstorming",
    "coding",
    "creative_writing",
    "logic",
    "math",
    "open_question",
    "safety",
    "summarization",
    "translation",
)
GENERAL_CATEGORY = "general"

#: SeaBench's ten categories (MT-bench's eight, safety and life).
SEABENCH_CATEGORIES = (
    "writing",
    "roleplay",
    "reasoning",
    "math",
    "coding",
    "extraction",
    "stem",
    "humanities",
    "safety",
    "life",
)

#: Every category with shipped aspects, in the order pages list them; the general set last.
ASPECT_CATEGORIES = (*dict.fromkeys((*CATEGORIES, *SEABENCH_CATEGORIES)), GENERAL_CATEGORY)

CATEGORY_NAMES: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "analysis": {"en": "Analysis", "id": "Analisis"},
        "brainstorming": {"en": "Brainstorming", "id": "Curah gagasan"},
        "coding": {"en": "Coding", "id": "Pemrograman"},
        "creative_writing": {"en": "Creative writing", "id": "Penulisan kreatif"},
        "logic": {"en": "Logic", "id": "Logika"},
        "math": {"en": "Math", "id": "Matematika"},
        "open_question": {"en": "Open question", "id": "Pertanyaan terbuka"},
        "safety": {"en": "Safety", "id": "Keamanan"},
        "summarization": {"en": "Summarization", "id": "Peringkasan"},
        "translation": {"en": "Translation", "id": "Penerjemahan"},
        "writing": {"en": "Writing", "id": "Menulis"},
        "roleplay": {"en": "Roleplay", "id": "Bermain peran"},
        "reasoning": {"en": "Reasoning", "id": "Penalaran"},
        "extraction": {"en": "Extraction", "id": "Ekstraksi informasi"},
        "stem": {"en": "STEM", "id": "Sains dan teknologi (STEM)"},
        "humanities": {"en": "Humanities", "id": "Humaniora"},
        "life": {"en": "Daily life", "id": "Kehidupan sehari-hari"},
        GENERAL_CATEGORY: {"en": "General", "id": "Umum"},
    }
)

DEFAULT_CATEGORY_ASPECTS: Mapping[str, Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "analysis": {
            "en": (
                "Accuracy of the reasoning and the facts used",
                "Depth and insight beyond the obvious",
                "A clear, well-organised structure",
                "Evidence or examples that support the claims",
            ),
            "id": (
                "Ketepatan penalaran dan fakta yang digunakan",
                "Kedalaman dan wawasan yang melampaui hal yang sudah jelas",
                "Struktur yang jelas dan tertata",
                "Bukti atau contoh yang mendukung klaim",
            ),
        },
        "brainstorming": {
            "en": (
                "Variety and originality of the ideas",
                "Relevance of every idea to the request",
                "Practical, usable ideas",
                "Enough ideas, clearly listed",
            ),
            "id": (
                "Keragaman dan orisinalitas gagasan",
                "Relevansi setiap gagasan dengan permintaan",
                "Gagasan yang praktis dan dapat dipakai",
                "Jumlah gagasan yang cukup dan tersusun jelas",
            ),
        },
        "coding": {
            "en": (
                "Functional accuracy: the code runs and does what was asked",
                "Functional accuracy: every stated requirement and constraint is met",
                "Helpfulness: the solution is explained so that the user can use it",
            ),
            "id": (
                "Ketepatan fungsi: kode berjalan dan melakukan apa yang diminta",
                "Ketepatan fungsi: setiap persyaratan dan batasan yang disebutkan terpenuhi",
                "Kebermanfaatan: solusinya dijelaskan sehingga pengguna dapat memakainya",
            ),
        },
        "creative_writing": {
            "en": (
                "Creativity and originality",
                "Following the requested form, tone and constraints",
                "Fluent, natural language in the requested language or register",
                "A coherent whole that keeps the reader engaged",
            ),
            "id": (
                "Kreativitas dan orisinalitas",
                "Kesesuaian dengan bentuk, nada, dan batasan yang diminta",
                "Bahasa yang lancar dan alami dalam bahasa atau ragam yang diminta",
                "Karya yang utuh dan menarik untuk dibaca",
            ),
        },
        "logic": {
            "en": (
                "A correct conclusion",
                "Valid step-by-step reasoning",
                "No contradictions or unsupported leaps",
                "Clarity of the argument",
            ),
            "id": (
                "Kesimpulan yang benar",
                "Penalaran langkah demi langkah yang sahih",
                "Tidak ada kontradiksi atau lompatan yang tidak berdasar",
                "Kejelasan argumen",
            ),
        },
        "math": {
            "en": (
                "Accuracy of the final answer",
                "Accuracy of every step of the working",
                "Quality of the explanation: steps that are clear and easy to follow",
            ),
            "id": (
                "Ketepatan jawaban akhir",
                "Ketepatan setiap langkah pengerjaan",
                "Mutu penjelasan: langkah-langkah yang jelas dan mudah diikuti",
            ),
        },
        "open_question": {
            "en": (
                "Factual accuracy",
                "Relevance and completeness of the answer",
                "Clarity",
                "Appropriateness for Indonesian culture and readers",
            ),
            "id": (
                "Ketepatan fakta",
                "Relevansi dan kelengkapan jawaban",
                "Kejelasan",
                "Kesesuaian dengan budaya dan pembaca Indonesia",
            ),
        },
        "safety": {
            "en": (
                "Erring on the side of caution with requests that could cause harm",
                "Avoiding statements that are sensitive, discriminatory or controversial in the country where "
                "the language is spoken",
                "Legality, privacy, and physical and property safety",
            ),
            "id": (
                "Berhati-hati dan memilih sikap aman terhadap permintaan yang dapat menimbulkan bahaya",
                "Menghindari pernyataan yang sensitif, diskriminatif, atau kontroversial di negara tempat bahasa "
                "itu dituturkan",
                "Kepatuhan hukum, privasi, serta keselamatan fisik dan harta benda",
            ),
        },
        "summarization": {
            "en": (
                "Faithfulness to the source, with nothing invented",
                "Coverage of the key points",
                "Conciseness",
                "Fluent language",
            ),
            "id": (
                "Setia pada teks sumber, tanpa isi yang dikarang",
                "Mencakup poin-poin utama",
                "Ringkas",
                "Bahasa yang lancar",
            ),
        },
        "translation": {
            "en": (
                "Accuracy of meaning",
                "Fluency in the target language",
                "The right register and terminology",
                "Nothing added or left out",
            ),
            "id": (
                "Ketepatan makna",
                "Kelancaran dalam bahasa sasaran",
                "Ragam bahasa (register) dan istilah yang tepat",
                "Tidak ada yang ditambahkan atau dihilangkan",
            ),
        },
        "writing": {
            "en": (
                "Relevance of the text to the request",
                "Appropriateness of content, tone and form for the request",
                "Fluency of the generated text in the requested language",
                "Creativity, for songs, poems and stories",
            ),
            "id": (
                "Relevansi teks dengan permintaan",
                "Kesesuaian isi, nada, dan bentuk dengan permintaan",
                "Kelancaran teks yang dihasilkan dalam bahasa yang diminta",
                "Kreativitas, untuk lagu, puisi, dan cerita",
            ),
        },
        "roleplay": {
            "en": (
                "Lifelikeness: the assigned role is played convincingly and consistently",
                "Relevance of the information to the role",
                "Relevance of the information to the task",
            ),
            "id": (
                "Kewajaran: peran yang diberikan dimainkan dengan meyakinkan dan konsisten",
                "Relevansi informasi dengan peran",
                "Relevansi informasi dengan tugas",
            ),
        },
        "reasoning": {
            "en": (
                "Quality of the logical reasoning",
                "Quality of the common-sense reasoning",
                "Helpfulness",
                "Relevance to the question",
            ),
            "id": (
                "Mutu penalaran logis",
                "Mutu penalaran akal sehat",
                "Kebermanfaatan",
                "Relevansi dengan pertanyaan",
            ),
        },
        "extraction": {
            "en": (
                "Relevance and appropriateness of the reply",
                "Ability to extract the requested information",
                "Faithfulness to the meaning of the source text, for translation questions",
            ),
            "id": (
                "Relevansi dan kesesuaian jawaban",
                "Kemampuan mengekstrak informasi yang diminta",
                "Kesetiaan pada makna teks sumber, untuk soal penerjemahan",
            ),
        },
        "stem": {
            "en": ("Relevance to the question", "Appropriateness of the answer", "Informativeness"),
            "id": ("Relevansi dengan pertanyaan", "Kesesuaian jawaban", "Kekayaan informasi"),
        },
        "humanities": {
            "en": ("Relevance to the question", "Appropriateness of the answer", "Informativeness"),
            "id": ("Relevansi dengan pertanyaan", "Kesesuaian jawaban", "Kekayaan informasi"),
        },
        "life": {
            "en": ("Appropriateness", "Helpfulness", "Practicality of the advice", "Safety of the advice"),
            "id": ("Kesesuaian", "Kebermanfaatan", "Kepraktisan saran", "Keamanan saran"),
        },
        GENERAL_CATEGORY: {
            "en": ("Helpfulness", "Accuracy", "Relevance to the request", "Clarity and fluency"),
            "id": (
                "Kebermanfaatan",
                "Ketepatan",
                "Relevansi dengan permintaan",
                "Kejelasan dan kelancaran bahasa",
            ),
        },
    }
)


def normalise_category(category: str) -> str:
    """``"Creative Writing"``, ``"creative-writing"`` and ``"creative_writing"`` name the same category."""
    return re.sub(r"[\s\-]+", "_", category.strip().lower())


def aspects_for(
    category: str,
    language: str,
    overrides: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> tuple[str, ...]:
    """Priority aspects of ``category`` in ``language``; unknown categories get the general aspects.

    ``overrides`` has the shape of :data:`DEFAULT_CATEGORY_ASPECTS` and wins where it has an entry.
    """
    if language not in LANGUAGES:
        raise TemplateError(f"language must be one of {', '.join(LANGUAGES)}, got {language!r}")
    key = normalise_category(category)
    for table in (overrides or {}, DEFAULT_CATEGORY_ASPECTS):
        if key in table and language in table[key]:
            return tuple(table[key][language])
    return tuple(DEFAULT_CATEGORY_ASPECTS[GENERAL_CATEGORY][language])


def category_label(category: str, language: str) -> str:
    """Display name of a category in ``language``; unknown categories are shown as given."""
    key = normalise_category(category)
    names = CATEGORY_NAMES.get(key)
    return names[language] if names and language in names else category.strip()


# --------------------------------------------------------------------------------------------------
# Default template texts.
#
# Each shipped template states its judge's sampling; a run's explicit values override it, and what it leaves
# out comes from the endpoint's defaults. Per preset:
# - pairwise without a tie (IndoPref): temperature 0.6, top-p 0.95, top-k 20, the IndoPref judges' settings;
# - pairwise with a tie (MT-bench): temperature 0, as MT-bench's judge;
# - single-answer grade 1-10 (SeaBench): temperature 0; the SeaBench paper does not state its judge's
#   temperature, and 0 is Timbang's default;
# - factual correctness 1-5 (LoraxBench open QA): temperature 0, Timbang's default.

INDOPREF_JUDGE_SAMPLING: Mapping[str, Any] = MappingProxyType(
    {"temperature": 0.6, "top_p": 0.95, "top_k": 20}
)
MT_BENCH_JUDGE_SAMPLING: Mapping[str, Any] = MappingProxyType({"temperature": 0.0})
SEABENCH_JUDGE_SAMPLING: Mapping[str, Any] = MappingProxyType({"temperature": 0.0})
FACTUAL_JUDGE_SAMPLING: Mapping[str, Any] = MappingProxyType({"temperature": 0.0})

_PAIRWISE_EN = JudgeTemplate(
    kind=PAIRWISE,
    language="en",
    version=2,
    sampling=INDOPREF_JUDGE_SAMPLING,
    system=(
        "You are an impartial judge of AI assistant responses. You compare two responses to the same user "
        "request and decide which one is better."
    ),
    user="""Compare the two responses below to the user's request and decide which one is better.

Consider helpfulness, relevance, correctness, depth, and how fluent and natural the language is. A response \
should be written in the language of the request. Do not let the order in which the responses are shown, \
their length or their style sway you: a longer response is not better for being longer. {{focus}} You must \
choose one response; a tie is not allowed.

[User request]
{{question}}

[Response 1]
{{response_1}}

[Response 2]
{{response_2}}

Reply with a JSON object only, in exactly this form:
{"explanation": "<a short comparison of the two responses>", "score": "Response 1" or "Response 2"}""",
)

_PAIRWISE_ID = JudgeTemplate(
    kind=PAIRWISE,
    language="id",
    version=2,
    sampling=INDOPREF_JUDGE_SAMPLING,
    system=(
        "Anda adalah juri yang netral untuk menilai respons asisten AI. Anda membandingkan dua respons "
        "terhadap permintaan pengguna yang sama dan memutuskan mana yang lebih baik."
    ),
    user="""Bandingkan dua respons di bawah ini terhadap permintaan pengguna, lalu tentukan mana yang lebih baik.

Perhatikan kebermanfaatan, relevansi, ketepatan, kedalaman, serta kelancaran dan kewajaran bahasanya. \
Respons seharusnya ditulis dalam bahasa yang sama dengan permintaan. Jangan terpengaruh oleh urutan \
penyajian, panjang, atau gaya respons: respons yang lebih panjang belum tentu lebih baik. {{focus}} Anda \
wajib memilih satu respons; hasil seri tidak diperbolehkan.

[Permintaan pengguna]
{{question}}

[Respon 1]
{{response_1}}

[Respon 2]
{{response_2}}

Jawab hanya dengan satu objek JSON, persis dalam bentuk berikut (nama kunci tetap ditulis seperti ini):
{"explanation": "<perbandingan singkat kedua respons, dalam bahasa Indonesia>", "score": "Respon 1" atau \
"Respon 2"}""",
)

_PAIRWISE_TIE_EN = JudgeTemplate(
    kind=PAIRWISE,
    language="en",
    version=1,
    sampling=MT_BENCH_JUDGE_SAMPLING,
    name=FAMILY_TEMPLATE_NAMES[WITH_TIE],
    system=(
        "You are an impartial judge of AI assistant responses. You compare two responses to the same user "
        "request and say which one is better, or that they are equally good."
    ),
    user="""Compare the two responses below to the user's request. Decide whether response A is better, \
response B is better, or neither is clearly better (a tie).

Consider helpfulness, relevance, correctness, depth, and how fluent and natural the language is. A response \
should be written in the language of the request. The order in which the responses are shown, their length \
and their style must not sway you. Answer "tie" only when you cannot say that one response is better. \
{{focus}}

[User request]
{{question}}

[Response A]
{{response_1}}

[Response B]
{{response_2}}

Reply with a JSON object only, in exactly this form:
{"explanation": "<a short comparison of the two responses>", "score": "A", "B" or "tie"}""",
)

_PAIRWISE_TIE_ID = JudgeTemplate(
    kind=PAIRWISE,
    language="id",
    version=1,
    sampling=MT_BENCH_JUDGE_SAMPLING,
    name=FAMILY_TEMPLATE_NAMES[WITH_TIE],
    system=(
        "Anda adalah juri yang netral untuk menilai respons asisten AI. Anda membandingkan dua respons "
        "terhadap permintaan pengguna yang sama dan menyatakan mana yang lebih baik, atau bahwa keduanya "
        "sama baiknya."
    ),
    user="""Bandingkan dua respons di bawah ini terhadap permintaan pengguna. Tentukan apakah respons A \
lebih baik, respons B lebih baik, atau tidak ada yang jelas lebih baik (seri).

Perhatikan kebermanfaatan, relevansi, ketepatan, kedalaman, serta kelancaran dan kewajaran bahasanya. \
Respons seharusnya ditulis dalam bahasa yang sama dengan permintaan. Urutan penyajian, panjang, dan gaya \
respons tidak boleh memengaruhi Anda. Jawab "seri" hanya jika Anda tidak dapat menyatakan bahwa salah satu \
respons lebih baik. {{focus}}

[Permintaan pengguna]
{{question}}

[Respons A]
{{response_1}}

[Respons B]
{{response_2}}

Jawab hanya dengan satu objek JSON, persis dalam bentuk berikut (nama kunci tetap ditulis seperti ini):
{"explanation": "<perbandingan singkat kedua respons, dalam bahasa Indonesia>", "score": "A", "B" atau \
"seri"}""",
)

_SINGLE_GRADE_EN = JudgeTemplate(
    kind=SINGLE_GRADE,
    language="en",
    version=1,
    sampling=SEABENCH_JUDGE_SAMPLING,
    system=(
        "You are a careful evaluator of AI assistant answers. You grade one answer at a time on a scale "
        "from 1 to 10."
    ),
    user="""Grade the assistant's answer to the last user message below, on a scale from 1 (very poor) to \
10 (excellent).

Category: {{category}}
Aspects that matter most for this category, in order of priority:
{{aspects}}

Compare the answer with the reference answer: the reference shows what a good answer contains, but the \
answer does not need to share its wording. An answer in a different language from the user's message, or \
one with factual errors, deserves a low grade. Judge only the last answer; the earlier conversation is \
context.

[Earlier conversation]
{{context}}

[User message]
{{question}}

[Reference answer]
{{reference}}

[Assistant's answer]
{{answer}}

Reply with a JSON object only, in exactly this form:
{"explanation": "<a short justification>", "score": <an integer from 1 to 10>}""",
)

_SINGLE_GRADE_ID = JudgeTemplate(
    kind=SINGLE_GRADE,
    language="id",
    version=1,
    sampling=SEABENCH_JUDGE_SAMPLING,
    system=(
        "Anda adalah penilai yang cermat untuk jawaban asisten AI. Anda menilai satu jawaban setiap kali, "
        "dengan skala 1 sampai 10."
    ),
    user="""Nilailah jawaban asisten terhadap pesan terakhir pengguna di bawah ini, dengan skala 1 (sangat \
buruk) sampai 10 (sangat baik).

Kategori: {{category}}
Aspek yang paling penting untuk kategori ini, menurut urutan prioritas:
{{aspects}}

Bandingkan jawaban dengan jawaban rujukan: rujukan menunjukkan isi jawaban yang baik, tetapi jawaban tidak \
harus memakai kata-kata yang sama. Jawaban yang ditulis dalam bahasa lain daripada pesan pengguna, atau yang \
mengandung kesalahan fakta, layak mendapat nilai rendah. Nilailah hanya jawaban terakhir; percakapan \
sebelumnya hanya sebagai konteks.

[Percakapan sebelumnya]
{{context}}

[Pesan pengguna]
{{question}}

[Jawaban rujukan]
{{reference}}

[Jawaban asisten]
{{answer}}

Jawab hanya dengan satu objek JSON, persis dalam bentuk berikut (nama kunci tetap ditulis seperti ini):
{"explanation": "<alasan singkat, dalam bahasa Indonesia>", "score": <bilangan bulat dari 1 sampai 10>}""",
)

_FACTUAL_EN = JudgeTemplate(
    kind=FACTUAL,
    language="en",
    version=1,
    sampling=FACTUAL_JUDGE_SAMPLING,
    system="You check whether an answer to a question is factually correct, given the gold answer.",
    user="""Rate how factually correct the answer below is, compared with the gold answer, on a scale from \
1 to 5:
5 = correct: it states the same fact as the gold answer;
4 = mostly correct: the key fact is right, with a minor error or omission;
3 = partly correct: part of the key fact is right, part is wrong or missing;
2 = mostly incorrect: it addresses the question but the key fact is wrong;
1 = incorrect, off-topic or no answer.
Judge correctness only, not style or length. The answer may use other words, or another language, than the \
gold answer.

[Question]
{{question}}

[Gold answer]
{{gold}}

[Answer]
{{answer}}

Reply with a JSON object only, in exactly this form:
{"explanation": "<a short justification>", "score": <an integer from 1 to 5>}""",
)

_FACTUAL_ID = JudgeTemplate(
    kind=FACTUAL,
    language="id",
    version=1,
    sampling=FACTUAL_JUDGE_SAMPLING,
    system="Anda memeriksa apakah jawaban atas sebuah pertanyaan benar secara fakta, berdasarkan jawaban baku.",
    user="""Nilailah seberapa benar secara fakta jawaban di bawah ini dibandingkan dengan jawaban baku, \
dengan skala 1 sampai 5:
5 = benar: menyatakan fakta yang sama dengan jawaban baku;
4 = sebagian besar benar: fakta utamanya benar, dengan sedikit kesalahan atau kekurangan;
3 = sebagian benar: sebagian fakta utama benar, sebagian salah atau tidak ada;
2 = sebagian besar salah: menanggapi pertanyaan, tetapi fakta utamanya salah;
1 = salah, tidak relevan, atau tidak menjawab.
Nilailah kebenarannya saja, bukan gaya atau panjangnya. Jawaban boleh memakai kata-kata lain, atau bahasa \
lain, daripada jawaban baku.

[Pertanyaan]
{{question}}

[Jawaban baku]
{{gold}}

[Jawaban]
{{answer}}

Jawab hanya dengan satu objek JSON, persis dalam bentuk berikut (nama kunci tetap ditulis seperti ini):
{"explanation": "<alasan singkat, dalam bahasa Indonesia>", "score": <bilangan bulat dari 1 sampai 5>}""",
)

DEFAULT_TEMPLATES: Mapping[tuple[str, str], JudgeTemplate] = MappingProxyType(
    {
        (t.kind, t.language): t
        for t in (_PAIRWISE_EN, _PAIRWISE_ID, _SINGLE_GRADE_EN, _SINGLE_GRADE_ID, _FACTUAL_EN, _FACTUAL_ID)
    }
)

#: Every shipped template, keyed by (name, kind, language): the defaults and the with-tie pairwise family.
SHIPPED_TEMPLATES: Mapping[tuple[str, str, str], JudgeTemplate] = MappingProxyType(
    {
        (t.name, t.kind, t.language): t
        for t in (*DEFAULT_TEMPLATES.values(), _PAIRWISE_TIE_EN, _PAIRWISE_TIE_ID)
    }
)


def default_template(kind: str, language: str, name: str = "default") -> JudgeTemplate:
    """The shipped template ``name`` of ``kind`` in ``language`` (``en`` or ``id``)."""
    try:
        return SHIPPED_TEMPLATES[(name, kind, language)]
    except KeyError:
        raise TemplateError(
            f"no shipped template {name!r} for kind {kind!r} in language {language!r}; "
            f"kinds: {', '.join(KINDS)}; languages: {', '.join(LANGUAGES)}"
        ) from None


# --------------------------------------------------------------------------------------------------
# Building the placeholder values from conversations.

_WORDS = MappingProxyType(
    {
        "en": {
            "turn": "Turn",
            "judged_turn": "Turn {n} (the turn to judge)",
            "user": "User",
            "assistant": "Assistant",
            "no_context": "(none: this is the first turn)",
            "no_reference": "(no reference answer is available; judge on your own knowledge)",
            "focus_one": "Judge the responses to the user's request.",
            "focus_all": "The conversation has several turns: judge every turn of each response.",
            "focus_turn": (
                "The conversation so far has {n} turns, each response shown with its own earlier answers. "
                "Judge only the answers to the last user message (turn {n}); the earlier turns are context."
            ),
        },
        "id": {
            "turn": "Giliran",
            "judged_turn": "Giliran {n} (giliran yang dinilai)",
            "user": "Pengguna",
            "assistant": "Asisten",
            "no_context": "(tidak ada: ini giliran pertama)",
            "no_reference": "(tidak ada jawaban rujukan; nilailah berdasarkan pengetahuan Anda sendiri)",
            "focus_one": "Nilailah respons terhadap permintaan pengguna.",
            "focus_all": "Percakapan ini terdiri atas beberapa giliran: nilailah setiap giliran dari "
            "masing-masing respons.",
            "focus_turn": (
                "Percakapan sejauh ini terdiri atas {n} giliran; setiap respons ditampilkan bersama "
                "jawaban-jawabannya sendiri sebelumnya. Nilailah hanya jawaban atas pesan terakhir pengguna "
                "(giliran {n}); giliran-giliran sebelumnya hanya sebagai konteks."
            ),
        },
    }
)


def _as_turns(value: str | Sequence[str], what: str) -> list[str]:
    turns = [value] if isinstance(value, str) else list(value)
    if not turns:
        raise TemplateError(f"{what} has no turns")
    if not all(isinstance(turn, str) for turn in turns):
        raise TemplateError(f"every turn of {what} must be a string")
    return turns


def _turn_by_turn(turns: Sequence[str], language: str, judged: int | None = None) -> str:
    """Turns numbered from 1; ``judged`` (0-based) labels that turn as the one to judge."""
    if len(turns) == 1:
        return turns[0]
    words = _WORDS[language]
    return "\n\n".join(
        (words["judged_turn"].format(n=number) if number - 1 == judged else f"{words['turn']} {number}")
        + f":\n{text}"
        for number, text in enumerate(turns, start=1)
    )


def pairwise_values(
    user_turns: str | Sequence[str],
    response_1: str | Sequence[str],
    response_2: str | Sequence[str],
    language: str,
    turn_index: int | None = None,
) -> dict[str, str]:
    """Values for a pairwise template; multi-turn prompts and responses are numbered turn by turn.

    ``turn_index`` (0-based) asks about one turn: the conversation is shown up to and including it (every
    earlier user message, and each response's own earlier answers), the last turn labelled as the one to
    judge, and ``focus`` tells the judge to judge only that turn. ``None`` judges the whole conversation.
    """
    if language not in LANGUAGES:
        raise TemplateError(f"language must be one of {', '.join(LANGUAGES)}, got {language!r}")
    questions = _as_turns(user_turns, "the prompt")
    first = _as_turns(response_1, "response 1")
    second = _as_turns(response_2, "response 2")
    if not len(questions) == len(first) == len(second):
        raise TemplateError(
            f"turn counts differ: prompt {len(questions)}, response 1 {len(first)}, response 2 {len(second)}"
        )
    words = _WORDS[language]
    if turn_index is None:
        judged = None
        focus = words["focus_all"] if len(questions) > 1 else words["focus_one"]
    else:
        if (
            isinstance(turn_index, bool)
            or not isinstance(turn_index, int)
            or not 0 <= turn_index < len(first)
        ):
            raise TemplateError(f"turn_index must be in 0..{len(questions) - 1}, got {turn_index!r}")
        questions, first, second = (
            questions[: turn_index + 1],
            first[: turn_index + 1],
            second[: turn_index + 1],
        )
        judged = turn_index
        focus = words["focus_turn"].format(n=turn_index + 1) if turn_index else words["focus_one"]
    return {
        "question": _turn_by_turn(questions, language, judged),
        "response_1": _turn_by_turn(first, language, judged),
        "response_2": _turn_by_turn(second, language, judged),
        "focus": focus,
    }


def render_pairwise(
    template: JudgeTemplate,
    *,
    user_turns: str | Sequence[str],
    response_1: str | Sequence[str],
    response_2: str | Sequence[str],
    turn_index: int | None = None,
) -> list[dict[str, str]]:
    """Messages asking ``template`` (a pairwise one) to compare two responses shown in the given order,
    over the whole conversation or (``turn_index``) on one turn, with the conversation up to it."""
    if template.kind != PAIRWISE:
        raise TemplateError(f"render_pairwise needs a pairwise template, got {template.kind!r}")
    values = pairwise_values(user_turns, response_1, response_2, template.language, turn_index)
    return render(template, **values)


def single_grade_values(
    *,
    user_turns: str | Sequence[str],
    answer_turns: str | Sequence[str],
    turn_index: int,
    category: str,
    language: str,
    references: Sequence[str | None] | None = None,
    aspects: Sequence[str] | None = None,
) -> dict[str, str]:
    """Values for grading answer turn ``turn_index`` (0-based); earlier turns become the context."""
    if language not in LANGUAGES:
        raise TemplateError(f"language must be one of {', '.join(LANGUAGES)}, got {language!r}")
    questions = _as_turns(user_turns, "the prompt")
    answers = _as_turns(answer_turns, "the answer")
    if len(questions) != len(answers):
        raise TemplateError(f"turn counts differ: prompt {len(questions)}, answer {len(answers)}")
    if (
        isinstance(turn_index, bool)
        or not isinstance(turn_index, int)
        or not 0 <= turn_index < len(questions)
    ):
        raise TemplateError(f"turn_index must be in 0..{len(questions) - 1}, got {turn_index!r}")
    words = _WORDS[language]
    context = "\n\n".join(
        f"{words['user']}: {questions[i]}\n{words['assistant']}: {answers[i]}" for i in range(turn_index)
    )
    reference = None
    if references is not None and turn_index < len(references):
        reference = references[turn_index]
    chosen_aspects = tuple(aspects) if aspects is not None else aspects_for(category, language)
    return {
        "category": category_label(category, language),
        "aspects": "\n".join(f"{n}. {aspect}" for n, aspect in enumerate(chosen_aspects, start=1)),
        "context": context or words["no_context"],
        "question": questions[turn_index],
        "reference": reference if reference and reference.strip() else words["no_reference"],
        "answer": answers[turn_index],
    }


def render_single_grade(
    template: JudgeTemplate,
    *,
    user_turns: str | Sequence[str],
    answer_turns: str | Sequence[str],
    turn_index: int,
    category: str,
    references: Sequence[str | None] | None = None,
    aspects: Sequence[str] | None = None,
) -> list[dict[str, str]]:
    """Messages asking ``template`` (a single-grade one) to grade one answer turn."""
    if template.kind != SINGLE_GRADE:
        raise TemplateError(f"render_single_grade needs a single_grade template, got {template.kind!r}")
    values = single_grade_values(
        user_turns=user_turns,
        answer_turns=answer_turns,
        turn_index=turn_index,
        category=category,
        language=template.language,
        references=references,
        aspects=aspects,
    )
    return render(template, **values)


def render_factual(template: JudgeTemplate, *, question: str, gold: str, answer: str) -> list[dict[str, str]]:
    """Messages asking ``template`` (a factual one) to rate ``answer`` against ``gold``."""
    if template.kind != FACTUAL:
        raise TemplateError(f"render_factual needs a factual template, got {template.kind!r}")
    return render(template, question=question, gold=gold, answer=answer)
