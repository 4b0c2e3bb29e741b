"""Multiple-choice answer extraction, prompt variants and k-shot prompts."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from evaluation.domain.answer_extraction import (
    MCQ_PROMPT_VARIANTS,
    RULES,
    McqExample,
    McqPromptVariant,
    build_mcq_messages,
    build_mcq_prompt,
    choose_variant,
    extract_choice,
    extract_choice_with_rule,
    is_correct,
    option_continuations,
)

OPTIONS = {"A": "Jakarta", "B": "Surabaya", "C": "Jawa", "D": "Jawa Barat", "E": "Bandung"}

EXTRACTED = [
    # (model output, letter, rule)
    ("B", "B", "bare_letter"),
    ("(b)", "B", "bare_letter"),
    ("**C**", "C", "bare_letter"),
    ("E.", "E", "bare_letter"),
    ("(B) Surabaya", "B", "leading_letter"),
    ("B. Surabaya, karena kota itu terbesar kedua.", "B", "leading_letter"),
    ("B)", "B", "bare_letter"),
    ("D: Jawa Barat", "D", "leading_letter"),
    ("Answer: D", "D", "answer_phrase"),
    ("Jawaban: D", "D", "answer_phrase"),
    ("The correct answer is E", "E", "answer_phrase"),
    ("Jawaban yang benar adalah E.", "E", "answer_phrase"),
    ("Jawabannya adalah (C) Jawa.", "C", "answer_phrase"),
    ("After thinking it over, I choose A.", "A", "choice_phrase"),
    ("Saya pilih opsi B karena paling masuk akal.", "B", "choice_phrase"),
    ("surabaya", "B", "option_text"),
    ("  Jawa Barat!  ", "D", "option_text"),
    ("Menurut saya pilihan C paling tepat.", "C", "letter_reference"),
    ("Kota itu adalah Surabaya, kota pahlawan.", "B", "option_text_contained"),
    (
        "Ibu kotanya terletak di Jawa Barat.",
        "D",
        "option_text_contained",
    ),  # "Jawa" only as part of "Jawa Barat"
    ("<think>Maybe A? Or B?</think>\nAnswer: E", "E", "answer_phrase"),
    # Phrasings small and large models write, in Indonesian and English.
    ("Jawabannya B", "B", "own_answer"),
    ("Pilihan saya D", "D", "own_answer"),
    ("Jawaban saya: C, karena Jawa adalah pulau.", "C", "answer_phrase"),
    ("Jawaban akhir: **D**", "D", "final_answer"),
    ("Jawaban akhirnya adalah E.", "E", "final_answer"),
    ("the answer is c", "C", "answer_phrase"),
    ("answer: b", "B", "answer_phrase"),
    ("So the final answer is d.", "D", "final_answer"),
    ("My answer is B.", "B", "answer_phrase"),
    # The options echoed back, then the answer.
    ("A. Jakarta\nB. Surabaya\nC. Jawa\nD. Jawa Barat\nE. Bandung\nJawaban: B", "B", "echoed_options"),
    # Phrasings seen in the collected outputs (data/mcq_outputs.jsonl), one or more per rule.
    ("The correct answer is Bandung.", "E", "answer_text"),
    ('Pilih yang benar adalah "Jawa Barat" yang ada di barat.', "D", "answer_text"),  # the longer option
    ("Jawabannya: surabaya", "B", "answer_text"),
    ('The letter "C" is the correct answer.', "C", "correct_letter"),
    ("Option A is incorrect. Option E is correct.", "E", "correct_letter"),
    ('Pilih Anda: "D"', "D", "answer_phrase"),
    ('Pilih tentang soal yang benar adalah "D" yang ada di Jawa Barat.', "D", "answer_phrase"),
    ("C) Jawa Barat\n\nThe correct answer is C) Jawa.", "C", "answer_phrase"),  # the letter, not the text
    ("(E) Bandung\n\nThe correct answer is letter.", "E", "leading_letter"),
    ("Bandung\n\nKota ini terkenal dengan kulinernya.", "E", "option_text"),
    # An echoed or made-up option list set aside: the answer after it, never the list's first letter.
    ("A. Jakarta\nB. Surabaya\nC. Jawa\nD. Jawa Barat\nE. Bandung\n\nB", "B", "echoed_options"),
    ("D) Jawa Barat\n\nPilih salah satu:\nA) Jakarta\nB) Surabaya\nC) Solo", "D", "echoed_options"),
    ("Pilihan:\n(A) Medan\n(B) Solo\nJawaban: C", "C", "echoed_options"),
    ("Q: Kota mana?\nA: Jawabannya B", "B", "own_answer"),  # "Q:" is no option: "Q:", "A:" is no list
    ("Pempek, jika ke Surabaya juga ada.", "B", "option_text_contained"),  # Jakarta etc. absent
]


@pytest.mark.parametrize(("text", "letter", "rule"), EXTRACTED)
def test_extraction_vectors(text, letter, rule):
    assert extract_choice_with_rule(text, OPTIONS) == (letter, rule)


NOT_EXTRACTED = [
    # (model output, rule that gave up)
    ("A or B", "ambiguous"),
    ("C and D are both correct.", "ambiguous"),
    ("(A) or (B)", "ambiguous"),
    ("Answer: A or B", "ambiguous"),
    ("Jawaban: B. Eh, jawaban yang benar adalah C.", "ambiguous"),
    ("Either (A) Jakarta or (E) Bandung.", "ambiguous"),
    ("Bisa Jakarta, bisa juga Bandung.", "ambiguous"),
    ("Kota itu adalah Surabaya, di Jawa Timur.", "ambiguous"),  # "Jawa" is option C
    ("Answer: Denpasar", "not_found"),  # "D" starts a word: not a letter
    ("A capital city in Java.", "not_found"),  # "A" as an article
    ("", "empty"),
    (None, "no_text"),
    ("Maaf, saya tidak bisa menjawab pertanyaan ini.", "refusal"),
    ("I cannot answer that.\nB", "refusal"),  # a refusal, not the letter on the line after it
    ("<think>The answer is B", "empty"),  # reasoning never finished: nothing left to read
    ("The answer is a bit unclear to me.", "not_found"),  # a lower-case "a" that ends no sentence
    ("Jawabannya B atau C", "ambiguous"),  # two letters named: ambiguous, said so
    ("the answer is b or c", "ambiguous"),
    # Two letters or two options named as the answer, in the ways the collected outputs did it.
    ("C) Jakarta\n\nThe correct answer is A) Jakarta.", "ambiguous"),  # opens with C, then says A
    ("C) Jawa\n\nExplanation: Option A is incorrect. Option E is correct.", "ambiguous"),
    ("Bandung\n\nThe correct answer is Jakarta.", "ambiguous"),  # an option's text, then another's
    ('Pilih yang benar adalah "B" yang adalah "D" yang adalah "E"', "ambiguous"),
    ("Pilih Anda: A, B, C, D, E", "ambiguous"),
    ('Pilihan yang benar adalah huruf "x" (B) yang ditambah (C) dan (E).', "ambiguous"),
    ("Bisa Jakarta, bisa juga Bandung.", "ambiguous"),
    # Lists and mixes that choose nothing.
    ("A. Jakarta\nB. Surabaya\nC. Jawa\nD. Jawa Barat\nE. Bandung", "not_found"),  # only the list
    ("Pilihan tersebut:\n(C) kadangis\n(D) terutamakan\n(E) kalimakan", "not_found"),  # made-up options
    ("Jawaban:\n\nA: kota", "not_found"),  # after a blank line "A:" starts a list, not the answer
]


@pytest.mark.parametrize(("text", "rule"), NOT_EXTRACTED)
def test_ambiguous_or_missing_answers_give_none(text, rule):
    assert extract_choice_with_rule(text, OPTIONS) == (None, rule)


def test_a_letter_ruled_out_or_explained_is_not_named_as_an_answer():
    assert extract_choice_with_rule("The answer is B, not (C).", OPTIONS) == ("B", "answer_phrase")
    assert extract_choice_with_rule("The answer is B, because (A) is too far.", OPTIONS) == (
        "B",
        "answer_phrase",
    )
    assert extract_choice_with_rule('Jawabannya adalah "B" atau "C" juga.', OPTIONS) == (None, "ambiguous")


def test_one_option_beside_most_of_another_is_a_mix_not_a_choice():
    options = {
        "A": "lampu lalu lintas merah",
        "B": "penumpang berkata 'kiri'",
        "E": "penumpang menekan tombol di atap",
    }
    mixed = "Sampai menekan tombol di atap, 'kiri' atas lampu lalu lintas merah."
    assert extract_choice_with_rule(mixed, options) == (None, "not_found")
    alone = "Penumpang menekan tombol di atap kalimantan, kalimantan."
    assert extract_choice_with_rule(alone, options) == ("E", "option_text_contained")


def test_every_rule_has_a_vector():
    seen = {rule for _, _, rule in EXTRACTED} | {rule for _, rule in NOT_EXTRACTED}
    assert seen == set(RULES)


def test_letters_outside_the_options_do_not_count():
    assert extract_choice("E", {"A": "ya", "B": "tidak"}) is None
    assert extract_choice("Answer: E", {"A": "ya", "B": "tidak"}) is None


def test_unparsed_counts_as_wrong():
    assert is_correct(extract_choice("A or B", OPTIONS), "A") is False
    assert is_correct(extract_choice("Jawaban: a) Jakarta", OPTIONS), "A") is True
    assert is_correct(None, "A") is False


def test_options_are_checked():
    with pytest.raises(ValueError, match="single capital letters"):
        extract_choice("A", {"a": "x"})


def test_at_least_three_variants_per_language():
    for language in ("id", "en"):
        variants = MCQ_PROMPT_VARIANTS[language]
        assert len(variants) >= 3
        assert len({v.id for v in variants}) == len(variants)
        assert all(v.language == language for v in variants)


def test_choose_variant_is_a_fixed_function_of_id_and_seed():
    # The first 8 bytes of sha256("0\x1fq1"), big-endian, are 10310966159573509873, and
    # 10310966159573509873 mod 3 = 1. A change here would silently change which prompt every stored run used.
    assert choose_variant("q1", 0, 3) == 1
    assert [choose_variant(f"q{i}", 0, 3) for i in range(8)] == [2, 1, 0, 1, 2, 1, 0, 0]
    assert choose_variant("q1", 0, 1) == 0
    counts = Counter(choose_variant(i, 2024, 3) for i in range(3000))
    assert set(counts) == {0, 1, 2}
    assert all(900 < count < 1100 for count in counts.values())  # roughly even over many questions
    assert [choose_variant(i, 1, 3) for i in range(20)] != [choose_variant(i, 2, 3) for i in range(20)]
    with pytest.raises(ValueError, match="n_variants must be an integer >= 1"):
        choose_variant("q1", 0, 0)


def test_choose_variant_is_stable_across_processes():
    # A fresh interpreter has a different hash() salt; the choice must not change.
    code = (
        "from evaluation.domain.answer_extraction import choose_variant;"
        "print([choose_variant(f'q{i}', 7, 3) for i in range(10)])"
    )
    output = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123"},
        cwd=Path(__file__).resolve().parents[3],
    ).stdout.strip()
    assert output == str([choose_variant(f"q{i}", 7, 3) for i in range(10)])


def test_zero_shot_prompt_in_indonesian():
    variant = MCQ_PROMPT_VARIANTS["id"][0]
    prompt = build_mcq_prompt(
        "Apa ibu kota Indonesia?", {"A": "Jakarta", "B": "Bandung", "C": "Medan"}, variant
    )
    assert prompt == (
        "Jawablah pertanyaan pilihan ganda berikut dengan memilih satu jawaban yang paling tepat. "
        "Tuliskan hanya huruf jawabannya (A, B atau C).\n\n"
        "Pertanyaan: Apa ibu kota Indonesia?\nA. Jakarta\nB. Bandung\nC. Medan\nJawaban:"
    )


def test_k_shot_prompt_puts_solved_examples_first():
    variant = MCQ_PROMPT_VARIANTS["en"][1]
    examples = [
        McqExample("Largest island?", {"A": "Java", "B": "Borneo"}, "B"),
        McqExample("Batik is from?", {"A": "Indonesia", "B": "Peru"}, "A"),
    ]
    prompt = build_mcq_prompt("Capital?", {"A": "Jakarta", "B": "Lima"}, variant, examples)
    blocks = prompt.split("\n\nQuestion: ")
    assert len(blocks) == 4  # instruction + 2 examples + the question
    assert blocks[1].endswith("The correct answer is letter B")
    assert blocks[2].endswith("The correct answer is letter A")
    assert blocks[3] == "Capital?\n\nOptions:\n(A) Jakarta\n(B) Lima\n\nThe correct answer is letter"
    assert build_mcq_messages("Capital?", {"A": "Jakarta", "B": "Lima"}, variant, examples) == [
        {"role": "user", "content": prompt}
    ]


def test_example_answers_must_be_options():
    with pytest.raises(ValueError, match="example answer 'C' is not one of its options"):
        build_mcq_prompt("q", {"A": "x"}, MCQ_PROMPT_VARIANTS["en"][0], [McqExample("e", {"A": "y"}, "C")])


def test_variants_need_question_and_choices():
    with pytest.raises(ValueError, match="block needs"):
        McqPromptVariant(id="bad", language="en", instruction="", block="{{question}} Answer:")


def test_option_continuations_for_log_probability_scoring():
    assert option_continuations({"A": "x", "B": "y", "C": "z"}) == [" A", " B", " C"]
