"""How an option's continuation is scored from its tokens' log-probabilities, for every backend.

``sum``: the total log-probability of the continuation (LoraxBench's cloze rule, and letter scoring);
``cloze``: its mean per token, which does not penalise a long option text for its length.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

SCORE_MODES = ("sum", "cloze")


def option_score(token_log_probs: Sequence[float], mode: str = "sum") -> float:
    """The score of one option from the log-probabilities of its tokens, by ``mode`` (:data:`SCORE_MODES`)."""
    if not token_log_probs:
        raise ValueError("an option needs at least one token to be scored")
    total = math.fsum(token_log_probs)
    if mode == "sum":
        return total
    if mode == "cloze":
        return total / len(token_log_probs)
    raise ValueError(f"unknown score mode {mode!r}; expected one of {', '.join(SCORE_MODES)}")
