"""The arena leaderboard: Bradley-Terry ratings with ties, style control, bootstrap intervals, rank ranges,
tiers, breakdowns by language / register / category, votes per pair and vote-drop robustness.

Model. Each battle is (model_a, model_b, winner) with winner ``model_a``, ``model_b``, ``tie`` or
``tie (bothbad)``; both-bad is a tie. With strengths theta and style coefficients gamma, a battle has the
linear predictor ``d = theta_a - theta_b + gamma . z`` where z holds the battle's standardised style
features (empty without style control).

- ``ties="half"`` (default): P(A beats B) = 1 / (1 + exp(-d)) and a tie counts as half a win for each side.
- ``ties="davidson"`` (Davidson 1970): P(A) = e^{d/2} / D, P(B) = e^{-d/2} / D, P(tie) = nu / D with
  D = e^{d/2} + e^{-d/2} + nu; nu >= 0 is fitted with the ratings.

In both, the odds that i beats j are e^{theta_i - theta_j}, so a rating is ``400 * log10(e) * theta``: a
rating difference r_i - r_j is 400 log10 of the odds that i beats j. Anchor: the mean rating of the rated
models is 1000 (a difference scale has no origin; intervals are of a model's rating relative to that mean).

Style control (LMArena): for each feature f (answer length in tokens, markdown headers, bold, list items,
or any ``<f>_a`` / ``<f>_b`` column pair) the battle's normalised difference (s_A - s_B) / (s_A + s_B)
(0 when both are 0) is standardised over the battles (minus its mean, over its population standard
deviation); gamma_f is the change of the log-odds of A winning per standard deviation of that difference.

Fit. Maximum likelihood by Newton's method with step halving, on numpy (``arena.domain.bradley_terry``, the
one implementation, which the arena's active sampler also calls for its live ratings): the log-likelihood is
concave, Newton converges in a handful of steps to machine precision, and the Hessian it builds is needed
anyway for the vote-drop search. (scipy is not a dependency of the project.) Battles are first folded into
distinct outcomes ((a, b, z) rows with counts of A wins, B wins and ties), so a fit costs the number of
distinct outcomes, not of battles.

Existence. A finite estimate exists only where every model has both won (or tied) against and lost (or
tied) to the others, transitively: the "won or tied against" graph must be strongly connected. Ratings are
fitted for the largest such group of models (by battles); every other model is still listed with its
battles and a note, and its battles are left out of the fit (``n_used``). Nothing is dropped silently.

Bootstrap. Each draw resamples the battles with replacement as one multinomial draw over the distinct
outcomes with probabilities count / n (the same law as resampling battles, at the cost of the distinct
outcomes), refits from the full fit, and records the ratings; percentile intervals (2.5 %, 97.5 %). A draw
whose resample has no finite estimate over the rated models is skipped and counted (``n_failed_draws``).

Rank range: best = 1 + the number of models whose lower bound exceeds this model's upper bound, worst =
the number of rated models minus those whose upper bound is below this model's lower bound. Tiers: walk the
models by rating; a model whose upper bound is below the lower bound of its tier's first model opens the
next tier.

Vote drop: how many votes removed make another model top. Greedy: the linearised effect of removing one
vote of each distinct outcome on the gap between the top model and each other model (one Newton step,
H^-1 g) picks the outcome that closes a gap with the fewest votes; that many (halved while more than two)
are removed, the model is refitted exactly, and this repeats until the top model changes. The count is an
upper bound on the fewest votes that flip the top (a greedy search, not an exhaustive one).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from arena.domain.bradley_terry import (
    A_WINS,
    B_WINS,
    ELO_SCALE,
    TIED,
    Design,
    FitError,
    connected,
    connected_batch,
    fit,
    fit_batch,
    fold,
    predictor,
    rated_component,
    split_params,
)

if TYPE_CHECKING:
    import pandas as pd

ANCHOR = 1000.0
TIES = ("half", "davidson")
GROUP_COLUMNS = ("language", "register", "category")

# Style features the arena records for every answer (``<f>_a`` / ``<f>_b`` columns of its battle rows).
ARENA_STYLE_FEATURES = ("length", "headers", "bold", "lists")
MAX_PAGE_DRAWS = 2000

WINNERS = {
    "model_a": A_WINS,
    "a": A_WINS,
    "model_b": B_WINS,
    "b": B_WINS,
    "tie": TIED,
    "tie (bothbad)": TIED,
    "both_bad": TIED,
    "both bad": TIED,
    "bothbad": TIED,
}
OUTCOME_NAMES = ("model_a", "model_b", "tie")
BOTH_BAD = ("tie (bothbad)", "both_bad", "both bad", "bothbad")
UNSPECIFIED = "(unspecified)"


class LeaderboardError(ValueError):
    """Battles that cannot give a leaderboard, in one line that says what and where."""


@dataclass(frozen=True)
class ModelRow:
    model: str
    rating: float | None
    ci95: tuple[float, float] | None
    rank: int | None
    rank_range: tuple[int, int] | None
    tier: int | None
    battles: int
    wins: int
    losses: int
    ties: int
    both_bad: int
    note: str = ""

    @property
    def rated(self) -> bool:
        return self.rating is not None


@dataclass(frozen=True)
class StyleCoefficient:
    feature: str
    gamma: float  # log-odds per standard deviation of the normalised difference
    ci95: tuple[float, float] | None
    mean: float  # of the normalised difference, over battles (used to standardise)
    std: float

    @property
    def rating_points(self) -> float:
        """gamma on the rating scale."""
        return self.gamma * ELO_SCALE


@dataclass(frozen=True)
class VoteDrop:
    top: str
    votes_removed: int | None  # None: the search stopped without a flip
    share: float | None
    new_top: str | None
    path: tuple[tuple[int, float], ...]  # (votes removed so far, rating gap of the top to the runner-up)
    removed: tuple[tuple[str, str, str, int], ...] = ()  # (model_a, model_b, winner, votes) taken out


@dataclass(frozen=True)
class Leaderboard:
    models: tuple[ModelRow, ...]
    ties: str
    style: tuple[StyleCoefficient, ...]
    tie_nu: float | None  # Davidson's nu
    tie_nu_ci95: tuple[float, float] | None
    n_battles: int
    n_used: int
    bootstrap: int
    n_failed_draws: int
    seed: int
    pair_votes: tuple[tuple[int, ...], ...]  # battles per pair, in the order of ``models``
    vote_drop: VoteDrop | None = None
    breakdowns: dict[str, dict[str, Leaderboard | str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values: the output of the command, the API and the page."""

        def pair(values: tuple[float, float] | tuple[int, int] | None, digits: int | None = None) -> Any:
            if values is None:
                return None
            return [round(v, digits) if digits is not None else v for v in values]

        return {
            "models": [
                {
                    "model": row.model,
                    "rating": None if row.rating is None else round(row.rating, 6),
                    "ci95": pair(row.ci95, 6),
                    "rank": row.rank,
                    "rank_range": pair(row.rank_range),
                    "tier": row.tier,
                    "battles": row.battles,
                    "wins": row.wins,
                    "losses": row.losses,
                    "ties": row.ties,
                    "both_bad": row.both_bad,
                    "rated": row.rated,
                    "note": row.note,
                }
                for row in self.models
            ],
            "style": {
                "features": [c.feature for c in self.style],
                "coefficients": [
                    {
                        "feature": c.feature,
                        "gamma": round(c.gamma, 9),
                        "ci95": pair(c.ci95, 9),
                        "rating_points": round(c.rating_points, 6),
                        "mean": c.mean,
                        "std": c.std,
                    }
                    for c in self.style
                ],
            },
            "ties": self.ties,
            "davidson_nu": None
            if self.tie_nu is None
            else {"nu": round(self.tie_nu, 9), "ci95": pair(self.tie_nu_ci95, 9)},
            "scale": "rating difference = 400 log10(odds of winning); mean rating of rated models = 1000",
            "n_battles": self.n_battles,
            "n_used": self.n_used,
            "bootstrap": {"draws": self.bootstrap, "failed": self.n_failed_draws, "seed": self.seed},
            "pair_matrix": {
                "models": [row.model for row in self.models],
                "votes": [list(r) for r in self.pair_votes],
            },
            "vote_drop": None
            if self.vote_drop is None
            else {
                "top": self.vote_drop.top,
                "votes_removed": self.vote_drop.votes_removed,
                "share": self.vote_drop.share,
                "new_top": self.vote_drop.new_top,
                "path": [[n, round(g, 6)] for n, g in self.vote_drop.path],
                "removed": [list(r) for r in self.vote_drop.removed],
            },
            "breakdowns": {
                column: {
                    value: board if isinstance(board, str) else board.to_dict()
                    for value, board in boards.items()
                }
                for column, boards in self.breakdowns.items()
            },
        }


