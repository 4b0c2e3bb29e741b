import math
from collections import namedtuple

import pandas as pd
import pytest

from datasets_app.domain.questions import (
    LLM_ERROR_CATEGORIES,
    NO_ERROR,
    TaxonomyInvalid,
    ambiguous_exclusions,
    ambiguous_flag_counts,
    answer_conflict_matrix,
    concept_in_question,
    error_taxonomy_summary,
    taxonomy_from_text,
    validate_question,
)

# ---------------------------------------------------------------------------------- concept check


def test_concept_found_as_word_and_span_points_into_original():
    question = "Tempat yang terkenal akan pura-nya adalah?"
    check = concept_in_question(question, "pura")
    assert check.found and check.passed and not check.comment_required
    assert question[slice(*check.span)] == "pura"


@pytest.mark.parametrize(
    ("question", "concept"),
    [
        ("Apa yang biasa ditemukan di alun-alun?", "alun-alun"),
        ("Apa yang biasa ditemukan di alun alun?", "alun-alun"),
        ("Di manakah RUANG  KARAOKE sering kita jumpai?", "ruang karaoke"),
        ("Naon nami gorengan anu didamel tina engkol?", "gorengan "),
        ("Pikeun naon kueh téh sok dicampurkeun mantega?", "mantéga"),
        ("Sabaraha hargana sarébu siki?", "Sarebu"),
    ],
)
def test_concept_matching_is_tolerant_of_case_accents_spacing_and_punctuation(question, concept):
    assert concept_in_question(question, concept).found


def test_concept_span_with_accented_original():
    question = "Kaping sabaraha kamerdékaan Indonesia téh?"
    check = concept_in_question(question, "kamerdekaan")
    assert question[slice(*check.span)] == "kamerdékaan"


@pytest.mark.parametrize(
    ("question", "concept"),
    [
        ("Apa yang biasanya digunakan untuk mengaduk kopi?", "aduk"),  # affixed form only
        ("Makanan apa yang dijual di pasar?", "pasar malam"),
        ("Apa itu pura?", ""),
        ("Apa itu pura?", " - "),
    ],
)
def test_concept_not_found(question, concept):
    check = concept_in_question(question, concept)
    assert not check.found and not check.passed and check.span is None


def test_override_passes_but_asks_for_a_comment():
    check = concept_in_question("Apa yang biasanya digunakan untuk mengaduk kopi?", "aduk", override=True)
    assert check.passed and not check.found and check.overridden and check.comment_required
    found = concept_in_question("Apa yang biasa dipakai untuk aduk kopi?", "aduk", override=True)
    assert found.found and not found.comment_required


# ---------------------------------------------------------------------------------- validation

CHOICES = {"A": "Sedotan", "B": "Bungkus kopi", "C": "Garpu", "D": "Sumpit", "E": "Sendok"}


def test_valid_question():
    result = validate_question("Apa yang biasanya digunakan untuk mengaduk kopi?", CHOICES, "E", "C")
    assert result.ok and result.errors == ()


def test_field_errors():
    choices = {"A": "Sendok", "B": "sendok ", "C": "  ", "E": "Garpu", "F": "Sumpit"}
    result = validate_question("  ", choices, "G", "g")
    fields = [(e.field, e.code) for e in result.errors]
    assert fields == [
        ("text", "required"),
        ("choices", "unknown_label"),
        ("choices.B", "duplicate"),
        ("choices.C", "required"),
        ("choices.D", "required"),
        ("answer", "invalid"),
        ("distractor", "invalid"),
    ]
    by_field = result.by_field("id")
    assert by_field["choices.B"] == ["Pilihan B sama dengan pilihan A."]
    assert result.by_field()["text"] == ["Write the question."]


def test_distractor_rules():
    same = validate_question("Apa?", CHOICES, "e", " E ")
    assert [(e.field, e.code) for e in same.errors] == [("distractor", "same_as_answer")]
    missing = validate_question("Apa?", CHOICES, "E", None)
    assert [(e.field, e.code) for e in missing.errors] == [("distractor", "invalid")]
    assert validate_question("Apa?", CHOICES, "E", None, require_distractor=False).ok
    assert not validate_question("Apa?", CHOICES, "E", "X", require_distractor=False).ok


def test_concept_in_validation_and_override_comment():
    text = "Apa yang biasanya digunakan untuk mengaduk kopi?"
    missing = validate_question(text, CHOICES, "E", "C", concept="aduk")
    assert [(e.field, e.code) for e in missing.errors] == [("text", "concept_missing")]
    no_comment = validate_question(text, CHOICES, "E", "C", concept="aduk", concept_override=True)
    assert [(e.field, e.code) for e in no_comment.errors] == [("concept", "override_comment_required")]
    commented = validate_question(
        text,
        CHOICES,
        "E",
        "C",
        concept="aduk",
        concept_override=True,
        override_comment="mengaduk = aduk + meN-",
    )
    assert commented.ok and commented.concept.comment_required
    assert validate_question(text, CHOICES, "E", "C", concept="kopi").ok


# ---------------------------------------------------------------------------------- conflict matrix

# q1 (creator A, key B): X answers B, Y answers C (conflict), Z leaves it blank.
# q2 (creator A, key A): X answers "a" (same letter), Y answers D (conflict).
# q3 (creator B, key E): X answers E, A answers C (conflict).
ROWS = [
    ("q1", "A", "X", "B", "B"),
    ("q1", "A", "Y", "C", "B"),
    ("q1", "A", "Z", "", "B"),
    ("q2", "A", "X", "a", "A"),
    ("q2", "A", "Y", "D", "A"),
    ("q3", "B", "X", "E", "E"),
    ("q3", "B", "A", "C", "E"),
]


