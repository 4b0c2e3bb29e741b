"""The arena's pure rules, on hand-checked values."""

from __future__ import annotations

import json

import pytest

from arena.domain import battles as b


def test_prompt_problems_in_order_and_whole_word_blocks():
    ok = b.prompt_problems("Apa kabar?", max_chars=20, blocked_terms=["bom"], language="ind")
    assert ok == []
    # A block on "bom" refuses the word, in any case and with punctuation around it, not "bombai".
    assert b.prompt_problems("Cara membuat BOM!", max_chars=50, blocked_terms=["bom"], language="ind") == [
        b.PromptProblem(b.BLOCKED, term="bom")
    ]
    assert b.prompt_problems("Resep bombai goreng", max_chars=50, blocked_terms=["bom"], language="ind") == []
    # A term of two words matches across any run of spaces.
    assert b.prompt_problems(
        "kata   kasar sekali", max_chars=50, blocked_terms=["kata kasar"], language="ind"
    )
    assert [p.code for p in b.prompt_problems("   ", max_chars=5, blocked_terms=[], language="xxx")] == [
        b.EMPTY,
        b.UNKNOWN_LANGUAGE,
    ]
    too_long = b.prompt_problems("abcdef", max_chars=5, blocked_terms=[], language="jav", register="krama")
    assert too_long == [b.PromptProblem(b.TOO_LONG, limit=5)]
    # Registers belong to their language: Krama is Javanese, not Sundanese.
    assert [
        p.code
        for p in b.prompt_problems("x", max_chars=5, blocked_terms=[], language="sun", register="krama")
    ] == [b.UNKNOWN_REGISTER]


def test_winner_of_maps_votes_to_the_leaderboard_outcomes():
    assert [b.winner_of(v) for v in b.VOTES] == ["model_a", "model_b", "tie", "tie (bothbad)"]
    with pytest.raises(ValueError):
        b.winner_of("C")


def test_conversation_interleaves_turns():
    assert b.conversation(["q1", "q2"], ["a1"]) == [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2"},
    ]
    with pytest.raises(ValueError):
        b.conversation(["q1"], ["a1"])


def test_style_counts():
    text = "# Judul\n\nIni **tebal** dan __juga__.\n- satu\n* dua\n1. tiga\nbukan-list"
    assert b.style_counts(text) == {"headers": 1, "bold": 2, "lists": 3}
    assert b.style_counts("") == {"headers": 0, "bold": 0, "lists": 0}


def test_leaderboard_row_sums_turns_and_keeps_column_order():
    row = b.leaderboard_row(
        battle="tok",
        vote="both_bad",
        a=b.SideAnswer("m1", ["# x", "**y**"], [3, 4]),
        b=b.SideAnswer("m2", ["- z", "w"], [5, 1]),
        language="jav",
        register="krama",
        category="culture",
        sampler="uniform",
        probability=1 / 3,
    )
    assert list(row) == list(b.LEADERBOARD_COLUMNS)
    assert row["winner"] == "tie (bothbad)"
    assert (row["length_a"], row["length_b"], row["turns"]) == (7, 6, 2)
    assert (row["headers_a"], row["bold_a"], row["lists_b"]) == (1, 1, 1)


def test_events_carry_only_blinded_keys():
    frame = b.sse_frame(b.delta_event("A", 0, 3, "kabar"))
    assert frame.startswith(b"data: ") and frame.endswith(b"\n\n")
    assert json.loads(frame[6:]) == {"type": "delta", "side": "A", "turn": 0, "offset": 3, "text": "kabar"}
    with pytest.raises(ValueError):
        b.sse_frame({"type": "done", "side": "A", "model": "secret"})
    with pytest.raises(ValueError):
        b.delta_event("C", 0, 0, "x")
    with pytest.raises(ValueError):
        b.failed_event("A", 0, "HTTP 500 from secret-model")


def test_new_text_skips_what_was_shown_and_gaps():
    assert b.new_text(0, 0, "abc") == ("abc", 3)
    assert b.new_text(3, 1, "bcde") == ("de", 5)  # overlap with what was shown
    assert b.new_text(5, 1, "bc") == ("", 5)  # all shown already
    assert b.new_text(2, 4, "xy") == ("", 2)  # a gap: wait for the side's done event
