"""Preference datasets from a rating project (DESIGN.md §7): chosen/rejected pairs as a Hugging Face dataset
folder (``hf``) or in TRL's layouts (``trl-strings``, ``trl-messages``).

The reading is paged (``preferences_selectors``), the pairs come from the pure builder
(``exports.domain.preference_pairs``), the split is seeded by prompt, and the card reports the agreement
dashboard's numbers: alpha per criterion (``analytics.services.project_alpha``) and each judge run's
agreement with the human votes on the exported prompts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
import pyarrow as pa
from django.utils.translation import gettext_noop

from analytics import selectors as analytics_selectors
from analytics import services as analytics_services
from annotation.models import Project
from annotation.selectors import annotator_reliability, criterion_scales
from exports import selectors
from exports.domain.dataset_card import AlphaFigure, CardInput, counts_by, render_dataset_card
from exports.domain.preference_pairs import (
    ORDERINGS,
    STRATEGIES,
    PreferenceResult,
    build_preference_pairs,
)
from exports.domain.splits import SplitPlan, split_pairs
from exports.families import preferences_selectors
from exports.families.base import Destination, Family, Step, kind_name
from exports.options import (
    PAIR_KINDS,
    ExportFailed,
    ExportInvalid,
    ExportOptions,
    Refusal,
    rating_options_resolve,
)
from exports.writers import infer_schema, to_trl_messages, to_trl_strings, write_hf_folder

DEFAULT_STRATEGY = {
    Project.Kind.LIKERT: "scores",
    Project.Kind.BEST_OF_N: "best_vs_rest",
    Project.Kind.PAIRWISE: "pairwise_majority",
    # An arena's votes are pairwise votes on the battle's two answers (one voter per battle).
    Project.Kind.ARENA: "pairwise_majority",
}
# Columns kept beside prompt / chosen / rejected in the TRL layouts.
TRL_KEEP = ("item_id", "chosen_model", "rejected_model", "margin", "category", "language", "register")
# The dashboard names its two nominal measures by criterion; the card names them for a reader.
ALPHA_NAMES = {"best": "best pick", "vote": "pairwise vote"}
JUDGE_KEYS = ("with_ties", "n_with_ties", "without_ties", "n_without_ties")
CONSISTENCY_KEYS = ("n", "consistent", "biased_first", "biased_second", "error")
JUDGE_COLUMN_NAMES = {
    "with_ties": "with ties",
    "n_with_ties": "trials (with ties)",
    "without_ties": "without ties",
    "n_without_ties": "trials (without ties)",
    "n": "pairs judged in both orders",
    "consistent": "position consistent",
    "biased_first": "biased to first",
    "biased_second": "biased to second",
    "error": "errors",
    "partial": "unfinished run",
}


LAYOUT_TEXT = {
    "hf": "",
    "trl-strings": (
        "Layout: TRL's standard preference format. `prompt`, `chosen` and `rejected` are plain text: the "
        "prompt is the transcript up to the first user turn followed by `Assistant:`, chosen and rejected "
        "continue it (see the column notes below for what each holds in message form)."
    ),
    "trl-messages": (
        "Layout: TRL's conversational preference format. `prompt`, `chosen` and `rejected` are lists of "
        "`{role, content}` messages."
    ),
}


LEFT_OUT_TEXT = {
    "categories": (
        "rated on named categories ({values}), which have no order, so it cannot enter a score (its answers "
        "are in the raw annotation exports)"
    ),
    "not_weighted": "not named in the weights",
}


def offered(project: Project) -> bool:
    return project.kind in DEFAULT_STRATEGY


def resolve(*, project: Project, options: ExportOptions) -> ExportOptions:
    """Check the pair options against the project and fill in its defaults; raises ``ExportInvalid``."""
    errors: dict[str, str] = {}
    resolved = rating_options_resolve(project=project, options=options, errors=errors)
    strategy = options.strategy or DEFAULT_STRATEGY[project.kind]
    allowed = strategies_for(project)
    if strategy not in STRATEGIES:
        errors["strategy"] = f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}"
    elif strategy not in allowed:
        errors["strategy"] = (
            Refusal(
                gettext_noop("a %(kind)s project exports with %(allowed)s, not %(strategy)s"),
                kind=project.kind,
                allowed=tuple(allowed),
                strategy=strategy,
            )
            if allowed
            else Refusal(gettext_noop("a %(kind)s project has nothing to pair"), kind=project.kind)
        )
    scales = criterion_scales(project) if project.criteria else {}
    on_points = score_criteria(project).on_points
    weights = dict(options.weights) if options.weights else {c: 1.0 for c in on_points}
    bounds = None
    if strategy == "scores" and "strategy" not in errors:
        unknown = [c for c in weights if c not in project.criteria]
        named = [c for c in weights if c in project.criteria and c not in on_points]
        if unknown:
            errors["weights"] = Refusal(
                gettext_noop("criteria not rated in this project: %(unknown)s; rated: %(rated)s")
                if project.criteria
                else gettext_noop("criteria not rated in this project: %(unknown)s; rated: none"),
                unknown=", ".join(unknown),
                rated=", ".join(project.criteria),
            )
        elif named:
            errors["weights"] = Refusal(
                gettext_noop(
                    "%(named)s rated on named categories (%(values)s); a score weighs criteria rated on points: %(points)s"
                )
                if on_points
                else gettext_noop(
                    "%(named)s rated on named categories (%(values)s); a score weighs criteria rated on points: none"
                ),
                named=", ".join(named),
                values=", ".join(str(v) for v in scales[named[0]].values),
                points=", ".join(on_points),
            )
        elif not weights:
            errors["weights"] = Refusal(gettext_noop("name at least one rated criterion"))
        else:
            found = {c: (scales[c].bounds if c in scales else (1, 5)) for c in weights}
            # One shared scale: raw means, as always (same order, margins in points); mixed: each on 0-1.
            if len(set(found.values())) > 1:
                bounds = found
    if not weights:
        weights = {"relevance": 1.0, "fluency": 1.0}  # unused: nothing is rated in this project
    if options.ordering not in ORDERINGS:
        errors["ordering"] = f"expected one of {', '.join(ORDERINGS)}"
    if options.turn is not None and (project.kind != Project.Kind.PAIRWISE or options.turn < 0):
        errors["turn"] = "a turn applies to pairwise projects only (0-based)"
    if options.reliability_weights and strategy != "pairwise_majority":
        errors["reliability_weights"] = Refusal(
            gettext_noop("applies to the pairwise_majority strategy only, not %(strategy)s"),
            strategy=strategy,
        )
    resolved = replace(resolved, strategy=strategy, weights=weights, scales=bounds)
    if not errors:
        try:
            resolved.pair_config()
        except ValueError as exc:
            errors["options"] = str(exc)
    if errors:
        raise ExportInvalid(errors)
    return resolved


def strategies_for(project: Project) -> list[str]:
    """The pair strategies a rating project can export with (``scores`` only when it rates criteria)."""
    if project.kind in (Project.Kind.PAIRWISE, Project.Kind.ARENA):
        return ["pairwise_majority"]
    if project.kind == Project.Kind.BEST_OF_N:
        return ["best_vs_rest"]
    allowed = ["scores"] if project.criteria else []
    if project.best_pick != Project.BestPick.OFF:
        allowed.append("best_vs_rest")
    return allowed


@dataclass(frozen=True)
class ScoreCriteria:
    """A project's rated criteria as a score sees them: those rated on points can be weighed; those rated on
    named categories (yes / no) have no order and never enter a score."""

    on_points: list[str]
    on_categories: dict[str, list[str]]

    def left_out(self, weights: Mapping[str, float] | None) -> list[dict[str, Any]]:
        """Rated criteria a score with these weights leaves out, each with why: ``categories`` (with the
        category values) or ``not_weighted`` (rated on points, not named in the weights)."""
        named = set(weights or ())
        out: list[dict[str, Any]] = []
        for criterion in [*self.on_points, *self.on_categories]:
            if criterion in self.on_categories:
                out.append(
                    {"criterion": criterion, "reason": "categories", "values": self.on_categories[criterion]}
                )
            elif criterion not in named:
                out.append({"criterion": criterion, "reason": "not_weighted", "values": []})
        return out


def score_criteria(project: Project) -> ScoreCriteria:
    """Which of the project's criteria a score can weigh (in the project's order)."""
    scales = criterion_scales(project) if project.criteria else {}
    categories = {
        c: [str(v) for v in scales[c].values]
        for c in project.criteria
        if c in scales and scales[c].categories
    }
    return ScoreCriteria(
        on_points=[c for c in project.criteria if c not in categories], on_categories=categories
    )


def _left_out_text(left_out: list[dict[str, Any]]) -> dict[str, str]:
    return {
        row["criterion"]: LEFT_OUT_TEXT[row["reason"]].format(values=", ".join(row["values"]))
        for row in left_out
    }


@dataclass
class ProjectData:
    """What one export reads from the database."""

    items: pd.DataFrame
    responses: pd.DataFrame
    ratings: pd.DataFrame | None = None
    picks: pd.DataFrame | None = None
    votes: pd.DataFrame | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    # User id -> Dawid-Skene reliability, when the votes are reliability-weighted.
    vote_weights: dict[int, float] | None = None
    # The card's alpha per measure, computed before anything else is read (see ``read``).
    alpha: dict[str, AlphaFigure] = field(default_factory=dict)


def read(*, project: Project, options: ExportOptions, step: Step) -> ProjectData:
    """The card's agreement figures, then what the pairs are built from (:func:`read_frames`)."""
    # The agreement figures first, from the answers as the dashboard reads them (its order and columns),
    # and the ratings the pairs are scored with from the same answers: a million ratings read once. Done
    # before the export's own frames exist, the answers never stand in memory beside them.
    step(2, "computing agreement")
    answers = analytics_selectors.annotation_frame(project=project, agreement_only=True)
    alpha = project_alpha(
        project=project, draws=options.bootstrap_draws, seed=int(options.seed or 0), answers=answers
    )
    ratings = preferences_selectors.ratings_from_answers(project, answers) if project.criteria else None
    del answers
    data = read_frames(project=project, options=options, step=step, ratings=ratings)
    data.alpha = alpha
    return data


