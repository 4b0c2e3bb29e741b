"""Checks on the bundled sample prompts that `make demo` loads (demo/data/prompts.jsonl).

The file is hand-written; these tests keep it loadable by the prompt importer and keep the shape the demo
relies on: every IndoPref category covered in Indonesian, two-turn prompts with references, Sundanese and
Javanese subsets, and the same five fictional models answering every prompt exactly once.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from datasets_app.domain.import_records import clean_prompt

DATA_PATH = Path(__file__).resolve().parents[2] / "demo" / "data" / "prompts.jsonl"

CATEGORIES = {
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
}
MODELS = {
    "nusantara-chat-7b",
    "garuda-instruct-13b",
    "merapi-lm-3b",
    "sahabat-ai-8b",
    "rinjani-mini-1b",
}
REGISTERS = {"ind": set(), "sun": {"lemes", "loma"}, "jav": {"krama", "ngoko"}}
ALLOWED_KEYS = {
    "id",
    "category",
    "language",
    "register",
    "prompt",
    "turns",
    "references",
    "responses",
    "meta",
}


def _load() -> list[dict]:
    text = DATA_PATH.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return _load()


def _user_turns(record: dict) -> list[str]:
    return record["turns"] if "turns" in record else [record["prompt"]]


def _response_turns(response: dict) -> list[str]:
    return response["turns"] if "turns" in response else [response["text"]]


def test_every_line_is_one_json_object_written_as_utf8_text():
    raw = DATA_PATH.read_bytes()
    text = raw.decode("utf-8")  # raises on invalid UTF-8
    assert text.endswith("\n")
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        assert line.strip(), f"line {number} is blank"
        record = json.loads(line)
        assert isinstance(record, dict), f"line {number} is not an object"
        assert set(record) <= ALLOWED_KEYS, f"line {number} has unknown keys {set(record) - ALLOWED_KEYS}"
    # ensure_ascii=False: Sundanese é and symbols such as − and × are stored as characters, not \u escapes.
    assert "\\u" not in text
    assert "é" in text


def test_ids_are_unique_and_follow_the_naming_scheme(records):
    ids = [r["id"] for r in records]
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    assert duplicates == []
    for r in records:
        if r["language"] == "ind":
            assert re.fullmatch(rf"ind-{re.escape(r['category'])}-\d{{2}}", r["id"]), r["id"]
        else:
            assert re.fullmatch(rf"{r['language']}-\d{{2}}", r["id"]), r["id"]


def test_categories_languages_and_registers_are_known(records):
    for r in records:
        assert r["category"] in CATEGORIES, r["id"]
        assert r["language"] in REGISTERS, r["id"]
        if "register" in r:
            assert r["register"] in REGISTERS[r["language"]], r["id"]
        if "meta" in r:
            assert r["meta"].get("difficulty") in {"easy", "medium", "hard"}, r["id"]
    used = {(r["language"], r["register"]) for r in records if "register" in r}
    assert {lang for lang, _ in used} == {"sun", "jav"}


def test_indonesian_part_covers_every_category_at_least_twice(records):
    ind = [r for r in records if r["language"] == "ind"]
    assert len(ind) >= 24
    per_category = Counter(r["category"] for r in ind)
    assert set(per_category) == CATEGORIES
    assert min(per_category.values()) >= 2, per_category


def test_regional_subsets_have_at_least_four_prompts_each(records):
    per_language = Counter(r["language"] for r in records)
    assert per_language["sun"] >= 4
    assert per_language["jav"] >= 4


def test_prompt_is_either_one_text_or_a_list_of_turns(records):
    for r in records:
        assert ("prompt" in r) != ("turns" in r), r["id"]
        if "prompt" in r:
            assert isinstance(r["prompt"], str), r["id"]


def test_two_turn_prompts_have_a_reference_per_turn(records):
    two_turn = [r for r in records if len(_user_turns(r)) == 2]
    assert sum(1 for r in two_turn if r["language"] == "ind") >= 4
    for r in two_turn:
        assert len(r["references"]) == 2, r["id"]
    for r in records:
        if "references" in r:
            assert len(r["references"]) == len(_user_turns(r)), r["id"]
        assert len(_user_turns(r)) in (1, 2), r["id"]


def test_every_prompt_is_answered_once_by_each_of_the_five_models(records):
    for r in records:
        names = Counter(resp["model"] for resp in r["responses"])
        assert set(names) == MODELS, r["id"]
        assert set(names.values()) == {1}, r["id"]


def test_response_turns_match_the_prompt_turns(records):
    for r in records:
        n_turns = len(_user_turns(r))
        for resp in r["responses"]:
            if n_turns == 1:
                assert "text" in resp and "turns" not in resp, (r["id"], resp["model"])
            else:
                assert "turns" in resp and "text" not in resp, (r["id"], resp["model"])
            assert len(_response_turns(resp)) == n_turns, (r["id"], resp["model"])


def test_no_text_is_empty_and_no_two_models_answer_identically(records):
    for r in records:
        texts = list(_user_turns(r)) + list(r.get("references", []))
        for resp in r["responses"]:
            texts.extend(_response_turns(resp))
        for text in texts:
            assert isinstance(text, str) and text.strip(), r["id"]
        answers = [tuple(_response_turns(resp)) for resp in r["responses"]]
        assert len(set(answers)) == len(answers), r["id"]


def test_the_prompt_importer_accepts_every_record_with_all_responses(records):
    for r in records:
        clean, problems = clean_prompt(r)
        assert problems == [], (r["id"], problems)
        assert clean is not None
        assert clean.external_id == r["id"]
        assert len(clean.turns) == len(_user_turns(r))
        assert sorted(model for model, _ in clean.responses) == sorted(MODELS)
