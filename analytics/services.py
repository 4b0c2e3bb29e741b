"""Agreement reports of an annotation project: computed from DataFrames, cached until the data changes.

A report is one JSON-ready dict with a section per dashboard panel; each section holds named tables
(lists of flat rows, so every table is also a CSV) and a note when the section does not apply.

Caching. Reports live in Django's cache (Redis in production, a file cache embedded, shared by the web
server and the worker), under a key made of the project, the measurement level and the project's
:func:`~analytics.selectors.data_version`. A new, edited or returned answer or a new judgment
changes the version, so the next visit misses the cache and recomputes; nothing has to be invalidated
by hand, and old entries simply expire. While a report is computed in the background a status entry
under the same key carries the progress the page shows; small projects are computed in the request.
We chose the cache over a table because a report is derived data that can always be rebuilt, and the
cache needs no migration in an app whose models belong to the run machinery.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.utils.translation import gettext_noop

from analytics import selectors
from analytics.domain import agreement as ag
from analytics.domain import judge_agreement as ja
from analytics.domain.bradley_terry import bradley_terry
from analytics.domain.leaderboard import Leaderboard, LeaderboardOptions, leaderboard_fit
from annotation.domain.submission import ALL_BAD
from annotation.models import Project
from annotation.selectors import conflict_matrix, gold_scores
from datasets_app.domain import jobs as job_rules
from datasets_app.jobs import (
    JobCancelled,
    JobRefused,
    heartbeat_stopped_at,
    heartbeat_timeout,
    heartbeating,
    max_attempts,
    task_send_on_commit,
)
from evaluation.domain import language_tables as lt
from evaluation.domain.judge_templates import SINGLE_GRADE

# pandas takes long to import: the functions that use it import it, so start-up (URL loading, a
# worker's boot) does not.
if TYPE_CHECKING:
    import pandas as pd

REPORT_FORMAT = 1
DEFAULT_LEVEL = "ordinal"
# Projects with a dashboard: rating jobs, and question answering (its answer-conflict matrix).
DASHBOARD_KINDS = ("likert", "best_of_n", "pairwise", "mcq_answer")
BOOTSTRAP_DRAWS = 1000
BT_DRAWS = 200
TIE_THRESHOLD = 1.0
TREND_POINTS = (0.2, 0.4, 0.6, 0.8, 1.0)
REPORT_TIMEOUT = 14 * 24 * 3600
# A queued or running status outlives the task's hard time limit (``evaluation.agreement_report``), so a
# report whose worker died (its heartbeat older than JOB_HEARTBEAT_TIMEOUT_S, or its attempt older than the
# time limit) is found stale on a later visit and sent again (or failed after its attempts); an expired
# status is queued again too.
TASK_TIME_LIMIT_S = 21 * 60
STATUS_TIMEOUT = 3 * TASK_TIME_LIMIT_S
STALE_AFTER_S = TASK_TIME_LIMIT_S + 60
FAILED_TIMEOUT = 60
CANCELLED_TIMEOUT = 15 * 60

SECTIONS: dict[str, str] = {
    "alpha": gettext_noop("Agreement per criterion"),
    "breakdowns": gettext_noop("Agreement by category, language, register and group"),
    "between_groups": gettext_noop("Agreement between the two groups"),
    "trend": gettext_noop("Agreement as answers come in"),
    "annotators": gettext_noop("Annotators: leave-one-out"),
    "distributions": gettext_noop("Rating distributions"),
    "best_of_n": gettext_noop("Best-of-N picks"),
    "pairwise": gettext_noop("Pairwise votes"),
    "bradley_terry": gettext_noop("Bradley-Terry ratings"),
    "judges": gettext_noop("Judge leaderboard"),
    "conflicts": gettext_noop("Answer conflicts (creator x answerer)"),
}
# Tables with a column per language (named by their language codes) and an ``avg`` over them.
LANGUAGE_COLUMN_TABLES = frozenset({"accuracy_by_language", "grades_by_language"})
# Question-answering projects get the conflict matrix only: they have no ratings, picks or votes.
QUESTION_KIND = "mcq_answer"

Progress = Callable[[int, str], None]


def inline_limit() -> int:
    """Answer values up to which a report is computed in the request instead of on a worker."""
    return int(getattr(settings, "ANALYTICS_INLINE_MAX_VALUES", 3000))


# -- plain values ----------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) or math.isinf(value) else float(value)
    import pandas as pd  # here, after the common cases: this runs once per cell

    if isinstance(value, pd.Timestamp | datetime):
        return value.isoformat()
    if value is pd.NA or value is pd.NaT:
        return None
    return str(value)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _rate(agreement: ja.AgreementRate, prefix: str = "") -> dict[str, Any]:
    return {
        f"{prefix}with_ties": agreement.with_ties,
        f"{prefix}n_with_ties": agreement.n_with_ties,
        f"{prefix}without_ties": agreement.without_ties,
        f"{prefix}n_without_ties": agreement.n_without_ties,
    }


def _section(tables: dict[str, list[dict[str, Any]]] | None = None, note: str | None = None, **extra) -> dict:
    return {"tables": tables or {}, "note": note, **extra}


# -- measures: everything alpha is computed on -----------------------------------------------------------


def measures(frame: pd.DataFrame, level: str, *, compact: bool = False) -> pd.DataFrame:
    """Long rows (unit, coder, value, criterion, level, ...) of every agreement measure of the project.

    Likert ratings: one unit per rated response, at ``level`` for criteria rated on points and nominal
    for criteria rated on named categories (their answers are in ``choice``): the metric follows the
    criterion's scale. Best picks: one unit per task, the value is the canonical response id (``all_bad``
    kept as its own category), nominal, so the position a response was shown at never matters. Pairwise
    votes: one unit per task and turn, nominal.

    ``compact`` (alpha alone, :func:`project_alpha`): units are integers, one per ``task:response`` (or
    ``task``, ``task:turn``) text, rather than the text, and no breakdown dimension is kept. The rows,
    their order, the coders' partition and the values are the same, so alpha and its bootstrap interval
    are too; on a million ratings the text keys cost seconds.
    """
    import pandas as pd

    dims = [] if compact else ["group", "category", "language", "register", "submitted_at", "task"]
    parts = []
    rated = _rows_where(frame, frame["value"].notna())
    if len(rated):
        parts.append(
            rated.assign(
                unit=_unit(rated["task"], rated["response"], "", compact),
                value=rated["value"].astype(float),
                level=level,
            )
        )
    named = _category_ratings(frame)
    if len(named):
        parts.append(
            named.assign(
                unit=_unit(named["task"], named["response"], "", compact),
                value=named["choice"],
                level="nominal",
            )
        )
    best = frame.loc[frame["criterion"] == "best"]
    if len(best):
        picked = _id_text(best["response"], ALL_BAD)
        unit = best["task"] if compact else best["task"].astype(str)
        parts.append(best.assign(unit=unit, value=picked, level="nominal"))
    votes = frame.loc[frame["criterion"] == "vote"]
    if len(votes):
        unit = _unit(votes["task"], votes["turn"], "all", compact)
        parts.append(votes.assign(unit=unit, value=votes["choice"], level="nominal"))
    columns = ["unit", "coder", "value", "criterion", "level", *dims]
    if not parts:
        return pd.DataFrame(columns=columns)
    out = pd.concat([p[columns] for p in parts], ignore_index=True)
    if not compact:
        out["register"] = out["register"].fillna("")
    return out


def _unit(task: pd.Series, second: pd.Series, missing: str, compact: bool) -> pd.Series:
    """A unit key per row: ``task:second`` text (``missing`` for a null second part), or with ``compact``
    an integer that two rows share exactly when their texts are equal."""
    if not compact:
        return task.astype(str) + ":" + _id_text(second, missing)
    import pandas as pd

    # Ids and turns are never negative: -1 stands for null, as ``missing`` does in the text.
    first = task.to_numpy(dtype=np.int64)
    other = second.fillna(-1).to_numpy(dtype=np.int64)
    span = int(other.max()) + 2 if len(other) else 1
    if len(first) and int(first.max()) < (2**62) // span:
        keys = first * span + (other + 1)
    else:
        keys, _ = pd.MultiIndex.from_arrays([first, other]).factorize()
    return pd.Series(keys, index=task.index)


def _rows_where(frame: pd.DataFrame, mask: pd.Series) -> pd.DataFrame:
    """``frame.loc[mask]``, without the copy of every column when every row is kept (a project of Likert
    ratings only: a million rows that filtering would copy whole)."""
    return frame if bool(mask.all()) else frame.loc[mask]


def _category_ratings(frame: pd.DataFrame) -> pd.DataFrame:
    """Ratings of criteria whose scale is named categories: a response rated, the category in ``choice``."""
    return frame.loc[
        frame["value"].isna()
        & frame["response"].notna()
        & (frame["choice"].fillna("") != "")
        & ~frame["criterion"].isin(("best", "vote"))
    ]


def _id_text(values: pd.Series, missing: str) -> pd.Series:
    """Integer ids (or turns) as text, ``missing`` for nulls: keys that merge and group reliably."""
    import pandas as pd

    present = values.notna()
    out = pd.Series(missing, index=values.index, dtype=object)
    if present.any():
        out[present] = values[present].astype("int64").astype(str)
    return out


def _votes(frame: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    votes = frame.loc[frame["criterion"] == "vote"].copy()
    if votes.empty:
        return votes.assign(item=pd.Series(dtype=str))
    turn = _id_text(votes["turn"], "all")
    votes["item"] = votes["task"].astype(str) + ":" + turn
    return votes


def _dimensions(data: pd.DataFrame) -> list[str]:
    """Breakdown dimensions with at least one non-empty value (register is often absent)."""
    found = []
    for name in ("category", "language", "register", "group"):
        if name in data.columns and (data[name].astype(str) != "").any():
            found.append(name)
    return found


# -- sections ----------------------------------------------------------------------------------------


def alpha_section(data: pd.DataFrame, *, draws: int, seed: int, alpha_only: bool = False) -> dict:
    """Alpha per criterion with its bootstrap interval, beside percent agreement, Gwet's AC1 and the kappas
    (``None`` with ``alpha_only``: the figures a dataset card prints do not need them)."""
    rows = []
    for criterion, part in data.groupby("criterion", sort=False):
        level = part["level"].iloc[0]
        prepared = ag.Reliability.from_long(part, level)
        result = prepared.alpha()
        boot = prepared.bootstrap(draws=draws, seed=seed, alpha_min=(0.667, 0.8)) if draws else None
        ac1 = None if alpha_only else ag.gwet_ac1(part).value
        kappa = None if alpha_only else ag.kappas(part)
        rows.append(
            {
                "criterion": criterion,
                "level": level,
                "alpha": result.alpha,
                "ci_low": boot.ci[0] if boot and boot.ci else None,
                "ci_high": boot.ci[1] if boot and boot.ci else None,
                "q_below_0_667": boot.q_below.get(0.667) if boot else None,
                "n_units": result.n_units,
                "n_coders": result.n_coders,
                "n_pairable_values": result.n_pairable_values,
                "percent_agreement": None if alpha_only else ag.percent_agreement(part),
                "ac1": ac1,
                "cohen_kappa": kappa.cohen if kappa else None,
                "fleiss_kappa": kappa.fleiss if kappa else None,
                "undefined_reason": result.undefined_reason,
            }
        )
    note = None if rows else gettext_noop("No submitted answers yet.")
    return _section({"alpha": rows}, note, draws=draws, seed=seed)


def project_alpha(
    *,
    project: Project,
    level: str = DEFAULT_LEVEL,
    draws: int = BOOTSTRAP_DRAWS,
    seed: int | None = None,
    alpha_only: bool = False,
    answers: pd.DataFrame | None = None,
) -> list[dict[str, Any]]:
    """The dashboard's alpha rows of a project (one per criterion, best pick and vote), computed now.

    Every other place that prints a project's alpha (the export's dataset card) calls this, so the card
    and the dashboard give the same alpha and interval for the same project, level and seed.
    Units are keyed by integers (``measures(compact=True)``: the same units as the dashboard's text
    keys). ``alpha_only`` gives alpha, its interval and counts alone (percent agreement, AC1 and the
    kappas ``None``): what the card prints. ``answers``: the project's
    ``selectors.annotation_frame(agreement_only=True)`` when the caller has read it already (the export
    reads its ratings from it too); read here otherwise.
    """
    if answers is None:
        answers = selectors.annotation_frame(project=project, agreement_only=True)
    data = measures(answers, ag.check_level(level), compact=True)
    del answers
    seed = int(project.seed) if seed is None else seed
    section = alpha_section(data, draws=draws, seed=seed, alpha_only=alpha_only)
    return section["tables"].get("alpha", [])


def breakdowns_section(data: pd.DataFrame) -> dict:
    rows: list[dict[str, Any]] = []
    for _criterion, part in data.groupby("criterion", sort=False):
        dimensions = _dimensions(part)
        table = ag.alpha_breakdowns(part, part["level"].iloc[0], dimensions=dimensions)
        rows.extend(_records(table))
    return _section({"breakdowns": rows}, None if rows else gettext_noop("No submitted answers yet."))


def between_groups_section(data: pd.DataFrame) -> dict:
    numeric = data.loc[data["level"] != "nominal"]
    names = sorted(numeric["group"].dropna().unique(), key=str)
    if len(names) != 2:
        return _section(
            note=gettext_noop("Between-group agreement needs Likert ratings from exactly two groups.")
        )
    rows = []
    for criterion, part in numeric.groupby("criterion", sort=False):
        result = ag.between_group_agreement(part, part["level"].iloc[0], groups=(names[0], names[1]))
        rows.append(
            {
                "criterion": criterion,
                "group_a": names[0],
                "group_b": names[1],
                "alpha_means": result.alpha_means.alpha,
                "alpha_pooled": result.alpha_pooled.alpha,
                "pearson_r": result.pearson_r,
                "mean_offset": result.mean_offset,
                "n_shared_units": result.n_shared_units,
                "undefined_reason": result.alpha_means.undefined_reason,
            }
        )
    return _section({"between_groups": rows})


def trend_section(data: pd.DataFrame, points: tuple[float, ...] = TREND_POINTS) -> dict:
    """Alpha over the first N submissions at a few checkpoints (submission order)."""
    if data.empty:
        return _section(note=gettext_noop("No submitted answers yet."))
    order = (
        data[["task", "coder", "submitted_at"]]
        .drop_duplicates(["task", "coder"])
        .sort_values(["submitted_at", "task", "coder"], kind="stable")
        .reset_index(drop=True)
    )
    order["rank"] = np.arange(1, len(order) + 1)
    ranked = data.merge(order[["task", "coder", "rank"]], on=["task", "coder"])
    total = len(order)
    checkpoints = sorted({max(1, math.ceil(total * p)) for p in points})
    rows = []
    for n in checkpoints:
        upto = ranked.loc[ranked["rank"] <= n]
        until = order.loc[n - 1, "submitted_at"]
        for criterion, part in upto.groupby("criterion", sort=False):
            result = ag.krippendorff_alpha(part, part["level"].iloc[0])
            rows.append(
                {
                    "n_submissions": n,
                    "submitted_until": _plain(until),
                    "criterion": criterion,
                    "alpha": result.alpha,
                    "n_units": result.n_units,
                    "undefined_reason": result.undefined_reason,
                }
            )
    return _section({"trend": rows}, n_submissions=total)


def _coder_agreement(part: pd.DataFrame) -> pd.DataFrame:
    """Per coder: share of agreeing pairs with other coders on shared units, and (numeric) mean |gap|.

    The gap is between the coder's value and the mean of the other coders' values on the same unit.
    """
    frame = part[["unit", "coder", "value"]].copy()
    frame["key"] = frame["value"].astype(str)
    m = frame.groupby("unit")["coder"].transform("size")
    same = frame.groupby(["unit", "key"])["coder"].transform("size")
    frame = frame.assign(others=m - 1, agreeing=same - 1)
    shared = frame.loc[frame["others"] > 0]
    out = shared.groupby("coder").agg(agreeing=("agreeing", "sum"), others=("others", "sum"))
    out["percent_agreement"] = out["agreeing"] / out["others"]
    if part["level"].iloc[0] != "nominal":
        values = shared["value"].astype(float)
        total = values.groupby(shared["unit"]).transform("sum")
        gap = (values - (total - values) / shared["others"]).abs()
        out["mean_abs_gap"] = gap.groupby(shared["coder"]).mean()
    else:
        out["mean_abs_gap"] = np.nan
    return out[["percent_agreement", "mean_abs_gap"]]


def annotators_section(data: pd.DataFrame, gold: dict) -> dict:
    rows = []
    for criterion, part in data.groupby("criterion", sort=False):
        loo = ag.leave_one_out_alpha(part, part["level"].iloc[0]).set_index("coder")
        pairs = _coder_agreement(part)
        counts = part.groupby("coder").agg(n_values=("value", "size"), group=("group", "first"))
        for coder in loo.index:
            accuracy = gold.get(coder)
            rows.append(
                {
                    "criterion": criterion,
                    "coder": coder,
                    "group": counts.loc[coder, "group"],
                    "n_values": counts.loc[coder, "n_values"],
                    "alpha_without": loo.loc[coder, "alpha"],
                    "delta": loo.loc[coder, "delta"],
                    "percent_agreement": pairs["percent_agreement"].get(coder),
                    "mean_abs_gap": pairs["mean_abs_gap"].get(coder),
                    "gold_items": accuracy.n_items if accuracy else 0,
                    "gold_accuracy": accuracy.mean_score if accuracy else None,
                }
            )
    rows = [{k: _plain(v) for k, v in row.items()} for row in rows]
    note = None if rows else gettext_noop("No submitted answers yet.")
    return _section({"annotators": rows}, note)


def distributions_section(frame: pd.DataFrame) -> dict:
    """Counts of each rating value per criterion (1-5 always listed), of picks and of votes."""
    rows = []
    rated = _rows_where(frame, frame["value"].notna())
    for criterion, part in rated.groupby("criterion", sort=False):
        counts = part["value"].astype(int).value_counts()
        values = sorted(set(range(1, 6)) | set(counts.index))
        for value in values:
            n = int(counts.get(value, 0))
            rows.append({"criterion": criterion, "value": str(value), "count": n, "share": n / len(part)})
    named = _category_ratings(frame)
    for criterion, part in named.groupby("criterion", sort=False):
        for value, n in part["choice"].value_counts().items():
            rows.append(
                {"criterion": criterion, "value": str(value), "count": int(n), "share": n / len(part)}
            )
    votes = _votes(frame)
    if len(votes):
        counts = votes["choice"].value_counts()
        for value in ("A", "B", "tie", "both_bad"):
            n = int(counts.get(value, 0))
            rows.append({"criterion": "vote", "value": value, "count": n, "share": n / len(votes)})
    return _section({"distributions": rows}, None if rows else gettext_noop("No submitted answers yet."))


def best_of_n_section(frame: pd.DataFrame, data: pd.DataFrame, task_models: pd.DataFrame) -> dict:
    best = frame.loc[frame["criterion"] == "best"]
    if best.empty:
        return _section(note=gettext_noop("This project has no best-of-N picks."))
    picks = best["model"].fillna(ALL_BAD).value_counts()
    shown = task_models.loc[task_models["task"].isin(best["task"])].groupby("model")["task"].nunique()
    rows = [
        {
            "model": model,
            "picks": int(picks.get(model, 0)),
            "share": int(picks.get(model, 0)) / len(best),
            "tasks_shown": int(shown.get(model, 0)),
        }
        for model in sorted(set(picks.index) | set(shown.index), key=str)
    ]
    part = data.loc[data["criterion"] == "best"]
    result = ag.krippendorff_alpha(part, "nominal")
    summary = {
        "alpha": result.alpha,
        "n_units": result.n_units,
        "n_coders": result.n_coders,
        "percent_agreement": ag.percent_agreement(part),
        "undefined_reason": result.undefined_reason,
    }
    return _section({"picks": rows}, summary=summary)


def _pairwise_human(frame: pd.DataFrame) -> pd.DataFrame:
    """Human pairwise votes keyed by item (task and turn) with the voter; both_bad counts as a tie."""
    import pandas as pd

    votes = _votes(frame)
    return pd.DataFrame(
        {
            "item": votes["item"],
            "annotator": votes["coder"],
            "vote": votes["choice"].replace({"both_bad": ja.TIE}),
            "category": votes["category"],
        }
    )


def pairwise_section(frame: pd.DataFrame, data: pd.DataFrame) -> dict:
    human = _pairwise_human(frame)
    if human.empty:
        return _section(note=gettext_noop("This project has no pairwise votes."))
    rate = ja.human_human_agreement(human)
    part = data.loc[data["criterion"] == "vote"]
    result = ag.krippendorff_alpha(part, "nominal")
    summary = {
        "alpha": result.alpha,
        "n_units": result.n_units,
        "percent_agreement": ag.percent_agreement(part),
        "undefined_reason": result.undefined_reason,
        **_rate(rate),
        "n_items": rate.n_items,
    }
    return _section({"human_human": [summary]}, summary=summary)


def _bt_rows(votes: pd.DataFrame, source: str, *, draws: int, seed: int) -> tuple[list[dict], str | None]:
    if votes.empty:
        return [], None
    try:
        fitted = bradley_terry(votes, draws=draws, seed=seed)
    except ValueError as exc:
        return [], f"{source}: {exc}"
    table = fitted.ratings.assign(source=source, n_votes=fitted.n_votes)
    return _records(table), None


def pick_votes(frame: pd.DataFrame, task_models: pd.DataFrame) -> pd.DataFrame:
    """A best pick among N responses as N - 1 wins of the picked model over each other shown model."""
    import pandas as pd

    best = frame.loc[
        (frame["criterion"] == "best") & (frame["choice"] != ALL_BAD), ["task", "coder", "model"]
    ]
    if best.empty:
        return pd.DataFrame(columns=["model_a", "model_b", "winner"])
    shown = best.merge(task_models.rename(columns={"model": "other"})[["task", "other"]], on="task")
    shown = shown.loc[shown["other"] != shown["model"]]
    return pd.DataFrame({"model_a": shown["model"], "model_b": shown["other"], "winner": ja.A}).reset_index(
        drop=True
    )


def bradley_terry_section(frame: pd.DataFrame, task_models: pd.DataFrame, *, draws: int, seed: int) -> dict:
    """Model ratings from pairwise votes (both bad counted as a tie) and from best-of-N picks."""
    import pandas as pd

    votes = _votes(frame)
    pairwise = pd.DataFrame(
        {
            "model_a": votes["model_a"],
            "model_b": votes["model_b"],
            "winner": votes["choice"].replace({"both_bad": ja.TIE}),
        }
    ).dropna()
    rows, notes = [], []
    for source, table in (("pairwise", pairwise), ("best_of_n", pick_votes(frame, task_models))):
        found, note = _bt_rows(table, source, draws=draws, seed=seed)
        rows.extend(found)
        if note:
            notes.append(note)
    if not rows and not notes:
        notes.append(gettext_noop("Bradley-Terry ratings need pairwise votes or best-of-N picks."))
    return _section({"ratings": rows}, "; ".join(notes) or None, draws=draws)


# -- judges ---------------------------------------------------------------------------------------------


def _orient(a: pd.Series, b: pd.Series, turn: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Item key of an unordered response pair (smaller id first) and whether a/b were swapped."""
    a, b = a.astype("int64"), b.astype("int64")
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    turn_text = _id_text(turn, "all")
    return lo.astype(str) + "-" + hi.astype(str) + ":" + turn_text, a > b


