"""Validation of imported records (DESIGN.md §8 import formats).

Each ``clean_*`` function takes one raw record (a dict from a JSONL line, a CSV row
or a Hugging Face dataset row) and returns the cleaned record or the list of
problems found in it, each naming the field. The caller adds the line number.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from accounts.domain.echo import echoed
from datasets_app.domain.untrusted_json import UnsafeJson, find_problem, loads

KINDS = ("prompts", "translations", "questions")
CHOICE_KEYS = ("A", "B", "C", "D", "E")
MIN_CHOICES = 2


def _ranges() -> str:
    return f"A and B up to A to E ({MIN_CHOICES} to {len(CHOICE_KEYS)} options)"


LANGUAGE_RE = re.compile(r"^[a-z]{3}$")
MAX_ID_LENGTH = 200


@dataclass(frozen=True)
class FieldProblem:
    field: str
    message: str


@dataclass
class CleanPrompt:
    external_id: str
    category: str
    language: str
    register: str
    turns: list[str]
    references: list[str | None]
    responses: list[tuple[str, list[str]]] = field(default_factory=list)
    meta: dict = field(default_factory=dict)


@dataclass
class CleanTranslationUnit:
    external_id: str
    source_text: str
    source_language: str
    target_language: str
    register: str
    translation_text: str
    translator_name: str
    meta: dict = field(default_factory=dict)


@dataclass
class CleanQuestion:
    external_id: str
    category: str
    concept: str
    language: str
    text: str
    choices: dict[str, str]
    answer_key: str
    distractor: str
    creator_name: str
    origin: str
    meta: dict = field(default_factory=dict)


def detect_kind(record: dict[str, Any]) -> str | None:
    """Guess the kind of a file from its first record's keys."""
    keys = set(record)
    if "question" in keys or "choices" in keys:
        return "questions"
    if "source" in keys or "target_language" in keys:
        return "translations"
    if "prompt" in keys or "turns" in keys:
        return "prompts"
    return None


def clean_record(
    kind: str, record: dict[str, Any], *, checked: bool = False
) -> tuple[Any, list[FieldProblem]]:
    """The cleaned record of ``kind``, or None and its problems. ``checked``: the record is a value
    ``untrusted_json.loads`` returned, as it is, so it holds no NUL character nor over-deep nesting."""
    cleaner = {"prompts": clean_prompt, "translations": clean_translation_unit, "questions": clean_question}[
        kind
    ]
    # Whatever the reader: a NUL character cannot be stored, and deep nesting breaks the JSON columns.
    unsafe = None if checked else find_problem(record)
    if unsafe is not None:
        return None, [FieldProblem(unsafe.path, unsafe.message)]
    return cleaner(record)


# -- helpers -------------------------------------------------------------------------------------------


class _Collector:
    def __init__(self, record: dict[str, Any]):
        self.record = record
        self.problems: list[FieldProblem] = []

    def add(self, field_name: str, message: str) -> None:
        self.problems.append(FieldProblem(field_name, message))

    def present(self, name: str) -> bool:
        value = self.record.get(name)
        return value is not None and not (isinstance(value, str) and value.strip() == "")

    def text(self, name: str, *, required: bool, max_length: int | None = None) -> str:
        value = self.record.get(name)
        if value is None or (isinstance(value, str) and value.strip() == ""):
            if required:
                self.add(name, "is required")
            return ""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.add(name, f"must be text, got {type(value).__name__}")
            return ""
        text = str(value).strip() if not isinstance(value, str) else value.strip()
        if max_length is not None and len(text) > max_length:
            self.add(name, f"is longer than {max_length} characters")
            return ""
        return text

    def identifier(self) -> str:
        value = self.record.get("id")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if value is None or (isinstance(value, str) and not value.strip()):
            self.add("id", "is required")
            return ""
        if isinstance(value, bool) or not isinstance(value, str | int):
            self.add("id", f"must be text or an integer, got {type(value).__name__}")
            return ""
        text = str(value).strip()
        if len(text) > MAX_ID_LENGTH:
            self.add("id", f"is longer than {MAX_ID_LENGTH} characters")
        return text

    def language(self, name: str, *, required: bool = True, default: str = "") -> str:
        value = self.record.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required and not default:
                self.add(name, "is required (an ISO 639-3 code such as ind, sun, jav)")
            return default
        if not isinstance(value, str) or not LANGUAGE_RE.match(value.strip().lower()):
            self.add(name, f"must be an ISO 639-3 code of three letters (ind, sun, jav, ...), got {value!r}")
            return ""
        return value.strip().lower()

    def json_value(self, name: str) -> Any:
        """CSV cells hold lists and objects as JSON text; decode them."""
        value = self.record.get(name)
        if isinstance(value, str):
            stripped = value.strip()
            if stripped == "":
                return None
            if stripped[0] in "[{":
                try:
                    return loads(stripped)
                except json.JSONDecodeError as exc:
                    self.add(name, f"is not valid JSON ({exc.msg} at character {exc.pos})")
                    return _INVALID
                except UnsafeJson as exc:
                    inner = exc.problem.path
                    where = f"{name}{'' if inner.startswith('[') else '.'}{inner}" if inner else name
                    self.add(where, exc.problem.message)
                    return _INVALID
        return value

    def meta(self) -> dict:
        value = self.json_value("meta")
        if value is None or value is _INVALID:
            return {}
        if not isinstance(value, dict):
            self.add("meta", f"must be an object, got {type(value).__name__}")
            return {}
        return value


