import pytest

from annotation.domain.submission import (
    AnnotationValue,
    BestOfNAnswer,
    LikertAnswer,
    PairwiseAnswer,
    SubmissionRules,
    annotation_values,
    answer_to_canonical,
    clean_submission,
    validate_submission,
)

LIKERT = SubmissionRules(kind="likert", n_responses=3)
LIKERT_BEST = SubmissionRules(kind="likert", n_responses=3, best_pick="required", allow_all_bad=True)
BEST = SubmissionRules(kind="best_of_n", n_responses=5)
PAIR = SubmissionRules(kind="pairwise", n_responses=2)
PAIR_TURNS = SubmissionRules(kind="pairwise", n_responses=2, vote_turns=(0, 1))


def full_ratings(**overrides):
    ratings = {str(i): {"relevance": 4, "fluency": 5} for i in (1, 2, 3)}
    ratings.update(overrides)
    return ratings


def errors(payload, rules):
    result = validate_submission(payload, rules)
    assert not result.ok and result.answer is None
    return result.errors_by_field()


# --- likert ----------------------------------------------------------------------------------------------


def test_likert_cleans_form_text_into_zero_based_integers():
    payload = {
        "ratings": {
            "1": {"relevance": "5", "fluency": 4},
            2: {"relevance": 1, "fluency": "2"},
            "3": full_ratings()["3"],
        },
        "comment": "  respons 2 melenceng  ",
    }
    result = validate_submission(payload, LIKERT)
    assert result.ok
    assert result.answer == LikertAnswer(
        ratings={
            0: {"relevance": 5, "fluency": 4},
            1: {"relevance": 1, "fluency": 2},
            2: {"relevance": 4, "fluency": 5},
        },
        best=None,
        comment="respons 2 melenceng",
    )


def test_likert_errors_name_the_field_the_annotator_saw():
    payload = {
        "ratings": {
            "1": {"relevance": 4, "fluency": 5},
            "2": {"relevance": 6},  # out of scale, fluency missing
            "3": {"relevance": 4.5, "fluency": True, "clarity": 3},  # float, bool, unknown criterion
            "7": {"relevance": 1},  # no such response
        }
    }
    found = errors(payload, LIKERT)
    assert found == {
        "ratings.2.relevance": ["Expected a whole number from 1 to 5."],
        "ratings.2.fluency": ["This rating is required."],
        "ratings.3.relevance": ["Expected a whole number from 1 to 5."],
        "ratings.3.fluency": ["Expected a whole number from 1 to 5."],
        "ratings.3.clarity": ["Unknown criterion; expected one of relevance, fluency."],
        "ratings.7": ["There is no response 7; expected 1 to 3."],
    }


def test_likert_missing_response_lists_every_criterion():
    found = errors(
        {"ratings": {"1": {"relevance": 4, "fluency": 5}, "2": {"relevance": 4, "fluency": 5}}}, LIKERT
    )
    assert set(found) == {"ratings.3.relevance", "ratings.3.fluency"}


def test_likert_scale_comes_from_the_rules():
    rules = SubmissionRules(kind="likert", n_responses=1, criteria=("quality",), scale_min=1, scale_max=10)
    assert validate_submission({"ratings": {"1": {"quality": 9}}}, rules).answer.ratings == {
        0: {"quality": 9}
    }
    assert errors({"ratings": {"1": {"quality": 11}}}, rules) == {
        "ratings.1.quality": ["Expected a whole number from 1 to 10."]
    }


