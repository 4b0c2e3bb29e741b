"""Four prompt templates per language, completion and cloze prompts, and the answer forms SeaExam-style
outputs take ("(d)", "Answer: (d)", "Jawaban: D", "**D**", "D.") plus refusals."""

from __future__ import annotations

import pytest

from evaluation.domain.answer_extraction import (
    MCQ_PROMPT_VARIANTS,
    REFUSAL_RULE,
    McqExample,
    McqPromptVariant,
    best_option,
    build_cloze_prompt,
    build_mcq_prompt,
    choose_variant,
    cloze_continuations,
    extract_choice_with_rule,
    first_line,
)

OPTIONS = {"A": "Bandung", "B": "Jakarta", "C": "Surabaya", "D": "Medan", "E": "Makassar"}


def test_four_templates_per_language_with_distinct_ids():
    assert [v.id for v in MCQ_PROMPT_VARIANTS["id"]] == ["id-1", "id-2", "id-3", "id-4"]
    assert [v.id for v in MCQ_PROMPT_VARIANTS["en"]] == ["en-1", "en-2", "en-3", "en-4"]


def test_the_template_draw_is_reproducible_with_the_seed():
    # sha256("7\x1fq1") starts 6db2aa3d72d45e6d: its first 8 bytes big-endian are 7904567476884889197, mod 4 = 1;
    # q3: 7779356043745378774 mod 4 = 2; q6: 4361767646509898951 mod 4 = 3.
    draws = [choose_variant(f"q{i}", 7, 4) for i in range(1, 9)]
    assert draws == [1, 1, 2, 1, 2, 3, 3, 2]
    assert draws == [choose_variant(f"q{i}", 7, 4) for i in range(1, 9)]  # same seed, same draw
    assert [choose_variant(f"q{i}", 8, 4) for i in range(1, 9)] != draws  # another seed, another draw


def test_completion_prompt_is_instruction_then_solved_shots_then_the_open_question():
    variant = MCQ_PROMPT_VARIANTS["id"][3]
    shot = McqExample("Pulau terbesar?", {"A": "Jawa", "B": "Kalimantan"}, "B")
    prompt = build_mcq_prompt("Ibu kota Indonesia?", {"A": "Bandung", "B": "Jakarta"}, variant, [shot])
    assert prompt == (
        "Soal ujian berikut menguji pengetahuan tentang Indonesia. Setiap soal memiliki tepat satu jawaban "
        "benar di antara pilihan A atau B. Jawablah dengan huruf pilihan tersebut.\n\n"
        "Soal ujian: Pulau terbesar?\n(A) Jawa\n(B) Kalimantan\nJawaban: B\n\n"
        "Soal ujian: Ibu kota Indonesia?\n(A) Bandung\n(B) Jakarta\nJawaban:"
    )


def test_cloze_prompt_shows_no_options_and_scores_option_texts():
    variant = MCQ_PROMPT_VARIANTS["id"][3]
    shot = McqExample("Pulau terbesar?", {"A": "Jawa", "B": "Kalimantan"}, "B")
    assert build_cloze_prompt("Ibu kota Indonesia?", variant, [shot]) == (
        "Soal ujian: Pulau terbesar?\nJawaban: Kalimantan\n\nSoal ujian: Ibu kota Indonesia?\nJawaban:"
    )
    assert cloze_continuations({"A": "Bandung", "B": "Jakarta"}) == [" Bandung", " Jakarta"]
    with pytest.raises(ValueError, match="cloze_block needs"):
        McqPromptVariant(
            id="x", language="id", instruction="", block="{{question}}{{choices}}", cloze_block=""
        )


def test_best_option_takes_the_highest_score_and_the_first_on_a_tie():
    assert best_option(["A", "B", "C"], [-3.2, -1.5, -2.0]) == "B"
    assert best_option(["A", "B", "C"], [-1.5, -1.5, -2.0]) == "A"
    with pytest.raises(ValueError, match="3 letters but 2 scores"):
        best_option(["A", "B", "C"], [-1.0, -2.0])


@pytest.mark.parametrize(
    ("text", "letter", "rule"),
    [
        ("(d)", "D", "bare_letter"),
        ("Answer: (d)", "D", "answer_phrase"),
        ("Jawaban: D", "D", "answer_phrase"),
        ("**D**", "D", "bare_letter"),
        ("D.", "D", "bare_letter"),
        ("Jawaban: (d) atau (b)", None, "ambiguous"),
        ("Answer: a lot of people live there", None, "not_found"),  # a lower-case word is not a letter
    ],
)
def test_extraction_vectors(text, letter, rule):
    assert extract_choice_with_rule(text, OPTIONS) == (letter, rule)


@pytest.mark.parametrize(
    "text",
    [
        "Maaf, saya tidak bisa menjawab pertanyaan ini.",
        "Saya tidak tahu.",
        "I cannot answer this question.",
        "As an AI, I don't have opinions about cities.",
    ],
)
def test_a_refusal_is_recorded_as_a_refusal_not_a_letter(text):
    assert extract_choice_with_rule(text, OPTIONS) == (None, REFUSAL_RULE)


def test_an_explicit_answer_wins_over_a_hedge():
    assert extract_choice_with_rule("I don't know for sure. Answer: C", OPTIONS) == ("C", "answer_phrase")


def test_completion_answer_is_the_first_line_with_text():
    assert first_line("\n B\n\nSoal ujian: Pulau terbesar?\n(A) Jawa") == "B"
    assert first_line(" (d) Medan\nJawaban: A") == "(d) Medan"
    assert first_line("\n\n") == ""
