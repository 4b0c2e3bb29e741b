"""Agreement between LLM judges and human pairwise votes, and among the humans.

Votes are canonical labels: ``"A"``, ``"B"`` or ``"tie"``; a judge output that did not parse is
``"error"`` (or a null). Items are identified by the ``keys`` columns (``item``, plus ``turn`` for
multi-turn data).

The default definition is the one of FastChat's MT-bench agreement script (Zheng et al. 2023), so our
figures can be put next to published ones:

* a *trial* is one (judge verdict, individual human vote) pair on the same item;
* "with ties" counts every trial and agreement means equal labels (a random judge gets 1/3);
* "without ties" drops every trial where either side is a tie (a random judge gets 1/2);
* human-human agreement takes every unordered pair of distinct humans who voted on the same item, with
  the same two tie rules (FastChat loops over i < j).

The ``majority`` variant compares the judge with the human majority per item (one trial per item) and
is reported under its own name, never mixed with the per-vote figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evaluation.domain.benchmark_metrics import MISSING_LEVEL
from evaluation.domain.language_tables import LanguageCell, language_table

# pandas takes long to import: the functions that use it import it, so start-up (URL loading, a
# worker's boot) does not.
if TYPE_CHECKING:
    import pandas as pd

A = "A"
B = "B"
TIE = "tie"
ERROR = "error"
VERDICTS = (A, B, TIE)

RANDOM_BASELINE_WITH_TIES = 1.0 / 3.0
RANDOM_BASELINE_WITHOUT_TIES = 0.5


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass(frozen=True)
class AgreementRate:
    """Agreement counts under both tie rules.

    ``n_items`` is the number of items that produced at least one trial under the with-ties rule;
    ``n_judge_errors`` the items skipped because the judge's output did not parse.
    """

    agree_with_ties: int
    n_with_ties: int
    agree_without_ties: int
    n_without_ties: int
    n_items: int
    n_judge_errors: int = 0

    @property
    def with_ties(self) -> float | None:
        return _ratio(self.agree_with_ties, self.n_with_ties)

    @property
    def without_ties(self) -> float | None:
        return _ratio(self.agree_without_ties, self.n_without_ties)


def _clean_verdicts(judge: pd.DataFrame, keys: Sequence[str], column: str = "vote") -> pd.DataFrame:
    """One verdict per item; nulls become ``error``; a second verdict for an item is a ValueError."""
    frame = judge[[*keys, column]].copy()
    frame[column] = frame[column].where(frame[column].notna(), ERROR)
    bad = ~frame[column].isin([*VERDICTS, ERROR])
    if bad.any():
        raise ValueError(f"judge verdict {frame.loc[bad, column].iloc[0]!r} is not A, B, tie or error")
    duplicated = frame.duplicated(list(keys))
    if duplicated.any():
        key = tuple(frame.loc[duplicated, list(keys)].iloc[0])
        raise ValueError(f"the judge has more than one verdict for item {key}")
    return frame.rename(columns={column: "verdict"})


def _check_votes(human: pd.DataFrame, column: str = "vote") -> None:
    bad = ~human[column].isin(VERDICTS)
    if bad.any():
        raise ValueError(f"human vote {human.loc[bad, column].iloc[0]!r} is not A, B or tie")


def human_judge_agreement(
    human: pd.DataFrame, judge: pd.DataFrame, *, keys: Sequence[str] = ("item",)
) -> AgreementRate:
    """FastChat's judge-human agreement: one trial per individual human vote on items the judge rated.

    ``human`` has the key columns and ``vote``; ``judge`` the key columns and ``vote`` (one row per
    item). Items the judge failed to parse give no trial and are counted in ``n_judge_errors``; items
    only one side rated are ignored.
    """
    _check_votes(human)
    verdicts = _clean_verdicts(judge, keys)
    merged = human[[*keys, "vote"]].merge(verdicts, on=list(keys), how="inner")
    errors = merged["verdict"] == ERROR
    n_errors = int(merged.loc[errors, list(keys)].drop_duplicates().shape[0])
    trials = merged.loc[~errors]
    agree = trials["vote"] == trials["verdict"]
    no_tie = (trials["vote"] != TIE) & (trials["verdict"] != TIE)
    return AgreementRate(
        agree_with_ties=int(agree.sum()),
        n_with_ties=len(trials),
        agree_without_ties=int((agree & no_tie).sum()),
        n_without_ties=int(no_tie.sum()),
        n_items=int(trials[list(keys)].drop_duplicates().shape[0]),
        n_judge_errors=n_errors,
    )


def human_majority(human: pd.DataFrame, *, keys: Sequence[str] = ("item",)) -> pd.DataFrame:
    """Per item: the strictly most frequent human vote, or ``tie`` when the top count is shared.

    A split such as A, B (or A, B, tie) therefore reads as "no preference", the same as a tie vote.
    Columns: the keys, ``majority``, ``n_votes``.
    """
    import pandas as pd

    _check_votes(human)
    counts = human.groupby([*keys, "vote"], sort=True).size().unstack("vote", fill_value=0)
    counts = counts.reindex(columns=list(VERDICTS), fill_value=0)
    top = counts.max(axis=1)
    n_top = counts.eq(top, axis=0).sum(axis=1)
    majority = counts.idxmax(axis=1).where(n_top == 1, TIE)
    out = pd.DataFrame({"majority": majority, "n_votes": counts.sum(axis=1)}).reset_index()
    return out[[*keys, "majority", "n_votes"]]


def majority_agreement(
    human: pd.DataFrame, judge: pd.DataFrame, *, keys: Sequence[str] = ("item",)
) -> AgreementRate:
    """Judge against the human majority (see :func:`human_majority`): one trial per item."""
    majority = human_majority(human, keys=keys).rename(columns={"majority": "vote"})
    return human_judge_agreement(majority[[*keys, "vote"]], judge, keys=keys)


def human_human_agreement(human: pd.DataFrame, *, keys: Sequence[str] = ("item",)) -> AgreementRate:
    """Agreement over unordered pairs of distinct humans voting on the same item (FastChat's i < j).

    One vote per (item, annotator) is expected; a second one is a ValueError.
    """
    _check_votes(human)
    if human.duplicated([*keys, "annotator"]).any():
        raise ValueError("an annotator voted more than once on the same item")
    counts = human.groupby([*keys, "vote"], sort=False).size().unstack("vote", fill_value=0)
    counts = counts.reindex(columns=list(VERDICTS), fill_value=0).to_numpy(dtype=np.int64)
    per_item = counts.sum(axis=1)
    pairs = per_item * (per_item - 1) // 2
    same = (counts * (counts - 1) // 2).sum(axis=1)
    ties = counts[:, 2]
    not_tie = per_item - ties
    pairs_no_tie = not_tie * (not_tie - 1) // 2
    same_no_tie = same - ties * (ties - 1) // 2
    return AgreementRate(
        agree_with_ties=int(same.sum()),
        n_with_ties=int(pairs.sum()),
        agree_without_ties=int(same_no_tie.sum()),
        n_without_ties=int(pairs_no_tie.sum()),
        n_items=int(np.count_nonzero(pairs)),
    )


# -- score-based judges -----------------------------------------------------------------------------


#: Slack when comparing a score gap with the tie threshold δ. Scores are grades (1-10, 1-5), whole or
#: written with a decimal or two (7.5, 6.25), or means of them over n judges or samples, so two means differ
#: by a multiple of 1/(100 * n_a * n_b): even with 1,000 judgments on each side a real gap is at least 1e-8
#: away from δ (δ itself a whole number or a simple fraction). Float rounding of such means is about
#: 1e-15 * the score (14/3 - 11/3 computes to 1.0000000000000004; 7.3 - 6.3 to 0.9999999999999996). 1e-9
#: sits between the two, so the rule decides on the exact difference.
TIE_GAP_TOLERANCE = 1e-9


def within_tie_threshold(
    score_a: pd.Series | np.ndarray | float, score_b: pd.Series | np.ndarray | float, tie_threshold: float
) -> np.ndarray:
    """True where |score_a - score_b| <= tie_threshold, deciding on the exact (not the rounded) gap.

    The one implementation of SeaBench's δ rule: every place that turns two scores into a tie calls it.
    NaN scores give False (a missing score is never a tie).
    """
    if not tie_threshold >= 0:
        raise ValueError(f"the tie threshold must be a number >= 0, got {tie_threshold!r}")
    a = np.asarray(score_a, dtype=np.float64)
    b = np.asarray(score_b, dtype=np.float64)
    return np.abs(a - b) <= tie_threshold + TIE_GAP_TOLERANCE


def verdicts_from_scores(
    score_a: pd.Series | np.ndarray, score_b: pd.Series | np.ndarray, *, tie_threshold: float = 1.0
) -> np.ndarray:
    """Turn two grades into a verdict: tie when |score_a - score_b| <= tie_threshold.

    SeaBench's rule with the default threshold 1 (grades 1-10), decided by :func:`within_tie_threshold`
    so that means (an ensemble, a judge sampled several times) that differ by exactly δ tie. A missing
    score (failed parse) gives ``error``, never a tie.
    """
    a = np.asarray(score_a, dtype=np.float64)
    b = np.asarray(score_b, dtype=np.float64)
    out = np.where(a > b, A, B).astype(object)
    out[within_tie_threshold(a, b, tie_threshold)] = TIE
    out[np.isnan(a) | np.isnan(b)] = ERROR
    return out


# How an ensemble treats an item some of its judges did not score: ``all_judges`` (SeaBench's rule: the
# item counts for the ensemble only when every judge scored it) or ``any_parsed`` (the mean of the judges
# that did; an item none scored has no score and its verdict is an error).
ENSEMBLE_RULES = ("all_judges", "any_parsed")


@dataclass(frozen=True)
class Ensemble:
    """Averaged scores (keys, score_a, score_b, n_judges) and the counts behind them: judgments left out
    (a missing score), items with no parsed judgment at all, items left out by the rule, and items used."""

    scores: pd.DataFrame
    n_left_out: int
    n_items_without_score: int
    rule: str = "all_judges"
    n_items_excluded: int = 0
    n_items_used: int = 0


def ensemble_scores(
    scores: pd.DataFrame,
    *,
    keys: Sequence[str] = ("item",),
    judges: Sequence[str] | None = None,
    rule: str = "all_judges",
) -> Ensemble:
    """Average several judges' scores per item before turning them into a verdict.

    ``scores`` has the keys, ``judge``, ``score_a`` and ``score_b``; the ensemble's members are ``judges``
    (default: every judge in ``scores``). A judgment with either score missing (failed parse) is left out
    and counted in ``n_left_out``. By ``rule`` (:data:`ENSEMBLE_RULES`): under ``all_judges`` an item
    that some member did not score (unparsed, or not judged) is left out of the ensemble altogether
    (``n_items_excluded``); under ``any_parsed`` the item takes the mean of the members that scored it, and
    an item none scored keeps NaN scores (its verdict becomes ``error``).
    """
    if rule not in ENSEMBLE_RULES:
        raise ValueError(f"unknown ensemble rule {rule!r}; expected one of {', '.join(ENSEMBLE_RULES)}")
    frame = scores if judges is None else scores.loc[scores["judge"].isin(judges)]
    members = frame["judge"].nunique() if judges is None else len(set(judges))
    valid = frame["score_a"].notna() & frame["score_b"].notna()
    parsed = frame.loc[valid].groupby(list(keys), sort=True)
    averaged = parsed[["score_a", "score_b"]].mean()
    n_judges = parsed["judge"].nunique().rename("n_judges")
    every_item = frame[list(keys)].drop_duplicates().set_index(list(keys)).index
    averaged = averaged.join(n_judges).reindex(every_item)
    averaged["n_judges"] = averaged["n_judges"].fillna(0).astype(int)
    out = averaged.reset_index()
    n_without = int((out["n_judges"] == 0).sum())
    excluded = 0
    if rule == "all_judges":
        complete = out["n_judges"] == members
        excluded = int((~complete).sum())
        out = out.loc[complete].reset_index(drop=True)
    return Ensemble(
        scores=out,
        n_left_out=int((~valid).sum()),
        n_items_without_score=n_without,
        rule=rule,
        n_items_excluded=excluded,
        n_items_used=int(out["n_judges"].gt(0).sum()),
    )


# -- accuracy against the human preference -----------------------------------------------------------


@dataclass(frozen=True)
class JudgeAccuracy:
    """Judge verdict against the human majority label, on items where the humans prefer one side.

    ``accuracy`` is over items with a parsed verdict; ``accuracy_raw`` counts parse errors as wrong.
    A tie verdict on such an item is wrong. ``n_human_ties`` items were excluded because their human
    label is a tie (see :func:`human_majority`); ``n_not_judged`` had no judge row at all.
    ``by_category`` has one row per category (category, n, n_valid, n_correct, accuracy,
    accuracy_raw); the macro figures are the unweighted means over categories with a defined value.
    """

    accuracy: float | None
    accuracy_raw: float | None
    n_correct: int
    n_valid: int
    n_parse_errors: int
    n_human_ties: int
    n_not_judged: int
    by_category: pd.DataFrame
    macro_accuracy: float | None
    macro_accuracy_raw: float | None


def judge_accuracy(
    human: pd.DataFrame,
    judge: pd.DataFrame,
    *,
    keys: Sequence[str] = ("item",),
    category: str | None = "category",
) -> JudgeAccuracy:
    """Accuracy of one judge against the human preference, overall and per category.

    ``category`` names a column of ``human`` holding one category per item; None (or an absent
    column) puts every item in one category ``"all"``.
    """
    import pandas as pd

    majority = human_majority(human, keys=keys)
    if category is not None and category in human.columns:
        per_item = human[[*keys, category]].drop_duplicates()
        if per_item.duplicated(list(keys)).any():
            raise ValueError(f"an item has more than one {category!r}")
        majority = majority.merge(per_item.rename(columns={category: "category"}), on=list(keys))
    else:
        majority["category"] = "all"
    n_human_ties = int((majority["majority"] == TIE).sum())
    preferred = majority.loc[majority["majority"] != TIE]
    verdicts = _clean_verdicts(judge, keys)
    merged = preferred.merge(verdicts, on=list(keys), how="left")
    not_judged = merged["verdict"].isna()
    merged = merged.loc[~not_judged].assign(
        valid=lambda f: f["verdict"] != ERROR, correct=lambda f: f["verdict"] == f["majority"]
    )
    table = (
        merged.groupby("category", sort=True)
        .agg(n=("verdict", "size"), n_valid=("valid", "sum"), n_correct=("correct", "sum"))
        .reset_index()
    )
    table["n_valid"] = table["n_valid"].astype(int)
    table["n_correct"] = table["n_correct"].astype(int)
    table["accuracy"] = [_ratio(c, v) for c, v in zip(table["n_correct"], table["n_valid"], strict=True)]
    table["accuracy_raw"] = [_ratio(c, n) for c, n in zip(table["n_correct"], table["n"], strict=True)]
    n_valid = int(merged["valid"].sum())
    n_correct = int(merged["correct"].sum())
    # A category without a valid verdict has no valid-only accuracy (the column holds NaN there).
    defined = [float(a) for a in table["accuracy"] if pd.notna(a)]
    defined_raw = [float(a) for a in table["accuracy_raw"] if pd.notna(a)]
    return JudgeAccuracy(
        accuracy=_ratio(n_correct, n_valid),
        accuracy_raw=_ratio(n_correct, len(merged)),
        n_correct=n_correct,
        n_valid=n_valid,
        n_parse_errors=int(len(merged) - n_valid),
        n_human_ties=n_human_ties,
        n_not_judged=int(not_judged.sum()),
        by_category=table,
        macro_accuracy=float(np.mean(defined)) if defined else None,
        macro_accuracy_raw=float(np.mean(defined_raw)) if defined_raw else None,
    )


def accuracy_language_table(
    per_language: Mapping[str, JudgeAccuracy], *, row_column: str = "judge"
) -> dict[str, object]:
    """Judges by languages: each judge's accuracy (parsed verdicts) on each language's items, a column per
    language and ``avg``, the unweighted mean over languages (see
    :mod:`evaluation.domain.language_tables`); ``overall`` is the judge's accuracy over every item.

    ``per_language`` maps a judge to its :func:`judge_accuracy` computed with ``category="language"``.
    """
    cells = [
        LanguageCell((str(judge),), str(row.category) or MISSING_LEVEL, row.accuracy, int(row.n))
        for judge, accuracy in per_language.items()
        for row in accuracy.by_category.itertuples()
    ]
    overall = {(str(judge),): accuracy.accuracy for judge, accuracy in per_language.items()}
    return language_table(cells, row_columns=[row_column], metric="accuracy", overall=overall)


# -- position consistency --------------------------------------------------------------------------

CONSISTENT = "consistent"
BIASED_FIRST = "biased_first"
BIASED_SECOND = "biased_second"


def position_outcome(verdict_ab: str | None, verdict_ba: str | None) -> str:
    """Classify a pairwise judge's two verdicts on the same pair shown in both orders.

    ``verdict_ab`` is the canonical verdict when A was shown first, ``verdict_ba`` when B was shown
    first (both already mapped back to A/B). Each order scores +1 if the judge picked the response
    shown first, -1 if it picked the one shown second, 0 for a tie; the two scores are added:

    * ``error``: either verdict is missing or did not parse;
    * ``consistent``: the sum is 0, which happens exactly when both orders give the same canonical
      verdict (A/A, B/B, tie/tie);
    * ``biased_first``: the sum is positive (first position both times, or first once and tie once);
    * ``biased_second``: the sum is negative.
    """
    if verdict_ab not in VERDICTS or verdict_ba not in VERDICTS:
        return ERROR
    first = {A: 1, B: -1, TIE: 0}[verdict_ab]
    second = {B: 1, A: -1, TIE: 0}[verdict_ba]
    total = first + second
    if total == 0:
        return CONSISTENT
    return BIASED_FIRST if total > 0 else BIASED_SECOND


@dataclass(frozen=True)
class PositionConsistency:
    """Counts and shares of :func:`position_outcome` over pairs judged in both orders."""

    n: int
    counts: dict[str, int]

    def share(self, outcome: str) -> float | None:
        return _ratio(self.counts.get(outcome, 0), self.n)

    @property
    def shares(self) -> dict[str, float | None]:
        return {name: self.share(name) for name in (CONSISTENT, BIASED_FIRST, BIASED_SECOND, ERROR)}


def position_consistency(
    verdicts_ab: Sequence[str | None], verdicts_ba: Sequence[str | None]
) -> PositionConsistency:
    """Consistent / biased to first / biased to second / error counts over aligned verdict pairs."""
    if len(verdicts_ab) != len(verdicts_ba):
        raise ValueError("both orders need one verdict per pair")
    counts = dict.fromkeys((CONSISTENT, BIASED_FIRST, BIASED_SECOND, ERROR), 0)
    for ab, ba in zip(verdicts_ab, verdicts_ba, strict=True):
        ab = None if ab is None or (isinstance(ab, float) and np.isnan(ab)) else ab
        ba = None if ba is None or (isinstance(ba, float) and np.isnan(ba)) else ba
        counts[position_outcome(ab, ba)] += 1
    return PositionConsistency(n=len(verdicts_ab), counts=counts)
