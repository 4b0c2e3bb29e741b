import pytest

from annotation.domain.gold import GoldAccuracy, gold_accuracy, gold_slots, is_gold_slot, score_gold
from annotation.domain.submission import BestOfNAnswer, LikertAnswer, PairwiseAnswer

# --- when gold is served ---------------------------------------------------------------------------------


@pytest.mark.parametrize("annotator", ["ann-1", "ann-2", 17])
def test_rate_a_tenth_gives_two_gold_per_block_of_twenty(annotator):
    # 20 * 0.1 = 2 exactly, so every block holds exactly 2 gold slots whatever the phase.
    slots = gold_slots(7, annotator, 0.1, 200)
    assert len(slots) == 20
    for block in range(10):
        assert sum(1 for s in slots if block * 20 <= s < (block + 1) * 20) == 2


def test_uneven_rate_stays_within_one_of_its_share_in_every_prefix():
    # 0.07 * 20 = 1.4 gold per block: blocks hold 1 or 2, and after m blocks the total is floor(1.4 m + u),
    # within one of 1.4 m; after 100 blocks it is exactly 140 because 140 is whole.
    slots = gold_slots(3, "ann-9", 0.07, 2000)
    assert len(slots) == 140
    for m in range(1, 101):
        in_prefix = sum(1 for s in slots if s < 20 * m)
        assert abs(in_prefix - 1.4 * m) < 1


def test_gold_positions_are_reproducible_and_differ_across_annotators():
    assert gold_slots(7, "ann-1", 0.1, 100) == gold_slots(7, "ann-1", 0.1, 100)
    assert gold_slots(7, "ann-1", 0.1, 100) == [s for s in range(100) if is_gold_slot(7, "ann-1", s, 0.1)]
    patterns = {tuple(gold_slots(7, a, 0.1, 100)) for a in range(10)}
    assert len(patterns) == 10


def test_gold_rate_edges():
    assert gold_slots(1, "a", 0.0, 50) == []
    assert gold_slots(1, "a", 1.0, 50) == list(range(50))
    assert len(gold_slots(1, "a", 0.25, 40, block=4)) == 10
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError):
            is_gold_slot(1, "a", 0, bad)
    with pytest.raises(ValueError):
        is_gold_slot(1, "a", -1, 0.1)


# --- scoring ---------------------------------------------------------------------------------------------


def test_likert_gold_within_tolerance():
    expected = {0: {"relevance": 4, "fluency": 5}, 1: {"relevance": 2}}
    given = {0: {"relevance": 5, "fluency": 3}, 1: {"relevance": 2, "fluency": 1}, 2: {"relevance": 1}}
    # Cells: |5-4| = 1 hit, |3-5| = 2 miss, |2-2| = 0 hit -> 2/3; cells the gold leaves out are ignored.
    assert score_gold("likert", expected, given) == pytest.approx(2 / 3)
    # Exact matching: only |2-2| hits -> 1/3.
    assert score_gold("likert", expected, given, tolerance=0) == pytest.approx(1 / 3)
    # Gold stored as JSON has string keys; an unrated cell is a miss.
    assert (
        score_gold("likert", {"0": {"relevance": 4}, "1": {"fluency": 3}}, {0: {"relevance": 3}, 1: {}})
        == 0.5
    )


def test_best_and_pairwise_gold_are_exact():
    assert score_gold("best_of_n", 2, 2) == 1.0
    assert score_gold("best_of_n", 2, 3) == 0.0
    assert score_gold("best_of_n", "all_bad", "all_bad") == 1.0
    assert score_gold("pairwise", "A", "A") == 1.0
    assert score_gold("pairwise", "A", "tie") == 0.0
    assert score_gold("pairwise", {"0": "A", "1": "B"}, {0: "A", 1: "tie"}) == 0.5


def test_scoring_takes_canonical_answers():
    likert = LikertAnswer(ratings={0: {"relevance": 3}}, canonical=True)
    assert score_gold("likert", {0: {"relevance": 4}}, likert) == 1.0
    assert score_gold("best_of_n", 1, BestOfNAnswer(best=1, canonical=True)) == 1.0
    assert score_gold("pairwise", "B", PairwiseAnswer(votes={None: "B"}, canonical=True)) == 1.0
    with pytest.raises(ValueError):
        score_gold("best_of_n", 1, BestOfNAnswer(best=1))  # shown positions, not canonical


def test_scoring_errors():
    with pytest.raises(ValueError):
        score_gold("likert", {}, {})
    with pytest.raises(ValueError):
        score_gold("ranking", 1, 1)
    with pytest.raises(ValueError):
        score_gold("likert", {0: {"relevance": 4}}, {}, tolerance=-1)


def test_gold_accuracy_per_annotator():
    rows = [
        {"annotator": "ann-1", "score": 1.0},
        {"annotator": "ann-1", "score": 0.0},
        {"annotator": "ann-1", "score": 0.5},
        {"annotator": "ann-2", "score": 1.0},
    ]
    assert gold_accuracy(rows) == {
        "ann-1": GoldAccuracy(n_items=3, mean_score=0.5, n_exact=1),  # (1 + 0 + 0.5) / 3
        "ann-2": GoldAccuracy(n_items=1, mean_score=1.0, n_exact=1),
    }
    assert gold_accuracy([]) == {}
    with pytest.raises(ValueError):
        gold_accuracy([{"annotator": "a", "score": 2}])