def read_frames(
    *,
    project: Project,
    options: ExportOptions,
    step: Step | None = None,
    ratings: pd.DataFrame | None = None,
) -> ProjectData:
    """Items, responses and the evidence the strategy needs (plus ratings for per-criterion scores;
    ``ratings``: already read, see :func:`read`)."""
    step = step or (lambda percent, stage: None)
    step(35, "reading prompts")
    prompt_ids, response_ids = selectors.task_targets(project)
    items = selectors.items_frame(project, prompt_ids=prompt_ids)
    step(40, "reading responses")
    responses = preferences_selectors.responses_frame(project, response_ids=response_ids)
    data = ProjectData(items=items, responses=responses)
    if project.criteria:
        step(45, "reading ratings")
        data.ratings = ratings if ratings is not None else preferences_selectors.ratings_frame(project)
    if (
        options.strategy == "best_vs_rest"
        or project.kind == Project.Kind.BEST_OF_N
        or (project.best_pick != Project.BestPick.OFF)
    ):
        step(52, "reading best picks")
        data.picks = preferences_selectors.picks_frame(project)
    if project.kind in (Project.Kind.PAIRWISE, Project.Kind.ARENA):
        step(52, "reading votes")
        data.votes = preferences_selectors.votes_frame(project)
    if options.reliability_weights:
        step(55, "estimating annotator reliability")
        data.vote_weights = annotator_reliability(project=project)
        if not data.vote_weights:
            raise ExportInvalid(
                {
                    "reliability_weights": Refusal(
                        gettext_noop(
                            "the reliability of annotators is estimated from the votes of at least two "
                            "annotators; this project has fewer"
                        )
                    )
                }
            )
    return data


