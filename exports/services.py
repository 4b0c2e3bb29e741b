"""Exports: preference datasets (Hugging Face, TRL) and raw annotations of rating projects (DESIGN.md §7);
the final parallel corpus of a translation project and the final question set of a question project.

``export_create`` validates the options and records an ``Export`` row (queued, run by the
``datasets_app.export_run`` task after commit, or at once by the command); ``export_run`` reads the
project from the database in pages (``export_selectors``), builds pairs with the pure builder, splits,
renders the card, streams the files, zips them and pushes to the Hub when asked. ``export_preview``
does the reading and pair building only, for the counts a researcher sees before exporting. A corpus
export (``parallel-corpus``, ``question-set``) streams its rows page by page from ``export_selectors``
into a one-split Hugging Face folder whose card is written from the rows that went out.

The options stored on the row are complete (defaults resolved), so an export can be run again from its
row alone and gives the same rows for the same annotations.
"""

from __future__ import annotations

import logging
import math
import re
import shutil
import uuid
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
from django.conf import settings
from django.db import transaction
from django.utils import translation
from django.utils.text import slugify
from django.utils.translation import gettext_noop
from huggingface_hub import HfApi, get_token

from analytics import services as analytics_services
from annotation.models import Project
from annotation.selectors import annotator_reliability, criterion_scales
from datasets_app.jobs import (
    JobCancelled,
    JobKind,
    job_cancel,
    job_check,
    job_finish,
    job_heartbeat,
    job_retry,
    job_send,
    job_take,
    new_task_id,
)
from exports import selectors
from exports.domain.dataset_card import (
    CSV_CELLS_NOTE,
    PROVENANCES,
    AlphaFigure,
    CardInput,
    counts_by,
    render_dataset_card,
    render_yaml,
    size_category,
    work_lines,
)
from exports.domain.preference_pairs import (
    ORDERINGS,
    STRATEGIES,
    PairConfig,
    PreferenceResult,
    build_preference_pairs,
)
from exports.domain.splits import SplitPlan, split_pairs
from exports.models import Export
from exports.writers import (
    infer_schema,
    to_trl_messages,
    to_trl_strings,
    write_hf_folder,
    write_long_format,
    zip_folder,
)

logger = logging.getLogger(__name__)

PAIR_KINDS = ("hf", "trl-strings", "trl-messages")
RAW_FORMATS = {"raw-parquet": "parquet", "raw-csv": "csv", "raw-jsonl": "jsonl"}
PARALLEL_CORPUS = "parallel-corpus"
QUESTION_SET = "question-set"
CORPUS_KINDS = (PARALLEL_CORPUS, QUESTION_SET)
KINDS = (*PAIR_KINDS, *RAW_FORMATS, *CORPUS_KINDS)
# Options that shape preference pairs, with the value that means "not used" (refused on corpus exports).
PAIR_ONLY_DEFAULTS = {
    "strategy": None,
    "weights": None,
    "min_margin": 0.0,
    "min_annotators": 1,
    "min_agreement": None,
    "categories": None,
    "languages": None,
    "registers": None,
    "turn": None,
    "reliability_weights": False,
}
DEFAULT_STRATEGY = {
    Project.Kind.LIKERT: "scores",
    Project.Kind.BEST_OF_N: "best_vs_rest",
    Project.Kind.PAIRWISE: "pairwise_majority",
}
DEFAULT_LICENSE = "other"
BOOTSTRAP_DRAWS = 1000
MAX_BOOTSTRAP_DRAWS = 10_000
# Columns kept beside prompt / chosen / rejected in the TRL layouts.
TRL_KEEP = ("item_id", "chosen_model", "rejected_model", "margin", "category", "language", "register")
REPO_ID_RE = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}")
SPLIT_SPEC_RE = re.compile(r"\s*(?:test\s*=\s*)?([0-9]*\.?[0-9]+)\s*")
ERROR_CHARS = 2000


class Refusal(str):
    """A refusal in English, as the API, the command and the stored export say it, that a page can also
    show in its own language: ``message`` (in the catalogue) with ``%(name)s`` placeholders filled from
    ``params``. A list or tuple value is a choice of alternatives, joined with "or"."""

    message: str
    params: dict[str, object]

    def __new__(cls, message: str, **params: object) -> Refusal:
        filled = {k: " or ".join(v) if isinstance(v, (list, tuple)) else v for k, v in params.items()}
        refusal = super().__new__(cls, message % filled if params else message)
        refusal.message, refusal.params = message, params
        return refusal


class ExportInvalid(Exception):
    """Options the export refuses, keyed by option name; ``str()`` is one line for the command. A value
    that is a ``Refusal`` can be shown in the page's language."""

    def __init__(self, errors: Mapping[str, str]):
        self.errors = dict(errors)
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.errors.items()))


class ExportFailed(Exception):
    """An export that could not be written (no pairs, no token for the Hub...); the message says why."""


