"""The card's alpha reads units keyed by integers (``measures(compact=True)``); the dashboard keys them by
``task:response`` text. Same units in the same order, so the same alpha and the same bootstrap draws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analytics import services
from analytics.domain import agreement as ag


def answers(seed: int = 3) -> pd.DataFrame:
    """Ratings on points, a criterion on named categories, best picks (some all bad) and pairwise votes
    (some turns null), in a shuffled order, as ``annotation_frame`` returns them."""
    rng = np.random.default_rng(seed)
    rows = []
    for task in range(1, 41):
        for coder in (7, 8, 9):
            for response in (100 + task, 200 + task):
                value = int(rng.integers(1, 6))
                rows.append((task, response, coder, "relevance", value, "", None))
                rows.append((task, response, coder, "safe", None, str(rng.choice(["yes", "no"])), None))
            picked = None if rng.random() < 0.2 else int(rng.choice([100 + task, 200 + task]))
            rows.append((task, picked, coder, "best", None, "all_bad" if picked is None else "", None))
            for turn in (None, 0, 1):
                rows.append(
                    (task + 1000, None, coder, "vote", None, str(rng.choice(["A", "B", "tie"])), turn)
                )
    frame = pd.DataFrame(rows, columns=["task", "response", "coder", "criterion", "value", "choice", "turn"])
    frame = frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)
    frame["response"] = frame["response"].astype(float)
    frame["value"] = frame["value"].astype(float)
    frame["turn"] = frame["turn"].astype(float)
    for name in ("group", "category", "language", "register", "submitted_at"):
        frame[name] = ""
    return frame


def test_compact_units_are_the_text_units_in_the_same_order():
    frame = answers()
    text = services.measures(frame, "ordinal")
    compact = services.measures(frame, "ordinal", compact=True)
    assert list(compact["criterion"]) == list(text["criterion"])
    assert list(compact["value"].astype(str)) == list(text["value"].astype(str))
    # Within a criterion, two rows share an integer unit exactly when they share a text unit, and the
    # units are met in the same order.
    for criterion in text["criterion"].unique():
        mine = compact.loc[compact["criterion"] == criterion, "unit"]
        theirs = text.loc[text["criterion"] == criterion, "unit"]
        assert (pd.factorize(mine)[0] == pd.factorize(theirs)[0]).all(), criterion


@pytest.mark.parametrize("draws", [0, 300])
def test_alpha_only_gives_the_dashboards_alpha_and_interval(draws):
    frame = answers()
    full = services.alpha_section(services.measures(frame, "ordinal"), draws=draws, seed=5)
    card = services.alpha_section(
        services.measures(frame, "ordinal", compact=True), draws=draws, seed=5, alpha_only=True
    )
    full_rows, card_rows = full["tables"]["alpha"], card["tables"]["alpha"]
    assert [r["criterion"] for r in card_rows] == [r["criterion"] for r in full_rows]
    for mine, theirs in zip(card_rows, full_rows, strict=True):
        for key in ("level", "alpha", "ci_low", "ci_high", "q_below_0_667", "n_units", "n_coders"):
            assert mine[key] == theirs[key], (mine["criterion"], key)
        assert mine["ac1"] is None and mine["cohen_kappa"] is None and mine["percent_agreement"] is None


def test_bootstrap_draws_follow_the_unit_order():
    """Few units: each draw picks units by position, so equal draws need equal unit order."""
    frame = answers()
    all_text = services.measures(frame, "ordinal")
    all_compact = services.measures(frame, "ordinal", compact=True)
    for criterion in ("relevance", "best", "vote"):
        text = all_text.loc[all_text["criterion"] == criterion]
        compact = all_compact.loc[all_compact["criterion"] == criterion]
        level = text["level"].iloc[0]
        a = ag.Reliability.from_long(text, level).bootstrap(draws=50, seed=1).alphas
        b = ag.Reliability.from_long(compact, level).bootstrap(draws=50, seed=1).alphas
        np.testing.assert_array_equal(a, b)
