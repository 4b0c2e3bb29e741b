"""The demo's simulated annotators: valid answers, the same every time, and human-like agreement."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from annotation.domain.submission import SubmissionRules, validate_submission
from annotation.services.translation import clean_review
from demo.domain.simulation import (
    MODEL_STRENGTH,
    SIMULATED_ANNOTATORS,
    SimulatedAnnotator,
    likert_payload,
    mcq_payload,
    pairwise_vote,
    response_quality,
    review_payload,
    rng_for,
)

CRITERIA = ("relevance", "fluency")


def test_qualities_are_fixed_by_seed_and_response():
    first = response_quality("garuda-instruct-13b", "17:garuda-instruct-13b", seed=2024)
    assert first == response_quality("garuda-instruct-13b", "17:garuda-instruct-13b", seed=2024)
    assert first != response_quality("garuda-instruct-13b", "18:garuda-instruct-13b", seed=2024)
    assert rng_for(1, "x").random() == rng_for(1, "x").random()


def test_likert_answers_pass_the_real_validation():
    rules = SubmissionRules(kind="likert", n_responses=5, criteria=CRITERIA, best_pick="required")
    for annotator in SIMULATED_ANNOTATORS:
        for item in range(30):
            qualities = [response_quality(m, f"{item}:{m}", seed=7) for m in MODEL_STRENGTH]
            payload = likert_payload(qualities, CRITERIA, annotator, rng_for(7, annotator.username, item))
            result = validate_submission(payload, rules)
            assert result.ok, result.errors


def test_pairwise_votes_follow_quality_and_tie_when_close():
    annotator = SimulatedAnnotator("t", bias=0.0, noise=0.5, mcq_skill=1.0)
    clear = [pairwise_vote(4.5, 1.5, annotator, rng_for(1, i)) for i in range(200)]
    assert clear.count("A") > 190
    close = [pairwise_vote(3.0, 3.0, annotator, rng_for(2, i)) for i in range(400)]
    assert {"A", "B", "tie"} == set(close)
    assert 0.25 < close.count("tie") / 400 < 0.6
    assert abs(close.count("A") - close.count("B")) < 80
    rules = SubmissionRules(kind="pairwise", n_responses=2)
    assert validate_submission({"vote": clear[0]}, rules).ok


def test_mcq_answers_are_right_with_the_annotators_skill_and_wrong_towards_the_distractor():
    sure = SimulatedAnnotator("s", bias=0.0, noise=0.5, mcq_skill=1.0)
    assert {mcq_payload("C", "E", sure, rng_for(3, i))["choice"] for i in range(50)} == {"C"}
    guess = SimulatedAnnotator("g", bias=0.0, noise=0.5, mcq_skill=0.0)
    wrong = [mcq_payload("C", "E", guess, rng_for(4, i))["choice"] for i in range(300)]
    assert "C" not in wrong and wrong.count("E") > 150
    flagged = [p for i in range(500) if (p := mcq_payload("A", "", sure, rng_for(5, i))).get("ambiguous")]
    assert flagged and all(p["comment"] for p in flagged)


@pytest.mark.parametrize("seed", range(20))
def test_reviews_are_valid_verdicts(seed):
    flagged = review_payload([{"code": "number_mismatch"}, {"code": "truncated"}], rng_for(seed, "f"))
    clean = review_payload([], rng_for(seed, "c"))
    for payload in (flagged, clean):
        answer = clean_review(payload, "Terjemahan contoh.")
        assert answer.verdict in ("accept", "reject")
    if flagged["verdict"] == "reject":
        assert flagged["error_categories"] == ["translation_error"]


def test_flagged_units_are_mostly_rejected_and_clean_ones_mostly_accepted():
    flagged = [review_payload([{"code": "untranslated"}], rng_for(9, i))["verdict"] for i in range(200)]
    clean = [review_payload([], rng_for(10, i))["verdict"] for i in range(200)]
    assert flagged.count("reject") > 150 and clean.count("accept") > 160


def test_agreement_of_the_simulated_annotators_is_moderate_like_careful_people():
    """Interval alpha of the three simulated annotators over 185 sample-like responses: clearly above chance,
    clearly below perfect (the range careful human raters reach on response quality)."""
    qualities = [response_quality(m, f"{p}:{m}", seed=2024) for p in range(37) for m in MODEL_STRENGTH]
    data = np.array(
        [
            [
                likert_payload([q], ("relevance",), annotator, rng_for(2024, annotator.username, i))[
                    "ratings"
                ]["1"]["relevance"]
                for i, q in enumerate(qualities)
            ]
            for annotator in SIMULATED_ANNOTATORS
        ],
        dtype=float,
    )
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert 0.45 < alpha < 0.85, alpha