@dataclass(frozen=True)
class ExportOptions:
    """Everything an export depends on. ``None`` means "the default for this project" until resolved."""

    kind: str = "hf"
    strategy: str | None = None
    weights: Mapping[str, float] | None = None
    ordering: str = "weighted"
    min_margin: float = 0.0
    min_annotators: int = 1
    min_agreement: float | None = None
    categories: Collection[str] | None = None
    languages: Collection[str] | None = None
    registers: Collection[str] | None = None
    turn: int | None = None
    test_size: float = 0.0
    seed: int | None = None
    license: str = ""
    pretty_name: str = ""
    bootstrap_draws: int = BOOTSTRAP_DRAWS
    zip: bool = True
    # Question sets: a question flagged ambiguous by more answers than this is left out.
    max_ambiguous: int | None = None
    # Who gave the answers: expert, crowd or simulated (empty: unstated, and the card says so; simulated
    # whenever every answer is).
    provenance: str = ""
    # Lowest and highest point of each weighted criterion, set when their scales differ (resolved).
    scales: Mapping[str, tuple[int, int]] | None = None
    # Pairwise majority: each vote counts with its annotator's Dawid-Skene reliability instead of 1.
    reliability_weights: bool = False

    @property
    def is_raw(self) -> bool:
        return self.kind in RAW_FORMATS

    @property
    def is_corpus(self) -> bool:
        return self.kind in CORPUS_KINDS

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["weights"] = None if self.weights is None else {str(k): float(v) for k, v in self.weights.items()}
        for key in ("categories", "languages", "registers"):
            if out[key] is not None:
                out[key] = sorted(str(v) for v in out[key])
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExportOptions:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})

    def pair_config(self) -> PairConfig:
        """The builder's configuration (call on resolved options)."""
        return PairConfig(
            strategy=self.strategy,  # type: ignore[arg-type]
            weights=dict(self.weights or {}),
            ordering=self.ordering,  # type: ignore[arg-type]
            min_margin=self.min_margin,
            min_annotators=self.min_annotators,
            min_agreement=self.min_agreement,
            categories=self.categories,
            languages=self.languages,
            registers=self.registers,
            turn=self.turn,
            scales={str(c): (b[0], b[1]) for c, b in (self.scales or {}).items()},
        )

    def filters(self) -> dict[str, Any]:
        if self.kind == QUESTION_SET:
            return {"max_ambiguous": self.max_ambiguous}
        if self.is_corpus:
            return {}
        data = self.as_dict()
        keys = ("min_annotators", "min_agreement", "categories", "languages", "registers", "turn")
        return {k: data[k] for k in keys} | (
            {"reliability_weights": True} if self.reliability_weights else {}
        )


def parse_split(spec: str | None) -> float:
    """Test share from ``test=0.1`` (or ``0.1``); ``none`` / empty means no test split."""
    if spec is None or spec.strip().lower() in ("", "none", "no", "0"):
        return 0.0
    match = SPLIT_SPEC_RE.fullmatch(spec)
    if not match:
        raise ExportInvalid({"split": f"bad split spec {spec!r}: expected test=FRACTION, e.g. test=0.1"})
    share = float(match.group(1))
    if not 0 <= share < 1:
        raise ExportInvalid({"split": f"bad split spec {spec!r}: the test share must lie in [0, 1)"})
    return share


def parse_weights(spec: str | None) -> dict[str, float] | None:
    """Criterion weights from ``relevance=2,fluency=1`` (order kept: it is the lexicographic order)."""
    if spec is None or not spec.strip():
        return None
    weights: dict[str, float] = {}
    for part in spec.split(","):
        name, sep, value = part.partition("=")
        name = name.strip()
        try:
            number = float(value) if sep else 1.0
        except ValueError:
            number = math.nan
        if not name or not math.isfinite(number):
            raise ExportInvalid(
                {
                    "weights": Refusal(
                        gettext_noop("bad weights %(spec)s: expected criterion=number,..."), spec=repr(spec)
                    )
                }
            )
        weights[name] = number
    return weights


def parse_list(spec: str | Collection[str] | None) -> list[str] | None:
    """A filter list from ``a,b`` or a sequence; empty means no filter."""
    if spec is None:
        return None
    values = spec.split(",") if isinstance(spec, str) else list(spec)
    values = [str(v).strip() for v in values if str(v).strip()]
    return values or None


def kinds_for(project: Project) -> tuple[str, ...]:
    """The export formats a project offers, its default first: pairs and raw annotations of a rating
    project, the parallel corpus of a translation project, the question set of a question project."""
    if project.kind in DEFAULT_STRATEGY:
        return (*PAIR_KINDS, *RAW_FORMATS)
    if project.kind in selectors.TRANSLATION_KINDS:
        return (PARALLEL_CORPUS,)
    if project.kind in selectors.QUESTION_KINDS:
        return (QUESTION_SET,)
    return ()


def options_resolve(*, project: Project, options: ExportOptions) -> ExportOptions:
    """Check ``options`` against the project and fill in its defaults; raises ``ExportInvalid``.

    An empty ``kind`` means the project's default format (``kinds_for``).
    """
    errors: dict[str, str] = {}
    allowed_kinds = kinds_for(project)
    if not allowed_kinds:
        raise ExportInvalid({"project": f"a {project.kind} project has nothing to export"})
    kind = options.kind or allowed_kinds[0]
    if kind not in KINDS:
        errors["format"] = f"unknown format {kind!r}; expected one of {', '.join(KINDS)}"
        raise ExportInvalid(errors)
    if kind not in allowed_kinds:
        raise ExportInvalid(
            {"format": f"a {project.kind} project exports as {' or '.join(allowed_kinds)}, not {kind}"}
        )
    options = replace(options, kind=kind)
    if options.is_corpus:
        return _corpus_options_resolve(project=project, options=options)
    if options.max_ambiguous is not None:
        errors["max_ambiguous"] = "applies to question sets only"
    seed = project.seed if options.seed is None else options.seed
    if seed < 0:
        errors["seed"] = "must be a non-negative integer"
    if not 0 <= options.test_size < 1:
        errors["split"] = "the test share must lie in [0, 1)"
    if not 0 <= options.bootstrap_draws <= MAX_BOOTSTRAP_DRAWS:
        errors["bootstrap_draws"] = f"must lie between 0 and {MAX_BOOTSTRAP_DRAWS}"
    provenance = options.provenance.strip().lower()
    if provenance and provenance not in PROVENANCES:
        errors["provenance"] = f"expected one of {', '.join(PROVENANCES)}"
    license = options.license.strip() or project.dataset.license.strip().lower() or DEFAULT_LICENSE
    resolved = replace(
        options,
        seed=seed,
        provenance=_provenance(project, provenance),
        license=license,
        pretty_name=options.pretty_name.strip() or f"{project.name} (Timbang export)",
        categories=parse_list(options.categories),
        languages=parse_list(options.languages),
        registers=parse_list(options.registers),
    )
    if options.is_raw:
        if options.reliability_weights:
            errors["reliability_weights"] = "applies to preference pairs from pairwise votes only"
        if errors:
            raise ExportInvalid(errors)
        return replace(resolved, strategy=None, weights=None)

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


