"""chrF++, open-QA matching and accuracy tables on hand-checked numbers."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from evaluation.domain.benchmark_metrics import (
    MISSING_LEVEL,
    accuracy_by,
    accuracy_summary,
    answer_match,
    chrf_pp_corpus,
    chrf_pp_corpus_by,
    chrf_pp_sentence,
    judge_score_normalised,
    macro_mean,
    mean_score_by,
    normalise_answer,
    substring_match,
    whole_word_match,
)


def test_chrf_pp_sentence_by_hand():
    # hypothesis "ab", reference "abc" (chrF++: char n-grams 1-6 without spaces, word n-grams 1-2, beta 2).
    # char 1-grams: hyp {a,b}, ref {a,b,c}, 2 matches -> P 1, R 2/3
    # char 2-grams: hyp {ab}, ref {ab,bc}, 1 match     -> P 1, R 1/2
    # word 1-grams: hyp {ab}, ref {abc}, 0 matches     -> P 0, R 0
    # (orders with no hypothesis n-grams are left out.) Mean P = 2/3, mean R = (2/3 + 1/2 + 0)/3 = 7/18.
    # F2 = 5 P R / (4 P + R) = (70/54) / (55/18) = 14/33 -> 42.4242...
    assert chrf_pp_sentence("ab", "abc") == pytest.approx(100 * 14 / 33)
    assert chrf_pp_sentence("saya makan nasi", ["saya makan nasi"]) == pytest.approx(100.0)


def test_chrf_pp_corpus_pools_statistics_instead_of_averaging_sentences():
    # Sentence 2 is a perfect match; pooled counts (hyp, ref, match):
    # char1 (5,6,5), char2 (3,4,3), char3 (1,2,1), word1 (2,2,1).
    # P = (1 + 1 + 1 + 1/2)/4 = 7/8; R = (5/6 + 3/4 + 1/2 + 1/2)/4 = 31/48.
    # F2 = 5 P R / (4 P + R) = (5 * 7/8 * 31/48) / (7/2 + 31/48) = 1085/1592 -> 68.153...
    score = chrf_pp_corpus(["ab", "abc"], ["abc", "abc"])
    assert score == pytest.approx(100 * 1085 / 1592)
    assert score != pytest.approx((chrf_pp_sentence("ab", "abc") + 100) / 2)


def test_chrf_pp_corpus_with_several_references_each():
    # The best-matching reference counts per sentence: "abc" matches the second reference exactly.
    assert chrf_pp_corpus(["abc"], [["xyz", "abc"]]) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        chrf_pp_corpus(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="empty corpus"):
        chrf_pp_corpus([], [])


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("The Eiffel Tower!", "en", "eiffel tower"),
        ("  Si Kancil,   sang kancil. ", "id", "kancil kancil"),
        ("Jawa-Barat", "id", "jawa barat"),
        ("ＪＡＫＡＲＴＡ", "id", "jakarta"),  # full-width letters, NFKC
        ("A", "en", ""),
    ],
)
def test_normalise_answer(text, language, expected):
    assert normalise_answer(text, language) == expected


@pytest.mark.parametrize(
    ("prediction", "golds", "language", "substring", "whole_word"),
    [
        ("Ibu kota Indonesia adalah Jakarta.", "jakarta", "id", True, True),
        ("Jawabannya: Jawa Barat", ["Banten", "Jawa-Barat"], "id", True, True),
        ("Ada 100 pulau.", "10", "id", False, False),  # a number needs a boundary under both rules
        ("Ada 210 pulau.", "10", "id", False, False),
        ("Jaraknya sekitar 10km.", "10", "id", True, False),
        ("Jakartalah ibu kotanya.", "Jakarta", "id", True, False),  # the rules differ here
        ("Tahun 1945 dan 945", "945", "id", True, True),  # the second occurrence is bounded
        ("Candi Borobudur", "Prambanan", "id", False, False),
        ("The answer is the Moon", "a moon", "en", True, True),  # articles dropped on both sides
        ("Dongeng si Kancil", "Kancil", "id", True, True),
        (None, "x", "id", False, False),
        ("anything", "the", "en", False, False),  # a gold that normalises to nothing never matches
    ],
)
def test_open_qa_match_rules(prediction, golds, language, substring, whole_word):
    assert substring_match(prediction, golds, language) is substring
    assert whole_word_match(prediction, golds, language) is whole_word
    assert answer_match(prediction, golds, language) is substring  # LoraxBench's rule is the default
    assert answer_match(prediction, golds, language, rule="whole_word") is whole_word


def test_an_unknown_match_rule_is_refused():
    with pytest.raises(ValueError, match="unknown match rule 'exact'"):
        answer_match("a", "a", rule="exact")


def test_judge_score_normalised():
    assert judge_score_normalised(4) == 0.8
    assert judge_score_normalised(5) == 1.0
    assert judge_score_normalised(None) is None
    with pytest.raises(ValueError, match="outside 0..5"):
        judge_score_normalised(6)


ROWS = pd.DataFrame(
    {
        "category": ["math", "math", "safety", "safety", "safety"],
        "language": ["jav", "jav", "sun", "jav", "sun"],
        "register": ["krama", None, None, "ngoko", None],
        "correct": [True, False, None, True, True],  # None: unparsed answer, counted wrong
    }
)


def test_accuracy_by_category_counts_unparsed_as_wrong():
    table = accuracy_by(ROWS, ["category"])
    assert table.to_dict("records") == [
        {"category": "math", "n": 2, "n_correct": 1, "n_missing": 0, "accuracy": 0.5},
        {"category": "safety", "n": 3, "n_correct": 2, "n_missing": 1, "accuracy": pytest.approx(2 / 3)},
    ]


def test_accuracy_by_two_columns_and_overall():
    table = accuracy_by(ROWS, ["category", "language"])
    assert list(zip(table["category"], table["language"], table["n_correct"], table["n"], strict=True)) == [
        ("math", "jav", 1, 2),
        ("safety", "jav", 1, 1),
        ("safety", "sun", 1, 2),
    ]
    overall = accuracy_by(ROWS)
    assert overall.to_dict("records") == [{"n": 5, "n_correct": 3, "n_missing": 1, "accuracy": 0.6}]


def test_accuracy_summary_is_one_tidy_table():
    table = accuracy_summary(ROWS)
    assert list(table.columns) == ["dimension", "level", "n", "n_correct", "n_missing", "accuracy"]
    records = {(r["dimension"], r["level"]): (r["n_correct"], r["n"]) for r in table.to_dict("records")}
    assert records == {
        ("all", "all"): (3, 5),
        ("category", "math"): (1, 2),
        ("category", "safety"): (2, 3),
        ("language", "jav"): (2, 3),
        ("language", "sun"): (1, 2),
        ("register", MISSING_LEVEL): (1, 3),  # rows 2, 3, 5: False, None, True
        ("register", "krama"): (1, 1),
        ("register", "ngoko"): (1, 1),
    }
    # A benchmark without registers simply has no register rows.
    assert set(accuracy_summary(ROWS.drop(columns="register"))["dimension"]) == {
        "all",
        "category",
        "language",
    }


def test_missing_columns_are_reported():
    with pytest.raises(ValueError, match="result rows lack column\\(s\\): topic"):
        accuracy_by(ROWS, ["topic"])


def test_mean_score_with_missing_as_zero_or_dropped():
    rows = pd.DataFrame({"language": ["ind", "ind", "sun"], "score": [0.4, None, 1.0]})
    zero = mean_score_by(rows, ["language"])
    assert zero.to_dict("records") == [
        {"language": "ind", "n": 2, "n_missing": 1, "mean": pytest.approx(0.2)},  # (0.4 + 0) / 2
        {"language": "sun", "n": 1, "n_missing": 0, "mean": 1.0},
    ]
    dropped = mean_score_by(rows, ["language"], missing="drop")
    assert dropped["mean"].tolist() == [pytest.approx(0.4), 1.0]
    assert mean_score_by(rows)["mean"].item() == pytest.approx(1.4 / 3)
    assert macro_mean(zero, "mean") == pytest.approx(0.6)  # (0.2 + 1.0) / 2
    assert math.isnan(macro_mean(zero.iloc[0:0], "mean"))


def test_corpus_chrf_per_group_pools_its_sentences_not_their_mean():
    hyps = ["Saya pergi ke pasar.", "Terima kasih.", "Selamat pagi semua."]
    refs = ["Saya pergi ke pasar.", "Terima kasih banyak.", "Selamat pagi."]
    rows = chrf_pp_corpus_by(hyps, refs, ["sun", "jav", "jav"])
    assert [(r["group"], r["n"]) for r in rows] == [("jav", 2), ("sun", 1)]
    jav = rows[0]
    assert jav["corpus_chrf_pp"] == pytest.approx(chrf_pp_corpus(hyps[1:], refs[1:]))
    mean = (chrf_pp_sentence(hyps[1], refs[1]) + chrf_pp_sentence(hyps[2], refs[2])) / 2
    assert jav["sentence_mean"] == pytest.approx(mean)
    assert abs(jav["corpus_chrf_pp"] - jav["sentence_mean"]) > 0.1  # the two figures differ
    assert rows[1]["corpus_chrf_pp"] == pytest.approx(100.0)
    with pytest.raises(ValueError, match="3 hypotheses, 3 references, 2 groups"):
        chrf_pp_corpus_by(hyps, refs, ["a", "b"])