@dataclass(frozen=True)
class LeaderboardOptions:
    """What the page and the API let a person choose."""

    ties: str = "half"
    style_features: tuple[str, ...] = ()
    bootstrap: int = 1000
    seed: int = 0


def leaderboard_options(
    ties: str | None = None,
    style: Sequence[str] = (),
    bootstrap: str | int | None = None,
    seed: str | int | None = None,
    *,
    allowed_features: Sequence[str] = ARENA_STYLE_FEATURES,
    max_draws: int = MAX_PAGE_DRAWS,
) -> LeaderboardOptions:
    """Options from request parameters (``style`` may hold comma-separated names); LeaderboardError names
    the parameter that is wrong."""
    ties = ties or "half"
    if ties not in TIES:
        raise LeaderboardError(f"ties must be one of {', '.join(TIES)}, not {ties!r}")
    features: list[str] = []
    for value in style:
        for name in str(value).split(","):
            name = name.strip().lower()
            if not name or name in features:
                continue
            if name not in allowed_features:
                raise LeaderboardError(f"style: {name!r} is not one of {', '.join(allowed_features)}")
            features.append(name)
    numbers = {}
    for name, value, default, high in (
        ("bootstrap", bootstrap, 1000, max_draws),
        ("seed", seed, 0, 2**32 - 1),
    ):
        if value is None or value == "":
            numbers[name] = default
            continue
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise LeaderboardError(f"{name} must be a whole number, not {value!r}") from None
        if not 0 <= number <= high:
            raise LeaderboardError(f"{name} must be between 0 and {high}")
        numbers[name] = number
    return LeaderboardOptions(
        ties=ties, style_features=tuple(features), bootstrap=numbers["bootstrap"], seed=numbers["seed"]
    )