def pairs_build(*, data: ProjectData, options: ExportOptions) -> PreferenceResult:
    """Preference pairs with the prompt's external id beside the item id."""
    result = build_preference_pairs(
        data.items,
        data.responses,
        config=options.pair_config(),
        ratings=data.ratings if data.ratings is not None and len(data.ratings) else None,
        picks=data.picks,
        votes=data.votes,
        vote_weights=data.vote_weights,
    )
    pairs = result.pairs
    external = pd.Series(data.items["external_id"].to_numpy(), index=data.items["item_id"].to_numpy())
    pairs.insert(1, "prompt_external_id", pairs["item_id"].map(external).to_numpy())
    return result


def _split(pairs: pd.DataFrame, options: ExportOptions) -> tuple[dict[str, pd.DataFrame], SplitPlan | None]:
    if options.test_size > 0 and len(pairs):
        return split_pairs(pairs, seed=int(options.seed or 0), test_size=options.test_size)
    return ({"train": pairs} if len(pairs) else {}), None


def project_alpha(
    *, project: Project, draws: int, seed: int, answers: pd.DataFrame | None = None
) -> dict[str, AlphaFigure]:
    """Krippendorff's alpha with a 95% bootstrap interval, as the agreement dashboard computes it: per rated
    criterion (ordinal), for best-of-N picks and for pairwise votes (nominal)."""
    rows = analytics_services.project_alpha(
        project=project, level="ordinal", draws=draws, seed=seed, alpha_only=True, answers=answers
    )
    out: dict[str, AlphaFigure] = {}
    for row in rows:
        ci = (row["ci_low"], row["ci_high"]) if row["ci_low"] is not None else None
        name = ALPHA_NAMES.get(str(row["criterion"]), str(row["criterion"]))
        out[name] = AlphaFigure(alpha=row["alpha"], ci95=ci, level=row["level"], n_units=row["n_units"])
    return out


