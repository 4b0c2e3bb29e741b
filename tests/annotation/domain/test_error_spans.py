"""MQM and ESA scores, weights, span agreement and attention checks on hand-checked numbers."""

from __future__ import annotations

import json

import pytest

from annotation.domain.error_spans import (
    DEFAULT_TREE,
    WMT21,
    ErrorSpan,
    InjectedError,
    SegmentRating,
    attention_scores,
    category_key,
    character_codes,
    esa_report,
    mqm_report,
    rating_points,
    span_agreement,
    tree_codes,
    tree_from_json,
    tree_to_json,
    weights_from_json,
)


def _span(start, end, category="Accuracy/Mistranslation", severity="Major", side="target", **kw):
    return ErrorSpan(start, end, side=side, category=category, severity=severity, **kw)


def _rating(system, segment, rater, *spans, **kw):
    return SegmentRating(system=system, segment=segment, rater=rater, spans=tuple(spans), **kw)


@pytest.mark.parametrize(
    ("category", "severity", "points"),
    [
        ("Accuracy/Mistranslation", "Major", 5.0),
        ("Accuracy/Mistranslation", "Minor", 1.0),
        ("Fluency/Punctuation", "Minor", 0.1),  # the one cheap minor error
        ("Fluency/Punctuation", "Major", 5.0),  # a major punctuation error weighs as any major one
        ("Non-translation!", "Major", 25.0),
        ("non translation", "Minor", 25.0),  # spelt loosely, any severity
        ("Style/Awkward", "Neutral", 0.0),
        ("Locale convention/Currency format", "major", 5.0),
    ],
)
def test_wmt21_weights(category, severity, points):
    assert WMT21.weight(category, severity) == points


def test_unknown_severity_is_an_error():
    with pytest.raises(ValueError, match="severity 'Critical' has no weight"):
        WMT21.weight("Accuracy", "Critical")


def test_category_key_normalises_labels():
    assert category_key("Locale convention/Currency format") == "locale-convention/currency-format"
    assert category_key(" Non-translation! ") == "non-translation"


def test_segment_score_is_the_mean_over_raters_and_the_system_the_mean_over_segments():
    ratings = [
        # segment 1: rater 1 has 5 + 0.1, rater 2 has 1: (5.1 + 1) / 2 = 3.05
        _rating("A", "s1", "r1", _span(0, 3), _span(5, 6, "Fluency/Punctuation", "Minor")),
        _rating("A", "s1", "r2", _span(0, 3, "Fluency/Grammar", "Minor")),
        # segment 2: no error and a major punctuation error: (0 + 5) / 2 = 2.5
        _rating("A", "s2", "r1"),
        _rating("A", "s2", "r2", _span(2, 3, "Fluency/Punctuation", "Major")),
        # system B: non-translation alone on one segment, one rater: 25; a clean segment: 0
        _rating("B", "s1", "r1", _span(None, None, "Non-translation!", "Major")),
        _rating("B", "s2", "r1"),
    ]
    report = mqm_report(ratings, draws=0)
    a, b = report.systems
    assert (a.system, b.system) == ("A", "B")  # lower is better
    assert a.score == pytest.approx(2.775)
    assert b.score == pytest.approx(12.5)
    assert a.by_category == pytest.approx(
        {"Accuracy/Mistranslation": 1.25, "Fluency/Grammar": 0.25, "Fluency/Punctuation": 1.275}
    )
    assert a.by_severity == pytest.approx({"major": 2.5, "minor": 0.275})
    assert sum(a.by_category.values()) == pytest.approx(a.score)
    assert (a.segments, a.ratings, a.errors, a.ci95) == (2, 4, 4, None)
    assert rating_points(ratings[0], WMT21) == pytest.approx(5.1)


def test_removed_suggestions_count_in_no_score():
    kept = _span(0, 2, origin="llm", outcome="accepted")
    removed = _span(3, 5, origin="llm", outcome="removed")
    assert rating_points(_rating("A", "s", "r", kept, removed), WMT21) == 5.0