# --- battles in, folded ------------------------------------------------------------------------------


@dataclass
class _Battles:
    models: list[str]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    both_bad: np.ndarray
    z: np.ndarray  # standardised style features, n x F
    features: tuple[str, ...]
    means: np.ndarray
    stds: np.ndarray
    groups: dict[str, np.ndarray]


def _text(values: pd.Series) -> np.ndarray:
    """A column as a numpy array of stripped strings ("" for a missing value)."""
    return values.astype(object).where(values.notna(), "").astype(str).str.strip().to_numpy(dtype=str)


def _prepare(
    frame: pd.DataFrame, style_features: Sequence[str], groups: Sequence[str], models: Iterable[str] | None
) -> _Battles:
    for column in ("model_a", "model_b", "winner"):
        if column not in frame.columns:
            raise LeaderboardError(f"missing column {column!r} (needs model_a, model_b, winner)")
    if len(frame) == 0:
        raise LeaderboardError("there are no battles")
    model_a = _text(frame["model_a"])
    model_b = _text(frame["model_b"])
    winner_raw = _text(frame["winner"])
    winner_text = np.char.lower(winner_raw)
    for name, values in (("model_a", model_a), ("model_b", model_b)):
        empty = values == ""
        if empty.any():
            raise LeaderboardError(f"battle {int(empty.argmax()) + 1}: column {name!r} is empty")
    same = model_a == model_b
    if same.any():
        row = int(same.argmax())
        raise LeaderboardError(f"battle {row + 1}: model {str(model_a[row])!r} battles itself")
    outcome = np.full(len(frame), -1, dtype=np.int64)
    for text, code in WINNERS.items():
        outcome[winner_text == text] = code
    if (outcome < 0).any():
        row = int((outcome < 0).argmax())
        raise LeaderboardError(
            f"battle {row + 1}: column 'winner' is {str(winner_raw[row])!r}; "
            "expected model_a, model_b, tie or tie (bothbad)"
        )
    both_bad = np.isin(winner_text, BOTH_BAD)
    names = sorted(
        set(np.unique(model_a).tolist()) | set(np.unique(model_b).tolist()) | {str(m) for m in models or ()}
    )
    lookup = np.array(names)
    a = np.searchsorted(lookup, model_a).astype(np.int64)
    b = np.searchsorted(lookup, model_b).astype(np.int64)
    raw = np.zeros((len(frame), len(style_features)))
    for j, feature in enumerate(style_features):
        sides = []
        for side in ("a", "b"):
            column = f"{feature}_{side}"
            if column not in frame.columns:
                raise LeaderboardError(f"style feature {feature!r} needs column {column!r}")
            values = np.asarray(frame[column], dtype=object)
            try:
                numbers = np.array([float(v) for v in values])
            except (TypeError, ValueError):
                row = next(i for i, v in enumerate(values) if not _is_number(v))
                raise LeaderboardError(
                    f"battle {row + 1}: column {column!r} is {values[row]!r}, not a number"
                ) from None
            bad = ~np.isfinite(numbers) | (numbers < 0)
            if bad.any():
                row = int(bad.argmax())
                raise LeaderboardError(f"battle {row + 1}: column {column!r} must be a number >= 0")
            sides.append(numbers)
        total = sides[0] + sides[1]
        raw[:, j] = np.divide(sides[0] - sides[1], total, out=np.zeros(len(frame)), where=total > 0)
    means = raw.mean(axis=0)
    stds = raw.std(axis=0)
    for j, feature in enumerate(style_features):
        if not stds[j] > 1e-12:
            raise LeaderboardError(
                f"style feature {feature!r} has the same normalised difference in every battle; "
                "it cannot be controlled for"
            )
    z = (raw - means) / np.where(stds > 0, stds, 1.0)
    group_values = {
        column: np.where(_text(frame[column]) == "", UNSPECIFIED, _text(frame[column]))
        for column in groups
        if column in frame.columns
    }
    return _Battles(
        models=names,
        a=a,
        b=b,
        outcome=outcome,
        both_bad=both_bad,
        z=z,
        features=tuple(style_features),
        means=means,
        stds=stds,
        groups=group_values,
    )


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