def _alpha_json(alpha: Mapping[str, AlphaFigure]) -> dict[str, dict[str, Any]]:
    return {
        name: {
            "alpha": figure.alpha,
            "ci95": list(figure.ci95) if figure.ci95 else None,
            "level": figure.level,
            "n_units": figure.n_units,
        }
        for name, figure in alpha.items()
    }


def preview(*, project: Project, options: ExportOptions) -> dict[str, Any]:
    """The pairs, splits and strata these (resolved) options would give."""
    result = pairs_build(data=read_frames(project=project, options=options), options=options)
    splits, plan = _split(result.pairs, options)
    weighed = dict(options.weights or {}) if options.strategy == "scores" else {}
    return {
        "format": options.kind,
        "strategy": options.strategy,
        "weighed": weighed,
        "left_out": score_criteria(project).left_out(weighed) if weighed else [],
        "pairs": result.counts.as_dict(),
        "split_rows": {name: len(frame) for name, frame in splits.items()},
        "categories": counts_by(splits, "category") if splits else {},
        "languages": counts_by(splits, "language") if splits else {},
        "too_small_strata": _too_small(plan),
    }


def _too_small(plan: SplitPlan | None) -> list[dict[str, Any]]:
    """Strata (category, language) that got no test prompt."""
    if plan is None:
        return []
    return [{"category": s.key[0], "language": s.key[1], "prompts": s.n_items} for s in plan.too_small]


def judge_figures(*, project: Project, response_ids) -> dict[str, dict[str, Any]]:
    """Per judge run: agreement with the human votes on the exported prompts (with and without ties, with
    trial counts) and, for pairwise judges, position consistency; the agreement dashboard's numbers."""
    section = analytics_services.judges_for_responses(project=project, response_ids=response_ids)
    tables = section.get("tables") or {}
    consistency = {row["judge"]: row for row in tables.get("position_consistency", [])}
    partial = {row["judge"]: row for row in section.get("partial", [])}
    out: dict[str, dict[str, Any]] = {}
    for row in tables.get("leaderboard", []):
        if row["kind"] == "human":
            continue
        figures = {key: row[key] for key in JUDGE_KEYS}
        flags = consistency.get(row["judge"])
        if flags is not None:
            figures.update({key: flags[key] for key in CONSISTENCY_KEYS})
        if row["judge"] in partial:
            # A run still working (or stopped) when the export ran: its figures cover part of its items.
            figures["partial"] = (
                f"partial: {partial[row['judge']]['n_done']} of {partial[row['judge']]['n_total']} items"
            )
        out[row["judge"]] = figures
    return out


def _judge_card_rows(figures: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        judge: {JUDGE_COLUMN_NAMES[key]: value for key, value in row.items()}
        for judge, row in figures.items()
    }


@dataclass
class PreferenceBuild:
    """The splits to write (in the export's layout), their schema, and what the card and the row report."""

    splits: dict[str, pd.DataFrame]
    schema: pa.Schema
    card_input: CardInput
    counts: dict[str, Any] = field(default_factory=dict)


