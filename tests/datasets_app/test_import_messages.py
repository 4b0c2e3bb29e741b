"""Every problem the record checks and the column mapping write reads in Indonesian on the import page; the
words the API and the CLI keep are English."""

from __future__ import annotations

import pytest
from django.utils import translation

from datasets_app import import_messages
from datasets_app.domain.column_mapping import MappingInvalid, mapping_from_dict
from datasets_app.domain.import_records import clean_prompt, clean_question, clean_translation_unit

DEEP: list = []
for _ in range(70):
    DEEP = [DEEP]

BAD_PROMPTS = [
    {"id": "p1", "category": "c", "language": "ind", "prompt": "x", "turns": ["x"]},
    {"id": "p2", "category": "c", "language": "ind", "turns": []},
    {"id": "p3", "category": "c", "language": "ind", "prompt": "x", "responses": "nope"},
    {"id": "p4", "category": "c", "language": "ind", "prompt": "x", "responses": ["nope"]},
    {"id": "p5", "category": "c", "language": "ind", "prompt": "x", "meta": {"a": "\x00"}},
    {"id": "p6", "category": "c", "language": "ind", "prompt": "x", "meta": {"a": DEEP}},
    {"id": None, "category": 3, "language": "Indonesian", "prompt": "x", "references": ["a", "b"]},
]
BAD_QUESTIONS = [
    {"id": "q1", "category": "c", "concept": "k", "language": "ind", "question": "?", "choices": "ABCDE"},
    {
        "id": "q2",
        "category": "c",
        "concept": "k",
        "language": "ind",
        "question": "?",
        "choices": {"A": "a", "B": "a", "C": "c", "D": "d", "E": "e"},
        "answer": "A",
        "distractor": "A",
    },
]
BAD_QUESTIONS.append(
    {
        "id": "q3",
        "category": "c",
        "concept": "k",
        "language": "ind",
        "question": "?",
        "choices": ["a"],
        "answer": "F",
    }
)
BAD_QUESTIONS.append({"id": "q4", "category": "c", "concept": "k", "language": "ind", "question": "?"})
BAD_UNITS = [{"id": "t1", "source": "x", "source_language": "ind", "target_language": "ind"}]
BAD_MAPPINGS = [
    [],
    {"columns": [], "constants": [], "responses": {}, "keep_other_columns": "yes"},
    {"columns": {"nope": "a", "category": "", "language": "#row"}, "constants": {"id": "x", "register": ""}},
    {"columns": {"prompt": "p", "category": "c"}, "constants": {"category": "x"}, "responses": [{}] * 11},
    {"columns": {"prompt": "p"}, "responses": ["x", {"text": ""}, {"text": "t", "model_column": 1}]},
    {"columns": {"prompt": "p"}, "responses": [{"text": "t", "model_column": "m", "model_name": "n"}]},
    {
        "columns": {"prompt": "p"},
        "responses": [{"text": "t", "model_name": "n"}, {"text": "u", "model_name": "n"}],
    },
]


def produced() -> list[str]:
    messages = []
    for clean, records in (
        (clean_prompt, BAD_PROMPTS),
        (clean_question, BAD_QUESTIONS),
        (clean_translation_unit, BAD_UNITS),
    ):
        for record in records:
            _value, problems = clean(record)
            messages += [p.message for p in problems]
    for data in BAD_MAPPINGS:
        with pytest.raises(MappingInvalid) as caught:
            mapping_from_dict(data)
        messages += [message for _field, message in caught.value.problems]
    return messages


def test_every_problem_reads_in_indonesian_and_stays_english_for_the_api():
    messages = produced()
    assert len(set(messages)) >= 25
    with translation.override("en"):
        assert [import_messages.message(m) for m in messages] == messages
    with translation.override("id"):
        untranslated = [m for m in messages if import_messages.message(m) == m]
    assert untranslated == []