def _swap(votes: pd.Series, swapped: pd.Series) -> pd.Series:
    flipped = votes.map({ja.A: ja.B, ja.B: ja.A}).fillna(votes)
    return votes.where(~swapped, flipped)


def human_preferences(frame: pd.DataFrame) -> pd.DataFrame:
    """Each annotator's preference per response pair: pairwise votes, or derived from Likert ratings.

    Likert: for every pair of responses an annotator rated in one task, the one with the larger sum of
    ratings over the criteria is preferred, equal sums are a tie (IndoPref's preference from ratings).
    Columns: item (pair and turn), annotator, vote, category, language, register, language_register.
    """
    import pandas as pd

    votes = _votes(frame)
    if len(votes):
        votes = votes.loc[votes["turn"].fillna(-1) == votes["task_turn"].fillna(-1)]
        item, swapped = _orient(votes["response_a"], votes["response_b"], votes["task_turn"])
        vote = _swap(votes["choice"].replace({"both_bad": ja.TIE}), swapped)
        return _with_language_register(
            pd.DataFrame(
                {
                    "item": item,
                    "annotator": votes["coder"],
                    "vote": vote,
                    "category": votes["category"],
                    "language": votes["language"],
                    "register": votes["register"],
                }
            )
        )
    rated = _rows_where(frame, frame["value"].notna())
    if rated.empty:
        return pd.DataFrame(columns=["item", "annotator", "vote", *ITEM_GROUPS])
    rated = rated.assign(language=rated["language"].fillna(""), register=rated["register"].fillna(""))
    item_columns = ["task", "coder", "category", "language", "register"]
    totals = rated.groupby([*item_columns, "response"], as_index=False)["value"].sum()
    pairs = totals.merge(totals, on=item_columns, suffixes=("_a", "_b"))
    pairs = pairs.loc[pairs["response_a"] < pairs["response_b"]]
    vote = np.where(
        pairs["value_a"] > pairs["value_b"], ja.A, np.where(pairs["value_a"] < pairs["value_b"], ja.B, ja.TIE)
    )
    item, _ = _orient(pairs["response_a"], pairs["response_b"], pd.Series(pd.NA, index=pairs.index))
    return _with_language_register(
        pd.DataFrame(
            {
                "item": item,
                "annotator": pairs["coder"],
                "vote": vote,
                "category": pairs["category"],
                "language": pairs["language"],
                "register": pairs["register"],
            }
        )
    )