def check_matrix(matrix):
    assert matrix.counts() == {("A", "X"): 0, ("A", "Y"): 2, ("A", "Z"): 0, ("B", "A"): 1, ("B", "X"): 0}
    table = matrix.table.set_index(["creator", "answerer"])
    assert table.loc[("A", "Y"), "n_answers"] == 2
    assert table.loc[("A", "Z"), "n_answers"] == 0 and table.loc[("A", "Z"), "n_blank"] == 1
    assert matrix.total_conflicts == 3 and matrix.total_answers == 6
    assert matrix.by_creator == {"A": 2, "B": 1}
    assert matrix.by_answerer == {"A": 1, "X": 0, "Y": 2, "Z": 0}
    wide = matrix.wide()
    assert list(wide.index) == ["A", "B"] and list(wide.columns) == ["A", "X", "Y", "Z"]
    assert wide.loc["A", "Y"] == 2 and wide.loc["A", "A"] == 0 and wide.loc["B", "A"] == 1


def test_conflict_matrix_from_tuples():
    check_matrix(answer_conflict_matrix(ROWS))


def test_conflict_matrix_from_dicts_dataframe_and_named_tuples_in_another_order():
    columns = ["question_id", "creator", "answerer", "choice", "answer_key"]
    check_matrix(answer_conflict_matrix([dict(zip(columns, row, strict=True)) for row in ROWS]))
    check_matrix(answer_conflict_matrix(pd.DataFrame(ROWS, columns=columns)))
    Row = namedtuple("Row", ["answer_key", "choice", "answerer", "creator", "question_id"])
    check_matrix(answer_conflict_matrix([Row(k, c, a, cr, q) for q, cr, a, c, k in ROWS]))


def test_conflict_matrix_rejects_bad_input():
    with pytest.raises(ValueError, match="answer key missing"):
        answer_conflict_matrix([("q1", "A", "X", "B", "")])
    with pytest.raises(ValueError, match="needs 5 values"):
        answer_conflict_matrix([("q1", "A", "X", "B")])
    with pytest.raises(ValueError, match="lack columns"):
        answer_conflict_matrix(pd.DataFrame({"question_id": ["q1"]}))


def test_conflict_matrix_of_no_answers_is_empty():
    matrix = answer_conflict_matrix([])
    assert matrix.counts() == {} and matrix.total_answers == 0 and matrix.total_conflicts == 0
    assert matrix.wide().empty


# ---------------------------------------------------------------------------------- ambiguity


def test_ambiguous_exclusions_more_than_max_flags():
    flags = {"q1": 4, "q2": 3, "q3": [True, True, True, True, False], "q4": [False] * 5}
    assert ambiguous_exclusions(flags) == ["q1", "q3"]
    assert ambiguous_exclusions(flags, max_flags=2) == ["q1", "q2", "q3"]
    assert ambiguous_exclusions(flags, max_flags=5) == []
    with pytest.raises(ValueError):
        ambiguous_exclusions(flags, max_flags=-1)


def test_ambiguous_flag_counts_include_unflagged_questions():
    pairs = [("q1", True), ("q1", False), ("q1", True), ("q2", False), ("q2", False)]
    assert ambiguous_flag_counts(pairs) == {"q1": 2, "q2": 0}


# ---------------------------------------------------------------------------------- taxonomy


def test_error_taxonomy_summary():
    errors = {
        "q1": [],
        "q2": ["fluency"],
        "q3": ["fluency", "multiple_answers"],
        "q4": [],
        "q5": ["fluency", "fluency"],  # a category counts once per question
    }
    summary = error_taxonomy_summary(errors)
    assert (summary.n_questions, summary.n_error_free) == (5, 2)
    assert summary.error_free_share == pytest.approx(0.4)
    assert summary.questions_with == {"fluency": 3, "multiple_answers": 1}
    assert summary.share_of_questions == {
        "fluency": pytest.approx(0.6),
        "multiple_answers": pytest.approx(0.2),
    }
    assert summary.share_of_errors == {
        "fluency": pytest.approx(0.75),
        "multiple_answers": pytest.approx(0.25),
    }


def test_error_taxonomy_with_fixed_categories():
    summary = error_taxonomy_summary({"q1": ["context"], "q2": []}, categories=LLM_ERROR_CATEGORIES)
    assert list(summary.questions_with) == list(LLM_ERROR_CATEGORIES)
    assert summary.questions_with["context"] == 1 and summary.questions_with["fluency"] == 0
    with pytest.raises(ValueError, match="unknown error categories"):
        error_taxonomy_summary({"q1": ["wrong_key"]}, categories=LLM_ERROR_CATEGORIES)
    empty = error_taxonomy_summary({})
    assert empty.n_questions == 0 and math.isnan(empty.error_free_share)


def test_no_error_is_not_a_category_code():
    assert taxonomy_from_text("typo | Typo | Salah ketik")[0].code == "typo"
    with pytest.raises(TaxonomyInvalid, match="line 2: 'no_error' is reserved for questions without error"):
        taxonomy_from_text(f"typo | Typo | Salah ketik\n{NO_ERROR} | None | Tidak ada")
