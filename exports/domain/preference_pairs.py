"""Preference pairs (chosen / rejected) from human judgements (DESIGN.md §7).

Everything here works on plain pandas DataFrames, so the same code serves the export service, the
benchmark and the tests.

Input tables
------------
``items``: one row per prompt: ``item_id`` (unique), ``prompt`` (the user turns: a list of
``{"role", "content"}`` messages or plain strings, optionally led by ``system`` messages), and the
optional ``category``, ``language``, ``register``, ``dataset_id``, ``project_id``.

``responses``: ``response_id`` (unique), ``item_id``, ``model_name``, ``messages`` (the assistant turns,
one per user turn, as messages or plain strings).

The evidence, one table per strategy:

- ``ratings`` (``scores``): ``item_id, annotator, response_id, criterion, value``;
- ``picks`` (``best_vs_rest``): ``item_id, annotator, response_id``, where a missing ``response_id``
  means "all bad";
- ``votes`` (``pairwise_majority``): ``item_id, annotator, response_a, response_b, vote`` with ``vote`` in
  ``A`` / ``B`` / ``tie`` / ``both_bad`` (``A`` prefers ``response_a``) and an optional ``turn``.

Conversation convention (TRL conversational preference format)
----------------------------------------------------------------
``prompt`` holds the leading system messages and the first user turn; ``chosen`` and ``rejected`` hold the
whole continuation of that response: its first assistant turn, then every later user turn followed by
the response's answer to it (``[a1, u2, a2, ..., un, an]``). ``prompt + chosen`` is therefore the full
conversation, no turn is lost, and the later user turns are identical in ``chosen`` and ``rejected``. This
is what TRL's chat-template handling expects (it renders ``prompt`` with a generation prompt and takes
``chosen`` as what follows it). Every response must answer every user turn.

Item agreement
--------------
The share of agreeing annotator pairs (pairwise percent agreement, the observed agreement of Krippendorff's
alpha without chance correction), pooled over the item's cells: ``sum_cells sum_v n_v (n_v - 1) /
sum_cells n (n - 1)``, where a cell is one judged target and ``n_v`` counts the annotators who gave value
``v`` there. Cells are (response, criterion) for ratings (exact equality of the Likert value), the item for
best-of-N picks ("all bad" is a value), and the (response pair, turn) for pairwise votes. An item with no
cell judged twice has no agreement (``NaN``) and fails a ``min_agreement`` filter as
``agreement_undefined``.

Item filters apply in the order of ``FILTER_REASONS``; an item is counted under the first reason it fails.
The evidence of filtered items never reaches the strategies, so tie counts cover kept items only.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

STRATEGIES = ("scores", "best_vs_rest", "pairwise_majority")
ORDERINGS = ("weighted", "lexicographic")
VOTE_VALUES = ("A", "B", "tie", "both_bad")
FILTER_REASONS = (
    "category",
    "language",
    "register",
    "no_annotations",
    "min_annotators",
    "agreement_undefined",
    "min_agreement",
)
# Two aggregated scores closer than this are equal: means of small integers summed with float weights
# differ by rounding only.
TIE_TOLERANCE = 1e-9

ITEM_TEXT_COLUMNS = ("category", "language", "register")
ITEM_ID_COLUMNS = ("dataset_id", "project_id")
PAIR_COLUMNS = (
    "item_id",
    "prompt",
    "chosen",
    "rejected",
    "chosen_model",
    "rejected_model",
    "chosen_response_id",
    "rejected_response_id",
    "chosen_score",
    "rejected_score",
    "margin",
)
ITEM_META_COLUMNS = (
    "n_annotators",
    "agreement",
    "category",
    "language",
    "register",
    "dataset_id",
    "project_id",
)

Message = dict[str, str]


def _default_weights() -> dict[str, float]:
    return {"relevance": 1.0, "fluency": 1.0}


@dataclass(frozen=True)
class PairConfig:
    """How ratings, picks or votes become pairs.

    ``weights`` names the criteria used by ``scores`` (and reported beside the other strategies when ratings
    are given) with their weights. ``ordering="lexicographic"`` compares the criterion means in the order of
    ``weights`` (first difference decides; the weights are then unused) and ``margin`` is the difference on
    the deciding criterion. A pair is kept when its margin is above ``TIE_TOLERANCE`` and at least
    ``min_margin``. ``registers`` may contain ``""`` to keep items without a register. ``turn`` restricts
    pairwise votes to one turn; by default votes on every turn (and overall votes) are pooled, one vote each.
    ``scales`` (lowest, highest point per criterion), when given, puts each criterion's mean on 0-1 before
    the weighted sum, so that criteria rated on different scales (1-5 and 1-7) weigh as their weights say;
    ``chosen_score_<criterion>`` stays on the criterion's own scale.
    """

    strategy: Literal["scores", "best_vs_rest", "pairwise_majority"] = "scores"
    weights: Mapping[str, float] = field(default_factory=_default_weights)
    ordering: Literal["weighted", "lexicographic"] = "weighted"
    min_margin: float = 0.0
    min_annotators: int = 1
    min_agreement: float | None = None
    categories: Collection[str] | None = None
    languages: Collection[str] | None = None
    registers: Collection[str] | None = None
    turn: int | None = None
    scales: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}; expected one of {', '.join(STRATEGIES)}")
        if self.ordering not in ORDERINGS:
            raise ValueError(f"unknown ordering {self.ordering!r}; expected one of {', '.join(ORDERINGS)}")
        if not self.weights:
            raise ValueError("weights must name at least one criterion")
        if any(not math.isfinite(float(w)) for w in self.weights.values()):
            raise ValueError("weights must be finite numbers")
        if self.min_margin < 0 or not math.isfinite(self.min_margin):
            raise ValueError("min_margin must be a finite number >= 0")
        if self.min_annotators < 1:
            raise ValueError("min_annotators must be at least 1")
        if self.min_agreement is not None and not 0.0 <= self.min_agreement <= 1.0:
            raise ValueError("min_agreement must lie in [0, 1]")
        for criterion, (low, high) in self.scales.items():
            if not high > low:
                raise ValueError(f"the scale of {criterion!r} must run from a lower to a higher value")

    @property
    def criteria(self) -> list[str]:
        return list(self.weights)

    def as_dict(self) -> dict[str, Any]:
        """Plain, JSON-friendly parameters for the dataset card and the Export row."""
        out = asdict(self)
        out["weights"] = {str(k): float(v) for k, v in self.weights.items()}
        for key in ("categories", "languages", "registers"):
            if out[key] is not None:
                out[key] = sorted(str(v) for v in out[key])
        return out


@dataclass(frozen=True)
class PairCounts:
    """What went in, what came out and why the difference.

    Units differ by strategy. ``scores``: ``candidate_pairs``, ``ties_dropped`` and
    ``below_margin_dropped`` count response pairs; ``unscored_responses`` counts responses of kept items
    lacking a rating on some weighted criterion (they form no pair). ``best_vs_rest``: the same, except that
    ``ties_dropped`` counts items whose most picks are shared (such an item yields no pair at all);
    ``all_bad_picks`` counts "all bad" pick rows and ``all_bad_dropped`` the items where "all bad" got the
    most picks. ``pairwise_majority``: the counts are (item, response pair) vote groups, and
    ``both_bad_dropped`` counts the groups whose most frequent vote was both bad. Only kept items count.
    """

    strategy: str
    items_in: int
    items_kept: int
    filtered_items: dict[str, int]
    candidate_pairs: int
    ties_dropped: int
    below_margin_dropped: int
    both_bad_dropped: int
    all_bad_picks: int
    all_bad_dropped: int
    unscored_responses: int
    items_out: int
    pairs_out: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PreferenceResult:
    pairs: pd.DataFrame
    counts: PairCounts
    config: PairConfig


def build_preference_pairs(
    items: pd.DataFrame,
    responses: pd.DataFrame,
    *,
    config: PairConfig | None = None,
    ratings: pd.DataFrame | None = None,
    picks: pd.DataFrame | None = None,
    votes: pd.DataFrame | None = None,
    vote_weights: Mapping[Any, float] | None = None,
) -> PreferenceResult:
    """Turn one project's judgements into preference pairs with ``config.strategy``.

    The returned ``pairs`` has the ``PAIR_COLUMNS``, then ``chosen_score_<criterion>`` /
    ``rejected_score_<criterion>`` (means over annotators, when ratings are given), then
    ``ITEM_META_COLUMNS``. ``chosen_score`` / ``rejected_score`` are the weighted sums of the criterion means
    (``scores``), the numbers of best-of-N picks (``best_vs_rest``) or of votes for each side
    (``pairwise_majority``); ``margin`` is their difference (see ``PairConfig`` for the lexicographic case).
    ``n_annotators`` counts the distinct annotators of the item (of the vote group for pairwise).

    ``vote_weights`` (``pairwise_majority`` only), annotator -> weight >= 0: each vote counts with its
    annotator's weight instead of 1, so the outcome with the largest summed weight wins and the scores are
    summed weights. Every voting annotator must have a weight. Agreement and the item filters still count
    annotators, not weights.
    """
    config = config or PairConfig()
    if vote_weights is not None:
        if config.strategy != "pairwise_majority":
            raise ValueError("vote_weights apply to the pairwise_majority strategy only")
        bad = {a: w for a, w in vote_weights.items() if not (math.isfinite(float(w)) and float(w) >= 0)}
        if bad:
            raise ValueError(f"vote weights must be finite numbers >= 0: {bad}")
    items = _prepare_items(items)
    responses = _prepare_responses(responses, items)
    needed = {
        "scores": ("ratings", ratings),
        "best_vs_rest": ("picks", picks),
        "pairwise_majority": ("votes", votes),
    }
    name, evidence = needed[config.strategy]
    if evidence is None:
        raise ValueError(f"strategy {config.strategy!r} needs {name}")

    if ratings is not None:
        ratings = _prepare_ratings(ratings, responses, config.criteria)
    if picks is not None:
        picks = _prepare_picks(picks, responses)
    if votes is not None:
        votes = _prepare_votes(votes, responses, config.turn)

    if config.strategy == "scores":
        cells = ratings.assign(_value=ratings["value"])
        cell_keys = ["item_id", "_pos", "criterion"]
    elif config.strategy == "best_vs_rest":
        cells = picks.assign(_value=picks["_pos"])
        cell_keys = ["item_id"]
    else:
        cells = votes.assign(_value=votes["_outcome"])
        cell_keys = ["item_id", "_lo", "_hi", "_turn"]
    n_annotators = cells.groupby("item_id", sort=False)["annotator"].nunique()
    agreement = item_agreement(cells, cell_keys=cell_keys, value_col="_value")

    kept, filtered = _filter_items(items, n_annotators, agreement, config)
    kept_ids = items.index[kept]

    def keep(frame: pd.DataFrame | None) -> pd.DataFrame | None:
        return None if frame is None else frame[frame["item_id"].isin(kept_ids)]

    ratings, picks, votes = keep(ratings), keep(picks), keep(votes)
    kept_responses = responses[responses["item_id"].isin(kept_ids)]
    means = _criterion_means(ratings, config.criteria) if ratings is not None else None

    extra: dict[str, int] = {}
    if config.strategy == "scores":
        core, extra = _pairs_from_scores(kept_responses, means, config)
    elif config.strategy == "best_vs_rest":
        core, extra = _pairs_from_picks(kept_responses, picks, config)
    else:
        core, extra = _pairs_from_votes(votes, config, vote_weights)

    if config.strategy != "pairwise_majority":
        core["n_annotators"] = core["item_id"].map(n_annotators).to_numpy()
    pairs = _assemble(core, items, responses, means, agreement, config.criteria)
    counts = PairCounts(
        strategy=config.strategy,
        items_in=len(items),
        items_kept=int(kept.sum()),
        filtered_items=filtered,
        candidate_pairs=extra.get("candidate_pairs", 0),
        ties_dropped=extra.get("ties_dropped", 0),
        below_margin_dropped=extra.get("below_margin_dropped", 0),
        both_bad_dropped=extra.get("both_bad_dropped", 0),
        all_bad_picks=int(picks["_all_bad"].sum()) if config.strategy == "best_vs_rest" else 0,
        all_bad_dropped=extra.get("all_bad_dropped", 0),
        unscored_responses=extra.get("unscored_responses", 0),
        items_out=int(pairs["item_id"].nunique()),
        pairs_out=len(pairs),
    )
    return PreferenceResult(pairs=pairs, counts=counts, config=config)


def item_agreement(cells: pd.DataFrame, *, cell_keys: Sequence[str], value_col: str) -> pd.Series:
    """Pairwise percent agreement per item, pooled over its cells (see the module docstring).

    ``cell_keys`` must start with ``item_id``; returns a float Series indexed by ``item_id``, ``NaN`` where
    no cell has two judgements.
    """
    keys = list(cell_keys)
    if keys[0] != "item_id":
        raise ValueError("cell_keys must start with item_id")
    per_value = cells.groupby([*keys, value_col], sort=False, dropna=False).size()
    agreeing = (per_value * (per_value - 1)).groupby(level="item_id", sort=False).sum()
    per_cell = per_value.groupby(level=keys, sort=False, dropna=False).sum()
    possible = (per_cell * (per_cell - 1)).groupby(level="item_id", sort=False).sum()
    share = agreeing.reindex(possible.index).astype(float) / possible.astype(float)
    return share.where(possible > 0)


def split_conversation(prompt: Any, assistant_turns: Any) -> tuple[list[Message], list[Message]]:
    """Split one conversation into TRL's ``prompt`` and one response's continuation.

    ``prompt`` is a list of user messages (optionally led by system messages) or a single string;
    ``assistant_turns`` has one assistant message per user turn. See the module docstring.
    """
    lead, users = _prompt_parts(prompt)
    return lead + [users[0]], _continuation(users, assistant_turns)


def _prompt_parts(prompt: Any) -> tuple[list[Message], list[Message]]:
    messages = [_as_message(m, "user") for m in _as_list(prompt)]
    lead: list[Message] = []
    users: list[Message] = []
    for message in messages:
        if message["role"] == "system" and not users:
            lead.append(message)
        elif message["role"] == "user":
            users.append(message)
        else:
            raise ValueError(
                f"prompt messages must be user turns led by system messages, got {message['role']!r}"
            )
    if not users:
        raise ValueError("prompt has no user turn")
    return lead, users


def _continuation(users: list[Message], assistant_turns: Any) -> list[Message]:
    # Once per response, hundreds of thousands of times in a large export: plain-text turns (the usual
    # case) become messages inline, and a single turn is the whole continuation.
    turns = assistant_turns if type(assistant_turns) is list else _as_list(assistant_turns)
    answers = [
        {"role": "assistant", "content": m} if type(m) is str else _as_message(m, "assistant") for m in turns
    ]
    for answer in answers:
        if answer["role"] != "assistant":
            raise ValueError("response messages must all be assistant turns")
    if len(answers) != len(users):
        raise ValueError(f"{len(users)} user turn(s) but {len(answers)} assistant turn(s)")
    if len(answers) == 1:
        return answers
    out = [answers[0]]
    for user, answer in zip(users[1:], answers[1:], strict=True):
        out.append(user)
        out.append(answer)
    return out


def _as_list(value: Any) -> list[Any]:
    if type(value) is list:
        return value
    if isinstance(value, (str, Mapping)):
        return [value]
    if value is None:
        return []
    return list(value)


def _as_message(value: Any, default_role: str) -> Message:
    if type(value) is str:
        return {"role": default_role, "content": value}
    if type(value) is dict or isinstance(value, Mapping):
        content = value.get("content")
        if content is None:
            raise ValueError("a message has no content")
        return {"role": str(value.get("role") or default_role), "content": str(content)}
    raise ValueError(f"a message must be a string or a {{role, content}} mapping, got {type(value).__name__}")


def _require(frame: pd.DataFrame, columns: Sequence[str], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} lacks column(s): {', '.join(missing)}")


def _prepare_items(items: pd.DataFrame) -> pd.DataFrame:
    _require(items, ("item_id", "prompt"), "items")
    if items["item_id"].duplicated().any():
        raise ValueError("items has duplicate item_id values")
    out = pd.DataFrame(
        {"prompt": items["prompt"].to_numpy()}, index=pd.Index(items["item_id"], name="item_id")
    )
    for column in ITEM_TEXT_COLUMNS:
        values = items[column] if column in items.columns else pd.Series([""] * len(items), index=items.index)
        out[column] = values.astype(object).where(values.notna(), "").astype(str).to_numpy()
    for column in ITEM_ID_COLUMNS:
        out[column] = items[column].to_numpy() if column in items.columns else None
    out["_item_pos"] = np.arange(len(out))
    return out


def _prepare_responses(responses: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    _require(responses, ("response_id", "item_id", "model_name", "messages"), "responses")
    if responses["response_id"].duplicated().any():
        raise ValueError("responses has duplicate response_id values")
    unknown = ~responses["item_id"].isin(items.index)
    if unknown.any():
        raise ValueError(f"{int(unknown.sum())} response(s) belong to item ids not in items")
    out = responses[["response_id", "item_id", "model_name", "messages"]].reset_index(drop=True)
    out["_pos"] = np.arange(len(out))
    return out


def _positions(ids: pd.Series, item_ids: pd.Series, responses: pd.DataFrame, what: str) -> np.ndarray:
    """Map response ids to row positions in ``responses``, checking they belong to the given items."""
    index = pd.Index(responses["response_id"])
    pos = index.get_indexer(ids)
    if (pos < 0).any():
        raise ValueError(f"{what}: {int((pos < 0).sum())} row(s) name a response_id not in responses")
    owner = responses["item_id"].to_numpy()[pos]
    if (owner != item_ids.to_numpy()).any():
        raise ValueError(
            f"{what}: {int((owner != item_ids.to_numpy()).sum())} row(s) pair a response with another item"
        )
    return pos


def _prepare_ratings(ratings: pd.DataFrame, responses: pd.DataFrame, criteria: list[str]) -> pd.DataFrame:
    _require(ratings, ("item_id", "annotator", "response_id", "criterion", "value"), "ratings")
    ratings = ratings[ratings["criterion"].isin(criteria)]
    values = pd.to_numeric(ratings["value"], errors="raise").astype(float)
    if values.isna().any():
        raise ValueError("ratings has missing values")
    pos = _positions(ratings["response_id"], ratings["item_id"], responses, "ratings")
    out = pd.DataFrame(
        {
            "item_id": ratings["item_id"].to_numpy(),
            "annotator": ratings["annotator"].to_numpy(),
            "_pos": pos,
            "criterion": ratings["criterion"].astype(str).to_numpy(),
            "value": values.to_numpy(),
        }
    )
    if out.duplicated(["annotator", "_pos", "criterion"]).any():
        raise ValueError("ratings has more than one value per (annotator, response, criterion)")
    return out


def _prepare_picks(picks: pd.DataFrame, responses: pd.DataFrame) -> pd.DataFrame:
    _require(picks, ("item_id", "annotator", "response_id"), "picks")
    if picks.duplicated(["item_id", "annotator"]).any():
        raise ValueError("picks has more than one pick per (item, annotator)")
    all_bad = picks["response_id"].isna().to_numpy()
    pos = np.full(len(picks), -1, dtype=np.int64)
    named = picks[~all_bad]
    pos[~all_bad] = _positions(named["response_id"], named["item_id"], responses, "picks")
    return pd.DataFrame(
        {
            "item_id": picks["item_id"].to_numpy(),
            "annotator": picks["annotator"].to_numpy(),
            "_pos": pos,
            "_all_bad": all_bad,
        }
    )


def _prepare_votes(votes: pd.DataFrame, responses: pd.DataFrame, turn: int | None) -> pd.DataFrame:
    _require(votes, ("item_id", "annotator", "response_a", "response_b", "vote"), "votes")
    has_turn = "turn" in votes.columns
    if turn is not None:
        if not has_turn:
            raise ValueError("votes has no turn column to select a turn from")
        votes = votes[votes["turn"] == turn]
    bad = ~votes["vote"].isin(VOTE_VALUES)
    if bad.any():
        raise ValueError(f"votes: {int(bad.sum())} vote(s) not in {', '.join(VOTE_VALUES)}")
    pos_a = _positions(votes["response_a"], votes["item_id"], responses, "votes")
    pos_b = _positions(votes["response_b"], votes["item_id"], responses, "votes")
    if (pos_a == pos_b).any():
        raise ValueError("votes: a response is compared with itself")
    turns = votes["turn"] if has_turn else pd.Series(-1, index=votes.index)
    out = pd.DataFrame(
        {
            "item_id": votes["item_id"].to_numpy(),
            "annotator": votes["annotator"].to_numpy(),
            "_lo": np.minimum(pos_a, pos_b),
            "_hi": np.maximum(pos_a, pos_b),
            "_turn": turns.fillna(-1).astype(np.int64).to_numpy(),
        }
    )
    if out.duplicated(["annotator", "item_id", "_lo", "_hi", "_turn"]).any():
        raise ValueError("votes has more than one vote per (annotator, pair, turn)")
    vote = votes["vote"].to_numpy()
    a_is_lo = pos_a < pos_b
    out["_outcome"] = np.select(
        [vote == "tie", vote == "both_bad", (vote == "A") == a_is_lo],
        ["tie", "both_bad", "lo"],
        default="hi",
    )
    return out


def _filter_items(
    items: pd.DataFrame, n_annotators: pd.Series, agreement: pd.Series, config: PairConfig
) -> tuple[np.ndarray, dict[str, int]]:
    """Boolean mask of kept items and the number filtered out per reason (first failing reason)."""
    checks: list[tuple[str, np.ndarray]] = []
    for reason, column, allowed in (
        ("category", "category", config.categories),
        ("language", "language", config.languages),
        ("register", "register", config.registers),
    ):
        if allowed is not None:
            checks.append((reason, items[column].isin([str(v) for v in allowed]).to_numpy()))
    counts = n_annotators.reindex(items.index).fillna(0).to_numpy()
    checks.append(("no_annotations", counts > 0))
    checks.append(("min_annotators", counts >= config.min_annotators))
    if config.min_agreement is not None:
        share = agreement.reindex(items.index).to_numpy(dtype=float)
        checks.append(("agreement_undefined", ~np.isnan(share)))
        checks.append(
            ("min_agreement", np.nan_to_num(share, nan=-1.0) >= config.min_agreement - TIE_TOLERANCE)
        )
    kept = np.ones(len(items), dtype=bool)
    filtered = dict.fromkeys(FILTER_REASONS, 0)
    for reason, passes in checks:
        failing = kept & ~passes
        filtered[reason] = int(failing.sum())
        kept &= passes
    return kept, filtered


def _criterion_means(ratings: pd.DataFrame, criteria: list[str]) -> pd.DataFrame:
    """Mean value over annotators per response (row position) and criterion, one column per criterion."""
    means = ratings.groupby(["_pos", "criterion"], sort=False)["value"].mean().unstack("criterion")
    return means.reindex(columns=criteria)


def _margin_filter(margin: np.ndarray, config: PairConfig) -> tuple[np.ndarray, dict[str, int]]:
    tie = margin <= TIE_TOLERANCE
    below = ~tie & (margin < config.min_margin - TIE_TOLERANCE)
    return ~tie & ~below, {"ties_dropped": int(tie.sum()), "below_margin_dropped": int(below.sum())}


def _pairs_from_scores(
    responses: pd.DataFrame, means: pd.DataFrame, config: PairConfig
) -> tuple[pd.DataFrame, dict[str, int]]:
    criteria = config.criteria
    scored = responses[["item_id", "_pos"]].join(means, on="_pos")
    complete = scored[criteria].notna().all(axis=1)
    unscored = int((~complete).sum())
    scored = scored[complete]
    weights = np.array([float(config.weights[c]) for c in criteria])
    values = scored[criteria].to_numpy(dtype=float)
    if config.scales:
        low = np.array([float(config.scales.get(c, (0.0, 1.0))[0]) for c in criteria])
        high = np.array([float(config.scales.get(c, (0.0, 1.0))[1]) for c in criteria])
        values = (values - low) / (high - low)
    scored = scored.assign(_score=values @ weights)
    both = scored.merge(scored, on="item_id", suffixes=("_a", "_b"))
    both = both[both["_pos_a"] < both["_pos_b"]]
    diff = (both["_score_a"] - both["_score_b"]).to_numpy()
    if config.ordering == "lexicographic":
        decided = np.zeros(len(both))
        for criterion in criteria:
            step = (both[f"{criterion}_a"] - both[f"{criterion}_b"]).to_numpy()
            decided = np.where(np.abs(decided) > TIE_TOLERANCE, decided, step)
        diff = decided
    keep, counts = _margin_filter(np.abs(diff), config)
    both, diff = both[keep], diff[keep]
    a_wins = diff > 0
    pos_a, pos_b = both["_pos_a"].to_numpy(), both["_pos_b"].to_numpy()
    score_a, score_b = both["_score_a"].to_numpy(), both["_score_b"].to_numpy()
    core = pd.DataFrame(
        {
            "item_id": both["item_id"].to_numpy(),
            "_chosen": np.where(a_wins, pos_a, pos_b),
            "_rejected": np.where(a_wins, pos_b, pos_a),
            "chosen_score": np.where(a_wins, score_a, score_b),
            "rejected_score": np.where(a_wins, score_b, score_a),
            "margin": np.abs(diff),
        }
    )
    counts.update(candidate_pairs=int(keep.size), unscored_responses=unscored)
    return core, counts


def _pairs_from_picks(
    responses: pd.DataFrame, picks: pd.DataFrame, config: PairConfig
) -> tuple[pd.DataFrame, dict[str, int]]:
    named = picks[~picks["_all_bad"]]
    per_response = named.groupby(["item_id", "_pos"], sort=False).size()
    all_bad = picks[picks["_all_bad"]].groupby("item_id", sort=False).size()
    item_ids = pd.Index(picks["item_id"].unique())
    top = per_response.groupby(level="item_id", sort=False).max().reindex(item_ids, fill_value=0)
    top_of_item = top.reindex(per_response.index.get_level_values("item_id")).to_numpy()
    at_top = per_response[per_response.to_numpy() == top_of_item]
    n_top = at_top.groupby(level="item_id", sort=False).size().reindex(item_ids, fill_value=0)
    bad = all_bad.reindex(item_ids, fill_value=0)
    all_bad_wins = bad > top
    tied = ~all_bad_wins & ((n_top > 1) | (bad == top))
    winners = item_ids[~all_bad_wins & ~tied]

    chosen = at_top.reset_index()[["item_id", "_pos"]]
    chosen = chosen[chosen["item_id"].isin(winners)].rename(columns={"_pos": "_chosen"})
    rest = responses[["item_id", "_pos"]].merge(chosen, on="item_id")
    rest = rest[rest["_pos"] != rest["_chosen"]].rename(columns={"_pos": "_rejected"})
    picked = per_response.rename("_picks")
    rest = rest.join(picked, on=["item_id", "_rejected"])
    rest_picks = rest["_picks"].fillna(0).to_numpy()
    chosen_picks = top.reindex(rest["item_id"]).to_numpy()
    margin = (chosen_picks - rest_picks).astype(float)
    keep, counts = _margin_filter(margin, config)
    core = pd.DataFrame(
        {
            "item_id": rest["item_id"].to_numpy()[keep],
            "_chosen": rest["_chosen"].to_numpy()[keep],
            "_rejected": rest["_rejected"].to_numpy()[keep],
            "chosen_score": chosen_picks[keep].astype(float),
            "rejected_score": rest_picks[keep].astype(float),
            "margin": margin[keep],
        }
    )
    counts["ties_dropped"] += int(tied.sum())
    counts.update(candidate_pairs=int(keep.size), all_bad_dropped=int(all_bad_wins.sum()))
    return core, counts


def _pairs_from_votes(
    votes: pd.DataFrame, config: PairConfig, weights: Mapping[Any, float] | None = None
) -> tuple[pd.DataFrame, dict[str, int]]:
    keys = ["item_id", "_lo", "_hi"]
    outcomes = ["lo", "hi", "tie", "both_bad"]
    if weights is None:
        tally = votes.groupby([*keys, "_outcome"], sort=False).size().unstack("_outcome", fill_value=0)
    else:
        weight = votes["annotator"].map(weights)
        missing = votes.loc[weight.isna(), "annotator"].unique()
        if len(missing):
            raise ValueError(f"vote_weights has no weight for annotator(s) {', '.join(map(str, missing))}")
        tally = (
            votes.assign(_weight=weight.astype(float))
            .groupby([*keys, "_outcome"], sort=False)["_weight"]
            .sum()
            .unstack("_outcome", fill_value=0.0)
        )
    tally = tally.reindex(columns=outcomes, fill_value=0)
    n_annotators = votes.groupby(keys, sort=False)["annotator"].nunique().reindex(tally.index)
    counts_matrix = tally.to_numpy()
    top = counts_matrix.max(axis=1)
    # Summed weights are floats: outcomes within TIE_TOLERANCE of the top share it.
    shared = (counts_matrix >= top[:, None] - TIE_TOLERANCE).sum(axis=1) > 1
    winner = counts_matrix.argmax(axis=1)
    tie_wins = ~shared & (winner == outcomes.index("tie"))
    both_bad_wins = ~shared & (winner == outcomes.index("both_bad"))
    decided = ~shared & (winner <= 1)
    lo_votes, hi_votes = counts_matrix[:, 0].astype(float), counts_matrix[:, 1].astype(float)
    margin = np.abs(lo_votes - hi_votes)
    keep_margin, counts = _margin_filter(np.where(decided, margin, np.inf), config)
    keep = decided & keep_margin
    lo_won = winner == 0
    index = tally.index
    lo = index.get_level_values("_lo").to_numpy()
    hi = index.get_level_values("_hi").to_numpy()
    core = pd.DataFrame(
        {
            "item_id": index.get_level_values("item_id").to_numpy()[keep],
            "_chosen": np.where(lo_won, lo, hi)[keep],
            "_rejected": np.where(lo_won, hi, lo)[keep],
            "chosen_score": np.where(lo_won, lo_votes, hi_votes)[keep],
            "rejected_score": np.where(lo_won, hi_votes, lo_votes)[keep],
            "margin": margin[keep],
            "n_annotators": n_annotators.to_numpy()[keep],
        }
    )
    counts = {
        "candidate_pairs": len(tally),
        "ties_dropped": int((shared | tie_wins).sum()),
        "both_bad_dropped": int(both_bad_wins.sum()),
        "below_margin_dropped": counts["below_margin_dropped"],
    }
    return core, counts


def _assemble(
    core: pd.DataFrame,
    items: pd.DataFrame,
    responses: pd.DataFrame,
    means: pd.DataFrame | None,
    agreement: pd.Series,
    criteria: list[str],
) -> pd.DataFrame:
    """Attach messages, model names and item metadata to (item, chosen, rejected) rows, in a stable order."""
    item_rows = items.index.get_indexer(core["item_id"])
    order = np.lexsort((core["_rejected"].to_numpy(), core["_chosen"].to_numpy(), item_rows))
    core = core.iloc[order].reset_index(drop=True)
    item_rows = item_rows[order]
    chosen, rejected = core["_chosen"].to_numpy(), core["_rejected"].to_numpy()

    needed = np.unique(np.concatenate([chosen, rejected]))
    prompts, continuations = _conversations(items, responses, needed)
    models = responses["model_name"].to_numpy()
    ids = responses["response_id"].to_numpy()
    out = pd.DataFrame(
        {
            "item_id": core["item_id"].to_numpy(),
            "prompt": prompts[item_rows],
            "chosen": continuations[chosen],
            "rejected": continuations[rejected],
            "chosen_model": models[chosen],
            "rejected_model": models[rejected],
            "chosen_response_id": ids[chosen],
            "rejected_response_id": ids[rejected],
            "chosen_score": core["chosen_score"].to_numpy(dtype=float),
            "rejected_score": core["rejected_score"].to_numpy(dtype=float),
            "margin": core["margin"].to_numpy(dtype=float),
        }
    )
    if means is not None:
        for criterion in criteria:
            column = means[criterion]
            out[f"chosen_score_{criterion}"] = column.reindex(chosen).to_numpy(dtype=float)
            out[f"rejected_score_{criterion}"] = column.reindex(rejected).to_numpy(dtype=float)
    out["n_annotators"] = core["n_annotators"].to_numpy(dtype=np.int64)
    out["agreement"] = agreement.reindex(core["item_id"]).to_numpy(dtype=float)
    for column in (*ITEM_TEXT_COLUMNS, *ITEM_ID_COLUMNS):
        out[column] = items[column].to_numpy()[item_rows]
    return out


def _conversations(
    items: pd.DataFrame, responses: pd.DataFrame, needed: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """TRL prompt per item and continuation per response (row positions in ``needed`` only).

    Rows share one message list per item and per response rather than copying it for every pair.
    """
    item_of = responses["item_id"].to_numpy()[needed]
    item_rows = items.index.get_indexer(item_of)
    prompt_values = items["prompt"].to_numpy()
    messages = responses["messages"].to_numpy().tolist()
    prompts = np.empty(len(items), dtype=object)
    users_by_row: dict[int, list[Message]] = {}
    for row in np.unique(item_rows):
        try:
            lead, users = _prompt_parts(prompt_values[row])
        except ValueError as exc:
            raise ValueError(f"item {items.index[row]!r}: {exc}") from None
        prompts[row] = lead + [users[0]]
        users_by_row[int(row)] = users
    continuations = np.empty(len(responses), dtype=object)
    ids = responses["response_id"].to_numpy()
    for pos, row in zip(needed.tolist(), item_rows.tolist(), strict=True):
        try:
            continuations[pos] = _continuation(users_by_row[row], messages[pos])
        except ValueError as exc:
            raise ValueError(f"response {ids[pos]!r}: {exc}") from None
    return prompts, continuations
