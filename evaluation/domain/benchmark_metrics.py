"""Benchmark scores: chrF++ for translation, open-QA matching, and accuracy tables.

chrF++ is sacrebleu's ``CHRF(word_order=2)`` (character n-grams up to 6 plus word n-grams up to 2), the
metric LoraxBench reports; corpus scores are computed from pooled statistics, not as a mean of sentence
scores, exactly as sacrebleu does. Open-QA answers count as correct by a
match rule (:data:`MATCH_RULES`: the normalised gold answer is a substring of the normalised prediction,
LoraxBench's rule, or occurs in it as whole words), or by a 1-5 judge score divided by 5. Cloze scoring picks
the option whose continuation has the highest total log-probability (LoraxBench's rule) or the highest mean
per token (:data:`CLOZE_RULES`).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

# pandas and sacrebleu take long to import: the functions that use them import them, so start-up (URL loading, a
# worker's boot) does not.
if TYPE_CHECKING:
    import pandas as pd
    from sacrebleu.metrics import CHRF

MISSING_LEVEL = "(none)"

# Articles carry no answer content; Indonesian has none, but "si"/"sang" before names play that role
# ("si Kancil", "sang Raja").
ARTICLES: Mapping[str, frozenset[str]] = {
    "en": frozenset({"a", "an", "the"}),
    "id": frozenset({"si", "sang"}),
}


def _chrf() -> CHRF:
    from sacrebleu.metrics import CHRF

    return CHRF(word_order=2)


def _reference_streams(references: Sequence[str] | Sequence[Sequence[str]], n: int) -> list[list[str]]:
    """sacrebleu wants one list per reference *position*; we accept one reference or a list per hypothesis."""
    if len(references) != n:
        raise ValueError(f"{n} hypotheses but {len(references)} references")
    per_item = [[ref] if isinstance(ref, str) else list(ref) for ref in references]
    if any(not refs for refs in per_item):
        raise ValueError("every hypothesis needs at least one reference")
    width = {len(refs) for refs in per_item}
    if len(width) != 1:
        raise ValueError("every hypothesis needs the same number of references")
    return [list(stream) for stream in zip(*per_item, strict=True)]


def chrf_pp_corpus(hypotheses: Sequence[str], references: Sequence[str] | Sequence[Sequence[str]]) -> float:
    """Corpus-level chrF++ (0-100) of ``hypotheses`` against one reference or a list of references each."""
    if not hypotheses:
        raise ValueError("chrF++ of an empty corpus is undefined")
    streams = _reference_streams(references, len(hypotheses))
    return float(_chrf().corpus_score(list(hypotheses), streams).score)


def chrf_pp_corpus_by(
    hypotheses: Sequence[str],
    references: Sequence[str],
    groups: Sequence[str],
) -> list[dict[str, object]]:
    """LoraxBench's per-language table: for each group (a language, or language and register), the corpus
    chrF++ of its sentences (``corpus_chrf_pp``, 0-100, the paper's figure) and the mean of their sentence
    chrF++ (``sentence_mean``, an extra column), with ``n``; in the groups' sorted order."""
    if not len(hypotheses) == len(references) == len(groups):
        raise ValueError(f"{len(hypotheses)} hypotheses, {len(references)} references, {len(groups)} groups")
    members: dict[str, list[int]] = {}
    for i, group in enumerate(groups):
        members.setdefault(group, []).append(i)
    rows = []
    for group in sorted(members):
        idx = members[group]
        hyps, refs = [hypotheses[i] for i in idx], [references[i] for i in idx]
        sentence = [chrf_pp_sentence(h, r) for h, r in zip(hyps, refs, strict=True)]
        rows.append(
            {
                "group": group,
                "n": len(idx),
                "corpus_chrf_pp": chrf_pp_corpus(hyps, refs),
                "sentence_mean": math.fsum(sentence) / len(sentence),
            }
        )
    return rows


def chrf_pp_sentence(hypothesis: str, references: str | Sequence[str]) -> float:
    """Sentence-level chrF++ (0-100)."""
    refs = [references] if isinstance(references, str) else list(references)
    if not refs:
        raise ValueError("a sentence needs at least one reference")
    return float(_chrf().sentence_score(hypothesis, refs).score)


def normalise_answer(text: str, language: str = "id") -> str:
    """Lowercase, NFKC, punctuation removed, articles dropped, whitespace collapsed.

    Punctuation is replaced by a space rather than deleted, so "Jawa-Barat" and "Jawa Barat" agree, but
    "10,5" still differs from "105". Unknown languages get the English and Indonesian articles removed.
    """
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if unicodedata.category(char).startswith("P") else char for char in text)
    articles = ARTICLES.get(language, ARTICLES["en"] | ARTICLES["id"])
    return " ".join(word for word in text.split() if word not in articles)