def _provenance(project: Project, stated: str) -> str:
    """The stated provenance, or ``unstated``; ``simulated`` whenever every annotator was simulated.

    When only some annotators were simulated the card says how many, whatever was stated.
    """
    n_annotators, n_simulated = selectors.annotator_counts(project)
    if n_simulated and n_simulated == n_annotators:
        return "simulated"
    return stated or "unstated"


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


LEFT_OUT_TEXT = {
    "categories": (
        "rated on named categories ({values}), which have no order, so it cannot enter a score (its answers "
        "are in the raw annotation exports)"
    ),
    "not_weighted": "not named in the weights",
}


def _left_out_text(left_out: list[dict[str, Any]]) -> dict[str, str]:
    return {
        row["criterion"]: LEFT_OUT_TEXT[row["reason"]].format(values=", ".join(row["values"]))
        for row in left_out
    }


def _corpus_options_resolve(*, project: Project, options: ExportOptions) -> ExportOptions:
    """A corpus export takes the whole final corpus as one train split: pair options and filters are
    refused rather than silently ignored, so the stored options say exactly what was done."""
    errors: dict[str, str] = {}
    for name, unused in PAIR_ONLY_DEFAULTS.items():
        value = getattr(options, name)
        if isinstance(value, (list, tuple, set, frozenset)) and not value:
            value = None
        if value != unused:
            errors[name] = "applies to preference exports of rating projects only"
    if options.test_size:
        errors["split"] = "a corpus export is one train split; leave the test share at 0"
    max_ambiguous = options.max_ambiguous
    if options.kind == QUESTION_SET:
        max_ambiguous = project.max_ambiguous if max_ambiguous is None else max_ambiguous
        if max_ambiguous < 0:
            errors["max_ambiguous"] = "must be a non-negative integer"
    elif max_ambiguous is not None:
        errors["max_ambiguous"] = "applies to question sets only"
    seed = project.seed if options.seed is None else options.seed
    if seed < 0:
        errors["seed"] = "must be a non-negative integer"
    if errors:
        raise ExportInvalid(errors)
    return replace(
        options,
        **PAIR_ONLY_DEFAULTS,
        test_size=0.0,
        seed=seed,
        license=options.license.strip() or project.dataset.license.strip().lower() or DEFAULT_LICENSE,
        pretty_name=options.pretty_name.strip() or f"{project.name} (Timbang export)",
        max_ambiguous=max_ambiguous,
    )


def strategies_for(project: Project) -> list[str]:
    """The pair strategies a rating project can export with (``scores`` only when it rates criteria)."""
    if project.kind == Project.Kind.PAIRWISE:
        return ["pairwise_majority"]
    if project.kind == Project.Kind.BEST_OF_N:
        return ["best_vs_rest"]
    allowed = ["scores"] if project.criteria else []
    if project.best_pick != Project.BestPick.OFF:
        allowed.append("best_vs_rest")
    return allowed


# --- reading and building -----------------------------------------------------------------------------


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


def project_data_read(*, project: Project, options: ExportOptions, progress=None) -> ProjectData:
    """Items, responses and the evidence the strategy needs (plus ratings for per-criterion scores)."""
    step = progress or (lambda percent, stage: None)
    step(3, "reading prompts")
    prompt_ids, response_ids = selectors.task_targets(project)
    items = selectors.items_frame(project, prompt_ids=prompt_ids)
    step(8, "reading responses")
    responses = selectors.responses_frame(project, response_ids=response_ids)
    data = ProjectData(items=items, responses=responses)
    if project.criteria:
        step(15, "reading ratings")
        data.ratings = selectors.ratings_frame(project)
    if (
        options.strategy == "best_vs_rest"
        or project.kind == Project.Kind.BEST_OF_N
        or (project.best_pick != Project.BestPick.OFF)
    ):
        step(30, "reading best picks")
        data.picks = selectors.picks_frame(project)
    if project.kind == Project.Kind.PAIRWISE:
        step(30, "reading votes")
        data.votes = selectors.votes_frame(project)
    if options.reliability_weights:
        step(35, "estimating annotator reliability")
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


# The dashboard names its two nominal measures by criterion; the card names them for a reader.
ALPHA_NAMES = {"best": "best pick", "vote": "pairwise vote"}


def project_alpha(*, project: Project, draws: int, seed: int) -> dict[str, AlphaFigure]:
    """Krippendorff's alpha with a 95% bootstrap interval, as the agreement dashboard computes it: per rated
    criterion (ordinal), for best-of-N picks and for pairwise votes (nominal)."""
    rows = analytics_services.project_alpha(project=project, level="ordinal", draws=draws, seed=seed)
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


def export_preview(*, project: Project, options: ExportOptions) -> dict[str, Any]:
    """The counts an export with these options would give, without writing anything."""
    options = options_resolve(project=project, options=options)
    if options.is_corpus:
        return corpus_counts(project=project, options=options)
    if options.is_raw:
        return {"format": options.kind, "rows": selectors.annotation_count(project)}
    data = project_data_read(project=project, options=options)
    result = pairs_build(data=data, options=options)
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