# What a judge's accuracy is broken down by, beside the whole: each item's category, language, and
# language with register (``jav / krama``).
ITEM_GROUPS = ("category", "language", "register", "language_register")


def _with_language_register(human: pd.DataFrame) -> pd.DataFrame:
    language = human["language"].fillna("").astype(str)
    register = human["register"].fillna("").astype(str)
    return human.assign(
        language=language,
        register=register,
        language_register=[
            lt.language_register(lang, reg) for lang, reg in zip(language, register, strict=True)
        ],
    )


def _graded_verdicts(graded: pd.DataFrame, items: pd.DataFrame, tie_threshold: float) -> pd.DataFrame:
    """Scores of both responses of each human item (mean over turns for whole-conversation items)."""
    import pandas as pd

    scores = graded.assign(score=graded["score"].where(graded["parse_status"] == "ok"))
    per_turn = scores.set_index(["response_a", "turn"])["score"]
    overall = scores.groupby("response_a")["score"].agg(lambda s: s.mean() if s.notna().all() else np.nan)

    def lookup(response: int, turn: object) -> float:
        if pd.isna(turn):
            return float(overall.get(response, np.nan))
        return float(per_turn.get((response, int(turn)), np.nan))

    score_a = [lookup(a, t) for a, t in zip(items["a"], items["turn"], strict=True)]
    score_b = [lookup(b, t) for b, t in zip(items["b"], items["turn"], strict=True)]
    out = items[["item"]].assign(score_a=score_a, score_b=score_b)
    return out.loc[out["score_a"].notna() | out["score_b"].notna()]


