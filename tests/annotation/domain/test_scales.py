"""Scales of a criterion: points 2-10 or named categories; parsing, keys, levels and metric choice."""

import pytest

from annotation.domain.gold import score_gold
from annotation.domain.rubrics import (
    DEFAULT_SCALE,
    Scale,
    ScaleInvalid,
    check_levels,
    scale_from_json,
)
from annotation.domain.submission import SubmissionRules, validate_submission

YES_NO_UNSURE = {
    "categories": [
        {"value": "yes", "label": {"id": "Ya", "en": "Yes"}},
        {"value": "no", "label": {"id": "Tidak", "en": "No"}},
        {"value": "unsure", "label": {"id": "Tidak yakin", "en": "Unsure"}},
    ]
}


def test_missing_scale_is_the_old_one_to_five():
    assert scale_from_json({}) == DEFAULT_SCALE
    assert scale_from_json(None).values == (1, 2, 3, 4, 5)


def test_seven_points_parse_digits_and_numbers_and_refuse_the_rest():
    scale = scale_from_json({"points": 7})
    assert scale.values == (1, 2, 3, 4, 5, 6, 7)
    assert scale.kind == "points" and scale.level == "ordinal" and scale.bounds == (1, 7)
    assert scale.parse(7) == 7 and scale.parse(" 3 ") == 3
    assert scale.parse(8) is None and scale.parse(0) is None
    assert scale.parse(2.0) is None and scale.parse(True) is None and scale.parse("yes") is None
    assert scale.describe() == "a whole number from 1 to 7"


@pytest.mark.parametrize("points", [1, 11, "5", True])
def test_points_outside_two_to_ten_are_refused(points):
    with pytest.raises(ScaleInvalid) as exc:
        scale_from_json({"points": points})
    assert "points" in exc.value.errors


def test_ten_points_put_the_tenth_on_zero():
    scale = scale_from_json({"points": 10})
    assert scale.keys()[-1] == ("0", 10)
    assert scale.value_for_key("0") == 10 and scale.value_for_key("9") == 9


def test_categories_are_nominal_with_keys_in_order_and_labels_per_language():
    scale = scale_from_json(YES_NO_UNSURE)
    assert scale.kind == "categories" and scale.level == "nominal" and scale.bounds is None
    assert scale.keys() == [("1", "yes"), ("2", "no"), ("3", "unsure")]
    assert scale.parse(" Yes ") == "yes" and scale.parse("maybe") is None and scale.parse(1) is None
    assert scale.label("unsure", "id") == "Tidak yakin"
    assert scale.describe() == "one of yes, no, unsure"
    assert scale_from_json(scale.as_json()) == scale


def test_bad_categories_name_every_problem():
    with pytest.raises(ScaleInvalid) as exc:
        scale_from_json(
            {
                "categories": [
                    {"value": "yes", "label": {"id": "Ya", "en": "Yes"}},
                    {"value": "yes", "label": {"id": "Ya", "en": ""}},
                    {"value": "Not OK!", "label": {"id": "x", "en": "x"}},
                ]
            }
        )
    assert exc.value.errors == {
        "categories.2.value": "'yes' is used twice.",
        "categories.2.label.en": "Give the label of 'yes' in 'en'.",
        "categories.3.value": "Use 1 to 20 lower-case letters, digits or '_' (got 'not ok!').",
    }
    with pytest.raises(ScaleInvalid, match="2 to 10 categories; got 1"):
        scale_from_json({"categories": [{"value": "yes", "label": {"id": "Ya", "en": "Yes"}}]})


def test_levels_must_be_on_the_scale():
    scale = Scale(points=7)
    assert check_levels({"id": {"7": " Sangat baik "}, "en": {"1": "Very poor", "2": ""}}, scale) == {
        "id": {"7": "Sangat baik"},
        "en": {"1": "Very poor"},
    }
    with pytest.raises(ScaleInvalid) as exc:
        check_levels({"en": {"8": "Beyond"}}, scale)
    assert exc.value.errors == {"levels.en.8": "'8' is not on the scale (a whole number from 1 to 7)."}


def test_submission_follows_each_criterion_scale_and_names_it_in_errors():
    rules = SubmissionRules(
        kind="likert",
        n_responses=2,
        criteria=("helpfulness", "safe"),
        scales={"helpfulness": Scale(points=7), "safe": scale_from_json(YES_NO_UNSURE)},
    )
    ok = validate_submission(
        {"ratings": {"1": {"helpfulness": 7, "safe": "no"}, "2": {"helpfulness": "1", "safe": "yes"}}}, rules
    )
    assert ok.ok and ok.answer.ratings == {
        0: {"helpfulness": 7, "safe": "no"},
        1: {"helpfulness": 1, "safe": "yes"},
    }
    bad = validate_submission(
        {"ratings": {"1": {"helpfulness": 8, "safe": "maybe"}, "2": {"helpfulness": 2, "safe": 1}}}, rules
    )
    assert bad.errors_by_field() == {
        "ratings.1.helpfulness": ['"helpfulness" takes a whole number from 1 to 7; got 8.'],
        "ratings.1.safe": ["\"safe\" takes one of yes, no, unsure; got 'maybe'."],
        "ratings.2.safe": ['"safe" takes one of yes, no, unsure; got 1.'],
    }


def test_gold_ratings_on_categories_must_match_exactly():
    expected = {0: {"helpfulness": 6, "safe": "no"}, 1: {"safe": "yes"}}
    given = {0: {"helpfulness": 7, "safe": "no"}, 1: {"safe": "unsure"}}
    # helpfulness within 1 of 6, safe "no" exact, safe "unsure" is not "yes": 2 of 3 cells.
    assert score_gold("likert", expected, given) == pytest.approx(2 / 3)
