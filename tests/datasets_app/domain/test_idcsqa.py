import json

import pytest

from datasets_app.domain.idcsqa import IdCsqaFormatError, load_raw, parse_raw
from datasets_app.domain.questions import ambiguous_flag_counts, answer_conflict_matrix


def raw_question(creator_key, answers, *, question_ambiguity=None, option_ambiguity=None, certainty=None):
    others = list(answers)
    return {
        "category": "culinary",
        "question_concepts": "kopi",
        "question": "Apa yang biasanya digunakan untuk mengaduk kopi?",
        "choices": {
            "label": ["A", "B", "C", "D", "E"],
            "text": ["Sedotan", "Bungkus", "Garpu", "Sumpit", "Sendok"],
        },
        "answer_creator": creator_key,
        "answer_majority": "E",
        "answers": answers,
        "answers_uncertainty": certainty or {w: "certain" for w in others},
        "question_ambiguity": question_ambiguity or {w: "clear" for w in others},
        "option_ambiguity": option_ambiguity or {w: ["clear"] * 5 for w in others},
        "reason": {w: "" for w in others} | {others[0]: "[question] kurang jelas"},
    }


RAW = {
    "W1": [
        raw_question(
            "E",
            {"W2": "E", "W3": "A"},
            question_ambiguity={"W2": "ambiguous", "W3": "clear"},
            certainty={"W2": "uncertain", "W3": "clear"},
        ),
        raw_question(
            "C",
            {"W2": "E", "W3": "C"},
            option_ambiguity={"W2": ["clear"] * 5, "W3": ["clear", "ambiguous", "", "clear", "ambiguous"]},
        ),
    ],
    "W2": [raw_question("E", {"W1": "e", "W3": "E"})],
}


def test_parse_questions():
    data = parse_raw(RAW, language="ind")
    assert [q.question_id for q in data.questions] == ["ind-W1-000", "ind-W1-001", "ind-W2-000"]
    first = data.questions[0]
    assert (first.creator, first.index, first.category, first.concept) == ("W1", 0, "culinary", "kopi")
    assert first.choices == {"A": "Sedotan", "B": "Bungkus", "C": "Garpu", "D": "Sumpit", "E": "Sendok"}
    assert (first.answer_key, first.majority_answer, first.distractor) == ("E", "E", None)


def test_parse_answers_flags_certainty_and_comments():
    data = parse_raw(RAW, language="ind")
    assert len(data.answers) == 6
    w2_first, w3_first, w2_second, w3_second, w1_third, _ = data.answers
    assert (w2_first.answerer, w2_first.choice, w2_first.answer_key) == ("W2", "E", "E")
    assert w2_first.ambiguous and w2_first.question_ambiguous and w2_first.ambiguous_options == ()
    assert w2_first.uncertain is True and w2_first.comment == "[question] kurang jelas"
    assert w3_first.uncertain is None  # "clear" in a certainty field is not a certainty value
    assert not w3_first.ambiguous
    assert not w2_second.ambiguous
    assert w3_second.ambiguous and not w3_second.question_ambiguous
    assert w3_second.ambiguous_options == ("B", "E")
    assert w1_third.choice == "E"  # upper-cased


def test_records_feed_the_question_checks():
    data = parse_raw(RAW, language="ind")
    assert ambiguous_flag_counts(data.ambiguous_flags()) == {
        "ind-W1-000": 1,
        "ind-W1-001": 1,
        "ind-W2-000": 0,
    }
    # W1's questions: W3 answers A against key E, W2 answers E against key C; W2's question: no conflict.
    matrix = answer_conflict_matrix(data.answer_rows())
    assert matrix.counts() == {("W1", "W2"): 1, ("W1", "W3"): 1, ("W2", "W1"): 0, ("W2", "W3"): 0}


def test_bad_structure_is_reported_with_its_place():
    bad_labels = {"W1": [raw_question("E", {"W2": "E"})]}
    bad_labels["W1"][0]["choices"]["label"] = ["A", "B", "C", "D", "F"]
    with pytest.raises(IdCsqaFormatError, match=r"W1\[0\]: choice labels"):
        parse_raw(bad_labels, language="ind")
    own = {"W1": [raw_question("E", {"W1": "E"})]}
    with pytest.raises(IdCsqaFormatError, match="answers their own question"):
        parse_raw(own, language="ind")
    with pytest.raises(IdCsqaFormatError, match="answer_creator"):
        parse_raw({"W1": [raw_question("Z", {"W2": "E"})]}, language="ind")
    with pytest.raises(IdCsqaFormatError, match="list of questions"):
        parse_raw({"W1": {}}, language="ind")


def test_load_raw_takes_language_from_file_name(tmp_path):
    path = tmp_path / "raw_sun.json"
    path.write_text(json.dumps(RAW), encoding="utf-8")
    data = load_raw(path)
    assert data.language == "sun" and data.questions[0].question_id == "sun-W1-000"
    other = tmp_path / "questions.json"
    other.write_text(json.dumps(RAW), encoding="utf-8")
    with pytest.raises(IdCsqaFormatError):
        load_raw(other)
    assert load_raw(other, language="ind").questions[2].question_id == "ind-W2-000"