def _items_of(human: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    keys = human["item"].drop_duplicates()
    pair, turn = keys.str.split(":", expand=True)[0], keys.str.split(":", expand=True)[1]
    ab = pair.str.split("-", expand=True).astype("int64")
    return pd.DataFrame(
        {"item": keys.values, "a": ab[0].values, "b": ab[1].values, "turn": turn.replace("all", None).values}
    )


@dataclass
class _JudgeBreakdowns:
    """Rows of the judges' accuracy tables by category, language and language with register, and each
    judge's accuracy by language (for the table with languages as columns)."""

    by_category: list[dict] = field(default_factory=list)
    by_language: list[dict] = field(default_factory=list)
    by_language_register: list[dict] = field(default_factory=list)
    per_language: dict[str, ja.JudgeAccuracy] = field(default_factory=dict)

    def add(self, name: str, human: pd.DataFrame, verdicts: pd.DataFrame, by_category: list[dict]) -> None:
        self.by_category.extend(by_category)
        for column, rows in (
            ("language", self.by_language),
            ("language_register", self.by_language_register),
        ):
            accuracy = ja.judge_accuracy(human, verdicts, category=column)
            if column == "language":
                self.per_language[name] = accuracy
            table = accuracy.by_category.rename(columns={"category": column})
            rows.extend({"judge": name, **r} for r in _records(table))

    def tables(self) -> dict[str, list[dict]]:
        tables = {
            "by_category": _plain_rows(self.by_category),
            "by_language": _plain_rows(self.by_language),
            "by_language_register": _plain_rows(self.by_language_register),
        }
        if self.per_language:
            tables["accuracy_by_language"] = _plain_rows(
                ja.accuracy_language_table(self.per_language)["rows"]
            )
        return tables


def _judge_row(name: str, kind: str, human: pd.DataFrame, verdicts: pd.DataFrame) -> tuple[dict, list[dict]]:
    agreement = ja.human_judge_agreement(human, verdicts)
    majority = ja.majority_agreement(human, verdicts)
    accuracy = ja.judge_accuracy(human, verdicts)
    row = {
        "judge": name,
        "kind": kind,
        "n_items": agreement.n_items,
        **_rate(agreement),
        **_rate(majority, "majority_"),
        "accuracy": accuracy.accuracy,
        "accuracy_raw": accuracy.accuracy_raw,
        "macro_accuracy": accuracy.macro_accuracy,
        # IndoPref's Avg: the mean over categories with parse errors counted wrong.
        "macro_accuracy_raw": accuracy.macro_accuracy_raw,
        "n_valid": accuracy.n_valid,
        "n_parse_errors": accuracy.n_parse_errors,
        "n_human_ties": accuracy.n_human_ties,
    }
    categories = [{"judge": name, **r} for r in _records(accuracy.by_category)]
    return row, categories


def judges_section(
    frame: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    tie_threshold: float,
    unfinished: list[dict] | None = None,
) -> dict:
    """Leaderboard of judges against the human preferences, SeaBench- and IndoPref-style.

    ``unfinished``: judge runs that have not succeeded (``analytics.selectors.judge_runs_unfinished``);
    those whose results feed the leaderboard are listed under ``partial`` with their items done so far.
    """
    section = _judges_section(frame, judgments, tie_threshold=tie_threshold)
    feeding = set(judgments["run"]) if len(judgments) else set()
    partial = [
        {
            "judge": f"{run['judge']} (run {run['run']})",
            "status": run["status"],
            "n_done": run["n_done"],
            "n_total": run["n_total"],
        }
        for run in unfinished or []
        if run["run"] in feeding
    ]
    if partial:
        section["partial"] = partial
    return section


def _judges_section(
    frame: pd.DataFrame, judgments: pd.DataFrame, *, tie_threshold: float, ensemble_rule: str = "all_judges"
) -> dict:
    import pandas as pd

    if judgments.empty:
        return _section(note=gettext_noop("No judge has run on this project's responses yet."))
    # A run that sampled k verdicts per item counts here with its first; the judge lab reads all k.
    judgments = judgments.loc[judgments["sample"] == 0]
    grades = grades_by_language(judgments)
    human = human_preferences(frame)
    if human.empty:
        return _section(
            {"grades_by_language": grades} if grades else None,
            gettext_noop("Judges are compared with human preferences; there are none yet."),
        )
    hh = ja.human_human_agreement(human)
    leaderboard = [
        {"judge": "human-human", "kind": "human", "n_items": hh.n_items, **_rate(hh)},
    ]
    breakdowns = _JudgeBreakdowns()
    consistency: list[dict] = []
    wanted = set(human["item"])
    pairwise = judgments.loc[judgments["order"] == "both"]
    for (run, judge), part in pairwise.groupby(["run", "judge"], sort=True):
        item, swapped = _orient(part["response_a"], part["response_b"], part["turn"])
        verdicts = pd.DataFrame({"item": item, "vote": _swap(part["verdict"], swapped)})
        verdicts = verdicts.loc[verdicts["item"].isin(wanted)].drop_duplicates("item")
        name = f"{judge} (run {run})"
        row, by_category = _judge_row(name, "pairwise", human, verdicts)
        leaderboard.append(row)
        breakdowns.add(name, human, verdicts, by_category)
        flags = part.loc[item.isin(wanted) & (part["consistency"] != "single"), "consistency"]
        counts = flags.value_counts()
        consistency.append(
            {
                "judge": name,
                "n": len(flags),
                **{
                    outcome: (int(counts.get(outcome, 0)) / len(flags) if len(flags) else None)
                    for outcome in (ja.CONSISTENT, ja.BIASED_FIRST, ja.BIASED_SECOND, ja.ERROR)
                },
            }
        )
    graded = judgments.loc[judgments["order"] == "single"]
    items = _items_of(human)
    averaged = []
    for (run, judge), part in graded.groupby(["run", "judge"], sort=True):
        scores = _graded_verdicts(part, items, tie_threshold)
        averaged.append(scores.assign(judge=f"{judge} (run {run})"))
        verdicts = pd.DataFrame(
            {
                "item": scores["item"],
                "vote": ja.verdicts_from_scores(
                    scores["score_a"], scores["score_b"], tie_threshold=tie_threshold
                ),
            }
        )
        row, by_category = _judge_row(f"{judge} (run {run})", "graded", human, verdicts)
        leaderboard.append(row)
        breakdowns.add(f"{judge} (run {run})", human, verdicts, by_category)
    if len(averaged) >= 2:
        ensemble = ja.ensemble_scores(pd.concat(averaged, ignore_index=True), rule=ensemble_rule)
        scores = ensemble.scores
        verdicts = pd.DataFrame(
            {
                "item": scores["item"],
                "vote": ja.verdicts_from_scores(
                    scores["score_a"], scores["score_b"], tie_threshold=tie_threshold
                ),
            }
        )
        row, by_category = _judge_row("ensemble", "ensemble", human, verdicts)
        row["n_left_out"] = ensemble.n_left_out
        row["n_items_excluded"] = ensemble.n_items_excluded
        leaderboard.append(row)
        breakdowns.add("ensemble", human, verdicts, by_category)
    tables = {"leaderboard": _plain_rows(leaderboard), **breakdowns.tables()}
    if grades:
        tables["grades_by_language"] = grades
    if consistency:
        tables["position_consistency"] = _plain_rows(consistency)
    extra = {"ensemble_rule": ensemble_rule} if len(averaged) >= 2 else {}
    return _section(tables, tie_threshold=tie_threshold, **extra)


def grades_by_language(judgments: pd.DataFrame) -> list[dict]:
    """SeaBench's table of single-answer grades: one row per judge run and graded model, a column per
    language (the mean 1-10 grade of the model's responses in that language, every turn, grades that did not
    parse left out), ``avg`` (the unweighted mean over languages), ``overall`` and ``n``. Empty without
    single-answer grades."""
    import pandas as pd

    graded = judgments.loc[(judgments["order"] == "single") & (judgments["judge_kind"] == SINGLE_GRADE)]
    if graded.empty:
        return []
    frame = pd.DataFrame(
        {
            "judge": [
                f"{judge} (run {run})" for judge, run in zip(graded["judge"], graded["run"], strict=True)
            ],
            "model": graded["model_a"].fillna("").astype(str),
            "language": graded["language"],
            "score": graded["score"].where(graded["parse_status"] == "ok").astype(float),
        }
    )
    return _plain_rows(lt.grades_by_language(frame, row_columns=("judge", "model"))["rows"])


def judges_for_responses(
    *, project: Project, response_ids: Collection[int], tie_threshold: float = TIE_THRESHOLD
) -> dict:
    """The judges section over pairs of the given responses only (an export's prompts): each judge's
    agreement with the human votes on those pairs, computed as the dashboard computes it."""
    ids = set(int(i) for i in response_ids)
    judgments = selectors.judgment_frame(project=project)
    judgments = judgments.loc[judgments["response_a"].isin(ids)]
    unfinished = selectors.judge_runs_unfinished(project=project)
    if judgments.empty:
        # No judge scored these pairs: the human answers are not read again (a million ratings, for a
        # section with no judge in it).
        import pandas as pd

        frame = pd.DataFrame(columns=selectors.ANNOTATION_COLUMNS)
    else:
        frame = selectors.annotation_frame(project=project)
        frame = frame.loc[frame["response"].isin(ids) | frame["response_a"].isin(ids)]
    return judges_section(frame, judgments, tie_threshold=tie_threshold, unfinished=unfinished)


def _plain_rows(rows: list[dict]) -> list[dict]:
    return [{k: _plain(v) for k, v in row.items()} for row in rows]


def conflicts_section(matrix) -> dict:
    """Creator x answerer counts of answers that differ from the creator's key (id-csqa's heatmap).

    ``matrix`` is a ``datasets_app.domain.questions.ConflictMatrix`` (None when nothing is answered).
    """
    if matrix is None or matrix.table.empty:
        return _section(note=gettext_noop("No answered questions yet."))
    table = matrix.table.assign(
        conflict_share=lambda t: (t["n_conflicts"] / t["n_answers"]).where(t["n_answers"] > 0)
    )
    return _section({"conflicts": _records(table)}, total_conflicts=int(table["n_conflicts"].sum()))


def _question_report(project: Project, step: Progress) -> dict[str, dict]:
    step(50, "conflicts")
    return {"conflicts": conflicts_section(conflict_matrix(project=project))}


# -- the report ---------------------------------------------------------------------------------------


def compute_report(
    *,
    project: Project,
    level: str = DEFAULT_LEVEL,
    draws: int = BOOTSTRAP_DRAWS,
    bt_draws: int = BT_DRAWS,
    tie_threshold: float = TIE_THRESHOLD,
    version: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Every dashboard section of one project, as JSON-ready values (three to five queries)."""
    level = ag.check_level(level)
    step = progress or (lambda percent, stage: None)
    version = version or selectors.data_version(project=project)
    step(2, "reading answers")
    frame = selectors.annotation_frame(project=project)
    if project.kind == QUESTION_KIND:
        return _report(project, level, version, frame, _question_report(project, step))
    data = measures(frame, level)
    needs_models = (frame["criterion"] == "best").any()
    task_models = selectors.task_models(project=project) if needs_models else selectors.empty_task_models()
    seed = int(project.seed)
    plan: list[tuple[str, int, Callable[[], dict]]] = [
        ("alpha", 35, lambda: alpha_section(data, draws=draws, seed=seed)),
        ("breakdowns", 45, lambda: breakdowns_section(data)),
        ("between_groups", 50, lambda: between_groups_section(data)),
        ("trend", 58, lambda: trend_section(data)),
        ("annotators", 68, lambda: annotators_section(data, gold_scores(project=project))),
        ("distributions", 70, lambda: distributions_section(frame)),
        ("best_of_n", 72, lambda: best_of_n_section(frame, data, task_models)),
        ("pairwise", 75, lambda: pairwise_section(frame, data)),
        ("bradley_terry", 90, lambda: bradley_terry_section(frame, task_models, draws=bt_draws, seed=seed)),
        (
            "judges",
            99,
            lambda: judges_section(
                frame,
                selectors.judgment_frame(project=project),
                tie_threshold=tie_threshold,
                unfinished=selectors.judge_runs_unfinished(project=project),
            ),
        ),
    ]
    sections: dict[str, dict] = {}
    for name, percent, build in plan:
        step(percent, name)
        sections[name] = build()
    return _report(project, level, version, frame, sections)


def _report(
    project: Project, level: str, version: str, frame: pd.DataFrame, sections: dict
) -> dict[str, Any]:
    return {
        "format": REPORT_FORMAT,
        "project": project.pk,
        "project_name": project.name,
        "kind": project.kind,
        "level": level,
        "data_version": version,
        "computed_at": datetime.now(UTC).isoformat(),
        "n_values": len(frame),
        "n_coders": int(frame["coder"].nunique()),
        "sections": sections,
    }


# -- cache and background computation --------------------------------------------------------------


def _key(kind: str, project_id: int, level: str, version: str = "") -> str:
    return f"analytics:{REPORT_FORMAT}:{kind}:{project_id}:{level}:{version}"


@dataclass(frozen=True)
class ReportState:
    """What the dashboard shows: the report when ready, otherwise the progress of its computation.

    ``previous`` is the last finished report of older data, shown under the progress bar.
    """

    status: str  # ready, queued, running, failed, cancelled
    version: str
    level: str
    report: dict[str, Any] | None = None
    progress: int = 0
    stage: str = ""
    error: str = ""
    previous: dict[str, Any] | None = None
    cancelling: bool = False
    # The background attempts so far, when the last one began, and when the worker of an earlier one was
    # last heard from once it was found stopped (``datasets_app.jobs.job_recovery`` reads these).
    attempts: int = 0
    started_at: datetime | None = None
    worker_stopped_at: datetime | None = None

    @property
    def ready(self) -> bool:
        return self.status == "ready"


def _moment(value: Any) -> datetime | None:
    return datetime.fromtimestamp(float(value), tz=UTC) if value is not None else None


def _heartbeat_key(project_id: int, level: str, version: str, task_id: str) -> str:
    return f"{_key('heartbeat', project_id, level, version)}:{task_id}"


def _worker_stopped_at(
    project_id: int, level: str, version: str, status: dict[str, Any], *, now: datetime
) -> datetime | None:
    """When the worker computing a running report was last heard from, if it stopped; else None."""
    if status.get("state") != "running" or status.get("started_at") is None:
        return None
    return heartbeat_stopped_at(
        key=_heartbeat_key(project_id, level, version, str(status.get("task_id", ""))),
        started_at=_moment(status["started_at"]),
        now=now,
        timeout=heartbeat_timeout(),
        limit=timedelta(seconds=STALE_AFTER_S),
    )


def cached_report(*, project_id: int, level: str, version: str) -> dict[str, Any] | None:
    return cache.get(_key("report", project_id, level, version))


def report_store(*, project_id: int, level: str, version: str, report: dict[str, Any]) -> None:
    cache.set(_key("report", project_id, level, version), report, REPORT_TIMEOUT)
    cache.set(_key("latest", project_id, level), version, REPORT_TIMEOUT)
    cache.delete(_key("status", project_id, level, version))


def status_set(*, project_id: int, level: str, version: str, state: str, progress: int = 0, **extra) -> None:
    timeout = {"failed": FAILED_TIMEOUT, "cancelled": CANCELLED_TIMEOUT}.get(state, STATUS_TIMEOUT)
    value = {"state": state, "progress": progress, **extra}
    cache.set(_key("status", project_id, level, version), value, timeout)


def _status(project_id: int, level: str, version: str) -> dict[str, Any] | None:
    return cache.get(_key("status", project_id, level, version))


def _cancel_asked(project_id: int, level: str, version: str) -> bool:
    # Its own key: the worker rewrites the status at every step and must not wipe a cancel out.
    return bool(cache.get(_key("cancel", project_id, level, version)))


def report_build(
    *, project: Project, level: str, version: str | None = None, job: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Compute and cache the report of the project's current data, updating the progress status.

    ``job`` (a background attempt: its task id, attempts and start) is kept in the status at every step,
    where the step also stops the computation (:class:`JobCancelled`) when a cancel was asked for or the
    report was handed to another attempt.
    """
    version = version or selectors.data_version(project=project)
    job = job or {}

    def progress(percent: int, stage: str) -> None:
        if job:
            current = _status(project.pk, level, version) or {}
            if _cancel_asked(project.pk, level, version) or current.get("task_id") != job["task_id"]:
                raise JobCancelled(f"agreement report of project {project.pk} was cancelled")
        status_set(
            project_id=project.pk,
            level=level,
            version=version,
            state="running",
            progress=percent,
            stage=stage,
            **job,
        )

    try:
        report = compute_report(project=project, level=level, version=version, progress=progress)
    except JobCancelled:
        raise
    except Exception as exc:
        status_set(project_id=project.pk, level=level, version=version, state="failed", error=str(exc)[:300])
        raise
    report_store(project_id=project.pk, level=level, version=version, report=report)
    return report


def report_job_run(*, project: Project, level: str, version: str, task_id: str) -> dict[str, Any] | None:
    """Run the background computation of one report version for the delivery ``task_id``.

    The same rules as the job rows (``datasets_app.jobs``): a queued report (or one whose status expired)
    is taken; a running one is restarted only by a redelivery of its own task, whose earlier delivery
    died; attempts are counted and a report out of attempts fails; a cancelled one ends here.
    """
    if selectors.data_version(project=project) != version:
        # Answers arrived since it was queued: compute the current data (the caller forgets this version).
        return report_build(project=project, level=level)
    status = _status(project.pk, level, version)
    if status is None:  # expired, or sent before statuses named their task: start it afresh
        status = {"state": "queued", "task_id": task_id, "attempts": 0}
    action = job_rules.on_delivery(
        status=status.get("state", "queued"),
        own_task=status.get("task_id") == task_id,
        cancel_requested=_cancel_asked(project.pk, level, version),
        attempts=int(status.get("attempts", 0)),
        max_attempts=max_attempts(),
    )
    if action is job_rules.Delivery.IGNORE:
        return None
    if action is job_rules.Delivery.CANCEL:
        _report_cancelled(project.pk, level, version)
        return None
    if action is job_rules.Delivery.GIVE_UP:
        _report_gave_up(project.pk, level, version, int(status.get("attempts", 0)))
        return None
    job = {"task_id": task_id, "attempts": int(status.get("attempts", 0)) + 1, "started_at": time.time()}
    if status.get("worker_stopped_at") is not None:
        job["worker_stopped_at"] = status["worker_stopped_at"]
    status_set(project_id=project.pk, level=level, version=version, state="running", progress=1, **job)
    try:
        with heartbeating(key=_heartbeat_key(project.pk, level, version, task_id)):
            return report_build(project=project, level=level, version=version, job=job)
    except JobCancelled:
        if (_status(project.pk, level, version) or {}).get("task_id") == task_id:
            _report_cancelled(project.pk, level, version)
        return None


def _report_cancelled(project_id: int, level: str, version: str, **extra) -> None:
    cache.delete(_key("cancel", project_id, level, version))
    status_set(project_id=project_id, level=level, version=version, state="cancelled", **extra)


def _report_gave_up(project_id: int, level: str, version: str, attempts: int, **extra) -> None:
    error = (
        f"the worker computing this report stopped {attempts} time(s) before it finished; gave up "
        "(try again to compute it once more)"
    )
    status_set(
        project_id=project_id,
        level=level,
        version=version,
        state="failed",
        error=error,
        attempts=attempts,
        **extra,
    )


def _report_send(project_id: int, level: str, version: str, *, attempts: int, **extra) -> None:
    """Record the report as queued under a new task id and send the task once the transaction commits."""
    task_id = uuid.uuid4().hex
    status_set(
        project_id=project_id,
        level=level,
        version=version,
        state="queued",
        task_id=task_id,
        attempts=attempts,
        **extra,
    )
    task_send_on_commit("evaluation.agreement_report", args=[project_id, level, version], task_id=task_id)


def _requeue_if_stale(
    project_id: int, level: str, version: str, status: dict[str, Any], *, now: datetime | None = None
) -> None:
    """A running report whose worker stopped (its heartbeat stale, or its attempt older than the task's hard
    time limit) has no live task: send it again, or fail it once its attempts are spent."""
    stopped_at = _worker_stopped_at(project_id, level, version, status, now=now or datetime.now(tz=UTC))
    if stopped_at is None:
        return
    attempts = int(status.get("attempts", 0))
    action = job_rules.on_stale(
        cancel_requested=_cancel_asked(project_id, level, version),
        attempts=attempts,
        max_attempts=max_attempts(),
    )
    # Kept with the attempts and the start of the attempt that stopped, for the page.
    extra = {"worker_stopped_at": stopped_at.timestamp(), "started_at": status["started_at"]}
    if action is job_rules.Stale.CANCEL:
        _report_cancelled(project_id, level, version, attempts=attempts, **extra)
    elif action is job_rules.Stale.GIVE_UP:
        _report_gave_up(project_id, level, version, attempts, **extra)
    else:
        _report_send(project_id, level, version, attempts=attempts, **extra)


def report_cancel(*, project: Project, level: str) -> str:
    """Cancel the background computation of the current report: a queued one at once, a running one at
    its next step. Returns the state it is left in; :class:`JobRefused` when nothing is being computed."""
    version = selectors.data_version(project=project)
    status = _status(project.pk, level, version)
    state = (status or {}).get("state")
    if state == "queued":
        _report_cancelled(project.pk, level, version)
        return "cancelled"
    if state == "running":
        stopped_at = _worker_stopped_at(project.pk, level, version, status, now=datetime.now(tz=UTC))
        if stopped_at is not None:  # no task would act on the request: end it here
            extra = {"worker_stopped_at": stopped_at.timestamp(), "started_at": status["started_at"]}
            _report_cancelled(project.pk, level, version, attempts=int(status.get("attempts", 0)), **extra)
            return "cancelled"
        cache.set(_key("cancel", project.pk, level, version), True, STATUS_TIMEOUT)
        return "running"
    raise JobRefused("no agreement report of this project is being computed")


def report_state(*, project: Project, level: str = DEFAULT_LEVEL, start: bool = True) -> ReportState:
    """The cached report of the current data, or its progress; starts its computation when needed.

    Small projects (up to :func:`inline_limit` answer values) are computed right here; larger ones are
    queued once (``cache.add`` lets only one request queue a given version) on the ``default`` queue.
    """
    level = ag.check_level(level)
    version_info = selectors.data_version_info(project=project)
    version = version_info.key
    report = cached_report(project_id=project.pk, level=level, version=version)
    if report is not None:
        return ReportState("ready", version, level, report=report, progress=100)
    status_key = _key("status", project.pk, level, version)
    status = cache.get(status_key)
    if status is None and start:
        if version_info.n_annotations <= inline_limit():
            report = report_build(project=project, level=level, version=version)
            return ReportState("ready", version, level, report=report, progress=100)
        status = {"state": "queued", "progress": 0}
        if cache.add(status_key, status, STATUS_TIMEOUT):
            _report_send(project.pk, level, version, attempts=0)
        report = cached_report(project_id=project.pk, level=level, version=version)
        if report is not None:  # an eager worker (tests, embedded without a broker) finished at once
            return ReportState("ready", version, level, report=report, progress=100)
        status = cache.get(status_key) or status
    elif status is not None:
        _requeue_if_stale(project.pk, level, version, status)
        status = cache.get(status_key) or status
    status = status or {"state": "queued", "progress": 0}
    previous_version = cache.get(_key("latest", project.pk, level))
    previous = (
        cached_report(project_id=project.pk, level=level, version=previous_version)
        if previous_version
        else None
    )
    return ReportState(
        status=status.get("state", "queued"),
        version=version,
        level=level,
        progress=int(status.get("progress", 0)),
        stage=status.get("stage", ""),
        error=status.get("error", ""),
        previous=previous,
        cancelling=status.get("state") == "running" and _cancel_asked(project.pk, level, version),
        attempts=int(status.get("attempts", 0)),
        started_at=_moment(status.get("started_at")),
        worker_stopped_at=_moment(status.get("worker_stopped_at")),
    )


def status_forget(*, project_id: int, level: str, version: str) -> None:
    cache.delete(_key("status", project_id, level, version))


def report_retry(*, project: Project, level: str) -> None:
    """Forget a failed or cancelled status so the next visit computes the report again."""
    version = selectors.data_version(project=project)
    cache.delete(_key("cancel", project.pk, level, version))
    status_forget(project_id=project.pk, level=level, version=version)


def section_table(report: dict[str, Any], section: str, table: str | None = None) -> tuple[str, list[dict]]:
    """One table of a section (the first when ``table`` is None); KeyError when there is none."""
    tables = report["sections"][section]["tables"]
    if table is None:
        if not tables:
            return section, []
        table = next(iter(tables))
    return table, tables[table]


# -- judge lab -------------------------------------------------------------------------------------------

#: Shares of the human-labelled items the page may keep for the prediction-powered estimates.
LAB_PPI_SHARES = (0.1, 0.25, 0.5)


@dataclass(frozen=True)
class LabInputs:
    """The frames :func:`analytics.domain.judge_lab.lab_report` reads, built from the database."""

    human: pd.DataFrame
    judge: pd.DataFrame
    items: pd.DataFrame
    families: dict[str, str]

    @property
    def models(self) -> list[str]:
        if self.items.empty or "model_a" not in self.items.columns:
            return []
        names = set(self.items["model_a"].dropna()) | set(self.items["model_b"].dropna())
        return sorted(str(n) for n in names)


def _turn_length(turns: list[str], turn: str) -> float:
    if turn == "all":
        return float(sum(len(t or "") for t in turns))
    index = int(turn)
    return float(len(turns[index] or "")) if index < len(turns) else float("nan")


def judge_lab_inputs(*, project: Project) -> LabInputs:
    """The project's human preferences per response pair (pairwise votes, or derived from Likert ratings as
    the judges section derives them) and every pairwise judgment over its responses, keyed by the same
    item (the pair, smaller response id first, and the turn); each item's category, language, register,
    model names and answer lengths (characters of the judged turn, or of every turn); model families of
    the judge endpoints and of the models. Four queries."""
    import pandas as pd

    human = human_preferences(selectors.annotation_frame(project=project))
    judgments = selectors.lab_judgments(project=project)
    if len(judgments):
        item, swapped = _orient(judgments["response_a"], judgments["response_b"], judgments["turn"])
        vote = judgments["verdict"].where(judgments["parse_status"] == "ok", ja.ERROR).replace("", ja.ERROR)
        shown_first_is_a = (judgments["order"] == "ab") != swapped
        judge = pd.DataFrame(
            {
                "item": item,
                "judge": [
                    f"{slug} (run {run})"
                    for slug, run in zip(judgments["judge"], judgments["run"], strict=True)
                ],
                "vote": _swap(vote, swapped),
                "order": np.where(shown_first_is_a, "ab", "ba"),
                "sample": judgments["sample"].astype(int),
            }
        )
    else:
        judge = pd.DataFrame(columns=["item", "judge", "vote", "order", "sample"])
    meta = human[["item", "category", "language", "register"]].drop_duplicates("item")
    if len(judgments):
        judged_meta = pd.DataFrame(
            {
                "item": judge["item"],
                "category": judgments["category"].fillna(""),
                "language": judgments["language"].fillna(""),
                "register": judgments["register"].fillna(""),
            }
        ).drop_duplicates("item")
        meta = pd.concat([meta, judged_meta.loc[~judged_meta["item"].isin(meta["item"])]], ignore_index=True)
    keys = meta["item"].astype(str)
    pair = keys.str.split(":", n=1).str[0].str.split("-")
    ids_a = pair.str[0].astype("int64") if len(meta) else pd.Series([], dtype="int64")
    ids_b = pair.str[1].astype("int64") if len(meta) else pd.Series([], dtype="int64")
    turns = keys.str.split(":", n=1).str[1]
    responses = selectors.lab_responses(response_ids=set(ids_a) | set(ids_b))

    def model(i: int) -> str | None:
        return responses[i][0] if i in responses else None

    def length(i: int, turn: str) -> float:
        return _turn_length(responses[i][1], turn) if i in responses else float("nan")

    items = meta.assign(
        model_a=[model(i) for i in ids_a],
        model_b=[model(i) for i in ids_b],
        length_a=[length(i, t) for i, t in zip(ids_a, turns, strict=True)],
        length_b=[length(i, t) for i, t in zip(ids_b, turns, strict=True)],
    )
    families = selectors.model_families()
    if len(judgments):
        for slug, run, family in (
            judgments[["judge", "run", "family"]].drop_duplicates().itertuples(index=False)
        ):
            if family:
                families[f"{slug} (run {run})"] = family
    return LabInputs(human=human[["item", "annotator", "vote"]], judge=judge, items=items, families=families)


LAB_TIMEOUT = 24 * 3600


def judge_lab_report(
    *,
    project: Project,
    baseline: str | None = None,
    ppi_human_share: float | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """The judge lab of a project (:func:`analytics.domain.judge_lab.lab_report` on
    :func:`judge_lab_inputs`), cached until the project's data change. ``baseline`` must be one of the
    project's models (default: the model in the most comparisons); ``ppi_human_share`` one of
    :data:`LAB_PPI_SHARES` or None (every human vote). Raises ValueError on other values."""
    from analytics.domain.judge_lab import lab_report

    if ppi_human_share is not None and ppi_human_share not in LAB_PPI_SHARES:
        raise ValueError(f"the share of human items must be one of {', '.join(map(str, LAB_PPI_SHARES))}")
    seed = int(project.seed) if seed is None else seed
    version = selectors.data_version(project=project)
    key = _key("judge_lab", project.pk, f"{baseline}|{ppi_human_share}|{seed}", version)
    cached = cache.get(key)
    if cached is not None:
        return cached
    inputs = judge_lab_inputs(project=project)
    if baseline is not None and baseline not in inputs.models:
        raise ValueError(f"{baseline!r} is not a model of this project")
    base = {
        "project": project.pk,
        "project_name": project.name,
        "data_version": version,
        "models": inputs.models,
        "baseline_asked": baseline,
    }
    if inputs.judge.empty or inputs.human.empty:
        report = {
            **base,
            "judges": {},
            "ppi": [],
            "notes": [
                gettext_noop("No pairwise judge has run on this project's responses yet.")
                if inputs.judge.empty
                else gettext_noop("There are no human preferences to compare the judges with yet.")
            ],
        }
    else:
        report = base | lab_report(
            inputs.human,
            inputs.judge,
            inputs.items,
            families=inputs.families,
            baseline=baseline,
            ppi_human_share=ppi_human_share,
            seed=seed,
        )
    cache.set(key, report, LAB_TIMEOUT)
    return report


# --- the arena leaderboard ----------------------------------------------------------------------------

LEADERBOARD_TIMEOUT = 24 * 3600


def arena_leaderboard(*, project: Project, options: LeaderboardOptions) -> Leaderboard:
    """The arena's leaderboard (``analytics.domain.leaderboard``), cached until the next vote.
    Raises ``LeaderboardError`` when its battles cannot give one (none yet, nobody both won and lost)."""
    version = selectors.arena_battles_version(project=project)
    features = ",".join(options.style_features)
    key = f"arena-leaderboard:{project.pk}:{version}:{options.ties}:{features}:{options.bootstrap}:{options.seed}"
    board = cache.get(key)
    if board is None:
        battles = selectors.arena_battle_frame(project=project)
        board = leaderboard_fit(
            battles,
            ties=options.ties,
            style_features=options.style_features,
            bootstrap=options.bootstrap,
            seed=options.seed,
            groups=("language", "register", "category"),
            models=selectors.arena_model_names(project=project),
        )
        cache.set(key, board, LEADERBOARD_TIMEOUT)
    return board