# --- the public function ------------------------------------------------------------------------------


def leaderboard_fit(
    battles: pd.DataFrame,
    *,
    ties: str = "half",
    style_features: Sequence[str] = (),
    bootstrap: int = 1000,
    seed: int = 0,
    groups: Sequence[str] | None = None,
    vote_drop: bool = True,
    models: Iterable[str] | None = None,
    confidence: float = 0.95,
) -> Leaderboard:
    """The leaderboard of ``battles`` (columns model_a, model_b, winner; ``<f>_a``/``<f>_b`` for each style
    feature f; optional group columns). ``groups`` adds one leaderboard per value of each named column
    (default: whichever of language, register, category are present). ``models`` lists models to show even
    without battles. Raises LeaderboardError on unusable input."""
    if ties not in TIES:
        raise LeaderboardError(f"ties must be one of {', '.join(TIES)}, not {ties!r}")
    if bootstrap < 0:
        raise LeaderboardError("bootstrap must be 0 or more draws")
    if not 0 < confidence < 1:
        raise LeaderboardError("confidence must be between 0 and 1")
    if len(set(style_features)) != len(style_features):
        raise LeaderboardError("a style feature is named twice")
    group_columns = (
        tuple(c for c in GROUP_COLUMNS if c in battles.columns) if groups is None else tuple(groups)
    )
    for column in group_columns:
        if column not in battles.columns:
            raise LeaderboardError(f"no column {column!r} to break the leaderboard down by")
    prepared = _prepare(battles, style_features, group_columns, models)
    everything = np.ones(len(prepared.a), dtype=bool)
    board = _board(prepared, everything, ties, bootstrap, seed, vote_drop, confidence)
    breakdowns: dict[str, dict[str, Leaderboard | str]] = {}
    for column, values in prepared.groups.items():
        breakdowns[column] = {}
        for value in sorted(set(values)):
            try:
                breakdowns[column][value] = _board(
                    prepared, values == value, ties, bootstrap, seed, False, confidence
                )
            except LeaderboardError as exc:
                breakdowns[column][value] = str(exc)
    board.breakdowns.update(breakdowns)
    return board


