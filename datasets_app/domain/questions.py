"""Checks and summaries for culturally grounded multiple-choice questions (id-csqa workflow).

Authors get a (category, concept) pair and write a question that contains the concept, five options A-E,
the answer and a distractor. Accepted questions are answered by other annotators, who may flag a question
as ambiguous; questions flagged too often are dropped. This module holds the pure parts of that loop:
the concept check, field validation of an authored question, the answer-conflict matrix (creator x
answerer), the ambiguity exclusion rule and the error-taxonomy summary of LLM-written questions.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from accounts.domain.echo import echoed

# pandas takes long to import: the functions that use it import it, so start-up (URL loading, a
# worker's boot) does not.
if TYPE_CHECKING:
    import pandas as pd

CHOICE_LABELS: tuple[str, ...] = ("A", "B", "C", "D", "E")

# --------------------------------------------------------------------------------------------------------
# Concept in question


def _fold_with_index(text: str) -> tuple[str, list[int]]:
    # Case- and accent-insensitive copy of ``text`` with, for each of its characters, the index of the
    # original character it came from, so a match can be highlighted in the original text.
    folded: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        for part in unicodedata.normalize("NFKD", ch):
            if unicodedata.combining(part):
                continue
            for out in part.casefold():
                folded.append(out)
                index.append(i)
    return "".join(folded), index


@dataclass(frozen=True)
class ConceptCheck:
    """Outcome of ``concept_in_question``.

    ``passed`` is what the form acts on. When the concept was not found and the author overrode the check,
    ``passed`` is true and ``comment_required`` tells the caller to store the author's justification.
    ``span`` is the (start, end) of the match in the original question text.
    """

    found: bool
    overridden: bool
    span: tuple[int, int] | None = None

    @property
    def passed(self) -> bool:
        return self.found or self.overridden

    @property
    def comment_required(self) -> bool:
        return self.overridden


def concept_in_question(question: str, concept: str, *, override: bool = False) -> ConceptCheck:
    """Whether ``concept`` occurs in ``question`` as a whole word or phrase.

    Matching ignores case and diacritics (Sundanese "sarébu" matches "sarebu") and tolerates punctuation or
    extra spaces between the words of a phrase ("alun-alun" matches "alun alun", "pura" matches "pura-nya").
    Affixed forms do not count ("aduk" is not in "mengaduk"): an author who uses one overrides the check and
    explains why in a comment.
    """
    words = re.findall(r"\w+", _fold_with_index(concept)[0])
    if not words:
        return ConceptCheck(found=False, overridden=override)
    folded, index = _fold_with_index(question)
    pattern = re.compile(r"(?<!\w)" + r"[\W_]+".join(re.escape(w) for w in words) + r"(?!\w)")
    match = pattern.search(folded)
    if match is None:
        return ConceptCheck(found=False, overridden=override)
    return ConceptCheck(found=True, overridden=False, span=(index[match.start()], index[match.end() - 1] + 1))


# --------------------------------------------------------------------------------------------------------
# Validation of an authored question


@dataclass(frozen=True)
class FieldError:
    field: str  # "text", "choices", "choices.A" .. "choices.E", "answer", "distractor", "concept"
    code: str
    message_en: str
    message_id: str


@dataclass(frozen=True)
class QuestionValidation:
    errors: tuple[FieldError, ...] = ()
    concept: ConceptCheck | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    def by_field(self, ui_language: str = "en") -> dict[str, list[str]]:
        """Messages per field, for a form (``"id"`` for Indonesian)."""
        out: dict[str, list[str]] = {}
        for error in self.errors:
            out.setdefault(error.field, []).append(
                error.message_id if ui_language == "id" else error.message_en
            )
        return out


def _norm_option(text: str) -> str:
    return " ".join(text.split()).casefold()


def _label(value: object) -> str:
    return value.strip().upper() if isinstance(value, str) else ""


def validate_question(
    text: str,
    choices: Mapping[str, str],
    answer: str | None,
    distractor: str | None,
    *,
    require_distractor: bool = True,
    concept: str | None = None,
    concept_override: bool = False,
    override_comment: str = "",
) -> QuestionValidation:
    """Field-level errors of an authored question.

    Rules: non-empty text; exactly the options A-E, each non-empty and all different (ignoring case and
    spacing); answer in A-E; distractor in A-E and different from the answer (optional when
    ``require_distractor`` is false, as for imported questions). With ``concept`` the concept check runs too;
    overriding it needs a non-empty ``override_comment``.
    """
    errors: list[FieldError] = []

    def add(field_name: str, code: str, en: str, id_: str) -> None:
        errors.append(FieldError(field_name, code, en, id_))

    if not (text or "").strip():
        add("text", "required", "Write the question.", "Tulis pertanyaannya.")

    labels = {_label(k): v for k, v in choices.items()}
    extra = [repr(k) for k in labels if k not in CHOICE_LABELS]
    if extra:
        add(
            "choices",
            "unknown_label",
            f"Options must be labelled A to E; unexpected: {echoed(extra)}.",
            f"Pilihan harus berlabel A sampai E; tidak dikenal: {echoed(extra, more='dan {n} lainnya')}.",
        )
    seen: dict[str, str] = {}
    for label in CHOICE_LABELS:
        value = labels.get(label)
        if not isinstance(value, str) or not value.strip():
            add(f"choices.{label}", "required", f"Write option {label}.", f"Tulis pilihan {label}.")
            continue
        key = _norm_option(value)
        if key in seen:
            add(
                f"choices.{label}",
                "duplicate",
                f"Option {label} repeats option {seen[key]}.",
                f"Pilihan {label} sama dengan pilihan {seen[key]}.",
            )
        else:
            seen[key] = label

    answer_label = _label(answer)
    if answer_label not in CHOICE_LABELS:
        add("answer", "invalid", "Pick the answer among A to E.", "Pilih jawaban di antara A sampai E.")

    distractor_label = _label(distractor)
    if distractor_label or require_distractor:
        if distractor_label not in CHOICE_LABELS:
            add(
                "distractor",
                "invalid",
                "Pick the distractor among A to E.",
                "Pilih pengecoh di antara A sampai E.",
            )
        elif distractor_label == answer_label:
            add(
                "distractor",
                "same_as_answer",
                "The distractor must be a different option from the answer.",
                "Pengecoh harus berbeda dari jawaban.",
            )

    check = None
    if concept is not None:
        check = concept_in_question(text or "", concept, override=concept_override)
        if not check.passed:
            add(
                "text",
                "concept_missing",
                f"The question must contain the concept '{concept}'.",
                f"Pertanyaan harus memuat konsep '{concept}'.",
            )
        elif check.comment_required and not override_comment.strip():
            add(
                "concept",
                "override_comment_required",
                "Explain why the question does not contain the concept word as given.",
                "Jelaskan mengapa pertanyaan tidak memuat kata konsep persis seperti yang diberikan.",
            )
    return QuestionValidation(errors=tuple(errors), concept=check)


# --------------------------------------------------------------------------------------------------------
# Answer-conflict matrix

ANSWER_COLUMNS = ("question_id", "creator", "answerer", "choice", "answer_key")


def _answers_frame(answers: pd.DataFrame | Iterable[Any]) -> pd.DataFrame:
    import pandas as pd

    if isinstance(answers, pd.DataFrame):
        missing = [c for c in ANSWER_COLUMNS if c not in answers.columns]
        if missing:
            raise ValueError(f"answers lack columns {missing}")
        return answers.loc[:, list(ANSWER_COLUMNS)].copy()
    records = []
    for row in answers:
        if isinstance(row, Mapping):
            records.append(tuple(row[c] for c in ANSWER_COLUMNS))
        elif isinstance(row, tuple | list) and not hasattr(row, "_fields"):
            if len(row) != len(ANSWER_COLUMNS):
                raise ValueError(
                    f"an answer row needs {len(ANSWER_COLUMNS)} values {ANSWER_COLUMNS}, got {row!r}"
                )
            records.append(tuple(row))
        else:
            records.append(tuple(getattr(row, c) for c in ANSWER_COLUMNS))
    return pd.DataFrame.from_records(records, columns=list(ANSWER_COLUMNS))


@dataclass(frozen=True)
class ConflictMatrix:
    """How often each answerer's choice differs from each creator's answer key.

    ``table`` is tidy: one row per (creator, answerer) pair that has answers, with ``n_answers`` (answers
    given, blanks excluded), ``n_conflicts`` (answers different from the key) and ``n_blank``.
    """

    table: pd.DataFrame

    def counts(self) -> dict[tuple[Hashable, Hashable], int]:
        """(creator, answerer) -> number of answers differing from the key."""
        return {
            (row.creator, row.answerer): int(row.n_conflicts) for row in self.table.itertuples(index=False)
        }

    def wide(self, value: str = "n_conflicts") -> pd.DataFrame:
        """Creators as rows, answerers as columns (0 where a pair has no answers)."""
        return (
            self.table.pivot(index="creator", columns="answerer", values=value)
            .fillna(0)
            .astype(int)
            .rename_axis(index="creator", columns="answerer")
        )

    @property
    def by_creator(self) -> dict[Hashable, int]:
        return {k: int(v) for k, v in self.table.groupby("creator")["n_conflicts"].sum().items()}

    @property
    def by_answerer(self) -> dict[Hashable, int]:
        return {k: int(v) for k, v in self.table.groupby("answerer")["n_conflicts"].sum().items()}

    @property
    def total_conflicts(self) -> int:
        return int(self.table["n_conflicts"].sum())

    @property
    def total_answers(self) -> int:
        return int(self.table["n_answers"].sum())


def answer_conflict_matrix(answers: pd.DataFrame | Iterable[Any]) -> ConflictMatrix:
    """Build the creator x answerer conflict matrix from answer rows.

    Rows are ``(question_id, creator, answerer, choice, answer_key)`` as tuples, mappings, objects with those
    attributes, or a DataFrame with those columns. Choices and keys are compared as letters (case and
    surrounding spaces ignored); a blank choice is counted in ``n_blank``, not as a conflict.
    """
    frame = _answers_frame(answers)
    choice = frame["choice"].map(_label)
    key = frame["answer_key"].map(_label)
    if (key == "").any():
        bad = frame.loc[key == "", "question_id"].tolist()[:5]
        raise ValueError(f"answer key missing for question(s) {bad}")
    frame = frame.assign(
        blank=(choice == "").astype(int),
        answered=(choice != "").astype(int),
        conflict=((choice != "") & (choice != key)).astype(int),
    )
    table = (
        frame.groupby(["creator", "answerer"], sort=True)
        .agg(n_answers=("answered", "sum"), n_conflicts=("conflict", "sum"), n_blank=("blank", "sum"))
        .reset_index()
    )
    table[["n_answers", "n_conflicts", "n_blank"]] = table[["n_answers", "n_conflicts", "n_blank"]].astype(
        int
    )
    return ConflictMatrix(table=table)


# --------------------------------------------------------------------------------------------------------
# Ambiguity exclusions

DEFAULT_MAX_AMBIGUOUS_FLAGS = 3


def ambiguous_flag_counts(flags: Iterable[tuple[Hashable, bool]]) -> dict[Hashable, int]:
    """Number of ambiguous flags per question from (question_id, flagged) pairs, one per answer; questions
    answered without any flag count 0."""
    counts: dict[Hashable, int] = {}
    for question_id, flagged in flags:
        counts[question_id] = counts.get(question_id, 0) + int(bool(flagged))
    return counts


def ambiguous_exclusions(
    flags_per_question: Mapping[Hashable, int | Iterable[bool]], max_flags: int = DEFAULT_MAX_AMBIGUOUS_FLAGS
) -> list[Hashable]:
    """Ids of questions with more than ``max_flags`` ambiguous flags, in input order.

    Values are flag counts or iterables of per-answer booleans.
    """
    if max_flags < 0:
        raise ValueError("max_flags must be non-negative")
    excluded = []
    for question_id, flags in flags_per_question.items():
        count = flags if isinstance(flags, int) else sum(bool(f) for f in flags)
        if count > max_flags:
            excluded.append(question_id)
    return excluded


# --------------------------------------------------------------------------------------------------------
# Error taxonomy of LLM-written questions

# id-csqa's error taxonomy (Putri et al., 2024) is the default for LLM-written questions; a project can edit
# it. Reviewers tag errors of the question and errors of its options apart; a category says where it applies.
# Code -> (English label, Indonesian label); the descriptions are ours.
LLM_ERROR_CATEGORIES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "translation": ("Translation", "Terjemahan"),
        "wrong_language": ("Wrong language", "Bahasa salah"),
        "structure": ("Structure", "Struktur"),
        "fluency": ("Fluency", "Kelancaran"),
        "context": ("Context", "Konteks"),
        "subjectivity": ("Subjectivity", "Subjektivitas"),
        "typo": ("Typo", "Salah ketik"),
        "invalid_options": ("Invalid options", "Pilihan tidak valid"),
    }
)
QUESTION = "question"
OPTIONS = "options"
TAXONOMY_SCOPES = (QUESTION, OPTIONS)
# The label of a reviewed question without any error, next to the category codes (so no category takes it).
NO_ERROR = "no_error"


@dataclass(frozen=True)
class ErrorCategory:
    """One category of a project's error taxonomy: labels in English and Indonesian, a description in each,
    and where it applies (the question, its options, or both)."""

    code: str
    en: str
    id: str
    description_en: str = ""
    description_id: str = ""
    applies_to: tuple[str, ...] = TAXONOMY_SCOPES

    def label(self, lang: str) -> str:
        return self.id if lang == "id" else self.en

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "en": self.en,
            "id": self.id,
            "description_en": self.description_en,
            "description_id": self.description_id,
            "applies_to": list(self.applies_to),
        }


_DESCRIPTIONS = {
    "translation": (
        "A literal or wrong translation from another language shows through.",
        "Terjemahan harfiah atau keliru dari bahasa lain masih terasa.",
    ),
    "wrong_language": (
        "Written (partly) in a language other than the target language.",
        "Ditulis (sebagian) dalam bahasa selain bahasa sasaran.",
    ),
    "structure": (
        "Not a well-formed multiple-choice question: no question, or a statement instead.",
        "Bukan soal pilihan ganda yang utuh: tidak ada pertanyaan, atau berupa pernyataan.",
    ),
    "fluency": ("Unnatural or ungrammatical wording.", "Kalimat tidak wajar atau tidak gramatikal."),
    "context": (
        "Wrong or missing cultural context; the concept is misused.",
        "Konteks budaya salah atau tidak ada; konsepnya dipakai keliru.",
    ),
    "subjectivity": (
        "The answer depends on opinion or taste, not on common sense.",
        "Jawabannya bergantung pada pendapat atau selera, bukan akal sehat.",
    ),
    "typo": ("Misspelt words.", "Ada kata yang salah ketik."),
    "invalid_options": (
        "Options repeat, none or several are correct, or the key is wrong.",
        "Pilihan berulang, tidak ada atau lebih dari satu yang benar, atau kuncinya salah.",
    ),
}

DEFAULT_ERROR_TAXONOMY: tuple[ErrorCategory, ...] = tuple(
    ErrorCategory(
        code=code,
        en=en,
        id=id_,
        description_en=_DESCRIPTIONS[code][0],
        description_id=_DESCRIPTIONS[code][1],
        applies_to=(OPTIONS,) if code == "invalid_options" else TAXONOMY_SCOPES,
    )
    for code, (en, id_) in LLM_ERROR_CATEGORIES.items()
)

_CODE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_TAXONOMY_FIELDS = ("code", "en", "id", "description_en", "description_id", "applies_to")


class TaxonomyInvalid(ValueError):
    """An error taxonomy with problems; ``errors`` holds one message per problem, each naming where."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("; ".join(errors))


