"""``review_answer``: the stored answer of any rating kind in the one shape the review page reads."""

from annotation.selectors import ReviewAnswer, review_answer


def test_likert_ratings_in_shown_order_with_best_and_comment():
    values = {
        "ratings": {"10": {"relevance": 1}, "2": {"relevance": 5, "fluency": 4}},
        "best": 2,
        "comment": "Respons 2 paling jelas.",
    }
    assert review_answer(values) == ReviewAnswer(
        ratings=[(2, [("relevance", 5), ("fluency", 4)]), (10, [("relevance", 1)])],
        best=2,
        comment="Respons 2 paling jelas.",
    )


def test_all_bad_is_not_a_response_number():
    answer = review_answer({"best": "all_bad"})
    assert (answer.best, answer.all_bad, answer.comment) == (None, True, "")


def test_pairwise_rationale_is_the_comment_and_turn_votes_are_one_based():
    answer = review_answer({"votes": {1: "B", 0: "tie"}, "vote": "B", "rationale": "Alasan."})
    assert (answer.votes, answer.comment) == ([(1, "tie"), (2, "B")], "Alasan.")
    assert review_answer({"votes": {None: "A"}, "vote": "A"}).votes == [(None, "A")]


def test_no_answer_is_an_empty_answer():
    assert review_answer({}) == ReviewAnswer()
