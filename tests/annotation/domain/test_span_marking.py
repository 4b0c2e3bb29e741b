"""Reading error-span answers, what became of suggestions, spans suggested by flags, pieces for pages."""

from __future__ import annotations

import pytest

from annotation.domain.span_marking import (
    ESA,
    MQM,
    MarkedSpan,
    SpanAnswerInvalid,
    SuggestedSpan,
    read_span_answer,
    spans_from_flags,
    suggestion_outcomes,
    text_pieces,
)
from annotation.domain.span_settings import SpanSettingsInvalid, span_config

TARGET = "Regine beras mundhak 50 persen (saiki)."
SOURCE = "Harga beras naik 5 persen."
CATS = span_config({}, protocol=MQM)


def read(payload, protocol=MQM, suggestions=()):
    return read_span_answer(
        payload,
        protocol=protocol,
        target=TARGET,
        source=SOURCE,
        categories=CATS.codes,
        severities=CATS.severities,
        suggestions=suggestions,
    )


def test_spans_are_read_sorted_target_first_and_no_error_is_explicit():
    answer = read(
        {
            "spans": [
                {
                    "side": "source",
                    "start": 0,
                    "end": 5,
                    "category": "accuracy/omission",
                    "severity": "minor",
                },
                {"start": "21", "end": 23.0, "category": "accuracy/mistranslation", "severity": "major"},
            ]
        }
    )
    assert [(s.side, s.start, s.end) for s in answer.spans] == [("target", 21, 23), ("source", 0, 5)]
    assert not answer.no_error and answer.score is None
    assert read({"no_error": "on"}).no_error


def test_every_problem_is_named_with_its_place():
    with pytest.raises(SpanAnswerInvalid) as caught:
        read(
            {
                "spans": [
                    {"start": 5, "end": 5, "category": "style", "severity": "minor"},
                    {"start": 0, "end": 3, "category": "style", "severity": "neutral"},
                    {"side": "middle", "start": 0, "end": 3},
                ]
            }
        )
    assert set(caught.value.errors) == {"spans.0.start", "spans.1.severity", "spans.2.side"}
    with pytest.raises(SpanAnswerInvalid) as caught:
        read({"spans": [{"start": 0, "end": 3, "category": "style", "severity": "minor"}] * 2})
    assert "twice" in caught.value.errors["spans"][0]


def test_esa_needs_a_score_from_0_to_100_and_takes_spans_without_category():
    span = {"start": 0, "end": 6, "severity": "minor"}
    assert read({"spans": [span], "score": 100}, protocol=ESA).score == 100
    for bad in (101, -1, "fifty", None, 50.5, True):
        with pytest.raises(SpanAnswerInvalid) as caught:
            read({"spans": [span], "score": bad}, protocol=ESA)
        assert "score" in caught.value.errors
    with pytest.raises(SpanAnswerInvalid):
        read({"spans": [span]}, protocol=MQM)  # MQM needs the category


def test_what_became_of_each_suggestion():
    suggestions = [
        SuggestedSpan("target", 21, 23, "accuracy/mistranslation", "major", id=1),
        SuggestedSpan("target", 31, 38, "accuracy/addition", "minor", id=2),
        SuggestedSpan("target", 0, 6, "style", "minor", id=3),
    ]
    spans = [
        MarkedSpan("target", 21, 23, "accuracy/mistranslation", "major", suggestion=1),
        MarkedSpan("target", 30, 38, "accuracy/addition", "minor", suggestion=2),
    ]
    assert suggestion_outcomes(spans, suggestions) == {1: "accepted", 2: "edited", 3: "removed"}
    answer = read(
        {
            "spans": [
                {
                    "start": 21,
                    "end": 23,
                    "category": "accuracy/mistranslation",
                    "severity": "major",
                    "suggestion": 1,
                }
            ]
        },
        suggestions=suggestions,
    )
    assert answer.outcomes == {1: "accepted", 2: "removed", 3: "removed"}


def test_flags_point_at_their_words():
    flags = [
        {
            "code": "number_mismatch",
            "details": {"extra_in_translation": ["50"], "missing_in_translation": ["5"]},
        },
        {"code": "bracket_addition", "details": {"in_translation": ["saiki"], "in_source": []}},
        {"code": "length_ratio", "details": {}},
    ]
    got = spans_from_flags(
        target=TARGET, flags=flags, categories=CATS.flag_categories, minor="minor", major="major"
    )
    assert [(TARGET[s.start : s.end], s.category, s.severity, s.note) for s in got] == [
        ("50", "accuracy/mistranslation", "major", "number_mismatch"),
        ("(saiki)", "accuracy/addition", "minor", "bracket_addition"),
    ]


def test_register_and_untranslated_flags():
    text = "Kula badhe tindak, kowe arep lunga."
    flags = [
        {
            "code": "register_mismatch",
            "details": {
                "detected": "ngoko",
                "markers": {"ngoko": {"kowe": 1, "arep": 1}, "krama": {"kula": 1}},
            },
        },
    ]
    got = spans_from_flags(
        target=text, flags=flags, categories=CATS.flag_categories, minor="minor", major="major"
    )
    assert [(text[s.start : s.end], s.category) for s in got] == [
        ("kowe", "fluency/register"),
        ("arep", "fluency/register"),
    ]
    same = "  Harga beras naik 5 persen. "
    [whole] = spans_from_flags(
        target=same,
        flags=[{"code": "untranslated"}],
        categories=CATS.flag_categories,
        minor="minor",
        major="major",
    )
    assert (same[whole.start : whole.end], whole.category, whole.severity) == (
        "Harga beras naik 5 persen.",
        "non-translation",
        "major",
    )


def test_text_pieces_cut_at_every_boundary():
    pieces = text_pieces("abcdef", [(1, 3, "minor"), (2, 5, "major")])
    assert [(p["text"], p["spans"], p["severity"]) for p in pieces] == [
        ("a", [], ""),
        ("b", [1], "minor"),
        ("c", [1, 2], "major"),
        ("de", [2], "major"),
        ("f", [], ""),
    ]


def test_settings_default_to_the_core_typology_and_refuse_unknown_keys():
    config = span_config({}, protocol=MQM)
    assert "fluency/register" in config.codes and "accuracy" not in config.codes  # leaves are picked
    assert config.labelled("id")[0]["label"] == "Akurasi · Salah terjemah"
    own = span_config({"categories": [{"label": "Meaning"}, {"label": "Other"}]}, protocol=MQM)
    assert own.codes == {"meaning", "other"}
    assert own.flag_categories.register == "other"
    with pytest.raises(SpanSettingsInvalid, match="colour"):
        span_config({"colour": "red"}, protocol=MQM)
    with pytest.raises(SpanSettingsInvalid):
        span_config({"weights": {"severity": {"major": -1}}}, protocol=MQM)