def _board(
    data: _Battles,
    mask: np.ndarray,
    ties: str,
    bootstrap: int,
    seed: int,
    vote_drop: bool,
    confidence: float,
) -> Leaderboard:
    k_all = len(data.models)
    a, b, outcome, z = data.a[mask], data.b[mask], data.outcome[mask], data.z[mask]
    fa, fb, fz, fcounts = fold(a, b, z, outcome)
    played = np.zeros(k_all, dtype=bool)
    played[a] = True
    played[b] = True
    rated = rated_component(fa, fb, fcounts, k_all)
    if len(rated) < 2:
        raise LeaderboardError("no two models have both won and lost against each other: nothing to rate")
    position = np.full(k_all, -1, dtype=np.int64)
    position[rated] = np.arange(len(rated))
    inside = (position[fa] >= 0) & (position[fb] >= 0)
    design = Design(
        a=position[fa[inside]],
        b=position[fb[inside]],
        z=fz[inside],
        counts=fcounts[inside],
        k=len(rated),
        davidson=ties == "davidson",
    )
    if design.davidson and design.counts[:, TIED].sum() == 0:
        raise LeaderboardError("the Davidson tie model needs at least one tie")
    if design.davidson and (design.counts[:, A_WINS] + design.counts[:, B_WINS]).sum() == 0:
        raise LeaderboardError("the Davidson tie model needs at least one battle that is not a tie")
    try:
        beta, hess = fit(design, design.counts)
    except FitError as exc:
        raise LeaderboardError(str(exc)) from exc
    theta, gamma, log_nu = split_params(design, beta)
    ratings = ELO_SCALE * (theta - theta.mean()) + ANCHOR

    f = len(data.features)
    failed = 0
    rating_ci = gamma_ci = nu_ci = None
    if bootstrap > 0:
        rng = np.random.default_rng(seed)
        total = int(design.counts.sum())
        flat = design.counts.ravel()
        probs = flat / flat.sum()
        draws_r = np.full((bootstrap, design.k), np.nan)
        draws_g = np.full((bootstrap, f), np.nan)
        draws_n = np.full(bootstrap, np.nan)
        chunk = max(1, min(bootstrap, 1_000_000 // max(len(flat), 1)))
        done = 0
        while done < bootstrap:
            size = min(chunk, bootstrap - done)
            resampled = rng.multinomial(total, probs, size=size).astype(float).reshape(size, -1, 3)
            usable = connected_batch(design, resampled)
            if design.davidson:
                usable &= resampled[:, :, TIED].sum(axis=1) > 0
            fitted = np.full((size, design.n_params), np.nan)
            if usable.any() and f == 0:
                fitted[usable] = fit_batch(design, resampled[usable], beta)
            elif usable.any():
                # With style control a resample has as many rows as battles: one at a time is faster.
                for i in np.flatnonzero(usable):
                    try:
                        fitted[i], _ = fit(design, resampled[i], start=beta, hessian=False)
                    except FitError:
                        pass
            ok = ~np.isnan(fitted).any(axis=1)
            failed += int((~ok).sum())
            theta_all = np.concatenate([np.zeros((size, 1)), fitted[:, : design.k - 1]], axis=1)
            draws_r[done : done + size] = (
                ELO_SCALE * (theta_all - theta_all.mean(axis=1, keepdims=True)) + ANCHOR
            )
            draws_g[done : done + size] = fitted[:, design.k - 1 : design.k - 1 + f]
            if design.davidson:
                draws_n[done : done + size] = np.exp(fitted[:, -1])
            done += size
        good = ~np.isnan(draws_r).any(axis=1)
        tail = (1 - confidence) / 2
        if good.any():
            rating_ci = np.quantile(draws_r[good], [tail, 1 - tail], axis=0).T
            gamma_ci = np.quantile(draws_g[good], [tail, 1 - tail], axis=0).T if f else None
            nu_ci = np.quantile(draws_n[good], [tail, 1 - tail]) if design.davidson else None

    rows = _rows(data, mask, rated, ratings, rating_ci, played)
    style = tuple(
        StyleCoefficient(
            feature=feature,
            gamma=float(gamma[j]),
            ci95=None if gamma_ci is None else (float(gamma_ci[j, 0]), float(gamma_ci[j, 1])),
            mean=float(data.means[j]),
            std=float(data.stds[j]),
        )
        for j, feature in enumerate(data.features)
    )
    order = [data.models.index(row.model) for row in rows]
    pair = np.zeros((k_all, k_all), dtype=np.int64)
    np.add.at(pair, (a, b), 1)
    pair = pair + pair.T
    pair_votes = tuple(tuple(int(pair[i, j]) for j in order) for i in order)
    drop = _vote_drop(design, beta, hess, [data.models[i] for i in rated]) if vote_drop else None
    return Leaderboard(
        models=tuple(rows),
        ties=ties,
        style=style,
        tie_nu=math.exp(log_nu) if design.davidson else None,
        tie_nu_ci95=None if nu_ci is None else (float(nu_ci[0]), float(nu_ci[1])),
        n_battles=int(mask.sum()),
        n_used=int(design.counts.sum()),
        bootstrap=bootstrap,
        n_failed_draws=failed,
        seed=seed,
        pair_votes=pair_votes,
        vote_drop=drop,
    )


def _rows(
    data: _Battles,
    mask: np.ndarray,
    rated: np.ndarray,
    ratings: np.ndarray,
    rating_ci: np.ndarray | None,
    played: np.ndarray,
) -> list[ModelRow]:
    k_all = len(data.models)
    a, b, outcome, both_bad = data.a[mask], data.b[mask], data.outcome[mask], data.both_bad[mask]
    battles = np.bincount(a, minlength=k_all) + np.bincount(b, minlength=k_all)
    wins = np.bincount(a[outcome == A_WINS], minlength=k_all) + np.bincount(
        b[outcome == B_WINS], minlength=k_all
    )
    losses = np.bincount(a[outcome == B_WINS], minlength=k_all) + np.bincount(
        b[outcome == A_WINS], minlength=k_all
    )
    tied = outcome == TIED
    n_ties = np.bincount(a[tied], minlength=k_all) + np.bincount(b[tied], minlength=k_all)
    n_bad = np.bincount(a[both_bad], minlength=k_all) + np.bincount(b[both_bad], minlength=k_all)

    order = np.argsort(-ratings, kind="stable")
    rank = np.empty(len(rated), dtype=np.int64)
    rank[order] = np.arange(1, len(rated) + 1)
    ranges: list[tuple[int, int] | None] = [None] * len(rated)
    tiers: list[int | None] = [None] * len(rated)
    if rating_ci is not None:
        lo, hi = rating_ci[:, 0], rating_ci[:, 1]
        for i in range(len(rated)):
            better = int(np.sum(lo > hi[i]))
            worse = int(np.sum(hi < lo[i]))
            ranges[i] = (1 + better, len(rated) - worse)
        tier, leader = 1, order[0]
        for i in order:
            if hi[i] < lo[leader]:
                tier, leader = tier + 1, i
            tiers[i] = tier
    out = []
    for i in order:
        m = rated[i]
        out.append(
            ModelRow(
                model=data.models[m],
                rating=float(ratings[i]),
                ci95=None if rating_ci is None else (float(rating_ci[i, 0]), float(rating_ci[i, 1])),
                rank=int(rank[i]),
                rank_range=ranges[i],
                tier=tiers[i],
                battles=int(battles[m]),
                wins=int(wins[m]),
                losses=int(losses[m]),
                ties=int(n_ties[m]),
                both_bad=int(n_bad[m]),
            )
        )
    in_fit = set(rated.tolist())
    for m in range(k_all):
        if m in in_fit:
            continue
        if not played[m]:
            note = "no battles"
        elif losses[m] == 0 and n_ties[m] == 0:
            note = "not rated: never lost or tied, so no finite rating exists"
        elif wins[m] == 0 and n_ties[m] == 0:
            note = "not rated: never won or tied, so no finite rating exists"
        else:
            note = "not rated: its wins and losses do not connect it both ways to the rated models"
        out.append(
            ModelRow(
                model=data.models[m],
                rating=None,
                ci95=None,
                rank=None,
                rank_range=None,
                tier=None,
                battles=int(battles[m]),
                wins=int(wins[m]),
                losses=int(losses[m]),
                ties=int(n_ties[m]),
                both_bad=int(n_bad[m]),
                note=note,
            )
        )
    return out


# --- vote drop ----------------------------------------------------------------------------------------


def _vote_drop(
    design: Design, beta: np.ndarray, hess: np.ndarray, names: list[str], max_steps: int = 200
) -> VoteDrop:
    counts = design.counts.copy()
    total = float(counts.sum())
    theta, _, _ = split_params(design, beta)
    top = int(np.argmax(theta))
    forbidden = np.zeros_like(counts, dtype=bool)
    removed = 0
    path: list[tuple[int, float]] = []
    taken: dict[tuple[str, str, str], int] = {}
    current_beta, current_hess = beta, hess
    for _ in range(max_steps):
        theta, _, _ = split_params(design, current_beta)
        leader = int(np.argmax(theta))
        gaps = theta[top] - theta
        gaps[top] = np.inf
        path.append((removed, float(np.min(gaps)) * ELO_SCALE))
        if leader != top:
            return VoteDrop(
                top=names[top],
                votes_removed=removed,
                share=removed / total,
                new_top=names[leader],
                path=tuple(path),
                removed=tuple((*key, n) for key, n in taken.items()),
            )
        effect = _removal_effects(design, current_beta, current_hess, top)  # R x 3 x k: change of gap
        required = np.full(effect.shape, np.inf)
        closing = effect < -1e-15
        np.divide(gaps[None, None, :], -effect, out=required, where=closing)
        available = (counts > 0) & ~forbidden
        required[~available] = np.inf
        best = np.unravel_index(int(np.argmin(required)), required.shape)
        need = required[best]
        if not np.isfinite(need):
            break
        r, o, rival = int(best[0]), int(best[1]), int(best[2])
        need_votes = max(1, math.ceil(need))
        take = need_votes if need_votes <= 2 else max(1, need_votes // 2)
        # With style control nearly every battle is its own row: take the votes from the rows of the same
        # pair and outcome that close this gap most, so a step removes as many votes as it would without.
        same = np.flatnonzero(
            (design.a == design.a[r])
            & (design.b == design.b[r])
            & available[:, o]
            & (effect[:, o, rival] < 0)
        )
        same = same[np.argsort(effect[same, o, rival], kind="stable")]
        cumulative = np.cumsum(counts[same, o])
        rows = same[: int(np.searchsorted(cumulative, take)) + 1]
        trial = counts.copy()
        left = take
        for row in rows:
            step = min(left, trial[row, o])
            trial[row, o] -= step
            left -= step
        took = int(take - left)
        try:
            if not connected(design.a, design.b, trial, design.k):
                raise FitError("disconnected")
            fitted, fitted_hess = fit(design, trial, start=current_beta)
        except FitError:
            forbidden[rows, o] = True
            continue
        counts, current_beta, current_hess = trial, fitted, fitted_hess
        removed += took
        key = (names[design.a[r]], names[design.b[r]], OUTCOME_NAMES[o])
        taken[key] = taken.get(key, 0) + took
    return VoteDrop(top=names[top], votes_removed=None, share=None, new_top=None, path=tuple(path))


def _removal_effects(design: Design, beta: np.ndarray, hess: np.ndarray, top: int) -> np.ndarray:
    """Linearised change of theta_top - theta_j for every j when one vote of each (row, outcome) goes."""
    k, f = design.k, design.z.shape[1]
    n_params = design.n_params
    contrasts = np.zeros((n_params, k))
    for j in range(k):
        if top > 0:
            contrasts[top - 1, j] += 1.0
        if j > 0:
            contrasts[j - 1, j] -= 1.0
    solved = np.linalg.solve(hess, contrasts)  # H^-1 c (H symmetric)
    # x_r . solved for every row: theta part (with theta_0 = 0) and style part
    padded = np.vstack([np.zeros((1, k)), solved[: k - 1]])
    x_dot = padded[design.a] - padded[design.b] + design.z @ solved[k - 1 : k - 1 + f]
    d = predictor(design, beta)
    out = np.empty((len(design.a), 3, k))
    if design.davidson:
        log_nu = beta[-1]
        log_d = np.logaddexp(np.logaddexp(d / 2, -d / 2), log_nu)
        p_a, p_b, p_t = np.exp(d / 2 - log_d), np.exp(-d / 2 - log_d), np.exp(log_nu - log_d)
        base_d = -(p_a - p_b) / 2
        lam = solved[-1][None, :]
        for o, (own_d, own_l) in enumerate(((0.5, 0.0), (-0.5, 0.0), (0.0, 1.0))):
            g_d = own_d + base_d
            g_l = own_l - p_t
            out[:, o, :] = g_d[:, None] * x_dot + g_l[:, None] * lam
    else:
        p = 1.0 / (1.0 + np.exp(-d))
        for o, y in enumerate((1.0, 0.0, 0.5)):
            out[:, o, :] = (y - p)[:, None] * x_dot
    # beta_new - beta = H^-1 g (H the Hessian of the log-likelihood): the change of c . beta is g . H^-1 c
    return out