# Open-QA match rules: ``substring`` is LoraxBench's (the gold is a substring of the output).
MATCH_RULES = ("substring", "whole_word")
# Cloze rules, with the option score each asks of a backend's ``score_options``: the continuation's total
# log-probability (LoraxBench's rule) or its mean per token.
CLOZE_RULES = {"total": "sum", "mean": "cloze"}


def _golds(golds: str | Iterable[str], language: str) -> list[str]:
    gold_list = [golds] if isinstance(golds, str) else list(golds)
    return [g for g in (normalise_answer(gold, language) for gold in gold_list) if g]


def _digit_bounded(text: str, start: int, end: int) -> bool:
    # A match that begins or ends with a digit must not continue a longer number: "10" is not in "100".
    if text[start].isdigit() and start > 0 and text[start - 1].isdigit():
        return False
    return not (text[end - 1].isdigit() and end < len(text) and text[end].isdigit())


def substring_match(prediction: str | None, golds: str | Iterable[str], language: str = "id") -> bool:
    """True when some normalised gold answer is a substring of the normalised prediction (LoraxBench's
    rule): "Jakarta" is found in "jakartalah", but a number needs a boundary, so "10" is not found in "100"
    (it is in "10km"). A gold answer that normalises to nothing (only punctuation or articles) never
    matches."""
    if prediction is None:
        return False
    text = normalise_answer(prediction, language)
    for gold in _golds(golds, language):
        start = text.find(gold)
        while start != -1:
            if _digit_bounded(text, start, start + len(gold)):
                return True
            start = text.find(gold, start + 1)
    return False


def whole_word_match(prediction: str | None, golds: str | Iterable[str], language: str = "id") -> bool:
    """True when some normalised gold answer occurs in the normalised prediction as whole words ("Jakarta"
    is not found in "jakartalah"). A gold answer that normalises to nothing never matches."""
    if prediction is None:
        return False
    padded = f" {normalise_answer(prediction, language)} "
    return any(f" {gold} " in padded for gold in _golds(golds, language))


def answer_match(
    prediction: str | None, golds: str | Iterable[str], language: str = "id", *, rule: str = "substring"
) -> bool:
    """Whether an open-QA answer is correct by the match ``rule`` (one of :data:`MATCH_RULES`)."""
    if rule == "substring":
        return substring_match(prediction, golds, language)
    if rule == "whole_word":
        return whole_word_match(prediction, golds, language)
    raise ValueError(f"unknown match rule {rule!r}; expected one of {', '.join(MATCH_RULES)}")


def judge_score_normalised(score: int | float | None, scale_max: int = 5) -> float | None:
    """A judge score on a 1..``scale_max`` scale divided by ``scale_max``; ``None`` (parse error) stays
    ``None`` so that callers choose how to count it."""
    if score is None:
        return None
    if isinstance(score, bool) or not isinstance(score, int | float) or math.isnan(score):
        raise ValueError(f"score must be a number or None, got {score!r}")
    if not 0 <= score <= scale_max:
        raise ValueError(f"score {score} is outside 0..{scale_max}")
    return score / scale_max


# --------------------------------------------------------------------------------------------------
# Accuracy tables


def _as_correct(series: pd.Series) -> tuple[pd.Series, pd.Series]:
    """(correct as 0/1 with missing counted wrong, missing mask)."""
    missing = series.isna()
    correct = series.where(~missing, False).astype(bool).astype(int)
    return correct, missing


