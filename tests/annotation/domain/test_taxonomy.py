import pytest

from annotation.domain.taxonomy import (
    NO_ERROR,
    TaxonomyReview,
    largest_remainder_percents,
    question_labels,
    review_label,
    taxonomy_shares,
)

CATEGORIES = ["translation", "fluency", "context", "typo", "invalid_options"]

REVIEWS = [
    TaxonomyReview("q1"),  # nothing ticked: no error
    TaxonomyReview("q2", ("fluency",)),  # one error: that one
    TaxonomyReview("q3", ("fluency", "context"), primary="context"),  # the reviewer's main error
    TaxonomyReview("q4", ("typo", "fluency")),  # several, no main error: fluency comes first in the taxonomy
    TaxonomyReview("q5", ("invalid_options",)),
    TaxonomyReview("q6", ("typo",)),  # two reviewers, one label each: a tie, the error wins over no error
    TaxonomyReview("q6"),
    TaxonomyReview("q7"),
]


def test_one_label_per_review():
    assert review_label(REVIEWS[0], CATEGORIES) == (NO_ERROR, False)
    assert review_label(REVIEWS[1], CATEGORIES) == ("fluency", False)
    assert review_label(REVIEWS[2], CATEGORIES) == ("context", False)
    assert review_label(REVIEWS[3], CATEGORIES) == ("fluency", True)


def test_one_label_per_question_with_several_reviewers():
    labels, n_reviews, n_fallback, n_split = question_labels(REVIEWS, CATEGORIES)
    assert labels == {
        "q1": NO_ERROR,
        "q2": "fluency",
        "q3": "context",
        "q4": "fluency",
        "q5": "invalid_options",
        "q6": "typo",
        "q7": NO_ERROR,
    }
    assert (n_reviews, n_fallback, n_split) == (8, 1, 1)
    # Two reviewers against one: the majority's label, whatever the taxonomy order.
    labels, *_ = question_labels(
        [
            TaxonomyReview("q", ("translation",)),
            TaxonomyReview("q", ("typo",)),
            TaxonomyReview("q", ("typo",)),
        ],
        CATEGORIES,
    )
    assert labels == {"q": "typo"}


def test_shares_add_up_to_100_as_displayed():
    shares = taxonomy_shares(REVIEWS, CATEGORIES)
    # 7 questions: fluency 2, context 1, typo 1, invalid options 1, no error 2, translation 0.
    # In tenths of a percent: 2/7 = 285.71, 1/7 = 142.86. Cut: 285 + 142 * 3 + 285 = 996, 4 tenths short;
    # the largest remainders (.86 three times, then .71 first in taxonomy order) get one each.
    # Plain rounding would show 28.6 + 14.3 * 3 + 28.6 = 100.1.
    assert [(r.label, r.count, r.percent) for r in shares.rows] == [
        ("translation", 0, 0.0),
        ("fluency", 2, 28.6),
        ("context", 1, 14.3),
        ("typo", 1, 14.3),
        ("invalid_options", 1, 14.3),
        (NO_ERROR, 2, 28.5),
    ]
    assert sum(round(r.percent * 10) for r in shares.rows) == 1000
    assert shares.rows[1].share == pytest.approx(2 / 7)
    assert (shares.n_questions, shares.n_reviews, shares.n_fallback, shares.n_split) == (7, 8, 1, 1)
    assert shares.as_dict()["rows"][1] == {"label": "fluency", "count": 2, "share": 2 / 7, "percent": 28.6}
    assert shares.as_dict()["rounding"] == "largest_remainder"


def test_largest_remainder_percents():
    assert largest_remainder_percents([1, 1, 1]) == [33.4, 33.3, 33.3]  # the tie goes to the first
    assert largest_remainder_percents([1, 2]) == [33.3, 66.7]
    assert largest_remainder_percents([0, 5]) == [0.0, 100.0]
    assert largest_remainder_percents([1, 1, 1], decimals=0) == [34.0, 33.0, 33.0]
    with pytest.raises(ValueError):
        largest_remainder_percents([0, 0])


def test_bad_reviews_are_refused():
    with pytest.raises(ValueError, match="question q1: unknown error categories: bias"):
        taxonomy_shares([TaxonomyReview("q1", ("bias",))], CATEGORIES)
    with pytest.raises(ValueError, match="question q1: the main error 'typo' is not among its errors"):
        taxonomy_shares([TaxonomyReview("q1", ("fluency",), primary="typo")], CATEGORIES)
    with pytest.raises(ValueError, match="no reviewed question"):
        taxonomy_shares([], CATEGORIES)
    with pytest.raises(ValueError, match="not a category name"):
        taxonomy_shares(REVIEWS, [*CATEGORIES, NO_ERROR])
    with pytest.raises(ValueError, match="listed twice"):
        taxonomy_shares(REVIEWS, [*CATEGORIES, "typo"])