# --- the Export row ---------------------------------------------------------------------------------


def hub_token() -> str | None:
    """The Hub token huggingface_hub finds (``HF_TOKEN``, else a saved login); never stored or logged."""
    return get_token()


@transaction.atomic
def export_create(
    *,
    project: Project,
    options: ExportOptions,
    user=None,
    hub_repo_id: str = "",
    hub_private: bool = True,
    out_dir: str | Path | None = None,
    queue: bool = True,
) -> Export:
    """Validate and record an export; with ``queue`` it runs in a worker once the transaction commits.

    ``out_dir`` (the command's ``--out``) is the folder to write; by default a folder per export under
    ``EXPORTS_DIR``.
    """
    options = options_resolve(project=project, options=options)
    hub_repo_id = (hub_repo_id or "").strip()
    if hub_repo_id:
        if not REPO_ID_RE.fullmatch(hub_repo_id):
            raise ExportInvalid(
                {
                    "push_to_hub": Refusal(
                        gettext_noop("bad repo id %(repo)s: expected owner/name"), repo=repr(hub_repo_id)
                    )
                }
            )
        if not hub_token():
            raise ExportInvalid({"push_to_hub": Refusal(gettext_noop("no Hugging Face token: set HF_TOKEN"))})
    record = Export.objects.create(
        project=project,
        kind=options.kind,
        strategy=options.strategy or "",
        options=options.as_dict(),
        filters=options.filters(),
        hub_repo_id=hub_repo_id,
        hub_private=hub_private,
        folder_path=str(Path(out_dir).resolve()) if out_dir else "",
        created_by=user if getattr(user, "is_authenticated", False) else None,
        task_id=new_task_id(),
    )
    if queue:
        job_send(kind=EXPORT_JOB, job_id=record.pk, task_id=record.task_id)
    return record


def _own_folder(export: Export) -> Path:
    return Path(settings.EXPORTS_DIR) / f"export-{export.pk}"


def _export_folder(export: Export) -> Path:
    # The command names its folder (and has checked it may be replaced); the others get one per export.
    return Path(export.folder_path) if export.folder_path else _own_folder(export)


def _in_own_folder(export: Export) -> bool:
    """Whether the export writes to its own folder under ``EXPORTS_DIR`` (not a folder the command named)."""
    return _export_folder(export) == _own_folder(export)


def _export_failure(export: Export, message: str) -> list[str]:
    export.error = message[:ERROR_CHARS]
    return ["error"]


def _export_reset(export: Export) -> list[str]:
    export.progress = 1
    export.stage = "starting"
    export.error = ""
    export.counts = {}
    export.zip_path = ""
    export.hub_revision = ""
    export.hub_url = ""
    return ["progress", "stage", "error", "counts", "zip_path", "hub_revision", "hub_url"]


def _export_clean_up(export: Export, status: str) -> None:
    """Remove what an unfinished attempt wrote: the folder, its zip and any staging folder beside it.

    Only a folder this export owns (one per export under ``EXPORTS_DIR``) is removed: a folder named by
    the command (``--out``) is the user's, and may hold the previous export it was allowed to replace.
    """
    if status == Export.Status.SUCCEEDED or not _in_own_folder(export):
        return
    folder = _own_folder(export)
    if folder.is_dir():
        shutil.rmtree(folder, ignore_errors=True)
    folder.with_name(folder.name + ".zip").unlink(missing_ok=True)
    for staging in folder.parent.glob(f".{folder.name}.partial-*"):
        shutil.rmtree(staging, ignore_errors=True)


EXPORT_JOB = JobKind(
    model=Export,
    noun="export",
    task="exports.tasks.export_run_task",
    time_limit=timedelta(seconds=3600 + 60),
    record_failure=_export_failure,
    reset=_export_reset,
    clean_up=_export_clean_up,
    # An export the command runs writes to the command's folder, in the command's process.
    on_worker=_in_own_folder,
)


def _progress(record: Export, percent: int, stage: str) -> None:
    """A progress step: stored on the row; raises JobCancelled when the export was cancelled meanwhile."""
    job_check(kind=EXPORT_JOB, job=record, progress=percent, stage=stage[:100])


def export_run(*, export: Export, task_id: str | None = None) -> Export:
    """Run a queued export to the end; the row says succeeded (with counts and paths), failed (why) or
    cancelled.

    Safe to call twice: only a queued row is taken, or a running one whose earlier delivery of the same
    task died (it starts again from a clean folder); anything else is returned as it is. A cancel asked
    for while it runs stops it at its next progress step. A failed or cancelled export leaves no files.
    """
    taken = job_take(kind=EXPORT_JOB, job_id=export.pk, task_id=task_id)
    if taken is None:
        export.refresh_from_db()
        return export
    export = taken.job
    Export.objects.filter(pk=export.pk).update(progress=1, stage="starting", error="")
    try:
        with job_heartbeat(kind=EXPORT_JOB, job=export):
            _export_write(export)
    except JobCancelled:
        job_finish(kind=EXPORT_JOB, job=export, status=Export.Status.CANCELLED)
    except Exception as exc:  # the row must say what went wrong, whatever it was
        logger.exception("export %s failed", export.pk)
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        job_finish(kind=EXPORT_JOB, job=export, status=Export.Status.FAILED, message=message)
    else:
        Export.objects.filter(pk=export.pk).update(progress=100, stage="done")
        job_finish(kind=EXPORT_JOB, job=export, status=Export.Status.SUCCEEDED)
    export.refresh_from_db()
    return export