_INVALID = object()


def _string_list(c: _Collector, name: str, value: Any, *, allow_none: bool = False) -> list | None:
    if not isinstance(value, list):
        c.add(name, f"must be a list, got {type(value).__name__}")
        return None
    out: list = []
    for i, item in enumerate(value):
        if item is None and allow_none:
            out.append(None)
        elif isinstance(item, str) and item.strip():
            out.append(item)
        else:
            c.add(f"{name}[{i}]", "must be non-empty text")
            return None
    return out


# -- prompts -------------------------------------------------------------------------------------------


def clean_prompt(record: dict[str, Any]) -> tuple[CleanPrompt | None, list[FieldProblem]]:
    c = _Collector(record)
    external_id = c.identifier()
    category = c.text("category", required=True, max_length=100)
    language = c.language("language")
    register = c.text("register", required=False, max_length=40)

    turns: list[str] | None = None
    raw_turns = c.json_value("turns")
    has_prompt = c.present("prompt")
    if raw_turns is not None and raw_turns is not _INVALID and has_prompt:
        c.add("prompt", "give either prompt (one turn) or turns (a list), not both")
    elif raw_turns is _INVALID:
        pass
    elif raw_turns is not None:
        turns = _string_list(c, "turns", raw_turns)
        if turns is not None and not turns:
            c.add("turns", "must hold at least one user message")
            turns = None
    elif has_prompt:
        text = c.text("prompt", required=True)
        turns = [text] if text else None
    else:
        c.add("prompt", "is required (or turns, a list of user messages)")

    references: list[str | None] = []
    raw_refs = c.json_value("references")
    if raw_refs is not None and raw_refs is not _INVALID:
        if isinstance(raw_refs, str):
            raw_refs = [raw_refs]
        refs = _string_list(c, "references", raw_refs, allow_none=True)
        if refs is not None:
            if turns is not None and len(refs) != len(turns):
                c.add("references", f"has {len(refs)} entries but the prompt has {len(turns)} turn(s)")
            references = refs

    responses: list[tuple[str, list[str]]] = []
    raw_responses = c.json_value("responses")
    if raw_responses is not None and raw_responses is not _INVALID:
        if not isinstance(raw_responses, list):
            c.add(
                "responses", f"must be a list of {{model, text}} objects, got {type(raw_responses).__name__}"
            )
        else:
            seen: set[str] = set()
            for i, item in enumerate(raw_responses):
                where = f"responses[{i}]"
                if not isinstance(item, dict):
                    c.add(where, "must be an object with model and text (or turns)")
                    continue
                model = item.get("model")
                if not isinstance(model, str) or not model.strip():
                    c.add(f"{where}.model", "is required")
                    continue
                model = model.strip()
                if model in seen:
                    c.add(f"{where}.model", f"repeats model {model!r} in the same prompt")
                    continue
                seen.add(model)
                if "turns" in item and item.get("turns") is not None:
                    r_turns = _string_list(c, f"{where}.turns", item["turns"])
                    if r_turns is None:
                        continue
                elif isinstance(item.get("text"), str) and item["text"].strip():
                    r_turns = [item["text"]]
                else:
                    c.add(f"{where}.text", "is required (or turns)")
                    continue
                if turns is not None and len(r_turns) != len(turns):
                    c.add(f"{where}.turns", f"has {len(r_turns)} turn(s) but the prompt has {len(turns)}")
                    continue
                responses.append((model, r_turns))

    meta = c.meta()
    if c.problems:
        return None, c.problems
    assert turns is not None
    return (
        CleanPrompt(
            external_id=external_id,
            category=category,
            language=language,
            register=register,
            turns=turns,
            references=references,
            responses=responses,
            meta=meta,
        ),
        [],
    )