def test_custom_weights_from_json():
    weights = weights_from_json(
        {
            "severity": {"Major": 10, "minor": 1, "critical": 25},
            "category_severity": {"Style": {"minor": 0.5}},
        }
    )
    assert weights.weight("Style/Awkward", "Minor") == 0.5
    assert weights.weight("Fluency/Punctuation", "Minor") == 1.0
    assert weights.weight("Accuracy", "Critical") == 25.0
    assert (
        weights_from_json(json.loads(json.dumps(WMT21.as_json()))).weight("Fluency/Punctuation", "minor")
        == 0.1
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "must hold a JSON object"),
        ({"severity": {"major": -1}}, "severity.major must be a number >= 0"),
        ({"severity": {"major": 5}, "category_severity": {"style": {"minor": 1}}}, "unknown severity"),
        ({"severity": {"major": 5}, "colour": {}}, "unknown key 'colour'"),
    ],
)
def test_bad_weights_are_named(data, message):
    with pytest.raises(ValueError, match=message):
        weights_from_json(data)


def test_bootstrap_is_seeded_and_inside_the_range_of_segment_scores():
    ratings = [_rating("A", f"s{i}", "r1", *[_span(0, 1, severity="Minor")] * (i % 4)) for i in range(30)]
    first = mqm_report(ratings, draws=500, seed=3).systems[0]
    second = mqm_report(ratings, draws=500, seed=3).systems[0]
    assert first.ci95 == second.ci95
    lo, hi = first.ci95
    assert 0 <= lo < first.score < hi <= 3


def test_breakdowns_per_language_and_register():
    ratings = [
        _rating("A", "s1", "r1", _span(0, 1), language="jav", register="krama"),
        _rating("A", "s2", "r1", language="jav", register="ngoko"),
        _rating("A", "s3", "r1", _span(0, 1, severity="Minor"), language="sun"),
    ]
    report = mqm_report(ratings, draws=0)
    assert report.systems[0].score == pytest.approx(2.0)
    assert report.by_language["jav"][0].score == pytest.approx(2.5)
    assert report.by_language["sun"][0].score == pytest.approx(1.0)
    assert {k: v[0].score for k, v in report.by_register.items()} == {"krama": 5.0, "ngoko": 0.0}
    assert report.as_dict()["systems"][0]["mqm"] == pytest.approx(2.0)


def test_esa_mean_per_system():
    ratings = [
        _rating("A", "s1", "r1", score=80),
        _rating("A", "s1", "r2", score=60),  # segment 70
        _rating("A", "s2", "r1", _span(0, 2, severity="Minor"), score=90),  # segment 90
        _rating("B", "s1", "r1", score=95),
    ]
    report = esa_report(ratings, draws=0)
    assert [(s.system, s.score) for s in report.systems] == [("B", 95.0), ("A", 80.0)]
    assert report.as_dict()["systems"][1]["esa"] == 80.0
    with pytest.raises(ValueError, match="an ESA score must be 0-100"):
        esa_report([_rating("A", "s1", "r1", score=120)], draws=0)


def test_span_agreement_on_a_hand_computed_example():
    # Rater 1 marks characters 0-9 (major) on the target; rater 2 marks 5-14 (minor) and 20-21 (major).
    # Characters: A = 10, B = 10 + 2, shared 5 -> F1 = 2 * 5 / 22.
    # Severity weights: rater 1 has 5 on 0-9, rater 2 has 1 on 5-14 and 5 on 20-21:
    # sum of minima 5 * 1 = 5; sums 50 + (10 + 10) = 70 -> 2 * 5 / 70.
    # Spans: rater 1's one span meets rater 2's first (recall 1/1); rater 2 has 1 of 2 met (precision 1/2).
    # A second segment both marked identically (source side, 3 characters, minor): adds 3 shared of 6, and
    # 3 to the minima, 6 to the sums, 2 matched spans of 2.
    ratings = [
        _rating("A", "s1", "r1", _span(0, 10)),
        _rating("A", "s1", "r2", _span(5, 15, severity="Minor"), _span(20, 22)),
        _rating("A", "s2", "r1", _span(1, 4, "Accuracy/Omission", "Minor", side="source")),
        _rating("A", "s2", "r2", _span(1, 4, "Accuracy/Omission", "Minor", side="source")),
        _rating("A", "s3", "r1", _span(0, 4)),  # one rater only: not compared
    ]
    result = span_agreement(ratings)
    assert result.char_f1 == pytest.approx(2 * (5 + 3) / (22 + 6))
    assert result.severity_weighted == pytest.approx(2 * (5 + 3) / (70 + 6))
    assert result.span_match == pytest.approx((1 + 1 + 2) / (3 + 2))
    assert (result.n_segments, result.n_pairs) == (2, 2)
    (pair,) = result.pairs
    assert (pair.rater_a, pair.rater_b) == ("r1", "r2")
    assert pair.precision == pytest.approx(2 / 3) and pair.recall == pytest.approx(2 / 2)