def export_cancel(*, export: Export) -> Export:
    """Cancel a queued export at once, or stop a running one at its next step (its files are removed)."""
    return job_cancel(kind=EXPORT_JOB, job_id=export.pk)


def export_retry(*, export: Export) -> Export:
    """Run a failed or cancelled export again with the same options."""
    return job_retry(kind=EXPORT_JOB, job_id=export.pk)


def _export_write(export: Export) -> None:
    project = export.project
    if project is None:
        raise ExportFailed("the project of this export was deleted")
    options = ExportOptions.from_dict(export.options)
    folder = _export_folder(export)

    def step(percent: int, stage: str) -> None:
        _progress(export, percent, stage)

    if options.kind == PARALLEL_CORPUS:
        counts = _write_parallel_corpus(project=project, options=options, folder=folder, step=step)
    elif options.kind == QUESTION_SET:
        counts = _write_question_set(project=project, options=options, folder=folder, step=step)
    elif options.is_raw:
        counts = _write_raw(project=project, options=options, folder=folder, step=step)
    else:
        counts = _write_pairs(
            project=project, options=options, folder=folder, step=step, hub_repo_id=export.hub_repo_id
        )
    updates: dict[str, Any] = {"counts": counts, "folder_path": str(folder)}
    if options.zip:
        step(92, "zipping")
        zip_path = folder.with_name(folder.name + ".zip")
        zip_folder(folder, zip_path)
        updates["zip_path"] = str(zip_path)
    Export.objects.filter(pk=export.pk).update(**updates)
    if export.hub_repo_id:
        step(95, "pushing to the Hugging Face Hub")
        commit = hub_push(
            folder=folder,
            repo_id=export.hub_repo_id,
            private=export.hub_private,
            commit_message=f"Timbang export {export.pk} of project {project.pk} ({export.kind})",
        )
        Export.objects.filter(pk=export.pk).update(hub_revision=commit.oid, hub_url=commit.repo_url)


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


def _judge_card_rows(figures: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        judge: {JUDGE_COLUMN_NAMES[key]: value for key, value in row.items()}
        for judge, row in figures.items()
    }


def _write_pairs(
    *, project: Project, options: ExportOptions, folder: Path, step, hub_repo_id: str = ""
) -> dict[str, Any]:
    data = project_data_read(project=project, options=options, progress=step)
    step(45, "building pairs")
    result = pairs_build(data=data, options=options)
    if result.pairs.empty:
        raise ExportFailed(
            "no preference pairs came out of these options "
            f"({result.counts.items_kept} of {result.counts.items_in} prompts kept, "
            f"{result.counts.ties_dropped} ties dropped); nothing was written"
        )
    step(60, "splitting")
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
    # The agreement computation reads the answers again (through analytics, the dashboard's numbers): the
    # export's own frames are let go first, so the two never stand in memory together.
    del data
    step(70, "computing agreement")
    alpha = project_alpha(project=project, draws=options.bootstrap_draws, seed=int(options.seed or 0))
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
        folder_name=folder.name,
        hub_repo_id=hub_repo_id,
        vote_weights=vote_weights,
    )
    card = render_dataset_card(card_input)
    step(75, "writing parquet files")
    rows = write_hf_folder(folder, splits, card, schema=schema, overwrite=True)
    return {
        "format": options.kind,
        "strategy": options.strategy,
        "pairs": result.counts.as_dict(),
        "split_rows": rows,
        "alpha": _alpha_json(alpha),
        "judges": judges,
        "provenance": provenance,
        "simulated_annotators": n_simulated,
        "too_small_strata": _too_small(plan),
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


def _kind_name(project: Project) -> str:
    """The project's kind as the (English) cards name it, whatever language is active in the worker."""
    with translation.override("en"):
        return str(project.get_kind_display()).lower()


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
            f'Preference pairs from the {_kind_name(project)} project "{project.name}" '
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
        rubrics=selectors.rubric_texts(project, categories),
        guidelines=guidelines or None,
        category_counts=counts_by(splits, "category"),
        language_counts=counts_by(splits, "language"),
        alpha=dict(alpha) or None,
    )