def build(*, project: Project, options: ExportOptions, data: ProjectData, step: Step) -> PreferenceBuild:
    step(60, "building pairs")
    result = pairs_build(data=data, options=options)
    if result.pairs.empty:
        raise ExportFailed(
            "no preference pairs came out of these options "
            f"({result.counts.items_kept} of {result.counts.items_in} prompts kept, "
            f"{result.counts.ties_dropped} ties dropped); nothing was written"
        )
    step(70, "splitting")
    splits, plan = _split(result.pairs, options)
    response_ids = data.responses.loc[
        data.responses["item_id"].isin(result.pairs["item_id"].unique()), "response_id"
    ].tolist()
    vote_weights = (
        {
            selectors.annotator_pseudonym(project=project, user_id=user_id): weight
            for user_id, weight in data.vote_weights.items()
        }
        if data.vote_weights is not None
        else None
    )
    alpha = data.alpha
    del data
    judges = judge_figures(project=project, response_ids=response_ids)
    card_input = _card_input(project, options, result, splits, alpha)
    if options.kind == "trl-strings":
        splits = {name: to_trl_strings(frame, keep_columns=TRL_KEEP) for name, frame in splits.items()}
    elif options.kind == "trl-messages":
        splits = {name: to_trl_messages(frame, keep_columns=TRL_KEEP) for name, frame in splits.items()}
    # The card's column table is the schema the parquet files are written with.
    schema = infer_schema(next(iter(splits.values())))
    n_annotators, n_simulated = selectors.annotator_counts(project)
    # Simulated answers are always declared, whatever was stated when the export was created.
    provenance = (
        "simulated" if n_simulated and n_simulated == n_annotators else options.provenance or "unstated"
    )
    card_input = replace(
        card_input,
        columns=[(f.name, str(f.type)) for f in schema],
        provenance=provenance,
        n_annotators=n_annotators,
        n_simulated_annotators=n_simulated,
        judge_agreement=_judge_card_rows(judges),
        test_size=options.test_size,
        too_small_strata=[
            (f"{s.key[0] or '(none)'} / {s.key[1] or '(none)'}", s.n_items) for s in plan.too_small
        ]
        if plan
        else [],
        vote_weights=vote_weights,
    )
    counts = {
        "format": options.kind,
        "strategy": options.strategy,
        "pairs": result.counts.as_dict(),
        "split_rows": {},
        "alpha": _alpha_json(alpha),
        "judges": judges,
        "provenance": provenance,
        "simulated_annotators": n_simulated,
        "too_small_strata": _too_small(plan),
    }
    return PreferenceBuild(splits=splits, schema=schema, card_input=card_input, counts=counts)


def card(
    *, project: Project, options: ExportOptions, built: PreferenceBuild, destination: Destination
) -> str:
    return render_dataset_card(
        replace(built.card_input, folder_name=destination.folder.name, hub_repo_id=destination.hub_repo_id)
    )


def write(
    *, destination: Destination, built: PreferenceBuild, card: Callable[[], str], step: Step
) -> dict[str, Any]:
    text = card()
    step(75, "writing parquet files")
    rows = write_hf_folder(destination.folder, built.splits, text, schema=built.schema, overwrite=True)
    return {**built.counts, "split_rows": rows}


def _card_input(
    project: Project,
    options: ExportOptions,
    result: PreferenceResult,
    splits: Mapping[str, pd.DataFrame],
    alpha: Mapping[str, AlphaFigure],
) -> CardInput:
    languages = sorted({str(v) for frame in splits.values() for v in frame["language"].unique() if v})
    categories = sorted({str(v) for frame in splits.values() for v in frame["category"].unique() if v})
    versions = project.rubric_versions or {}
    rubric_version = ", ".join(f"{c} v{versions[c]}" for c in project.criteria if c in versions) or None
    guidelines = {
        lang: text
        for lang, text in (("en", project.instructions_en), ("id", project.instructions_id))
        if text.strip()
    }
    summary = " ".join(
        part
        for part in (
            f'Preference pairs from the {kind_name(project)} project "{project.name}" '
            f'over the dataset "{project.dataset.name}", exported by Timbang.',
            project.description.strip(),
            LAYOUT_TEXT[options.kind],
        )
        if part
    )
    parameters = {
        **options.pair_config().as_dict(),
        "reliability_weights": options.reliability_weights,
        "test_size": options.test_size,
        "seed": options.seed,
        "format": options.kind,
        "project_id": project.pk,
        "dataset_id": project.dataset_id,
    }
    # Only what shaped this export: weights, ordering and scales make a score; a turn and reliability
    # weights apply to pairwise votes.
    unused = set()
    if options.strategy != "scores":
        unused |= {"weights", "ordering", "scales"}
    if options.strategy != "pairwise_majority":
        unused |= {"turn", "reliability_weights"}
    parameters = {key: value for key, value in parameters.items() if key not in unused}
    left_out = score_criteria(project).left_out(options.weights) if options.strategy == "scores" else []
    return CardInput(
        pretty_name=options.pretty_name,
        license=options.license,
        languages=languages,
        split_rows={name: len(frame) for name, frame in splits.items()},
        summary=summary,
        parameters=parameters,
        left_out_criteria=_left_out_text(left_out),
        pair_counts=result.counts.as_dict(),
        rubric_version=rubric_version,
        rubrics=preferences_selectors.rubric_texts(project, categories),
        guidelines=guidelines or None,
        category_counts=counts_by(splits, "category"),
        language_counts=counts_by(splits, "language"),
        alpha=dict(alpha) or None,
    )


FAMILY = Family(
    name="preferences",
    formats=PAIR_KINDS,
    offered=offered,
    resolve=resolve,
    preview=preview,
    read=read,
    build=build,
    card=card,
    write=write,
)
