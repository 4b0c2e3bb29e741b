"""One error label per reviewed LLM-written question, and the shares of the labels (id-csqa's tables).

A reviewer may tick several categories of the error taxonomy on one question (errors of the question and of
its options). The paper-style table counts each reviewed question once, so the shares add up to 100%:

- a review's label is the main error the reviewer chose (``primary``); a review with one error has that
  error; a review with several errors and no main error (made before the choice existed) gets the first of
  them in taxonomy order, and is counted in ``n_fallback``; a review with no error is ``NO_ERROR``;
- a question reviewed by several reviewers gets the label most of them gave; a tie goes to the label first in
  taxonomy order, "no error" after every error category (a question one reviewer found wrong counts as wrong);
- the displayed percentages have one decimal and are rounded by the largest-remainder method: each share is
  cut to a tenth of a percent, and the tenths still missing to 100.0 go to the labels with the largest cut-off
  remainders (ties in taxonomy order), so the column adds up to exactly 100.0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from datasets_app.domain.questions import NO_ERROR

__all__ = [
    "NO_ERROR",
    "PERCENT_DECIMALS",
    "ShareRow",
    "TaxonomyReview",
    "TaxonomyShares",
    "largest_remainder_percents",
    "question_labels",
    "review_label",
    "taxonomy_shares",
]

PERCENT_DECIMALS = 1


@dataclass(frozen=True)
class TaxonomyReview:
    """One reviewer's tags on one question: every category ticked (question and options together) and the
    main error the reviewer chose, if any."""

    question_id: Hashable
    codes: tuple[str, ...] = ()
    primary: str | None = None


@dataclass(frozen=True)
class ShareRow:
    """``share``: count over reviewed questions, unrounded; ``percent``: the displayed percentage."""

    label: str
    count: int
    share: float
    percent: float


@dataclass(frozen=True)
class TaxonomyShares:
    rows: tuple[ShareRow, ...]
    n_questions: int
    n_reviews: int
    n_fallback: int
    n_split: int  # questions whose reviewers gave different labels
    decimals: int = PERCENT_DECIMALS

    def as_dict(self) -> dict[str, Any]:
        """The JSON form the API and ``manage.py taxonomy_shares`` print."""
        return {
            "n_questions": self.n_questions,
            "n_reviews": self.n_reviews,
            "n_fallback": self.n_fallback,
            "n_split": self.n_split,
            "rounding": "largest_remainder",
            "decimals": self.decimals,
            "rows": [asdict(row) for row in self.rows],
        }


def _order(categories: Sequence[str]) -> dict[str, int]:
    order = {code: i for i, code in enumerate(categories)}
    if len(order) != len(categories):
        raise ValueError("a category is listed twice")
    if NO_ERROR in order:
        raise ValueError(f"{NO_ERROR!r} is not a category name")
    order[NO_ERROR] = len(order)
    return order


def review_label(review: TaxonomyReview, categories: Sequence[str]) -> tuple[str, bool]:
    """The review's one label and whether it came from the taxonomy-order fallback."""
    order = _order(categories)
    unknown = sorted({c for c in review.codes if c not in order or c == NO_ERROR})
    if unknown:
        raise ValueError(f"question {review.question_id}: unknown error categories: {', '.join(unknown)}")
    codes = sorted(set(review.codes), key=order.__getitem__)
    if review.primary:
        if review.primary not in codes:
            raise ValueError(
                f"question {review.question_id}: the main error {review.primary!r} is not among its errors"
            )
        return review.primary, False
    if not codes:
        return NO_ERROR, False
    return codes[0], len(codes) > 1


def question_labels(
    reviews: Iterable[TaxonomyReview], categories: Sequence[str]
) -> tuple[dict[Hashable, str], int, int, int]:
    """The label of every reviewed question, with the number of reviews, of fallback labels and of questions
    whose reviewers disagreed."""
    order = _order(categories)
    votes: dict[Hashable, Counter[str]] = {}
    n_reviews = n_fallback = 0
    for review in reviews:
        label, fallback = review_label(review, categories)
        votes.setdefault(review.question_id, Counter())[label] += 1
        n_reviews += 1
        n_fallback += fallback
    labels = {
        qid: min(counter, key=lambda label: (-counter[label], order[label])) for qid, counter in votes.items()
    }
    n_split = sum(1 for counter in votes.values() if len(counter) > 1)
    return labels, n_reviews, n_fallback, n_split


def largest_remainder_percents(counts: Sequence[int], decimals: int = PERCENT_DECIMALS) -> list[float]:
    """Percentages of ``counts`` with ``decimals`` decimals that add up to exactly 100 (largest remainder;
    ties go to the earlier count)."""
    total = sum(counts)
    if total <= 0 or any(c < 0 for c in counts):
        raise ValueError("percentages need non-negative counts with a positive total")
    units = 100 * 10**decimals
    floors = [c * units // total for c in counts]
    remainders = [c * units % total for c in counts]
    missing = units - sum(floors)
    for i in sorted(range(len(counts)), key=lambda i: (-remainders[i], i))[:missing]:
        floors[i] += 1
    return [f / 10**decimals for f in floors]


def taxonomy_shares(
    reviews: Iterable[TaxonomyReview], categories: Sequence[str], *, decimals: int = PERCENT_DECIMALS
) -> TaxonomyShares:
    """One row per category of the taxonomy, in its order, then ``NO_ERROR``: the reviewed questions with that
    label, their share and the displayed percentage (adding up to 100). ``ValueError`` without any review, on a
    category not in ``categories`` or on a main error that is not among the review's errors."""
    labels, n_reviews, n_fallback, n_split = question_labels(reviews, categories)
    if not labels:
        raise ValueError("no reviewed question")
    counts = Counter(labels.values())
    names = [*categories, NO_ERROR]
    n = len(labels)
    percents = largest_remainder_percents([counts[name] for name in names], decimals)
    rows = tuple(
        ShareRow(label=name, count=counts[name], share=counts[name] / n, percent=percent)
        for name, percent in zip(names, percents, strict=True)
    )
    return TaxonomyShares(
        rows=rows,
        n_questions=n,
        n_reviews=n_reviews,
        n_fallback=n_fallback,
        n_split=n_split,
        decimals=decimals,
    )