def test_likert_shape_and_unknown_fields():
    assert errors({}, LIKERT) == {"ratings": ["This field is required."]}
    assert errors({"ratings": [1, 2]}, LIKERT) == {
        "ratings": ["Expected an object keyed by response number."]
    }
    assert errors({"ratings": full_ratings(), "rating": 3}, LIKERT) == {"rating": ["Unknown field."]}
    assert errors({"ratings": full_ratings(), "best": 1}, LIKERT) == {
        "best": ["Best pick is not enabled for this project."]
    }
    assert errors({"ratings": full_ratings(), "comment": 5}, LIKERT) == {"comment": ["Expected text."]}
    assert errors({"ratings": {"1": 5, **{k: v for k, v in full_ratings().items() if k != "1"}}}, LIKERT)[
        "ratings.1"
    ] == ["Expected an object of ratings by criterion."]
    assert errors({"ratings": {"1": {"relevance": 4, "fluency": 4}, 1: {}, "2": {}, "3": {}}}, LIKERT)[
        "ratings.1"
    ] == ["Given more than once."]
    assert errors([1, 2], LIKERT) == {"payload": ["Expected an object."]}


def test_likert_comment_length():
    rules = SubmissionRules(kind="likert", n_responses=3, max_text_chars=10)
    assert errors({"ratings": full_ratings(), "comment": "x" * 11}, rules) == {
        "comment": ["Must be at most 10 characters (got 11)."]
    }


def test_likert_best_pick_when_enabled():
    assert validate_submission({"ratings": full_ratings(), "best": "2"}, LIKERT_BEST).answer.best == 1
    assert (
        validate_submission({"ratings": full_ratings(), "best": "all_bad"}, LIKERT_BEST).answer.best
        == "all_bad"
    )
    assert errors({"ratings": full_ratings()}, LIKERT_BEST) == {"best": ["Pick the best response."]}
    assert errors({"ratings": full_ratings(), "best": 4}, LIKERT_BEST) == {
        "best": ['Expected a response number from 1 to 3 or "all_bad".']
    }
    optional = SubmissionRules(kind="likert", n_responses=3, best_pick="optional")
    assert validate_submission({"ratings": full_ratings()}, optional).answer.best is None
    assert errors({"ratings": full_ratings(), "best": "all_bad"}, optional) == {
        "best": ['"all_bad" is not allowed in this project.']
    }


def test_likert_maps_to_canonical_with_the_permutation():
    # Permutation [2, 0, 1]: "Respons 1" is canonical 2, "Respons 2" canonical 0, "Respons 3" canonical 1.
    payload = {
        "ratings": {
            "1": {"relevance": 5, "fluency": 5},
            "2": {"relevance": 3, "fluency": 4},
            "3": {"relevance": 1, "fluency": 2},
        },
        "best": "1",
    }
    result = clean_submission(payload, LIKERT_BEST, [2, 0, 1])
    assert result.ok
    assert result.answer == LikertAnswer(
        ratings={
            0: {"relevance": 3, "fluency": 4},
            1: {"relevance": 1, "fluency": 2},
            2: {"relevance": 5, "fluency": 5},
        },
        best=2,
        canonical=True,
    )
    assert annotation_values(result.answer) == [
        AnnotationValue(0, None, "relevance", 3),
        AnnotationValue(0, None, "fluency", 4),
        AnnotationValue(1, None, "relevance", 1),
        AnnotationValue(1, None, "fluency", 2),
        AnnotationValue(2, None, "relevance", 5),
        AnnotationValue(2, None, "fluency", 5),
        AnnotationValue(None, None, "best", 2),
    ]


def test_mapping_guards():
    answer = validate_submission({"ratings": full_ratings()}, LIKERT).answer
    with pytest.raises(ValueError):
        answer_to_canonical(answer, [0, 1])  # wrong length
    with pytest.raises(ValueError):
        answer_to_canonical(answer, [0, 0, 1])  # not a permutation
    canonical = answer_to_canonical(answer, [0, 1, 2])
    with pytest.raises(ValueError):
        answer_to_canonical(canonical, [0, 1, 2])  # mapped twice would scramble it
    with pytest.raises(ValueError):
        annotation_values(answer)  # never store shown positions
    with pytest.raises(ValueError):
        clean_submission({"best": 1}, BEST, [0, 1, 2])  # permutation for 3, task shows 5


def test_invalid_payload_is_not_mapped():
    result = clean_submission({"ratings": {}}, LIKERT, [0, 1, 2])
    assert not result.ok and len(result.errors) == 6


# --- best of n -------------------------------------------------------------------------------------------