def _write_raw(*, project: Project, options: ExportOptions, folder: Path, step) -> dict[str, Any]:
    fmt = RAW_FORMATS[options.kind]
    name = f"annotations.{fmt}"
    staging = folder.parent / f".{folder.name}.partial-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    try:
        step(10, "writing annotations")
        rows = write_long_format(staging / name, selectors.raw_annotation_chunks(project), fmt=fmt)  # type: ignore[arg-type]
        (staging / "README.md").write_text(_raw_card(project, options, name, rows), encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return {"format": options.kind, "rows": rows, "file": name}


RAW_COLUMN_TEXT = {
    "annotator": "Pseudonymous annotator id, stable within this project (a keyed hash, not reversible).",
    "group": "The annotator group the answer counts toward.",
    "is_gold": "Whether the task was a gold (control) item.",
    "round": "Answer round (goes up when a reviewer sent the task back).",
    "criterion": "What the row holds: a rated criterion, `best` (best-of-N pick), `vote` or `comment`.",
    "response_id / model_name": "The rated or picked response (for a vote: the winner; empty for a tie).",
    "shown_position": "Where that response stood on the annotator's screen (1-based).",
    "shown_order": "Response ids in the order the annotator saw them.",
    "value / choice": "The 1-5 rating; the pick (`all_bad`) or the vote (`A`, `B`, `tie`, `both_bad`).",
    "rubric_version": "Version of the rubric the rating was given under.",
    "started_at / submitted_at / seconds_on_task": "When the task was claimed and submitted; time on the page.",
}


def _raw_card(project: Project, options: ExportOptions, name: str, rows: int) -> str:
    header = render_yaml(
        {
            "pretty_name": options.pretty_name,
            "license": options.license,
            "tags": ["human-feedback", "annotations"],
            "configs": [{"config_name": "default", "data_files": [{"split": "train", "path": name}]}],
        }
    )
    lines = [
        f"# {options.pretty_name}",
        "",
        f'Raw annotations of the {_kind_name(project)} project "{project.name}", one row per '
        f"value in long format ({rows:,} rows): the current answer of every submitted task, gold items "
        "flagged. Annotators appear under pseudonyms only.",
        "",
        "| column | meaning |",
        "|---|---|",
        *[f"| {column} | {text} |" for column, text in RAW_COLUMN_TEXT.items()],
        "",
        CSV_CELLS_NOTE,
        "",
        "## License",
        "",
        f"`{options.license}`",
        "",
    ]
    return f"---\n{header}---\n\n" + "\n".join(lines)


# --- corpus exports: the parallel corpus and the question set -----------------------------------------

PARALLEL_CORPUS_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("source", pa.string()),
        ("target", pa.string()),
        ("source_language", pa.string()),
        ("target_language", pa.string()),
        ("register", pa.string()),
        ("translator", pa.string()),
        ("n_rounds", pa.int64()),
        ("fixed_by_reviewer", pa.bool_()),
        ("flags", pa.list_(pa.string())),
    ]
)
QUESTION_SET_SCHEMA = pa.schema(
    [
        *((name, pa.string()) for name in selectors.QUESTION_SET_COLUMNS[:14]),
        ("n_answers", pa.int64()),
        ("accuracy", pa.float64()),
        ("n_ambiguous", pa.int64()),
    ]
)
# What the card counts by: the rows actually written are tallied on their way to the parquet file.
PARALLEL_CORPUS_KEYS = ("source_language", "target_language", "register")
QUESTION_SET_KEYS = ("category", "language")


def corpus_counts(*, project: Project, options: ExportOptions) -> dict[str, Any]:
    """What a corpus export with these (resolved) options writes, from aggregate queries."""
    if options.kind == PARALLEL_CORPUS:
        groups = selectors.parallel_corpus_counts(project)
        summary = _parallel_corpus_summary(options, {(s, t, r): n for s, t, r, n in groups})
        return {**summary, "work": selectors.parallel_corpus_work(project)}
    limit = int(options.max_ambiguous or 0)
    counts = selectors.question_set_counts(project, max_ambiguous=limit)
    return {
        "format": options.kind,
        **counts,
        "max_ambiguous": options.max_ambiguous,
        "work": selectors.question_set_work(project, max_ambiguous=limit),
    }


def _parallel_corpus_summary(options: ExportOptions, groups: Mapping[tuple[str, str, str], int]) -> dict:
    pairs: dict[str, int] = {}
    for (source, target, _), n in sorted(groups.items()):
        pairs[f"{source}-{target}"] = pairs.get(f"{source}-{target}", 0) + n
    return {
        "format": options.kind,
        "rows": sum(groups.values()),
        "language_pairs": pairs,
        "groups": [
            {"source_language": s, "target_language": t, "register": r, "rows": n}
            for (s, t, r), n in sorted(groups.items())
        ],
    }


def _tallied(chunks, keys: tuple[str, ...], tally: dict[tuple, int]):
    """Pass ``chunks`` through, counting rows per ``keys`` value into ``tally``."""
    for chunk in chunks:
        if len(chunk):
            for key, n in chunk.groupby(list(keys), dropna=False, sort=False).size().items():
                key = key if isinstance(key, tuple) else (key,)
                tally[key] = tally.get(key, 0) + int(n)
        yield chunk


def _corpus_folder_write(
    *, folder: Path, chunks, schema: pa.Schema, keys: tuple[str, ...], card, step
) -> dict[tuple, int]:
    """Stream ``chunks`` into a one-split dataset folder, then write the card from the rows written."""
    tally: dict[tuple, int] = {}
    step(10, "writing parquet files")
    write_hf_folder(folder, {"train": _tallied(chunks, keys, tally)}, "", schema=schema, overwrite=True)
    step(85, "writing the dataset card")
    (folder / "README.md").write_text(card(tally), encoding="utf-8")
    return tally


def _write_parallel_corpus(*, project: Project, options: ExportOptions, folder: Path, step) -> dict[str, Any]:
    if not selectors.corpus_units(project).exists():
        raise ExportFailed("no translation of this project has been accepted yet; nothing was written")
    summary: dict[str, Any] = {}

    def card(tally: Mapping[tuple, int]) -> str:
        summary.update(_parallel_corpus_summary(options, tally))
        summary["work"] = selectors.parallel_corpus_work(project)
        return _parallel_corpus_card(project, options, summary)

    _corpus_folder_write(
        folder=folder,
        chunks=selectors.parallel_corpus_chunks(project),
        schema=PARALLEL_CORPUS_SCHEMA,
        keys=PARALLEL_CORPUS_KEYS,
        card=card,
        step=step,
    )
    return summary