def taxonomy_from_data(data: Any) -> tuple[ErrorCategory, ...]:
    """A taxonomy from its stored form (a list of category objects); an empty list is the default."""
    if not data:
        return DEFAULT_ERROR_TAXONOMY
    if not isinstance(data, list):
        raise TaxonomyInvalid(["the taxonomy must be a list of categories"])
    errors: list[str] = []
    categories: list[ErrorCategory] = []
    seen: set[str] = set()
    for index, entry in enumerate(data, start=1):
        where = f"category {index}"
        if not isinstance(entry, Mapping):
            errors.append(f"{where}: must be an object")
            continue
        unknown = [name for name in entry if name not in _TAXONOMY_FIELDS]
        if unknown:
            errors.append(f"{where}: unknown field(s) {echoed(unknown)}")
        code = entry.get("code")
        if not isinstance(code, str) or not _CODE.match(code):
            errors.append(f"{where}: code must be lower-case letters, digits and _ (got {code!r})")
            continue
        where = f"category {index} ({code})"
        if code == NO_ERROR:
            errors.append(f"{where}: {NO_ERROR!r} is reserved for questions without error")
        if code in seen:
            errors.append(f"{where}: code used twice")
        seen.add(code)
        texts = {}
        for name in ("en", "id", "description_en", "description_id"):
            value = entry.get(name, "")
            if not isinstance(value, str):
                errors.append(f"{where}: {name} must be text")
                value = ""
            texts[name] = value.strip()
        for name in ("en", "id"):
            if not texts[name]:
                errors.append(f"{where}: the {'English' if name == 'en' else 'Indonesian'} label is empty")
        applies = entry.get("applies_to", list(TAXONOMY_SCOPES))
        if (
            not isinstance(applies, list | tuple)
            or not applies
            or any(scope not in TAXONOMY_SCOPES for scope in applies)
        ):
            errors.append(f"{where}: applies_to must list question and/or options")
            applies = TAXONOMY_SCOPES
        categories.append(
            ErrorCategory(code=code, applies_to=tuple(s for s in TAXONOMY_SCOPES if s in applies), **texts)
        )
    if errors:
        raise TaxonomyInvalid(errors)
    return tuple(categories)