def accuracy_by(rows: pd.DataFrame, by: Sequence[str] = (), correct_col: str = "correct") -> pd.DataFrame:
    """Accuracy per group of ``by`` columns: columns ``*by, n, n_correct, n_missing, accuracy``.

    A missing ``correct`` value (an unparsed answer, a failed request) counts as wrong and is also counted in
    ``n_missing``. Missing group labels (no register, say) become ``"(none)"`` so they form a group of their
    own. With ``by=()`` the result is a single overall row.
    """
    import pandas as pd

    by = list(by)
    needed = [*by, correct_col]
    absent = [column for column in needed if column not in rows.columns]
    if absent:
        raise ValueError(f"result rows lack column(s): {', '.join(absent)}")
    frame = rows[needed].copy()
    frame["_correct"], frame["_missing"] = _as_correct(frame[correct_col])
    if not by:
        n = len(frame)
        n_correct = int(frame["_correct"].sum())
        return pd.DataFrame(
            {
                "n": [n],
                "n_correct": [n_correct],
                "n_missing": [int(frame["_missing"].sum())],
                "accuracy": [n_correct / n if n else math.nan],
            }
        )
    for column in by:
        frame[column] = frame[column].astype(object).where(frame[column].notna(), MISSING_LEVEL).astype(str)
    grouped = frame.groupby(by, sort=True)
    table = pd.DataFrame(
        {
            "n": grouped["_correct"].size(),
            "n_correct": grouped["_correct"].sum(),
            "n_missing": grouped["_missing"].sum(),
        }
    ).reset_index()
    table["n"] = table["n"].astype(int)
    table["n_correct"] = table["n_correct"].astype(int)
    table["n_missing"] = table["n_missing"].astype(int)
    table["accuracy"] = table["n_correct"] / table["n"]
    return table


def accuracy_summary(
    rows: pd.DataFrame,
    dimensions: Sequence[str] = ("category", "language", "register"),
    correct_col: str = "correct",
) -> pd.DataFrame:
    """One long table: an ``all`` row, then one row per level of each dimension present in ``rows``.

    Columns ``dimension, level, n, n_correct, n_missing, accuracy``; dimensions absent from ``rows`` are
    skipped, so the same call serves benchmarks with and without registers.
    """
    import pandas as pd

    overall = accuracy_by(rows, (), correct_col)
    overall.insert(0, "level", "all")
    overall.insert(0, "dimension", "all")
    parts = [overall]
    for dimension in dimensions:
        if dimension not in rows.columns:
            continue
        table = accuracy_by(rows, (dimension,), correct_col).rename(columns={dimension: "level"})
        table.insert(0, "dimension", dimension)
        parts.append(table)
    return pd.concat(parts, ignore_index=True)[
        ["dimension", "level", "n", "n_correct", "n_missing", "accuracy"]
    ]


def mean_score_by(
    rows: pd.DataFrame,
    by: Sequence[str] = (),
    score_col: str = "score",
    missing: str = "zero",
) -> pd.DataFrame:
    """Mean of a 0-1 score (chrF++/100, judge score/5) per group: ``*by, n, n_missing, mean``.

    ``missing="zero"`` counts a missing score as 0 (like a wrong answer); ``missing="drop"`` leaves it out of
    the mean (``n`` still counts it).
    """
    import pandas as pd

    if missing not in ("zero", "drop"):
        raise ValueError(f"missing must be 'zero' or 'drop', got {missing!r}")
    by = list(by)
    absent = [column for column in [*by, score_col] if column not in rows.columns]
    if absent:
        raise ValueError(f"result rows lack column(s): {', '.join(absent)}")
    frame = rows[[*by, score_col]].copy()
    frame["_missing"] = frame[score_col].isna().astype(int)
    frame["_score"] = pd.to_numeric(frame[score_col], errors="raise").astype(float)
    if missing == "zero":
        frame["_score"] = frame["_score"].fillna(0.0)
    if not by:
        return pd.DataFrame(
            {
                "n": [len(frame)],
                "n_missing": [int(frame["_missing"].sum())],
                "mean": [float(frame["_score"].mean())],
            }
        )
    for column in by:
        frame[column] = frame[column].astype(object).where(frame[column].notna(), MISSING_LEVEL).astype(str)
    grouped = frame.groupby(by, sort=True)
    table = pd.DataFrame(
        {
            "n": grouped["_score"].size(),
            "n_missing": grouped["_missing"].sum(),
            "mean": grouped["_score"].mean(),
        }
    ).reset_index()
    table["n"] = table["n"].astype(int)
    table["n_missing"] = table["n_missing"].astype(int)
    return table


def macro_mean(table: pd.DataFrame, column: str = "accuracy") -> float:
    """Unweighted mean over the groups of a table from :func:`accuracy_by` or :func:`mean_score_by`."""
    values = table[column].dropna()
    return float(values.mean()) if len(values) else math.nan