def _write_question_set(*, project: Project, options: ExportOptions, folder: Path, step) -> dict[str, Any]:
    limit = int(options.max_ambiguous or 0)
    counts = selectors.question_set_counts(project, max_ambiguous=limit)
    if not counts["rows"]:
        raise ExportFailed(
            f"no question of this project is accepted and within the ambiguity limit "
            f"({counts['questions']} questions, {counts['over_ambiguous']} over the limit); nothing was written"
        )
    summary: dict[str, Any] = {}

    def card(tally: Mapping[tuple, int]) -> str:
        categories: dict[str, int] = {}
        languages: dict[str, int] = {}
        for (category, language), n in sorted(tally.items()):
            categories[category] = categories.get(category, 0) + n
            languages[language] = languages.get(language, 0) + n
        rows = sum(tally.values())
        summary.update(
            {
                "format": options.kind,
                **counts,
                "rows": rows,
                "categories": categories,
                "languages": languages,
                "max_ambiguous": options.max_ambiguous,
                "work": selectors.question_set_work(project, max_ambiguous=limit),
            }
        )
        return _question_set_card(project, options, summary)

    _corpus_folder_write(
        folder=folder,
        chunks=selectors.question_set_chunks(project, max_ambiguous=limit),
        schema=QUESTION_SET_SCHEMA,
        keys=QUESTION_SET_KEYS,
        card=card,
        step=step,
    )
    return summary


def _corpus_header(
    options: ExportOptions, *, languages: list[str], rows: int, extra: Mapping[str, Any]
) -> str:
    return render_yaml(
        {
            "pretty_name": options.pretty_name,
            "license": options.license,
            "language": languages,
            "multilinguality": "multilingual" if len(languages) > 1 else "monolingual",
            "size_categories": [size_category(rows)],
            **extra,
            "configs": [
                {"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"}]}
            ],
        }
    )


def _reviewed_tags(done: Mapping[str, int]) -> list[str]:
    """``human-reviewed`` only when people gave some of the accepting verdicts."""
    by_people = done["rows"] - done["simulated_rows"] - done["unrecorded_rows"]
    return ["human-reviewed"] if by_people else []


def _simulated_tags(work: Mapping[str, Mapping[str, int]]) -> list[str]:
    """``simulated-annotators`` whenever simulated annotators did some of the work."""
    return ["simulated-annotators"] if any(c["simulated_rows"] for c in work.values()) else []


def _were(n: int) -> str:
    return f"{n:,} was" if n == 1 else f"{n:,} were"


UNRECORDED_NOTE = (
    "*Person not recorded*: imported with a name only (or by no one named), or done by an account since "
    "deleted."
)


def _parameters_lines(project: Project, options: ExportOptions, keys: tuple[str, ...]) -> list[str]:
    data = options.as_dict()
    values = {"format": options.kind, "project_id": project.pk, "dataset_id": project.dataset_id}
    values.update({key: data[key] for key in keys})
    return [f"- `{key}`: `{value}`" for key, value in values.items()]


PARALLEL_CORPUS_COLUMN_TEXT = {
    "id": "The unit's id in the imported dataset.",
    "source": "The source text.",
    "target": "The accepted translation (the reviewer's correction when they fixed it).",
    "source_language / target_language": "ISO 639-3 codes.",
    "register": "The register asked for (empty when the language has none).",
    "translator": "Pseudonym of the translator, stable within this project (a keyed hash, not reversible).",
    "n_rounds": "Review rounds the unit went through (0: imported as already accepted).",
    "fixed_by_reviewer": "Whether the final text is the reviewer's correction.",
    "flags": "Codes of the automatic checks that still flag the final text (length, numbers, register...).",
}


def _parallel_corpus_card(project: Project, options: ExportOptions, summary: Mapping[str, Any]) -> str:
    groups = summary["groups"]
    languages = sorted({g["source_language"] for g in groups} | {g["target_language"] for g in groups})
    work = summary["work"]
    header = _corpus_header(
        options,
        languages=languages,
        rows=summary["rows"],
        extra={
            "task_categories": ["translation"],
            "tags": [
                "parallel-corpus",
                *_reviewed_tags(work["accepting_verdicts"]),
                *_simulated_tags(work),
            ],
        },
    )
    unreviewed = summary["rows"] - work["accepting_verdicts"]["rows"]
    by_target: dict[str, int] = {}
    for g in groups:
        by_target[g["target_language"]] = by_target.get(g["target_language"], 0) + g["rows"]
    lines = [
        f"# {options.pretty_name}",
        "",
        f'The final parallel corpus of the {_kind_name(project)} project "{project.name}" over '
        f'the dataset "{project.dataset.name}", exported by Timbang: {summary["rows"]:,} source texts with '
        "their accepted translation. A reviewer checked each translation written in Timbang and accepted it "
        "as it was or corrected it; a rejected translation went back to its translator with the reviewer's "
        "error categories until it was accepted. Units still being translated or reviewed are not included. "
        "Translators appear under pseudonyms only.",
        "",
        "## Who did the work",
        "",
        *work_lines(
            [
                ("translations (units)", work["translations"]),
                ("review verdicts (every round)", work["review_verdicts"]),
                ("accepting verdicts (units)", work["accepting_verdicts"]),
            ]
        ),
        *(
            [
                f"Of the {summary['rows']:,} units, {_were(unreviewed)} imported as already accepted and not "
                "reviewed in Timbang.",
                "",
            ]
            if unreviewed
            else []
        ),
        UNRECORDED_NOTE,
        "",
        "## Columns",
        "",
        "| column | meaning |",
        "|---|---|",
        *[f"| {column} | {text} |" for column, text in PARALLEL_CORPUS_COLUMN_TEXT.items()],
        "",
        "## Counts",
        "",
        "Per language pair and register:",
        "",
        "| source | target | register | rows |",
        "|---|---|---|---:|",
        *[
            f"| {g['source_language']} | {g['target_language']} | {g['register'] or '-'} | {g['rows']:,} |"
            for g in groups
        ],
        "",
        "Per target language:",
        "",
        "| language | rows |",
        "|---|---:|",
        *[f"| {language} | {n:,} |" for language, n in sorted(by_target.items())],
        "",
        "## How it was made",
        "",
        *_parameters_lines(project, options, ()),
        "",
        "## License",
        "",
        f"`{options.license}`",
        "",
    ]
    return f"---\n{header}---\n\n" + "\n".join(lines)