def taxonomy_to_text(categories: Iterable[ErrorCategory]) -> str:
    """One line per category, as the manage page edits it:
    ``code | English label | Indonesian label | question, options``."""
    return "\n".join(f"{c.code} | {c.en} | {c.id} | {', '.join(c.applies_to)}" for c in categories)


def taxonomy_from_text(text: str) -> tuple[ErrorCategory, ...]:
    """Parse :func:`taxonomy_to_text`'s format; descriptions of the default categories are kept for codes
    that keep their default labels. Every problem is reported with its line number."""
    defaults = {c.code: c for c in DEFAULT_ERROR_TAXONOMY}
    entries: list[dict[str, Any]] = []
    errors: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split("|")]
        if len(parts) not in (3, 4):
            errors.append(f"line {number}: expected 'code | English | Indonesian | question, options'")
            continue
        code, en, id_ = parts[:3]
        applies = (
            [s.strip() for s in parts[3].split(",") if s.strip()]
            if len(parts) == 4
            else list(TAXONOMY_SCOPES)
        )
        entry: dict[str, Any] = {"code": code, "en": en, "id": id_, "applies_to": applies}
        default = defaults.get(code)
        if default is not None and (default.en, default.id) == (en, id_):
            entry.update(description_en=default.description_en, description_id=default.description_id)
        entries.append(entry)
    if errors:
        raise TaxonomyInvalid(errors)
    if not entries:
        raise TaxonomyInvalid(["the taxonomy has no category"])
    try:
        return taxonomy_from_data(entries)
    except TaxonomyInvalid as exc:
        raise TaxonomyInvalid([_line_of(message, entries, text) for message in exc.errors]) from None


