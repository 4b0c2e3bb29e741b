"""Judge output parsing: hand-checked vectors for every step of the fallback chain, and two-order combining."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.domain.judge_parsing import (
    BIASED_FIRST,
    BIASED_SECOND,
    CONSISTENCY_ERROR,
    CONSISTENT,
    ERROR,
    OK,
    ParseResult,
    combine_two_orders,
    normalised_factual_score,
    parse_grade,
    parse_judge_output,
    parse_pairwise,
    strip_reasoning,
)

R1, R2 = "Response 1", "Response 2"

PAIRWISE_OK = [
    # (raw output, expected verdict, step that decides)
    ('{"explanation": "More accurate.", "score": "Response 1"}', R1, "json_whole"),
    ('```json\n{"explanation": "Fluent.", "score": "Response 2"}\n```', R2, "json_fenced"),
    (
        'Here is my judgment:\n```\n{"explanation": "ok", "score": "Response 1"}\n```\nThanks.',
        R1,
        "json_fenced",
    ),
    (
        'After comparing both, {"explanation": "B is wrong", "score": "Response 2"} is my verdict.',
        R2,
        "json_object",
    ),
    ('{"penjelasan": "Respons 1 lebih lengkap.", "skor": "Respons 1"}', R1, "json_whole"),
    ('{"Penjelasan": "x", "Nilai": "Jawaban 2"}', R2, "json_whole"),
    ("{'explanation': 'python style', 'score': 'Response 2'}", R2, "json_whole"),
    (
        '{"explanation": "line one\nline two", "score": "Response 1"}',
        R1,
        "json_whole",
    ),  # raw newline in string
    ('{"explanation": "x", "score": 2}', R2, "json_whole"),
    ('{"explanation": "x", "score": "**Response 1**"}', R1, "json_whole"),
    ("<think>Response 1 is better? No, wait.</think>\nResponse 2 is better.", R2, "keyword"),
    ('Thinking about it...\n</think>\n{"explanation": "x", "score": "Response 1"}', R1, "json_whole"),
    ("Response 1 is better because it answers in Sundanese.", R1, "keyword"),
    ("Respons 2 lebih baik daripada Respons 1.", R2, "keyword"),
    ("Menurut saya, jawaban yang lebih baik adalah Respons 1.", R1, "keyword"),
    ("The better response is Response 2.", R2, "keyword"),
    ("Final verdict: [[A]]", R1, "keyword"),
    ("[[Response 2]]", R2, "keyword"),
    ("Verdict: **Response 2**", R2, "keyword"),
]


@pytest.mark.parametrize(("raw", "verdict", "step"), PAIRWISE_OK)
def test_pairwise_vectors(raw, verdict, step):
    result = parse_pairwise(raw)
    assert (result.status, result.value, result.reason) == (OK, verdict, step)
    assert result.raw == raw


def test_explanation_is_kept_from_json():
    assert (
        parse_pairwise('{"explanation": "Lebih sopan.", "score": "Response 1"}').explanation == "Lebih sopan."
    )
    assert parse_pairwise('{"alasan": "Lebih sopan.", "skor": "Respons 1"}').explanation == "Lebih sopan."
    assert parse_pairwise("Response 1 is better.").explanation is None


PAIRWISE_ERRORS = [
    # (raw output, reason)
    ("I cannot decide.", "no verdict or score found"),
    ("", "empty output"),
    ("   \n", "empty output"),
    ("<think>Response 1 looks better, but let me check the", "reasoning section never ended"),
    ("Response 1 is better in tone. Response 2 is better in accuracy.", "keyword: both responses are named"),
    ('{"explanation": "equal", "score": "tie"}', "json_whole: verdict 'tie' is a tie"),
    ("Tie.", "keyword: the judge gave a tie"),
    ('{"explanation": "x", "score": "Response 3"}', "json_whole: verdict 'Response 3' names no response"),
    (
        '{"explanation": "x", "score": "Response 1 and Response 2"}',
        "json_whole: verdict 'Response 1 and Response 2' names both",
    ),
    ('{"explanation": "x", "score": 3}', "json_whole: verdict 3 is not 1 or 2"),
    ('{"score": "Response 1"} {"score": "Response 2"}', "json_object: conflicting values"),
    ("[[1]] ... [[2]]", "keyword: both responses are named"),
]


@pytest.mark.parametrize(("raw", "reason"), PAIRWISE_ERRORS)
def test_pairwise_errors_keep_the_raw_text(raw, reason):
    result = parse_pairwise(raw)
    assert result.status == ERROR
    assert result.value is None
    assert result.reason.startswith(reason)
    assert result.raw == raw


def test_a_score_field_is_decisive_even_when_the_prose_has_a_keyword():
    # The JSON says "tie"; the sentence before it would parse as Response 1, but must not be used.
    result = parse_pairwise('Response 1 is better.\n{"explanation": "same", "score": "tie"}')
    assert result.status == ERROR


def test_degenerate_output_is_an_error():
    # A model looping on one character: the brace scan is bounded, the result is a plain parse error.
    assert parse_pairwise("{" * 100_000).reason == "no verdict or score found"
    assert parse_grade('{"' * 50_000, 1, 10).status == ERROR


def test_non_text_input_is_an_error_not_a_crash():
    assert parse_pairwise(None) == ParseResult(ERROR, None, "no output text", "")
    assert parse_grade(12, 1, 10).status == ERROR


GRADE_OK = [
    # (raw output, expected 1-10 score, step)
    ('{"explanation": "Good.", "score": 7}', 7, "json_whole"),
    ('```json\n{"explanation": "Good.", "score": "8"}\n```', 8, "json_fenced"),
    ('Verdict follows. {"penjelasan": "Bagus", "skor": 9} Selesai.', 9, "json_object"),
    ('{"penjelasan": "Cukup", "nilai": 6.0}', 6, "json_whole"),
    ('{"explanation": "x", "score": "7/10"}', 7, "json_whole"),
    ("The answer is correct and concise. Rating: [[7]]", 7, "keyword"),
    ("[[10]]", 10, "keyword"),
    ("Score: 7/10", 7, "keyword"),
    ("Nilai: 9 dari 10", 9, "keyword"),
    ("Skor akhir: 4", 4, "keyword"),
    ("I would give this answer a score of 3.", 3, "keyword"),
    ("Overall a solid answer, 8/10.", 8, "keyword"),
    ("<think>maybe [[3]]? no</think>Rating: [[6]]", 6, "keyword"),
    ("On a scale of 1 to 10 this is weak. Score: 2", 2, "keyword"),
    # Decimal scores within the range, with a point or the Indonesian decimal comma.
    ("The answer is mostly right. [[7.5]]", 7.5, "keyword"),
    ("Rating: 7.5", 7.5, "keyword"),
    ('{"explanation": "x", "score": 7.5}', 7.5, "json_whole"),
    ('{"penjelasan": "x", "skor": "8,5"}', 8.5, "json_whole"),
    ("Skor: 7,5", 7.5, "keyword"),
    ("Nilai akhir: 6,25 dari 10", 6.25, "keyword"),
    ("Overall 9.5/10.", 9.5, "keyword"),
    ("Rating: [[1.0]]", 1, "keyword"),
]


@pytest.mark.parametrize(("raw", "score", "step"), GRADE_OK)
def test_grade_vectors(raw, score, step):
    result = parse_grade(raw, 1, 10)
    assert (result.status, result.value, result.reason) == (OK, score, step)
    # A whole score reads as an int (7, also from "7.0"), any other as a float.
    assert type(result.value) is type(score)


def test_factual_judges_accept_decimals_within_one_to_five():
    assert parse_judge_output("Skor: 4,5", "factual").value == 4.5
    assert parse_judge_output('{"explanation": "x", "score": 2.5}', "factual").value == 2.5
    too_high = parse_judge_output('{"explanation": "x", "score": 5.5}', "factual")
    assert (too_high.status, too_high.reason) == (ERROR, "json_whole: score 5.5 is outside 1-5")
    assert normalised_factual_score(4.5) == 0.9


def test_a_score_too_big_for_a_float_is_out_of_range_not_a_crash():
    result = parse_grade('{"score": 1' + "0" * 400 + "}", 1, 10)
    assert result.status == ERROR and "is outside 1-10" in result.reason


def test_pairwise_verdicts_are_not_read_as_decimal_scores():
    # Pairwise parsing is unchanged: a number that is not 1 or 2 is no verdict.
    assert (
        parse_pairwise('{"explanation": "x", "score": 1.5}').reason == "json_whole: verdict 1.5 is not 1 or 2"
    )


GRADE_ERRORS = [
    ('{"explanation": "x", "score": 11}', "json_whole: score 11 is outside 1-10"),
    ('{"explanation": "x", "score": 0}', "json_whole: score 0 is outside 1-10"),
    ('{"explanation": "x", "score": 10.5}', "json_whole: score 10.5 is outside 1-10"),
    ('{"explanation": "x", "score": 0.5}', "json_whole: score 0.5 is outside 1-10"),
    ('{"explanation": "x", "score": "good"}', "json_whole: score 'good' is not a number"),
    ('{"explanation": "x", "score": null}', "json_whole: score None is not a number"),
    ("Rating: [[12]]", "keyword: score 12 is outside 1-10"),
    ("Score: 4/5", "keyword: score is given out of 5, expected out of 10"),
    ("Rating: [[7]] or maybe [[8]]", "keyword: conflicting scores"),
    ("Very helpful answer.", "no verdict or score found"),
    ("Skor: 10,5", "keyword: score 10.5 is outside 1-10"),
    ("Rating: [[7.5]] or maybe [[8]]", "keyword: conflicting scores"),
]


@pytest.mark.parametrize(("raw", "reason"), GRADE_ERRORS)
def test_grade_errors(raw, reason):
    result = parse_grade(raw, 1, 10)
    assert result.status == ERROR and result.value is None
    assert result.reason.startswith(reason)
    assert result.raw == raw


def test_out_of_range_json_is_not_rescued_by_a_number_in_the_prose():
    # "8/10" in the explanation must not replace the invalid score field.
    result = parse_grade('{"explanation": "Worth 8/10 really", "score": 80}', 1, 10)
    assert result.status == ERROR and "score 80 is outside 1-10" in result.reason


def test_kind_dispatch_and_factual_range():
    assert parse_judge_output('{"explanation": "x", "score": 5}', "factual").value == 5
    assert parse_judge_output('{"explanation": "x", "score": 6}', "factual").status == ERROR
    assert parse_judge_output("Score: 3/5", "factual").value == 3
    assert parse_judge_output('{"score": 10}', "single_grade").value == 10
    assert parse_judge_output("Response 2 wins.", "pairwise").value == R2
    with pytest.raises(ValueError, match="unknown judge kind"):
        parse_judge_output("x", "likert")


def test_factual_score_is_divided_by_five():
    assert normalised_factual_score(4) == 0.8
    assert normalised_factual_score(None) is None


def test_strip_reasoning():
    assert strip_reasoning("<think>a</think>B<THINKING>c</thinking>D") == "BD"
    assert strip_reasoning("plan</think>answer") == "answer"
    assert strip_reasoning("answer<think>unfinished") == "answer"


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("{}[]\"':,0123456789 Respon12\n<>/thinkabc`json\\")), max_size=80)
)
def test_parsing_never_raises_and_never_gives_a_tie(raw):
    for result in (parse_pairwise(raw), parse_grade(raw, 1, 10), parse_grade(raw, 1, 5)):
        assert result.status in (OK, ERROR)
        assert result.raw == raw
        if result.status == ERROR:
            assert result.value is None
    pairwise = parse_pairwise(raw)
    assert pairwise.value in (None, R1, R2)


# --------------------------------------------------------------------------------------------------
# Two orders: order 1 shows A as Response 1; order 2 shows B as Response 1.


@pytest.mark.parametrize(
    ("order1", "order2", "verdict", "consistency"),
    [
        (R1, R2, "A", CONSISTENT),  # A shown first won; A shown second won
        (R2, R1, "B", CONSISTENT),
        (R1, R1, "tie", BIASED_FIRST),  # the first shown response won both times
        (R2, R2, "tie", BIASED_SECOND),
        (None, R1, "B", CONSISTENCY_ERROR),  # order 2's Response 1 is B
        (R2, None, "B", CONSISTENCY_ERROR),
        (None, None, "error", CONSISTENCY_ERROR),
    ],
)
def test_combine_two_orders(order1, order2, verdict, consistency):
    combined = combine_two_orders(order1, order2)
    assert (combined.verdict, combined.consistency) == (verdict, consistency)


def test_combine_accepts_parse_results_and_can_refuse_a_single_order():
    first = parse_pairwise('{"explanation": "x", "score": "Response 1"}')
    garbage = parse_pairwise("no idea")
    assert combine_two_orders(first, parse_pairwise("Response 2 is better")).verdict == "A"
    assert combine_two_orders(first, garbage).verdict == "A"
    strict = combine_two_orders(first, garbage, on_one_error="error")
    assert (strict.verdict, strict.consistency) == ("error", CONSISTENCY_ERROR)
    assert strict.reason == "order 2 failed to parse"


@pytest.mark.parametrize(
    ("raw", "allow_tie", "verdict"),
    [
        # Every label the shipped templates ask for, in both languages and both families.
        ("Response A", True, "Response 1"),
        ("Respons B", True, "Response 2"),
        ("Respon A", False, "Response 1"),
        ("Respons B lebih baik.", True, "Response 2"),
        ("A lebih baik", True, "Response 1"),
        ("B lebih baik daripada A.", True, "Response 2"),
        ("Response B is better.", False, "Response 2"),
        ("Verdict: B", True, "Response 2"),
        ("Pilihan saya: A", True, "Response 1"),
        ("Jawaban akhir: **B**", True, "Response 2"),
        ("seri", True, "tie"),
        ("Hasilnya seri.", True, "tie"),
        ("Kedua respons sama baik.", True, "tie"),
        ("Kedua jawaban sama baiknya", True, "tie"),
        ("Both responses are equally good.", True, "tie"),
        ("B", True, "Response 2"),
        # A lower-case "a" in prose names no response.
        ("Response 1 does not answer a question; Response 2 is better.", False, "Response 2"),
    ],
)
def test_pairwise_labels_of_both_families_and_languages(raw, allow_tie, verdict):
    result = parse_pairwise(raw, allow_tie=allow_tie)
    assert (result.status, result.value) == ("ok", verdict)


def test_a_reply_cut_off_at_the_token_limit_is_truncated_not_missing():
    cut = '{"explanation": "Respons pertama lebih lengkap karena menjelaskan'
    assert parse_pairwise(cut).reason == "no verdict or score found"
    assert (parse_pairwise(cut, truncated=True).status, parse_pairwise(cut, truncated=True).reason) == (
        "error",
        "truncated",
    )
    assert parse_grade("Penilaian: jawaban ini", 1, 10, truncated=True).reason == "truncated"
    # A verdict written before the cut still counts.
    assert (
        parse_judge_output("Respons 2 lebih baik. Alasannya", "pairwise", truncated=True).value
        == "Response 2"
    )