def test_span_agreement_identical_marks_is_one_and_nothing_marked_is_undefined():
    same = [_rating("A", "s", r, _span(2, 6)) for r in ("r1", "r2", "r3")]
    assert span_agreement(same).char_f1 == 1.0 and span_agreement(same).n_pairs == 3
    clean = [_rating("A", "s", r) for r in ("r1", "r2")]
    assert span_agreement(clean).char_f1 is None


def test_attention_checks():
    injected = [
        InjectedError("A", "s1", _span(10, 14), kind="number"),
        InjectedError("A", "s2", _span(0, 5), kind="negation"),
    ]
    ratings = [
        _rating("A", "s1", "careful", _span(9, 12, "Fluency/Spelling", "Minor")),  # overlaps: found
        _rating("A", "s2", "careful", _span(0, 5)),
        _rating("A", "s1", "idle"),  # marks nothing
        _rating("A", "s2", "idle"),
        _rating("A", "s1", "elsewhere", _span(20, 25), _span(10, 14, side="source")),  # wrong place, side
        _rating("A", "s3", "unchecked", _span(0, 1)),
    ]
    scores = {s.rater: (s.checked, s.found, s.share) for s in attention_scores(injected, ratings)}
    assert scores == {"careful": (2, 2, 1.0), "elsewhere": (1, 0, 0.0), "idle": (2, 0, 0.0)}


def test_span_checks_its_offsets():
    with pytest.raises(ValueError, match="0 <= start <= end"):
        ErrorSpan(5, 2)
    with pytest.raises(ValueError, match="side must be"):
        ErrorSpan(0, 1, side="middle")
    with pytest.raises(ValueError, match="runs past the target"):
        ErrorSpan(0, 9).check_within("short")


def test_a_rater_rating_a_segment_twice_is_an_error():
    with pytest.raises(ValueError, match="rated segment 's' of 'A' twice"):
        mqm_report([_rating("A", "s", "r"), _rating("A", "s", "r")], draws=0)


def test_default_tree_both_languages_and_register_first_class():
    codes = tree_codes()
    assert {"accuracy/mistranslation", "accuracy/omission", "fluency/register", "non-translation"} <= set(
        codes
    )
    for top in DEFAULT_TREE:
        for node in top.walk():
            assert node.name_en and node.name_id and node.help_en and node.help_id
            assert category_key(node.label) == node.code
    register = next(n for top in DEFAULT_TREE for n in top.walk() if n.register)
    assert "Krama" in register.help_en and "Krama" in register.help_id
    assert tree_from_json(tree_to_json()) == DEFAULT_TREE


def test_bad_tree_is_named():
    with pytest.raises(ValueError, match=r"categories\[0\].children\[1\]: category 'style/x' appears twice"):
        tree_from_json([{"label": "Style", "children": [{"label": "X"}, {"label": "x"}]}])


def test_character_codes_for_alpha_over_characters():
    # A 4-character target: rater 1 marks 0-1 (major), rater 2 marks 1 (minor); a one-rater segment is left out.
    ratings = [
        _rating("A", "s1", "r1", _span(0, 2)),
        _rating("A", "s1", "r2", _span(1, 2, severity="Minor")),
        _rating("A", "s2", "r1", _span(0, 1)),
    ]
    units, raters, errors, severities = character_codes(
        ratings, {("A", "s1"): {"target": 4, "source": 0}, ("A", "s2"): {"target": 3, "source": 0}}
    )
    assert units == [0, 1, 2, 3, 0, 1, 2, 3]
    assert raters == ["r1"] * 4 + ["r2"] * 4
    assert errors == [1, 1, 0, 0, 0, 1, 0, 0]
    assert severities == [5.0, 5.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="runs past the target"):
        character_codes(ratings, {("A", "s1"): {"target": 1}})
