"""Adapter for the id-csqa Human_Gen raw files (``raw_ind.json``, ``raw_sun.json``; Putri et al., 2024).

The raw files are a JSON object keyed by creator (W1..W6); each creator holds a list of questions with the
creator's answer key and the answers of the five other workers, their certainty, whether they found the
question ambiguous, which options they found ambiguous, and a free-text reason. This module turns that into
plain question and answer records, the shapes our question workflow uses.

Questions carry no id upstream; we name them ``<language>-<creator>-<index>`` with the 0-based position in
the creator's list (``ind-W1-000``). The files have no distractor field, so ``distractor`` is ``None``.

An answer's ``ambiguous`` flag is true when the answerer marked the question, or at least one option, as
ambiguous: both mean "this question cannot be answered cleanly". The two parts are kept separately too.
Certainty values other than certain/uncertain (raw_sun.json holds clear/ambiguous in some of W5's
certainty fields) give ``uncertain = None``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LABELS = ("A", "B", "C", "D", "E")


class IdCsqaFormatError(ValueError):
    """The raw data do not have the id-csqa Human_Gen structure; the message names where."""


@dataclass(frozen=True)
class IdCsqaQuestion:
    question_id: str
    language: str
    creator: str
    index: int
    category: str
    concept: str
    text: str
    choices: Mapping[str, str]
    answer_key: str
    majority_answer: str | None
    distractor: str | None = None


@dataclass(frozen=True)
class IdCsqaAnswer:
    question_id: str
    creator: str
    answerer: str
    choice: str
    answer_key: str
    ambiguous: bool
    question_ambiguous: bool
    ambiguous_options: tuple[str, ...]
    uncertain: bool | None
    comment: str


@dataclass(frozen=True)
class IdCsqaData:
    language: str
    questions: tuple[IdCsqaQuestion, ...]
    answers: tuple[IdCsqaAnswer, ...]

    def answer_rows(self) -> Iterator[tuple[str, str, str, str, str]]:
        """(question_id, creator, answerer, choice, answer_key) rows for ``answer_conflict_matrix``."""
        for a in self.answers:
            yield (a.question_id, a.creator, a.answerer, a.choice, a.answer_key)

    def ambiguous_flags(self) -> Iterator[tuple[str, bool]]:
        """(question_id, ambiguous) per answer, for ``ambiguous_flag_counts``."""
        for a in self.answers:
            yield (a.question_id, a.ambiguous)


def _require(condition: bool, where: str, what: str) -> None:
    if not condition:
        raise IdCsqaFormatError(f"{where}: {what}")


def _is_ambiguous(value: object) -> bool:
    return isinstance(value, str) and value.strip().lower() == "ambiguous"


def _uncertain(value: object) -> bool | None:
    text = value.strip().lower() if isinstance(value, str) else ""
    return {"uncertain": True, "certain": False}.get(text)


def _question(language: str, creator: str, index: int, raw: Mapping[str, Any]) -> IdCsqaQuestion:
    where = f"{creator}[{index}]"
    _require(isinstance(raw, Mapping), where, "a question must be an object")
    choices = raw.get("choices")
    _require(isinstance(choices, Mapping), where, "choices must be an object with label and text")
    labels, texts = list(choices.get("label", [])), list(choices.get("text", []))
    _require(labels == list(LABELS), where, f"choice labels must be A-E, got {labels}")
    _require(len(texts) == len(labels), where, "choices need one text per label")
    key = str(raw.get("answer_creator", "")).strip().upper()
    _require(key in LABELS, where, f"answer_creator must be A-E, got {key!r}")
    majority = str(raw.get("answer_majority", "")).strip().upper() or None
    return IdCsqaQuestion(
        question_id=f"{language}-{creator}-{index:03d}",
        language=language,
        creator=creator,
        index=index,
        category=str(raw.get("category", "")),
        concept=str(raw.get("question_concepts", "")),
        text=str(raw.get("question", "")),
        choices=dict(zip(labels, (str(t) for t in texts), strict=True)),
        answer_key=key,
        majority_answer=majority,
    )


def _answers(question: IdCsqaQuestion, raw: Mapping[str, Any]) -> list[IdCsqaAnswer]:
    where = question.question_id
    given = raw.get("answers")
    _require(isinstance(given, Mapping) and bool(given), where, "answers must be a non-empty object")
    question_ambiguity = raw.get("question_ambiguity") or {}
    option_ambiguity = raw.get("option_ambiguity") or {}
    certainty = raw.get("answers_uncertainty") or {}
    reasons = raw.get("reason") or {}
    out = []
    for answerer, choice in given.items():
        _require(answerer != question.creator, where, f"the creator {answerer} answers their own question")
        options = option_ambiguity.get(answerer) or []
        flagged_options = tuple(
            label for label, value in zip(LABELS, options, strict=False) if _is_ambiguous(value)
        )
        question_flag = _is_ambiguous(question_ambiguity.get(answerer))
        out.append(
            IdCsqaAnswer(
                question_id=question.question_id,
                creator=question.creator,
                answerer=str(answerer),
                choice=str(choice or "").strip().upper(),
                answer_key=question.answer_key,
                ambiguous=question_flag or bool(flagged_options),
                question_ambiguous=question_flag,
                ambiguous_options=flagged_options,
                uncertain=_uncertain(certainty.get(answerer)),
                comment=str(reasons.get(answerer) or ""),
            )
        )
    return out


def parse_raw(data: Mapping[str, Any], *, language: str) -> IdCsqaData:
    """Questions and answers from the parsed JSON of a raw file (creators in file order)."""
    _require(isinstance(data, Mapping) and bool(data), "top level", "expected an object keyed by creator")
    questions: list[IdCsqaQuestion] = []
    answers: list[IdCsqaAnswer] = []
    for creator, items in data.items():
        _require(isinstance(items, list), str(creator), "a creator must hold a list of questions")
        for index, raw in enumerate(items):
            question = _question(language, str(creator), index, raw)
            questions.append(question)
            answers.extend(_answers(question, raw))
    return IdCsqaData(language=language, questions=tuple(questions), answers=tuple(answers))


def load_raw(path: str | Path, *, language: str | None = None) -> IdCsqaData:
    """Read a raw file; the language defaults to the code in its name (``raw_ind.json`` -> ``ind``)."""
    path = Path(path)
    if language is None:
        stem = path.stem
        _require(stem.startswith("raw_"), str(path), "pass language= for a file not named raw_<lang>.json")
        language = stem.removeprefix("raw_")
    with path.open(encoding="utf-8") as handle:
        return parse_raw(json.load(handle), language=language)
