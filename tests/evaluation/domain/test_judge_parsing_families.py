"""Pairwise verdicts in every label form both template families ask for, in English and Indonesian."""

from __future__ import annotations

import pytest

from evaluation.domain.judge_parsing import (
    BIASED_FIRST,
    BIASED_SECOND,
    CONSISTENCY_ERROR,
    CONSISTENT,
    ERROR,
    OK,
    combine_two_orders,
    parse_judge_output,
    parse_pairwise,
)

R1, R2, TIE = "Response 1", "Response 2", "tie"

# Verdicts read the same way by both families (no tie in them).
BOTH_FAMILIES = [
    ('{"score": "Respon 2"}', R2),  # IndoPref's Indonesian judge answer format
    ('{"explanation": "Lebih tepat.", "score": "Respon 1"}', R1),
    ('{"penjelasan": "x", "skor": "Respon 2"}', R2),
    ('{"explanation": "x", "score": "Response 2"}', R2),
    ('{"explanation": "x", "score": "Respons 1"}', R1),
    ('{"explanation": "x", "score": "A"}', R1),
    ('{"explanation": "x", "score": "B"}', R2),
    ('```json\n{"score": "Respon 1"}\n```', R1),
    ("[[B]]", R2),
    ("[[A]]", R1),
    ("[[Respon 2]]", R2),
    ("Respon 2 lebih baik daripada Respon 1.", R2),
    ("Respon yang lebih baik adalah Respon 1.", R1),
    ("Keputusan: Respon 2", R2),
    ("Response 1 is better.", R1),
]

# Tie forms: a verdict for the with-tie family, a parse error for the family that forbids a tie.
TIES = [
    '{"explanation": "Sama baiknya.", "score": "tie"}',
    '{"explanation": "Sama baiknya.", "score": "seri"}',
    '{"penjelasan": "x", "skor": "Seri"}',
    '{"explanation": "x", "score": "[[C]]"}',
    "[[C]]",
    "[[tie]]",
    "Final verdict: tie",
    "Keputusan: seri",
    "It's a tie: both answers are correct.",
    "Hasilnya seri.",
    "Tie.",
]


@pytest.mark.parametrize("allow_tie", [False, True])
@pytest.mark.parametrize(("raw", "expected"), BOTH_FAMILIES)
def test_response_labels_parse_in_both_families(raw, expected, allow_tie):
    result = parse_pairwise(raw, allow_tie=allow_tie)
    assert (result.status, result.value) == (OK, expected), result.reason


@pytest.mark.parametrize("raw", TIES)
def test_a_tie_is_a_verdict_for_the_with_tie_family(raw):
    result = parse_judge_output(raw, "pairwise", allow_tie=True)
    assert (result.status, result.value) == (OK, TIE), result.reason


@pytest.mark.parametrize("raw", TIES)
def test_a_tie_is_a_kept_parse_error_for_the_no_tie_family(raw):
    result = parse_pairwise(raw)
    assert (result.status, result.value, result.raw) == (ERROR, None, raw)
    assert "tie" in result.reason


def test_a_tie_and_a_response_named_together_is_an_error_with_ties_allowed():
    result = parse_pairwise("Verdict: [[A]]. On reflection [[C]].", allow_tie=True)
    assert (result.status, result.reason) == (
        ERROR,
        "keyword: a response and a tie are both named as the verdict",
    )


@pytest.mark.parametrize(
    ("order_1", "order_2", "verdict", "consistency"),
    [
        (TIE, TIE, "tie", CONSISTENT),  # tie in both orders
        (R1, TIE, "tie", BIASED_FIRST),  # A shown first won, then a tie: +1 + 0
        (TIE, R1, "tie", BIASED_FIRST),  # a tie, then B shown first won: 0 + 1
        (R2, TIE, "tie", BIASED_SECOND),  # B shown second won, then a tie: -1 + 0
        (TIE, None, "tie", CONSISTENCY_ERROR),  # one order failed: the other's tie is kept
        (R1, R2, "A", CONSISTENT),
    ],
)
def test_two_orders_with_ties(order_1, order_2, verdict, consistency):
    combined = combine_two_orders(order_1, order_2)
    assert (combined.verdict, combined.consistency) == (verdict, consistency)