def _line_of(message: str, entries: list[dict[str, Any]], text: str) -> str:
    """``category N (...)`` becomes ``line L`` of the edited text."""
    match = re.match(r"category (\d+)(?: \([^)]*\))?: (.*)", message)
    if not match:
        return message
    lines = [n for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    return f"line {lines[int(match.group(1)) - 1]}: {match.group(2)}"


@dataclass(frozen=True)
class TaxonomySummary:
    """``questions_with``: questions tagged with each category (a question counts once per category);
    ``share_of_questions``: that over all questions; ``share_of_errors``: each category's share of all
    tags, the error-type distribution."""

    n_questions: int
    n_error_free: int
    error_free_share: float
    questions_with: dict[str, int] = field(default_factory=dict)
    share_of_questions: dict[str, float] = field(default_factory=dict)
    share_of_errors: dict[str, float] = field(default_factory=dict)


def error_taxonomy_summary(
    errors_per_question: Mapping[Hashable, Iterable[str]],
    *,
    categories: Iterable[str] | None = None,
) -> TaxonomySummary:
    """Share of error-free questions and the distribution of error types.

    With ``categories`` every category appears in the result (0 when unused) and an unknown tag raises
    ``ValueError``; without it the categories are those used.
    """
    known = list(categories) if categories is not None else None
    per_question = {qid: set(tags) for qid, tags in errors_per_question.items()}
    tagged: Counter[str] = Counter(tag for tags in per_question.values() for tag in tags)
    if known is not None:
        unknown = sorted(set(tagged) - set(known))
        if unknown:
            raise ValueError(f"unknown error categories: {unknown}")
    order = known if known is not None else sorted(tagged)
    n = len(per_question)
    n_free = sum(1 for tags in per_question.values() if not tags)
    n_tags = sum(tagged.values())
    return TaxonomySummary(
        n_questions=n,
        n_error_free=n_free,
        error_free_share=n_free / n if n else float("nan"),
        questions_with={c: tagged.get(c, 0) for c in order},
        share_of_questions={c: (tagged.get(c, 0) / n if n else float("nan")) for c in order},
        share_of_errors={c: (tagged.get(c, 0) / n_tags if n_tags else 0.0) for c in order},
    )
