"""Per-language tables (languages as columns, the macro ``avg`` over languages) on hand-computed numbers."""

from __future__ import annotations

import pandas as pd
import pytest

from evaluation.domain.benchmark_metrics import MISSING_LEVEL, chrf_pp_corpus
from evaluation.domain.language_tables import (
    AVERAGE,
    LanguageCell,
    accuracy_by_language,
    chrf_by_language,
    grades_by_language,
    language_register,
    language_table,
    mean_by_language,
    table_avg,
)


def _rows(table):
    return {row["model"]: row for row in table["rows"]}


def test_accuracy_avg_is_the_mean_over_languages_not_over_items():
    frame = pd.DataFrame(
        {
            "model": ["m1"] * 4 + ["m2"] * 4,
            "language": ["ind", "ind", "ind", "jav"] * 2,
            # m1: ind 2 of 3, jav 1 of 1; m2: ind 3 of 3, jav 0 of 1 (a missing answer counts wrong).
            "correct": [True, True, False, True, True, True, True, None],
        }
    )
    table = accuracy_by_language(frame)
    assert table["languages"] == ["ind", "jav"]
    assert table["metric"] == "accuracy" and table["average"] == AVERAGE == "macro over languages"
    m1, m2 = _rows(table)["m1"], _rows(table)["m2"]
    assert (m1["ind"], m1["jav"]) == (pytest.approx(2 / 3), 1.0)
    # Macro: (2/3 + 1) / 2 = 5/6; micro over the 4 items: 3/4. Both models have 3 of 4 right, but m1 does
    # better on the small language.
    assert m1["avg"] == pytest.approx(5 / 6) and m1["overall"] == pytest.approx(3 / 4)
    assert m2["avg"] == pytest.approx(1 / 2) and m2["overall"] == pytest.approx(3 / 4)
    assert m1["n"] == m2["n"] == 4
    assert table_avg(table, model="m1") == pytest.approx(5 / 6)
    assert table_avg(table, model="nobody") is None


def test_mean_score_by_language_counts_a_missing_score_as_zero_by_default():
    frame = pd.DataFrame(
        {"model": ["m"] * 4, "language": ["ind", "ind", "sun", "sun"], "score": [1.0, 0.5, 0.2, None]}
    )
    row = mean_by_language(frame)["rows"][0]
    # ind (1 + 0.5)/2 = 0.75; sun (0.2 + 0)/2 = 0.1; avg 0.425; overall 1.7/4 = 0.425 (equal sizes).
    assert (row["ind"], row["sun"]) == (pytest.approx(0.75), pytest.approx(0.1))
    assert row["avg"] == pytest.approx(0.425) and row["overall"] == pytest.approx(0.425)


def test_corpus_chrf_pp_per_language_pools_its_sentences_and_avg_is_over_languages():
    frame = pd.DataFrame(
        {
            "model": ["m", "m", "m"],
            "language": ["jav", "jav", "sun"],
            "prediction": ["ab", "abc", "saya makan nasi"],
            "reference": ["abc", "abc", "saya makan nasi"],
        }
    )
    table = chrf_by_language(frame)
    row = table["rows"][0]
    assert table["metric"] == "corpus_chrf_pp"
    # jav: the corpus chrF++ of its two sentences, 100 * 1085/1592 (worked out in
    # test_benchmark_metrics), not the mean of their sentence scores (100 * 14/33 + 100) / 2.
    jav = 100 * 1085 / 1592
    assert row["jav"] == pytest.approx(jav)
    assert row["jav"] != pytest.approx((100 * 14 / 33 + 100) / 2)
    assert row["sun"] == pytest.approx(100.0)
    assert row["avg"] == pytest.approx((jav + 100) / 2)
    pooled = chrf_pp_corpus(list(frame["prediction"]), list(frame["reference"]))
    assert row["overall"] == pytest.approx(pooled) and pooled != pytest.approx(row["avg"])


def test_seabench_grades_leave_unparsed_grades_out():
    frame = pd.DataFrame(
        {
            "judge": ["j"] * 5,
            "model": ["m"] * 5,
            "language": ["ind", "ind", "jav", "jav", "sun"],
            "score": [8, 6, 10, None, 4],
        }
    )
    table = grades_by_language(frame, row_columns=("judge", "model"))
    row = table["rows"][0]
    assert table["metric"] == "mean_grade" and table["row_columns"] == ["judge", "model"]
    # ind 7, jav 10 (the unparsed grade left out), sun 4: macro (7 + 10 + 4)/3 = 7; micro 28/4 = 7.
    assert (row["judge"], row["model"]) == ("j", "m")
    assert (row["ind"], row["jav"], row["sun"]) == (7.0, 10.0, 4.0)
    assert row["avg"] == pytest.approx(7.0) and row["overall"] == pytest.approx(7.0) and row["n"] == 5
    frame.loc[4, "score"] = 1
    row = grades_by_language(frame, row_columns=("judge", "model"))["rows"][0]
    # Now sun 1: macro (7 + 10 + 1)/3 = 6; micro (8 + 6 + 10 + 1)/4 = 6.25.
    assert row["avg"] == pytest.approx(6.0) and row["overall"] == pytest.approx(6.25)


def test_a_row_missing_a_language_has_no_avg_and_items_without_language_are_grouped():
    frame = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "language": ["ind", "jav", "ind", ""],
            "correct": [True, False, True, True],
        }
    )
    table = accuracy_by_language(frame)
    assert table["languages"] == ["ind", "jav", MISSING_LEVEL]
    rows = _rows(table)
    assert rows["a"]["avg"] is None and rows["a"][MISSING_LEVEL] is None
    assert rows["b"]["jav"] is None and rows["b"]["avg"] is None


def test_an_all_unparsed_language_has_no_value_and_no_avg():
    frame = pd.DataFrame({"model": ["m", "m"], "language": ["ind", "jav"], "score": [5, None]})
    row = grades_by_language(frame)["rows"][0]
    assert row["ind"] == 5.0 and row["jav"] is None and row["avg"] is None and row["overall"] == 5.0


def test_bad_tables_are_refused_with_what_is_wrong():
    with pytest.raises(ValueError, match="language 'avg' has the name of a column"):
        language_table([LanguageCell(("m",), "avg", 1.0, 1)], row_columns=["model"], metric="x")
    with pytest.raises(ValueError, match="more than one value for language 'ind'"):
        language_table(
            [LanguageCell(("m",), "ind", 1.0, 1), LanguageCell(("m",), "ind", 0.0, 1)],
            row_columns=["model"],
            metric="x",
        )
    with pytest.raises(ValueError, match="lack column"):
        accuracy_by_language(pd.DataFrame({"model": ["m"], "correct": [True]}))


def test_language_register_groups():
    assert language_register("jav", "krama") == "jav / krama"
    assert language_register("sun", "") == "sun"
    assert language_register("", None) == MISSING_LEVEL
