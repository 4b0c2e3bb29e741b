"""Human-judge agreement on hand-built vote vectors; the expected counts are derived in the comments."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analytics.domain.judge_agreement import (
    BIASED_FIRST,
    BIASED_SECOND,
    CONSISTENT,
    ERROR,
    ensemble_scores,
    human_human_agreement,
    human_judge_agreement,
    human_majority,
    judge_accuracy,
    majority_agreement,
    position_consistency,
    position_outcome,
    verdicts_from_scores,
    within_tie_threshold,
)


def _human(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["item", "annotator", "vote"])


def _judge(rows: list[tuple[str, str | None]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["item", "vote"])


# i1: A A B | i2: B tie | i3: tie tie A | i4: A B | i5: B (judge output unparsed) | i6: A (no judge row)
HUMAN = _human(
    [
        ("i1", "h1", "A"),
        ("i1", "h2", "A"),
        ("i1", "h3", "B"),
        ("i2", "h1", "B"),
        ("i2", "h2", "tie"),
        ("i3", "h1", "tie"),
        ("i3", "h2", "tie"),
        ("i3", "h3", "A"),
        ("i4", "h1", "A"),
        ("i4", "h2", "B"),
        ("i5", "h1", "B"),
        ("i6", "h1", "A"),
    ]
)
# i7 has no human vote and is ignored.
JUDGE = _judge([("i1", "A"), ("i2", "B"), ("i3", "tie"), ("i4", "A"), ("i5", ERROR), ("i7", "B")])


def test_each_vote_agreement_with_and_without_ties():
    rate = human_judge_agreement(HUMAN, JUDGE)
    # With ties, one trial per human vote on items with a parsed verdict:
    # i1 A vs (A, A, B) 2/3; i2 B vs (B, tie) 1/2; i3 tie vs (tie, tie, A) 2/3; i4 A vs (A, B) 1/2.
    assert (rate.agree_with_ties, rate.n_with_ties) == (6, 10)
    # Without ties, drop trials where either side is a tie: i1 2/3; i2 B vs B 1/1; i3 (judge tie) none;
    # i4 1/2.
    assert (rate.agree_without_ties, rate.n_without_ties) == (4, 6)
    assert rate.with_ties == pytest.approx(0.6)
    assert rate.without_ties == pytest.approx(4 / 6)
    assert rate.n_items == 4
    assert rate.n_judge_errors == 1


def test_null_verdict_counts_as_parse_error():
    rate = human_judge_agreement(HUMAN, _judge([("i1", None), ("i2", "B")]))
    assert rate.n_judge_errors == 1
    assert (rate.agree_with_ties, rate.n_with_ties) == (1, 2)


def test_majority_labels():
    majority = human_majority(HUMAN).set_index("item")["majority"].to_dict()
    # i2 (B, tie) and i4 (A, B) split evenly: no preference, read as tie. i3 has two tie votes.
    assert majority == {"i1": "A", "i2": "tie", "i3": "tie", "i4": "tie", "i5": "B", "i6": "A"}


def test_majority_agreement_is_one_trial_per_item():
    rate = majority_agreement(HUMAN, JUDGE)
    # i1 A vs A yes; i2 tie vs B no; i3 tie vs tie yes; i4 tie vs A no; i5 unparsed, skipped.
    assert (rate.agree_with_ties, rate.n_with_ties) == (2, 4)
    # Without ties only i1 remains (the others have a tie on one side).
    assert (rate.agree_without_ties, rate.n_without_ties) == (1, 1)
    assert rate.n_judge_errors == 1


def test_human_human_over_unordered_pairs():
    rate = human_human_agreement(HUMAN)
    # i1 (A, A, B): 3 pairs, 1 agrees; i2 (B, tie): 1 pair, 0; i3 (tie, tie, A): 3 pairs, 1 (tie = tie);
    # i4 (A, B): 1 pair, 0; i5 and i6 have one vote each: no pair.
    assert (rate.agree_with_ties, rate.n_with_ties) == (2, 8)
    # Without ties: i1 keeps its 3 pairs (1 agrees), i4 its 1 pair; i2 and i3 have < 2 non-tie votes.
    assert (rate.agree_without_ties, rate.n_without_ties) == (1, 4)
    assert rate.n_items == 4


def test_human_human_rejects_double_votes():
    with pytest.raises(ValueError, match="more than once"):
        human_human_agreement(_human([("i1", "h1", "A"), ("i1", "h1", "B")]))


def test_turns_are_separate_items():
    human = pd.DataFrame(
        {
            "item": ["q", "q", "q", "q"],
            "turn": [1, 1, 2, 2],
            "annotator": ["h1", "h2", "h1", "h2"],
            "vote": list("AABB"),
        }
    )
    judge = pd.DataFrame({"item": ["q", "q"], "turn": [1, 2], "vote": ["A", "A"]})
    rate = human_judge_agreement(human, judge, keys=("item", "turn"))
    # Turn 1: A vs (A, A) 2/2; turn 2: A vs (B, B) 0/2.
    assert (rate.agree_with_ties, rate.n_with_ties, rate.n_items) == (2, 4, 2)


def test_duplicate_or_unknown_verdicts_are_rejected():
    with pytest.raises(ValueError, match="more than one verdict"):
        human_judge_agreement(HUMAN, _judge([("i1", "A"), ("i1", "B")]))
    with pytest.raises(ValueError, match="not A, B, tie or error"):
        human_judge_agreement(HUMAN, _judge([("i1", "maybe")]))
    with pytest.raises(ValueError, match="not A, B or tie"):
        human_judge_agreement(_human([("i1", "h1", "a")]), JUDGE)


def test_verdicts_from_scores_tie_threshold():
    a = [8, 5, 3, 7, 5]
    b = [3, 6, 5, math.nan, 5]
    # |8-3| = 5 > 1: A; |5-6| = 1 <= 1: tie; |3-5| = 2: B; missing score: error; 5 = 5: tie.
    assert list(verdicts_from_scores(a, b)) == ["A", "tie", "B", ERROR, "tie"]
    # Threshold 0: only equal scores tie.
    assert list(verdicts_from_scores(a, b, tie_threshold=0)) == ["A", "B", "B", ERROR, "tie"]


def test_ensemble_averages_parsed_scores_and_counts_the_rest():
    scores = pd.DataFrame(
        [
            ("x", "j1", 8, 2),
            ("x", "j2", 6, 6),
            ("x", "j3", math.nan, 4),
            ("y", "j1", math.nan, math.nan),
            ("y", "j2", 3, 4),
            ("y", "j3", 5, 3),
            ("z", "j1", math.nan, math.nan),
            ("z", "j2", math.nan, 1),
        ],
        columns=["item", "judge", "score_a", "score_b"],
    )
    ensemble = ensemble_scores(scores, rule="any_parsed")
    table = ensemble.scores.set_index("item")
    assert (ensemble.rule, ensemble.n_items_excluded, ensemble.n_items_used) == ("any_parsed", 0, 2)
    # x: j1 and j2 parsed -> (7, 4); y: j2 and j3 -> (4, 3.5); z: nothing parsed -> NaN.
    assert table.loc["x", ["score_a", "score_b"]].tolist() == [7.0, 4.0]
    assert table.loc["y", ["score_a", "score_b"]].tolist() == [4.0, 3.5]
    assert table.loc["z"].isna()[["score_a", "score_b"]].all()
    assert table["n_judges"].tolist() == [2, 2, 0]
    # Left out: j3 on x, j1 on y, j1 and j2 on z.
    assert ensemble.n_left_out == 4
    assert ensemble.n_items_without_score == 1
    # Verdicts: x differs by 3 -> A; y by 0.5 -> tie; z -> error.
    assert list(verdicts_from_scores(table["score_a"], table["score_b"])) == ["A", "tie", ERROR]


def test_seabench_ensemble_counts_an_item_only_when_every_judge_scored_it():
    scores = pd.DataFrame(
        [
            ("x", "j1", 8, 2),
            ("x", "j2", 6, 6),
            ("x", "j3", 4, 4),
            ("y", "j1", 3, 4),
            ("y", "j2", 3, 4),
            ("y", "j3", math.nan, 4),  # unparsed
            ("z", "j1", 2, 9),
            ("z", "j2", 2, 9),  # j3 never judged z
        ],
        columns=["item", "judge", "score_a", "score_b"],
    )
    paper = ensemble_scores(scores)  # the default is SeaBench's rule
    # Only x has all three scores: (6, 4) -> A. y and z are left out, not counted as errors.
    assert paper.rule == "all_judges"
    assert paper.scores[["item", "score_a", "score_b", "n_judges"]].values.tolist() == [["x", 6.0, 4.0, 3]]
    assert (paper.n_items_excluded, paper.n_items_used, paper.n_left_out) == (2, 1, 1)
    # The named alternative averages whichever judges parsed: y (3, 4) and z (2, 9) count too.
    loose = ensemble_scores(scores, rule="any_parsed").scores.set_index("item")
    assert loose[["score_a", "score_b"]].values.tolist() == [[6.0, 4.0], [3.0, 4.0], [2.0, 9.0]]
    assert list(verdicts_from_scores(loose["score_a"], loose["score_b"])) == ["A", "tie", "B"]
    # Members named: j3 is not one, so y and z are complete.
    named = ensemble_scores(scores, judges=["j1", "j2"])
    assert named.scores["item"].tolist() == ["x", "y", "z"] and named.n_items_excluded == 0
    with pytest.raises(ValueError, match="unknown ensemble rule 'median'"):
        ensemble_scores(scores, rule="median")


def test_accuracy_against_human_preference_per_category():
    human = pd.DataFrame(
        [
            ("q1", "h1", "A", "math"),
            ("q1", "h2", "A", "math"),
            ("q1", "h3", "B", "math"),
            ("q2", "h1", "B", "math"),
            ("q2", "h2", "B", "math"),
            ("q3", "h1", "A", "math"),
            ("q3", "h2", "B", "math"),
            ("q4", "h1", "B", "code"),
            ("q5", "h1", "A", "code"),
            ("q5", "h2", "tie", "code"),
            ("q5", "h3", "tie", "code"),
            ("q6", "h1", "A", "code"),
            ("q7", "h1", "B", "code"),
        ],
        columns=["item", "annotator", "vote", "category"],
    )
    judge = _judge([("q1", "A"), ("q2", ERROR), ("q3", "B"), ("q4", "A"), ("q5", "A"), ("q6", "tie")])
    result = judge_accuracy(human, judge)
    # Human labels: q1 A, q2 B, q3 tie (A/B split), q4 B, q5 tie, q6 A, q7 B (not judged).
    # q3 and q5 are excluded as ties. Judged: q1 right, q2 unparsed, q4 wrong, q6 tie = wrong.
    assert result.n_human_ties == 2
    assert result.n_not_judged == 1
    assert (result.n_correct, result.n_valid, result.n_parse_errors) == (1, 3, 1)
    assert result.accuracy == pytest.approx(1 / 3)
    assert result.accuracy_raw == pytest.approx(1 / 4)
    by_category = result.by_category.set_index("category")
    # math: q1 right, q2 unparsed -> 1/1 valid-only, 1/2 raw. code: q4, q6 wrong -> 0/2 both ways.
    assert by_category.loc["math", "accuracy"] == pytest.approx(1.0)
    assert by_category.loc["math", "accuracy_raw"] == pytest.approx(0.5)
    assert by_category.loc["code", "accuracy"] == pytest.approx(0.0)
    assert result.macro_accuracy == pytest.approx(0.5)
    assert result.macro_accuracy_raw == pytest.approx(0.25)


def test_accuracy_without_category_column_is_one_group():
    result = judge_accuracy(HUMAN, JUDGE, category=None)
    # Preferred items: i1 (A, judged A: right), i5 (B, unparsed), i6 (A, not judged).
    assert list(result.by_category["category"]) == ["all"]
    assert (result.n_correct, result.n_valid, result.n_parse_errors, result.n_not_judged) == (1, 1, 1, 1)
    assert result.accuracy == 1.0 and result.accuracy_raw == 0.5


@pytest.mark.parametrize(
    ("ab", "ba", "outcome"),
    [
        ("A", "A", CONSISTENT),
        ("B", "B", CONSISTENT),
        ("tie", "tie", CONSISTENT),
        ("A", "B", BIASED_FIRST),  # picked whatever was shown first, twice
        ("B", "A", BIASED_SECOND),
        ("A", "tie", BIASED_FIRST),  # first once (+1), tie once (0)
        ("tie", "B", BIASED_FIRST),  # tie (0), then B, which was shown first (+1)
        ("tie", "A", BIASED_SECOND),
        ("B", "tie", BIASED_SECOND),
        (ERROR, "A", ERROR),
        (None, "B", ERROR),
    ],
)
def test_position_outcome(ab, ba, outcome):
    assert position_outcome(ab, ba) == outcome


def test_position_consistency_shares():
    ab = ["A", "B", "tie", "A", "B", "A", "tie", "tie", ERROR, None]
    ba = ["A", "B", "tie", "B", "A", "tie", "A", "B", "A", np.nan]
    result = position_consistency(ab, ba)
    assert result.counts == {CONSISTENT: 3, BIASED_FIRST: 3, BIASED_SECOND: 2, ERROR: 2}
    assert result.shares == {CONSISTENT: 0.3, BIASED_FIRST: 0.3, BIASED_SECOND: 0.2, ERROR: 0.2}
    with pytest.raises(ValueError, match="both orders"):
        position_consistency(["A"], [])


def test_tie_rule_decides_on_the_exact_gap_of_means_in_thirds_and_sixths():
    # Three samples of one judge: A gets 5, 5, 4 (mean 14/3), B gets 4, 4, 3 (mean 11/3); the means
    # differ by exactly 1, which floats compute as 1.0000000000000004.
    # Six judges: A sums to 25 (25/6), B to 19 (19/6): again exactly 1 apart (float: 1.0000000000000004).
    # Item "over": A sums to 26 (26/6), B to 19: 7/6 > 1, so A wins; "under": 5/6 < 1, a tie.
    rows = [("thirds", f"s{i}", a, b) for i, (a, b) in enumerate([(5, 4), (5, 4), (4, 3)])]
    for item, a_scores, b_scores in (
        ("sixths", [5, 4, 4, 4, 4, 4], [4, 3, 3, 3, 3, 3]),
        ("over", [5, 5, 4, 4, 4, 4], [4, 3, 3, 3, 3, 3]),
        ("under", [5, 4, 4, 4, 4, 4], [4, 4, 3, 3, 3, 3]),
    ):
        rows += [(item, f"j{i}", a, b) for i, (a, b) in enumerate(zip(a_scores, b_scores, strict=True))]
    # Each item has its own judges here, so the means are taken over whichever judges scored it.
    frame = pd.DataFrame(rows, columns=["item", "judge", "score_a", "score_b"])
    table = ensemble_scores(frame, rule="any_parsed").scores
    table = table.set_index("item").loc[["thirds", "sixths", "over", "under"]]
    gaps = (table["score_a"] - table["score_b"]).tolist()
    assert gaps[0] > 1 and gaps[1] > 1  # the float gaps overshoot 1: an exact comparison says "A"
    assert list(verdicts_from_scores(table["score_a"], table["score_b"])) == ["tie", "tie", "A", "tie"]
    # Threshold 0: the same means are 1 apart, so nothing ties; B = A ties at 0 only when truly equal.
    assert list(verdicts_from_scores(table["score_a"], table["score_b"], tie_threshold=0)) == ["A"] * 4
    assert within_tie_threshold(1 / 3 + 1 / 3 + 1 / 3, 1.0, 0).item()
    assert not within_tie_threshold(1 + 1 / 6, 0.0, 1).item()
    with pytest.raises(ValueError, match="tie threshold must be a number >= 0"):
        within_tie_threshold(1.0, 2.0, -1)


def test_macro_accuracy_skips_a_category_without_a_valid_verdict_and_raw_counts_it_wrong():
    human = pd.DataFrame(
        [("x", "h1", "A", "math"), ("x", "h2", "A", "math"), ("y", "h1", "B", "safety")],
        columns=["item", "annotator", "vote", "category"],
    )
    judge = pd.DataFrame([("x", "A"), ("y", ERROR)], columns=["item", "vote"])
    result = judge_accuracy(human, judge)
    assert (result.accuracy, result.macro_accuracy) == (1.0, 1.0)
    assert (result.accuracy_raw, result.macro_accuracy_raw) == (0.5, 0.5)