# -- translation units ---------------------------------------------------------------------------------


def clean_translation_unit(record: dict[str, Any]) -> tuple[CleanTranslationUnit | None, list[FieldProblem]]:
    c = _Collector(record)
    unit = CleanTranslationUnit(
        external_id=c.identifier(),
        source_text=c.text("source", required=True),
        source_language=c.language("source_language", required=False, default="ind"),
        target_language=c.language("target_language"),
        register=c.text("register", required=False, max_length=40),
        translation_text=c.text("translation", required=False),
        translator_name=c.text("translator", required=False, max_length=200),
        meta=c.meta(),
    )
    if not c.problems and unit.source_language == unit.target_language:
        c.add("target_language", "is the same as source_language")
    return (None, c.problems) if c.problems else (unit, [])


# -- questions -----------------------------------------------------------------------------------------


def clean_question(record: dict[str, Any]) -> tuple[CleanQuestion | None, list[FieldProblem]]:
    c = _Collector(record)
    external_id = c.identifier()
    category = c.text("category", required=True, max_length=100)
    # SeaExam-shaped sets have no concept; id-csqa's do.
    concept = c.text("concept", required=False, max_length=200)
    language = c.language("language")
    text = c.text("question", required=True)

    choices: dict[str, str] = {}
    raw = c.json_value("choices")
    if raw is None and all(k in record for k in CHOICE_KEYS[:MIN_CHOICES]):
        raw = {k: record[k] for k in CHOICE_KEYS if k in record and str(record[k] or "").strip()}
    if raw is None:
        c.add("choices", f"is required: an object with options {_ranges()}")
    elif raw is not _INVALID:
        if isinstance(raw, list):
            if not MIN_CHOICES <= len(raw) <= len(CHOICE_KEYS):
                c.add(
                    "choices", f"has {len(raw)} options; a question has {MIN_CHOICES} to {len(CHOICE_KEYS)}"
                )
                raw = _INVALID
            else:
                raw = dict(zip(CHOICE_KEYS, raw, strict=False))
        if raw is _INVALID:
            pass
        elif not isinstance(raw, dict):
            c.add("choices", f"must be an object with options {_ranges()}")
        else:
            extra = [key for key in raw if key not in CHOICE_KEYS]
            if extra:
                c.add("choices", f"has unknown option keys {echoed(extra)}; use A to E")
            # The options are the first n letters, n from 2 to 5 (SeaExam's A-D, id-csqa's A-E).
            labels = CHOICE_KEYS[: max(MIN_CHOICES, sum(1 for k in CHOICE_KEYS if k in raw))]
            for key in labels:
                value = raw.get(key)
                if (
                    not isinstance(value, str | int | float)
                    or isinstance(value, bool)
                    or not str(value).strip()
                ):
                    c.add(f"choices.{key}", "is required and must be non-empty text")
                else:
                    choices[key] = str(value).strip()
            normalised = [v.casefold() for v in choices.values()]
            if len(choices) == len(labels) and len(set(normalised)) < len(normalised):
                c.add("choices", "has two identical options")

    labels = tuple(choices) or CHOICE_KEYS
    answer = c.text("answer", required=True).upper()
    if answer and answer not in labels:
        c.add("answer", f"must be one of {', '.join(labels)}, got {answer!r}")
    distractor = c.text("distractor", required=False).upper()
    if distractor and distractor not in labels:
        c.add("distractor", f"must be one of {', '.join(labels)}, got {distractor!r}")
    elif distractor and distractor == answer:
        c.add("distractor", "must differ from the answer")
    origin = c.text("origin", required=False).lower() or "human"
    if origin not in ("human", "llm"):
        c.add("origin", f"must be human or llm, got {origin!r}")
    creator = c.text("creator", required=False, max_length=200)
    meta = c.meta()
    if c.problems:
        return None, c.problems
    return (
        CleanQuestion(
            external_id=external_id,
            category=category,
            concept=concept,
            language=language,
            text=text,
            choices=choices,
            answer_key=answer,
            distractor=distractor,
            creator_name=creator,
            origin=origin,
            meta=meta,
        ),
        [],
    )
