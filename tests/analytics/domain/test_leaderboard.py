"""The arena leaderboard on battle sets whose answer is known by hand, and against an independent fit.

The independent fit writes each battle's likelihood on its own (no folding into distinct outcomes), in
the textbook parametrisation (Davidson's pi_i, all strengths free, no anchor) and maximises it with
torch's L-BFGS in float64; the leaderboard's Newton fit must agree to 1e-6 rating points.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analytics.domain.leaderboard import ELO_SCALE, LeaderboardError, leaderboard_fit

LOG10_3 = 400 * math.log10(3)


def _battles(rows: list[tuple[str, str, str]], **extra: list) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])
    for column, values in extra.items():
        frame[column] = values
    return frame


def _by_model(board) -> dict:
    return {row.model: row for row in board.models}


# --- hand-checked -------------------------------------------------------------------------------------


def test_two_models_rating_difference_is_400_log10_of_the_win_odds():
    # x wins 3 of 4: odds 3, so r_x - r_y = 400 log10 3 = 190.85, centred on 1000.
    board = leaderboard_fit(
        _battles(
            [("x", "y", "model_a"), ("y", "x", "model_b"), ("x", "y", "model_a"), ("x", "y", "model_b")]
        ),
        bootstrap=0,
    )
    rows = _by_model(board)
    assert rows["x"].rating - rows["y"].rating == pytest.approx(LOG10_3, abs=1e-6)
    assert rows["x"].rating + rows["y"].rating == pytest.approx(2000.0, abs=1e-9)
    assert (rows["x"].wins, rows["x"].losses, rows["x"].battles) == (3, 1, 4)
    assert [r.model for r in board.models] == ["x", "y"] and rows["x"].rank == 1
    assert board.models[0].ci95 is None and board.models[0].rank_range is None


def test_a_tie_is_half_a_win_and_both_bad_is_a_tie():
    # x: 2 wins, 1 tie, 1 both-bad = 3 of 4 with half wins, the same as above.
    board = leaderboard_fit(
        _battles(
            [("x", "y", "model_a"), ("x", "y", "model_a"), ("x", "y", "tie"), ("y", "x", "tie (bothbad)")]
        ),
        bootstrap=0,
    )
    rows = _by_model(board)
    assert rows["x"].rating - rows["y"].rating == pytest.approx(LOG10_3, abs=1e-6)
    assert (rows["y"].ties, rows["y"].both_bad, rows["y"].wins) == (2, 1, 0)


def test_davidson_on_two_models_matches_the_outcome_shares():
    # One pair, two parameters (d and nu), three outcome shares: the fit reproduces them. 4 A wins, 1 B win,
    # 2 ties: e^d = 4/1, so r_x - r_y = 400 log10 4 = 240.82, and nu = P(tie) / sqrt(P(A) P(B)) = 2 / 2 = 1.
    rows = [("x", "y", "model_a")] * 4 + [("x", "y", "model_b")] + [("x", "y", "tie")] * 2
    board = leaderboard_fit(_battles(rows), ties="davidson", bootstrap=0)
    by = _by_model(board)
    assert by["x"].rating - by["y"].rating == pytest.approx(400 * math.log10(4), abs=1e-6)
    assert board.tie_nu == pytest.approx(1.0, abs=1e-9)
    # Half wins give x 5 of 7 instead: odds 5/2.
    half = _by_model(leaderboard_fit(_battles(rows), bootstrap=0))
    assert half["x"].rating - half["y"].rating == pytest.approx(400 * math.log10(2.5), abs=1e-6)


def test_a_cycle_gives_equal_ratings():
    board = leaderboard_fit(
        _battles([("a", "b", "model_a"), ("b", "c", "model_a"), ("c", "a", "model_a")]), bootstrap=0
    )
    np.testing.assert_allclose([r.rating for r in board.models], 1000.0, atol=1e-9)


def test_a_model_that_never_lost_is_listed_with_its_battles_but_not_rated():
    rows = [("a", "b", "model_a"), ("b", "a", "model_a"), ("a", "b", "model_a"), ("new", "a", "model_a")]
    board = leaderboard_fit(_battles(rows), bootstrap=0, models=["idle"])
    by = _by_model(board)
    assert by["new"].rating is None and by["new"].battles == 1 and "never lost" in by["new"].note
    assert by["idle"].rating is None and by["idle"].battles == 0 and by["idle"].note == "no battles"
    # a and b are rated on their own three battles: a won 2 of 3.
    assert by["a"].rating - by["b"].rating == pytest.approx(400 * math.log10(2), abs=1e-6)
    assert board.n_battles == 4 and board.n_used == 3
    assert [r.model for r in board.models][-2:] == ["idle", "new"]


def test_pair_matrix_counts_battles_per_pair_in_board_order():
    rows = (
        [("a", "b", "model_a")] * 3
        + [("b", "a", "model_a")]
        + [("a", "c", "tie")] * 2
        + [("c", "b", "model_b")]
    )
    board = leaderboard_fit(_battles(rows), bootstrap=0)
    names = [r.model for r in board.models]
    matrix = np.array(board.pair_votes)
    assert (matrix == matrix.T).all() and (np.diag(matrix) == 0).all()
    assert matrix[names.index("a"), names.index("b")] == 4
    assert matrix[names.index("a"), names.index("c")] == 2
    assert matrix[names.index("b"), names.index("c")] == 1


def test_vote_drop_on_three_to_two():
    # x beats y 3 to 2 (gap 400 log10 1.5 = 70.4). Removing one of x's wins makes it 2-2 (no new top);
    # two make it 1-2: y on top. The greedy search finds exactly 2.
    rows = [("x", "y", "model_a")] * 3 + [("x", "y", "model_b")] * 2
    drop = leaderboard_fit(_battles(rows), bootstrap=0).vote_drop
    assert drop is not None
    assert (drop.top, drop.votes_removed, drop.new_top) == ("x", 2, "y")
    assert drop.share == pytest.approx(2 / 5)
    assert drop.path[0] == (0, pytest.approx(400 * math.log10(1.5)))
    assert drop.removed == (("x", "y", "model_a", 2),)


def test_vote_drop_removals_really_flip_the_top():
    battles = _synthetic(n=1500, seed=3)
    board = leaderboard_fit(battles, bootstrap=0)
    drop = board.vote_drop
    assert drop is not None and drop.votes_removed is not None and drop.votes_removed > 0
    kept = battles.copy()
    for model_a, model_b, winner, count in drop.removed:
        hits = kept.index[(kept.model_a == model_a) & (kept.model_b == model_b) & (kept.winner == winner)]
        kept = kept.drop(hits[:count])
    assert len(kept) == len(battles) - drop.votes_removed
    refit = leaderboard_fit(kept, bootstrap=0, vote_drop=False)
    assert refit.models[0].model == drop.new_top != board.models[0].model


def test_bootstrap_is_seeded_and_gives_rank_ranges_and_tiers():
    # Three clearly separated models and two that cannot be told apart.
    rng = np.random.default_rng(5)
    strength = {"top": 2.0, "mid": 0.0, "twin1": -2.0, "twin2": -2.0}
    names = list(strength)
    rows = []
    for _ in range(4000):
        i, j = rng.choice(4, size=2, replace=False)
        p = 1 / (1 + math.exp(-(strength[names[i]] - strength[names[j]])))
        rows.append((names[i], names[j], "model_a" if rng.random() < p else "model_b"))
    battles = _battles(rows)
    first = leaderboard_fit(battles, bootstrap=200, seed=7, vote_drop=False)
    again = leaderboard_fit(battles, bootstrap=200, seed=7, vote_drop=False)
    other = leaderboard_fit(battles, bootstrap=200, seed=8, vote_drop=False)
    assert first.to_dict() == again.to_dict()
    assert first.models[0].ci95 != other.models[0].ci95
    by = _by_model(first)
    for row in first.models:
        assert row.ci95[0] < row.rating < row.ci95[1]
    assert by["top"].rank_range == (1, 1) and by["top"].tier == 1
    assert by["mid"].rank_range == (2, 2) and by["mid"].tier == 2
    assert by["twin1"].rank_range == (3, 4) and by["twin2"].rank_range == (3, 4)
    assert by["twin1"].tier == by["twin2"].tier == 3
    assert first.n_failed_draws == 0


def test_bootstrap_spread_matches_the_binomial_standard_error():
    # Two models, p = 0.6 over 2000 battles: the rating difference is 400 log10(p / (1 - p)); its
    # standard error by the delta method is (400 / ln 10) / sqrt(n p (1 - p)) = 7.93 points; each
    # rating is +-half of it around 1000, so the 95 % interval of one rating is about 1.96 * 3.97 wide.
    rows = [("x", "y", "model_a")] * 1200 + [("x", "y", "model_b")] * 800
    board = leaderboard_fit(_battles(rows), bootstrap=2000, seed=1, vote_drop=False)
    lo, hi = _by_model(board)["x"].ci95
    expected_half_width = 1.96 * ELO_SCALE / math.sqrt(2000 * 0.6 * 0.4) / 2
    assert (hi - lo) / 2 == pytest.approx(expected_half_width, rel=0.08)


def test_breakdowns_by_language_and_category():
    rows = [("x", "y", "model_a")] * 3 + [("x", "y", "model_b")] + [("x", "y", "model_b")] * 2
    battles = _battles(
        rows,
        language=["ind", "ind", "ind", "ind", "jav", "jav"],
        category=["math"] * 6,
    )
    board = leaderboard_fit(battles, bootstrap=0)
    assert set(board.breakdowns) == {"language", "category"}
    ind = board.breakdowns["language"]["ind"]
    assert _by_model(ind)["x"].rating - _by_model(ind)["y"].rating == pytest.approx(LOG10_3, abs=1e-6)
    # In Javanese y won both battles: no finite rating, the group says so instead of failing the board.
    assert "nothing to rate" in board.breakdowns["language"]["jav"]
    assert board.breakdowns["category"]["math"].n_battles == 6


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (pd.DataFrame({"model_a": ["x"], "winner": ["model_a"]}), "missing column 'model_b'"),
        (_battles([("x", "y", "model_a"), ("x", "y", "A wins")]), "battle 2: column 'winner' is 'A wins'"),
        (_battles([("x", "x", "model_a")]), "battle 1: model 'x' battles itself"),
        (_battles([("x", "", "model_a")]), "battle 1: column 'model_b' is empty"),
        (_battles([("x", "y", "model_a")]), "nothing to rate"),
    ],
)
def test_bad_battles_raise_a_clear_error(frame, message):
    with pytest.raises(LeaderboardError, match=message.replace("(", r"\(").replace(")", r"\)")):
        leaderboard_fit(frame, bootstrap=0)


def test_bad_style_columns_raise_a_clear_error():
    rows = [("x", "y", "model_a"), ("y", "x", "model_a")]
    with pytest.raises(LeaderboardError, match="needs column 'length_b'"):
        leaderboard_fit(_battles(rows, length_a=[1, 2]), style_features=["length"], bootstrap=0)
    with pytest.raises(LeaderboardError, match="battle 2: column 'length_a' is 'long', not a number"):
        leaderboard_fit(
            _battles(rows, length_a=["1", "long"], length_b=[1, 1]), style_features=["length"], bootstrap=0
        )
    with pytest.raises(LeaderboardError, match="same normalised difference in every battle"):
        leaderboard_fit(
            _battles(rows, length_a=[5, 5], length_b=[5, 5]), style_features=["length"], bootstrap=0
        )
    with pytest.raises(LeaderboardError, match="needs at least one tie"):
        leaderboard_fit(_battles(rows), ties="davidson", bootstrap=0)


# --- against an independent fit ---------------------------------------------------------------------


def _synthetic(n: int = 3000, seed: int = 0, style: bool = False) -> pd.DataFrame:
    """Six models with known strengths; lengths and bold counts that sway votes; 20 % ties."""
    rng = np.random.default_rng(seed)
    strengths = np.array([0.8, 0.5, 0.3, 0.0, -0.2, -0.6])
    names = [f"model-{i}" for i in range(6)]
    a = rng.integers(0, 6, n)
    b = (a + rng.integers(1, 6, n)) % 6
    length_a, length_b = rng.integers(50, 800, n), rng.integers(50, 800, n)
    bold_a, bold_b = rng.poisson(2, n), rng.poisson(2, n)
    d = strengths[a] - strengths[b]
    if style:
        d = d + 0.6 * (length_a - length_b) / (length_a + length_b) + 0.2 * np.tanh(bold_a - bold_b)
    p_a = 0.8 / (1 + np.exp(-d))
    u = rng.random(n)
    winner = np.where(
        u < p_a, "model_a", np.where(u < 0.8, "model_b", np.where(u < 0.9, "tie", "tie (bothbad)"))
    )
    return pd.DataFrame(
        {
            "model_a": [names[i] for i in a],
            "model_b": [names[i] for i in b],
            "winner": winner,
            "length_a": length_a,
            "length_b": length_b,
            "bold_a": bold_a,
            "bold_b": bold_b,
        }
    )


def _independent_fit(battles: pd.DataFrame, ties: str, features: list[str]) -> tuple[dict, np.ndarray, float]:
    """Per-battle maximum likelihood with torch L-BFGS: ratings (mean 1000), gamma, nu."""
    torch = pytest.importorskip("torch")
    names = sorted(set(battles.model_a) | set(battles.model_b))
    index = {m: i for i, m in enumerate(names)}
    a = torch.tensor([index[m] for m in battles.model_a])
    b = torch.tensor([index[m] for m in battles.model_b])
    won_a = torch.tensor((battles.winner == "model_a").to_numpy(), dtype=torch.float64)
    won_b = torch.tensor((battles.winner == "model_b").to_numpy(), dtype=torch.float64)
    tied = 1.0 - won_a - won_b
    columns = []
    for f in features:
        sa, sb = battles[f"{f}_a"].to_numpy(float), battles[f"{f}_b"].to_numpy(float)
        diff = np.where(sa + sb > 0, (sa - sb) / np.where(sa + sb > 0, sa + sb, 1), 0.0)
        columns.append((diff - diff.mean()) / diff.std())
    z = torch.tensor(
        np.column_stack(columns) if columns else np.zeros((len(battles), 0)), dtype=torch.float64
    )
    log_pi = torch.zeros(len(names), dtype=torch.float64, requires_grad=True)
    gamma = torch.zeros(len(features), dtype=torch.float64, requires_grad=True)
    log_nu = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    params = [log_pi, gamma] + ([log_nu] if ties == "davidson" else [])

    def nll_of(log_pi, gamma, log_nu=None):
        shift = z @ gamma / 2  # style moves each side by half of gamma . z
        s_a, s_b = log_pi[a] + shift, log_pi[b] - shift
        if ties == "davidson":
            # P(A) = pi_a / (pi_a + pi_b + nu sqrt(pi_a pi_b)), P(tie) = nu sqrt(pi_a pi_b) / (same)
            s_t = log_nu + (s_a + s_b) / 2
            log_den = torch.logsumexp(torch.stack([s_a, s_b, s_t]), dim=0)
            return -(won_a * (s_a - log_den) + won_b * (s_b - log_den) + tied * (s_t - log_den)).sum()
        log_p_a = s_a - torch.logaddexp(s_a, s_b)
        log_p_b = s_b - torch.logaddexp(s_a, s_b)
        return -((won_a + tied / 2) * log_p_a + (won_b + tied / 2) * log_p_b).sum()

    def nll():
        return nll_of(*params)

    optimiser = torch.optim.LBFGS(
        params,
        lr=1,
        max_iter=5000,
        tolerance_grad=1e-13,
        tolerance_change=1e-16,
        line_search_fn="strong_wolfe",
    )

    def closure():
        optimiser.zero_grad()
        loss = nll()
        loss.backward()
        return loss

    optimiser.step(closure)
    # L-BFGS stops where float64 can no longer see the loss fall; a few Newton steps on the gradient (both
    # by automatic differentiation) finish the job. The Hessian is singular along the common shift of all
    # log_pi, so the step is the least-squares solution.
    flat = torch.cat([p.detach() for p in params])
    sizes = [p.numel() for p in params]

    for _ in range(4):
        grad = torch.autograd.functional.jacobian(lambda v: nll_of(*torch.split(v, sizes)), flat)
        hess = torch.autograd.functional.hessian(lambda v: nll_of(*torch.split(v, sizes)), flat)
        flat = flat - torch.linalg.lstsq(hess, grad.unsqueeze(1)).solution.squeeze(1)
    log_pi_fit, gamma_fit, *rest = torch.split(flat, sizes)
    theta = log_pi_fit.numpy()
    ratings = 400 * np.log10(np.e) * (theta - theta.mean()) + 1000
    nu = float(np.exp(rest[0].item())) if rest else 1.0
    return dict(zip(names, ratings, strict=True)), gamma_fit.numpy(), nu


@pytest.mark.parametrize(
    ("ties", "features"),
    [("half", []), ("davidson", []), ("half", ["length", "bold"]), ("davidson", ["length", "bold"])],
)
def test_equals_an_independent_maximum_likelihood_fit(ties, features):
    battles = _synthetic(style=bool(features))
    board = leaderboard_fit(battles, ties=ties, style_features=features, bootstrap=0, vote_drop=False)
    ratings, gamma, nu = _independent_fit(battles, ties, features)
    assert all(row.rated for row in board.models)
    for row in board.models:
        assert row.rating == pytest.approx(ratings[row.model], abs=1e-6)
    assert [c.feature for c in board.style] == features
    np.testing.assert_allclose([c.gamma for c in board.style], gamma, atol=1e-6)
    if ties == "davidson":
        assert board.tie_nu == pytest.approx(nu, abs=1e-6)
    else:
        assert board.tie_nu is None


def test_style_control_recovers_a_length_preference():
    # Votes that prefer longer answers: gamma for length is clearly positive, and its interval says so.
    battles = _synthetic(n=6000, seed=11, style=True)
    board = leaderboard_fit(battles, style_features=["length"], bootstrap=100, seed=0, vote_drop=False)
    (length,) = board.style
    assert length.gamma > 0 and length.ci95[0] > 0
    assert length.ci95[0] < length.gamma < length.ci95[1]


def test_vote_drop_under_style_control_removes_votes_in_batches():
    # Nearly every battle is its own row with style features; the search still flips the top in a few
    # steps, taking the votes of one pair and outcome from several rows at a time.
    battles = _synthetic(n=1500, seed=3, style=True)
    board = leaderboard_fit(battles, style_features=["length", "bold"], bootstrap=0)
    drop = board.vote_drop
    assert drop is not None and drop.votes_removed is not None and drop.new_top != drop.top
    assert len(drop.path) < 40 < drop.votes_removed
    assert sum(n for *_, n in drop.removed) == drop.votes_removed


@pytest.mark.parametrize(
    ("ties", "features"),
    [("half", []), ("davidson", []), ("half", ["length"]), ("davidson", ["length", "bold"])],
)
def test_the_batched_bootstrap_fit_equals_one_fit_per_draw(ties, features):
    # The bootstrap fits many resamples at once; each must equal the single-resample Newton fit.
    from analytics.domain import leaderboard as lb
    from arena.domain import bradley_terry as bt

    battles = _synthetic(n=600, seed=9, style=bool(features))
    data = lb._prepare(battles, features, (), None)
    a, b, z, counts = bt.fold(data.a, data.b, data.z, data.outcome)
    design = bt.Design(a=a, b=b, z=z, counts=counts, k=len(data.models), davidson=ties == "davidson")
    start, _ = bt.fit(design, counts)
    rng = np.random.default_rng(0)
    flat = counts.ravel()
    resampled = rng.multinomial(int(flat.sum()), flat / flat.sum(), size=6).astype(float).reshape(6, -1, 3)
    batched = bt.fit_batch(design, resampled, start)
    for draw in range(6):
        single, _ = bt.fit(design, resampled[draw], start=start)
        np.testing.assert_allclose(batched[draw], single, atol=1e-9)
