import json

import pytest

from datasets_app.domain.untrusted_json import MAX_JSON_DEPTH, JsonProblem, UnsafeJson, find_problem, loads


def nested(depth: int, leaf=1):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def test_plain_values_have_no_problem():
    assert find_problem({"answer": {"ratings": {"1": {"relevance": 4}}, "comment": "bagus"}}) is None
    assert find_problem("teks") is None and find_problem(3) is None and find_problem(None) is None


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ("a\x00b", ""),
        ({"answer": {"comment": "x\x00"}}, "answer.comment"),
        ({"turns": ["ok", "ok", "\x00"]}, "turns[2]"),
        ({"meta": {"bad\x00key": 1}}, "meta.bad\\u0000key"),
        ([{"a": "ok"}, {"b": ["\x00"]}], "[1].b[0]"),
    ],
)
def test_a_nul_character_is_found_with_its_path(value, path):
    assert find_problem(value) == JsonProblem("nul", path)


def test_depth_counts_containers_and_stops_at_the_limit():
    assert find_problem(nested(MAX_JSON_DEPTH)) is None
    assert find_problem(nested(MAX_JSON_DEPTH + 1)) == JsonProblem("too_deep", "[0]")
    assert find_problem({"ok": 1, "meta": nested(MAX_JSON_DEPTH)}) == JsonProblem("too_deep", "meta")
    assert find_problem({"a": [[1]]}, max_depth=2) == JsonProblem("too_deep", "a", max_depth=2)


def test_a_very_deep_value_is_walked_without_recursion():
    # Far deeper than Python's recursion limit: built and checked without recursing.
    assert find_problem(nested(50_000), max_depth=100_000) is None


def test_loads_turns_the_decoders_recursion_limit_into_a_problem():
    with pytest.raises(UnsafeJson) as caught:
        loads("[" * 100_000 + "]" * 100_000)
    assert caught.value.problem == JsonProblem("too_deep", "")
    assert caught.value.problem.message == f"is nested deeper than {MAX_JSON_DEPTH} levels"


def test_loads_refuses_an_escaped_nul_and_passes_other_errors_through():
    with pytest.raises(UnsafeJson) as caught:
        loads('{"comment": "a\\u0000b"}')
    assert (
        caught.value.problem.describe() == "comment holds a NUL character (\\u0000), which cannot be stored"
    )
    with pytest.raises(json.JSONDecodeError):
        loads("{not json")
    assert loads(b'{"a": [1, 2]}') == {"a": [1, 2]}


@pytest.mark.parametrize(
    "text",
    [
        b'{"a": "x\\u0000"}',  # an escaped NUL in bytes
        '{"k\\u0000ey": 1}'.encode("utf-16"),  # text the decoder reads as UTF-16
        '{"a": "x\\u0000"}'.encode("utf-32"),
        json.dumps(nested(MAX_JSON_DEPTH + 1)),  # one level too deep, exactly
        json.dumps({"a": nested(MAX_JSON_DEPTH)}).encode(),
    ],
)
def test_loads_finds_every_problem_the_walk_finds(text):
    # loads spares the walk to text that cannot hold a problem; text that does is always walked.
    with pytest.raises(UnsafeJson):
        loads(text)


def test_loads_takes_text_that_only_looks_like_a_problem():
    # A backslash before u0000 (no NUL), and brackets inside strings (no nesting).
    assert loads('{"a": "\\\\u0000"}') == {"a": "\\u0000"}
    assert loads(b'{"a": "\\\\u0000"}') == {"a": "\\u0000"}
    brackets = "[" * (MAX_JSON_DEPTH * 2)
    assert loads(json.dumps({"a": brackets, "b": nested(MAX_JSON_DEPTH - 1)})) == {
        "a": brackets,
        "b": nested(MAX_JSON_DEPTH - 1),
    }
