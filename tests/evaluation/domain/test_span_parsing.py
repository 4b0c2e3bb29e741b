"""Reading an error-span judge's reply: fenced, whole or embedded JSON; quotes placed in the translation;
unknown categories to the fallback; what cannot be read is an error with the reason, never a span."""

from __future__ import annotations

from evaluation.domain.judge_parsing import parse_spans
from evaluation.domain.span_judge import span_messages

TARGET = "Harga beras naik 50 persen, harga beras lama."
CATS = {"accuracy/mistranslation": "Accuracy · Mistranslation", "style": "Style", "other": "Other"}


def test_quotes_are_placed_and_categories_read_by_code_or_name():
    raw = (
        'Here you go:\n```json\n{"errors": [{"text": "50", "category": "Accuracy · Mistranslation", '
        '"severity": "major"}, {"text": "harga beras", "category": "style", "severity": "Minor"}, '
        '{"text": "harga beras", "category": "weird", "severity": "minor"}]}\n```'
    )
    parsed = parse_spans(raw, target=TARGET, categories=CATS)
    assert parsed.ok and parsed.reason == "json_fenced"
    assert [(s.start, s.end, s.category, s.severity) for s in parsed.spans] == [
        (17, 19, "accuracy/mistranslation", "major"),
        (28, 39, "style", "minor"),  # the exact match comes first ...
        (0, 11, "other", "minor"),  # ... then, taken, the same words ignoring case
    ]


def test_words_not_in_the_translation_and_missing_severities_are_dropped_and_counted():
    raw = '{"errors": [{"text": "rice", "category": "style", "severity": "minor"}, {"text": "50", "category": "style"}]}'
    parsed = parse_spans(raw, target=TARGET, categories=CATS)
    assert parsed.ok and parsed.spans == () and parsed.dropped == 2


def test_an_empty_list_is_no_error_and_prose_is_a_parse_error():
    assert parse_spans('{"errors": []}', target=TARGET, categories=CATS).ok
    for raw, reason in (
        ("The translation is fine.", "no list of errors found"),
        ("", "empty output"),
        (None, "no output text"),
    ):
        parsed = parse_spans(raw, target=TARGET, categories=CATS)
        assert (parsed.status, parsed.reason, parsed.spans) == ("error", reason, ())


def test_the_prompt_lists_the_categories_in_either_language():
    messages = span_messages(
        source="Dia tidak datang.",
        target="Dheweke teka.",
        source_language="Indonesian",
        target_language="Javanese",
        register="ngoko",
        categories=list(CATS.items()),
        lang="id",
    )
    assert messages[0]["role"] == "system" and "JSON" in messages[0]["content"]
    assert "- style: Style" in messages[1]["content"] and "Javanese, ngoko" in messages[1]["content"]
    assert "Sebutkan kesalahan" in messages[1]["content"]