def test_best_of_n():
    assert validate_submission({"best": 5}, BEST).answer == BestOfNAnswer(best=4)
    result = clean_submission({"best": 5, "comment": "paling lengkap"}, BEST, [3, 1, 0, 4, 2])
    assert result.answer == BestOfNAnswer(best=2, comment="paling lengkap", canonical=True)
    assert annotation_values(result.answer) == [AnnotationValue(None, None, "best", 2)]
    assert errors({}, BEST) == {"best": ["Pick the best response."]}
    assert errors({"best": 0}, BEST) == {"best": ["Expected a response number from 1 to 5."]}
    assert errors({"best": "all_bad"}, BEST) == {"best": ['"all_bad" is not allowed in this project.']}
    allow = SubmissionRules(kind="best_of_n", n_responses=5, allow_all_bad=True)
    assert clean_submission({"best": "all_bad"}, allow, [1, 0, 2, 3, 4]).answer.best == "all_bad"


# --- pairwise --------------------------------------------------------------------------------------------


def test_pairwise_overall_vote_maps_back_when_swapped():
    assert validate_submission({"vote": "a"}, PAIR).answer == PairwiseAnswer(votes={None: "A"})
    swapped = clean_submission({"vote": "A", "rationale": "lebih runtut"}, PAIR, [1, 0])
    assert swapped.answer == PairwiseAnswer(votes={None: "B"}, rationale="lebih runtut", canonical=True)
    assert clean_submission({"vote": "both_bad"}, PAIR, [1, 0]).answer.votes == {None: "both_bad"}
    assert clean_submission({"vote": "B"}, PAIR, [0, 1]).answer.votes == {None: "B"}
    assert annotation_values(swapped.answer) == [AnnotationValue(None, None, "vote", "B")]


def test_pairwise_errors():
    assert errors({}, PAIR) == {"vote": ["A vote is required."]}
    assert errors({"vote": "C"}, PAIR) == {"vote": ["Expected one of A, B, tie, both_bad."]}
    assert errors({"votes": {"1": "A"}}, PAIR) == {
        "votes": ["This task takes 'vote', not 'votes'."],
        "vote": ["A vote is required."],
    }
    assert errors({"vote": "A", "rationale": ["x"]}, PAIR) == {"rationale": ["Expected text."]}


def test_pairwise_per_turn():
    result = clean_submission({"votes": {"1": "A", "2": "tie"}}, PAIR_TURNS, [1, 0])
    assert result.answer.votes == {0: "B", 1: "tie"}
    assert annotation_values(result.answer) == [
        AnnotationValue(None, 0, "vote", "B"),
        AnnotationValue(None, 1, "vote", "tie"),
    ]
    assert errors({"votes": {"1": "A"}}, PAIR_TURNS) == {"votes.2": ["A vote is required."]}
    assert errors({"votes": {"1": "A", "2": "B", "3": "A"}}, PAIR_TURNS) == {
        "votes.3": ["This task has no vote on turn 3; expected 1, 2."]
    }
    assert errors({"vote": "A"}, PAIR_TURNS)["vote"] == ["This task takes 'votes', not 'vote'."]
    # A per-turn task (one task per turn) votes on just its own turn.
    second_turn = SubmissionRules(kind="pairwise", n_responses=2, vote_turns=(1,))
    assert validate_submission({"votes": {"2": "B"}}, second_turn).answer.votes == {1: "B"}


def test_rules_are_checked():
    with pytest.raises(ValueError):
        SubmissionRules(kind="pairwise", n_responses=3)
    with pytest.raises(ValueError):
        SubmissionRules(kind="ranking", n_responses=3)
    with pytest.raises(ValueError):
        SubmissionRules(kind="likert", n_responses=3, criteria=())
    with pytest.raises(ValueError):
        SubmissionRules(kind="likert", n_responses=3, scale_min=5, scale_max=5)
    with pytest.raises(ValueError):
        SubmissionRules(kind="pairwise", n_responses=2, vote_turns=(0, 0))
