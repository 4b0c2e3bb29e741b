"""Quality signals on plain values, with numbers checked by hand."""

from __future__ import annotations

import pytest

from annotation.domain.quality import (
    QualitySignals,
    QualityThresholds,
    binomial_two_sided_p,
    position_bias,
    rating_spread,
    signal_flags,
    speed,
    spread_from_moments,
    straight_lining,
    straight_share,
)


def test_straight_lining_counts_tasks_flat_on_any_criterion():
    tasks = [
        {"relevance": [3, 3, 3], "fluency": [2, 4, 5]},  # flat on relevance
        {"relevance": [1, 2, 3], "fluency": [4, 5, 5]},  # nowhere flat
        {"relevance": [5]},  # one rated response: cannot be straight-lined, left out
        {"relevance": [4, 4]},  # flat
    ]
    assert straight_lining(tasks) == pytest.approx(2 / 3)
    assert straight_lining([{"relevance": [2]}]) is None
    assert straight_share(3, 2) == pytest.approx(2 / 3)  # the same from the counts a database aggregates
    assert straight_share(0, 0) is None


def test_spread_is_the_population_standard_deviation():
    # mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32; 32 / 8 = 4; sqrt = 2
    assert rating_spread([2, 4, 4, 4, 5, 5, 7, 9]) == 2.0
    assert rating_spread([3]) is None
    # the same from what a database aggregates: n = 8, sum = 40, sum of squares = 232
    assert spread_from_moments(8, 40, 232) == 2.0
    assert spread_from_moments(1, 3, 9) is None
    ratio = QualitySignals(n_tasks=10, spread=0.5, project_spread=2.0).spread_ratio
    assert ratio == 0.25


def test_speed_median_and_share_under_the_floor():
    assert speed([4, 12, 3, 30, 8], floor=5) == (8, 0.4)  # 4 and 3 are under 5 s
    assert speed([5, 6], floor=5) == (5.5, 0.0)  # at the floor is not under it
    assert speed([], floor=5) == (None, None)


@pytest.mark.parametrize(
    ("k", "n", "p"),
    [
        (9, 10, 22 / 1024),  # P(X>=9) + P(X<=1) = (1 + 10 + 10 + 1) / 2^10
        (7, 10, 352 / 1024),  # outcomes 0..3 and 7..10: 2 * (1 + 10 + 45 + 120) / 2^10
        (5, 10, 1.0),
        (0, 3, 0.25),  # 0 or 3 of 3: 2 / 8
        (0, 0, 1.0),
    ],
)
def test_binomial_two_sided_p(k, n, p):
    assert binomial_two_sided_p(k, n) == pytest.approx(p, abs=1e-12)


def test_binomial_refuses_an_impossible_count():
    with pytest.raises(ValueError, match="k=4 must lie in 0..n=3"):
        binomial_two_sided_p(4, 3)


def test_position_bias_share_and_p():
    assert position_bias([True] * 9 + [False]) == (0.9, pytest.approx(22 / 1024))
    assert position_bias([]) == (None, None)


def test_flags_past_each_threshold_and_none_below_the_minimum_of_tasks():
    thresholds = QualityThresholds()
    bad = QualitySignals(
        n_tasks=10,
        gold_accuracy=0.6,
        straight_share=0.6,
        spread=0.4,
        project_spread=1.0,
        fast_share=0.4,
        position_p=0.005,
    )
    assert signal_flags(bad, thresholds) == ["gold", "straight_lining", "spread", "speed", "position"]
    good = QualitySignals(
        n_tasks=10,
        gold_accuracy=0.7,
        straight_share=0.5,
        spread=0.5,
        project_spread=1.0,
        fast_share=0.3,
        position_p=0.01,
    )
    assert signal_flags(good, thresholds) == []  # every value exactly at its threshold passes
    few = QualitySignals(n_tasks=4, gold_accuracy=0.0)
    assert signal_flags(few, thresholds) == []


def test_thresholds_read_stored_settings_over_the_defaults():
    thresholds = QualityThresholds.from_mapping({"speed_floor_seconds": "8", "min_tasks": "3", "old": 1})
    assert (thresholds.speed_floor_seconds, thresholds.min_tasks, thresholds.fast_share_max) == (8.0, 3, 0.3)


def test_attention_checks_found_below_the_share_flag_the_annotator():
    thresholds = QualityThresholds()
    assert signal_flags(QualitySignals(n_tasks=10, attention_share=0.25), thresholds) == ["attention"]
    assert signal_flags(QualitySignals(n_tasks=10, attention_share=0.5), thresholds) == []  # at the threshold
    assert signal_flags(QualitySignals(n_tasks=10), thresholds) == []  # met no check
    assert signal_flags(QualitySignals(n_tasks=4, attention_share=0.0), thresholds) == []
    strict = QualityThresholds.from_mapping({"attention_share_min": 1.0})
    assert signal_flags(QualitySignals(n_tasks=10, attention_share=0.75), strict) == ["attention"]
