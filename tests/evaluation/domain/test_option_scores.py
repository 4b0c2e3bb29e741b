"""Option scores from token log-probabilities: the cloze rules pick different options on one example."""

import pytest

from evaluation.domain.answer_extraction import best_option
from evaluation.domain.benchmark_metrics import CLOZE_RULES
from evaluation.domain.option_scores import option_score

# Option A is two likely tokens, option B one less likely token.
TOKENS = {"A": [-1.0, -1.0], "B": [-1.5]}


def test_total_and_mean_pick_different_options():
    letters = list(TOKENS)
    totals = [option_score(TOKENS[x], CLOZE_RULES["total"]) for x in letters]
    means = [option_score(TOKENS[x], CLOZE_RULES["mean"]) for x in letters]
    assert totals == [-2.0, -1.5] and means == [-1.0, -1.5]
    assert best_option(letters, totals) == "B"  # LoraxBench's rule: the highest total log-probability
    assert best_option(letters, means) == "A"


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="at least one token"):
        option_score([], "sum")
    with pytest.raises(ValueError, match="unknown score mode 'max'"):
        option_score([-1.0], "max")