QUESTION_SET_COLUMN_TEXT = {
    "id": "The question's id in its dataset.",
    "concept / category": "The cultural concept the question is about and its category.",
    "language": "ISO 639-3 code of the question.",
    "question": "The question text.",
    "choice_a ... choice_e": "The five options.",
    "answer": "The key (A-E).",
    "distractor": "The option the author meant as the most tempting wrong one (may be empty).",
    "creator": "Pseudonym of the question's author, stable within this project (a keyed hash).",
    "origin": "`human` (written by a person) or `llm` (generated by a model, then reviewed).",
    "n_answers": "Answers given by annotators who are not the author.",
    "accuracy": "Share of those answers that chose the key (empty without answers).",
    "n_ambiguous": "Answers that flagged the question as ambiguous.",
}


def _question_set_card(project: Project, options: ExportOptions, summary: Mapping[str, Any]) -> str:
    languages = sorted(summary["languages"])
    header = _corpus_header(
        options,
        languages=languages,
        rows=summary["rows"],
        extra={
            "task_categories": ["multiple-choice", "question-answering"],
            "task_ids": ["multiple-choice-qa"],
            "tags": [
                "cultural-knowledge",
                *_reviewed_tags(summary["work"]["accepting_verdicts"]),
                *_simulated_tags(summary["work"]),
            ],
        },
    )
    work = summary["work"]
    unreviewed = summary["rows"] - work["accepting_verdicts"]["rows"]
    source = (
        "this project's answers"
        if project.kind == Project.Kind.MCQ_ANSWER
        else "the answers of every answering project over the same dataset"
    )
    not_accepted = ", ".join(f"{n:,} {status}" for status, n in summary["not_accepted"].items()) or "none"
    lines = [
        f"# {options.pretty_name}",
        "",
        f'The final question set of the {_kind_name(project)} project "{project.name}" over '
        f'the dataset "{project.dataset.name}", exported by Timbang: {summary["rows"]:,} multiple-choice '
        "questions (five options, one key). Questions written in Timbang were checked by a reviewer who "
        "accepted them or returned them to their author; accepted questions were answered by annotators who "
        "are not their author, who could flag a question as ambiguous. Authors appear under pseudonyms only.",
        "",
        "## Who did the work",
        "",
        *work_lines(
            [
                ("questions written", work["questions"]),
                ("accepting verdicts (questions)", work["accepting_verdicts"]),
                ("answers (`n_answers`)", work["answers"]),
            ]
        ),
        *(
            [
                f"Of the {summary['rows']:,} questions, {_were(unreviewed)} imported as already accepted and "
                "not reviewed in Timbang.",
                "",
            ]
            if unreviewed
            else []
        ),
        *(
            [
                "Answers by simulated annotators count in `n_answers`, `accuracy` and `n_ambiguous`, and "
                "their ambiguity flags count toward the exclusion rule below.",
                "",
            ]
            if work["answers"]["simulated_rows"]
            else []
        ),
        UNRECORDED_NOTE,
        "",
        "## Exclusion rule",
        "",
        f"A question is included when it is accepted and at most {summary['max_ambiguous']} answers "
        f"(counting {source}) flag it as ambiguous. Left out here: {summary['over_ambiguous']:,} accepted "
        f"question(s) over that limit, and questions not accepted ({not_accepted}; `excluded` ones went over "
        "the ambiguity limit of an answering project). Of "
        f"{summary['questions']:,} questions in the project, {summary['rows']:,} are in this set.",
        "",
        "## Columns",
        "",
        "| column | meaning |",
        "|---|---|",
        *[f"| {column} | {text} |" for column, text in QUESTION_SET_COLUMN_TEXT.items()],
        "",
        "## Counts",
        "",
        "| category | questions |",
        "|---|---:|",
        *[f"| {category or '-'} | {n:,} |" for category, n in summary["categories"].items()],
        "",
        "| language | questions |",
        "|---|---:|",
        *[f"| {language} | {n:,} |" for language, n in summary["languages"].items()],
        "",
        "## How it was made",
        "",
        *_parameters_lines(project, options, ("max_ambiguous",)),
        "",
        "## License",
        "",
        f"`{options.license}`",
        "",
    ]
    return f"---\n{header}---\n\n" + "\n".join(lines)


# --- the Hub ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HubCommit:
    oid: str
    commit_url: str
    repo_url: str


def hub_push(
    *,
    folder: str | Path,
    repo_id: str,
    private: bool,
    commit_message: str,
    token: str | None = None,
    endpoint: str | None = None,
) -> HubCommit:
    """Create the dataset repo if needed and upload the folder in one commit; returns the commit.

    ``token`` defaults to what huggingface_hub finds (``HF_TOKEN``); ``endpoint`` to its configured
    endpoint (``HF_ENDPOINT``).
    """
    token = token or hub_token()
    if not token:
        raise ExportFailed("no Hugging Face token: set HF_TOKEN")
    api = HfApi(endpoint=endpoint, token=token)
    repo_url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    info = api.upload_folder(
        folder_path=str(folder), repo_id=repo_id, repo_type="dataset", commit_message=commit_message
    )
    return HubCommit(oid=info.oid, commit_url=info.commit_url, repo_url=str(repo_url))


def export_download_name(export: Export) -> str:
    """File name offered for the zip: the project's name as a slug, the export id and the format."""
    base = slugify(export.project.name if export.project else "project") or "project"
    return f"{base}-export-{export.pk}-{export.kind}.zip"
