"""Exports of rating projects: preference datasets (Hugging Face, TRL) and raw annotations (DESIGN.md §7).

``export_create`` validates the options and records an ``Export`` row (queued, run by the
``datasets_app.export_run`` task after commit, or at once by the command); ``export_run`` reads the
project from the database in pages (``export_selectors``), builds pairs with the pure builder, splits,
renders the card, streams the files, zips them and pushes to the Hub when asked. ``export_preview``
does the reading and pair building only, for the counts a researcher sees before exporting.

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
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify
from huggingface_hub import HfApi, get_token

from annotation.models import Project
from datasets_app import export_selectors as selectors
from datasets_app.domain.dataset_card import (
    AlphaFigure,
    CardInput,
    counts_by,
    render_dataset_card,
    render_yaml,
)
from datasets_app.domain.preference_pairs import (
    ORDERINGS,
    STRATEGIES,
    PairConfig,
    PreferenceResult,
    build_preference_pairs,
)
from datasets_app.domain.splits import split_pairs
from datasets_app.export_writers import (
    to_trl_messages,
    to_trl_strings,
    write_hf_folder,
    write_long_format,
    zip_folder,
)
from datasets_app.models import Export
from evaluation.domain.agreement import Reliability

logger = logging.getLogger(__name__)

PAIR_KINDS = ("hf", "trl-strings", "trl-messages")
RAW_FORMATS = {"raw-parquet": "parquet", "raw-csv": "csv", "raw-jsonl": "jsonl"}
KINDS = (*PAIR_KINDS, *RAW_FORMATS)
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


class ExportInvalid(Exception):
    """Options the export refuses, keyed by option name; ``str()`` is one line for the command."""

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

    @property
    def is_raw(self) -> bool:
        return self.kind in RAW_FORMATS

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
        )

    def filters(self) -> dict[str, Any]:
        data = self.as_dict()
        keys = ("min_annotators", "min_agreement", "categories", "languages", "registers", "turn")
        return {k: data[k] for k in keys}


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
            raise ExportInvalid({"weights": f"bad weights {spec!r}: expected criterion=number,..."})
        weights[name] = number
    return weights


def parse_list(spec: str | Collection[str] | None) -> list[str] | None:
    """A filter list from ``a,b`` or a sequence; empty means no filter."""
    if spec is None:
        return None
    values = spec.split(",") if isinstance(spec, str) else list(spec)
    values = [str(v).strip() for v in values if str(v).strip()]
    return values or None


def options_resolve(*, project: Project, options: ExportOptions) -> ExportOptions:
    """Check ``options`` against the project and fill in its defaults; raises ``ExportInvalid``."""
    errors: dict[str, str] = {}
    if project.kind not in DEFAULT_STRATEGY:
        raise ExportInvalid(
            {"project": f"a {project.kind} project holds no ratings; only rating projects export here"}
        )
    if options.kind not in KINDS:
        errors["format"] = f"unknown format {options.kind!r}; expected one of {', '.join(KINDS)}"
        raise ExportInvalid(errors)
    seed = project.seed if options.seed is None else options.seed
    if seed < 0:
        errors["seed"] = "must be a non-negative integer"
    if not 0 <= options.test_size < 1:
        errors["split"] = "the test share must lie in [0, 1)"
    if not 0 <= options.bootstrap_draws <= MAX_BOOTSTRAP_DRAWS:
        errors["bootstrap_draws"] = f"must lie between 0 and {MAX_BOOTSTRAP_DRAWS}"
    license = options.license.strip() or project.dataset.license.strip().lower() or DEFAULT_LICENSE
    resolved = replace(
        options,
        seed=seed,
        license=license,
        pretty_name=options.pretty_name.strip() or f"{project.name} (Timbang export)",
        categories=parse_list(options.categories),
        languages=parse_list(options.languages),
        registers=parse_list(options.registers),
    )
    if options.is_raw:
        if errors:
            raise ExportInvalid(errors)
        return replace(resolved, strategy=None, weights=None)

    strategy = options.strategy or DEFAULT_STRATEGY[project.kind]
    allowed = _strategies_for(project)
    if strategy not in STRATEGIES:
        errors["strategy"] = f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}"
    elif strategy not in allowed:
        errors["strategy"] = (
            f"a {project.kind} project exports with {' or '.join(allowed)}, not {strategy}"
            if allowed
            else f"a {project.kind} project has nothing to pair"
        )
    weights = dict(options.weights) if options.weights else {c: 1.0 for c in project.criteria}
    if strategy == "scores" and "strategy" not in errors:
        unknown = [c for c in weights if c not in project.criteria]
        if unknown:
            errors["weights"] = (
                f"criteria not rated in this project: {', '.join(unknown)}; "
                f"rated: {', '.join(project.criteria) or 'none'}"
            )
        elif not weights:
            errors["weights"] = "name at least one rated criterion"
    if not weights:
        weights = {"relevance": 1.0, "fluency": 1.0}  # unused: nothing is rated in this project
    if options.ordering not in ORDERINGS:
        errors["ordering"] = f"expected one of {', '.join(ORDERINGS)}"
    if options.turn is not None and (project.kind != Project.Kind.PAIRWISE or options.turn < 0):
        errors["turn"] = "a turn applies to pairwise projects only (0-based)"
    resolved = replace(resolved, strategy=strategy, weights=weights)
    if not errors:
        try:
            resolved.pair_config()
        except ValueError as exc:
            errors["options"] = str(exc)
    if errors:
        raise ExportInvalid(errors)
    return resolved


def _strategies_for(project: Project) -> list[str]:
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
    )
    pairs = result.pairs
    external = pd.Series(data.items["external_id"].to_numpy(), index=data.items["item_id"].to_numpy())
    pairs.insert(1, "prompt_external_id", pairs["item_id"].map(external).to_numpy())
    return result


def _split(pairs: pd.DataFrame, options: ExportOptions) -> dict[str, pd.DataFrame]:
    if options.test_size > 0 and len(pairs):
        return split_pairs(pairs, seed=int(options.seed or 0), test_size=options.test_size)
    return {"train": pairs} if len(pairs) else {}


def project_alpha(*, data: ProjectData, draws: int, seed: int) -> dict[str, AlphaFigure]:
    """Krippendorff's alpha with a 95% bootstrap interval: per rated criterion (ordinal, a unit is one
    response), for best-of-N picks (nominal, a unit is one prompt) and for pairwise votes (nominal, a
    unit is one response pair and turn)."""
    frames: list[tuple[str, str, pd.DataFrame]] = []
    if data.ratings is not None and len(data.ratings):
        for criterion in sorted(data.ratings["criterion"].astype(str).unique()):
            part = data.ratings[data.ratings["criterion"].astype(str).to_numpy() == criterion]
            frames.append(
                (
                    criterion,
                    "ordinal",
                    pd.DataFrame(
                        {"unit": part["response_id"], "coder": part["annotator"], "value": part["value"]}
                    ),
                )
            )
    if data.picks is not None and len(data.picks):
        picks = data.picks
        frames.append(
            (
                "best pick",
                "nominal",
                pd.DataFrame(
                    {
                        "unit": picks["item_id"],
                        "coder": picks["annotator"],
                        "value": picks["response_id"].fillna(-1).astype(np.int64),
                    }
                ),
            )
        )
    if data.votes is not None and len(data.votes):
        votes = data.votes
        lo = np.minimum(votes["response_a"], votes["response_b"])
        hi = np.maximum(votes["response_a"], votes["response_b"])
        unit, _ = pd.MultiIndex.from_arrays([lo, hi, votes["turn"]]).factorize()
        swapped = (votes["response_a"] > votes["response_b"]).to_numpy()
        # The same preference reads "A" or "B" depending on which response was A: use the canonical side.
        vote = votes["vote"].to_numpy().astype(object)
        vote = np.where(swapped & (vote == "A"), "B", np.where(swapped & (vote == "B"), "A", vote))
        frames.append(
            (
                "pairwise vote",
                "nominal",
                pd.DataFrame({"unit": unit, "coder": votes["annotator"], "value": vote}),
            )
        )
    out: dict[str, AlphaFigure] = {}
    for name, level, frame in frames:
        prepared = Reliability.from_long(frame, level)
        point = prepared.alpha()
        ci = None
        if point.alpha is not None and draws > 0:
            ci = prepared.bootstrap(draws=draws, seed=seed).ci
        out[name] = AlphaFigure(alpha=point.alpha, ci95=ci, level=level, n_units=point.n_units)
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
    if options.is_raw:
        return {"format": options.kind, "rows": selectors.annotation_count(project)}
    data = project_data_read(project=project, options=options)
    result = pairs_build(data=data, options=options)
    splits = _split(result.pairs, options)
    return {
        "format": options.kind,
        "strategy": options.strategy,
        "pairs": result.counts.as_dict(),
        "split_rows": {name: len(frame) for name, frame in splits.items()},
        "categories": counts_by(splits, "category") if splits else {},
        "languages": counts_by(splits, "language") if splits else {},
    }


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
            raise ExportInvalid({"push_to_hub": f"bad repo id {hub_repo_id!r}: expected owner/name"})
        if not hub_token():
            raise ExportInvalid({"push_to_hub": "no Hugging Face token: set HF_TOKEN"})
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
    )
    if queue:
        from datasets_app.tasks import export_run_task

        transaction.on_commit(lambda: export_run_task.delay(record.pk))
    return record


def _progress(record: Export, percent: int, stage: str) -> None:
    Export.objects.filter(pk=record.pk).update(progress=percent, stage=stage[:100])


def export_run(*, export: Export) -> Export:
    """Run a queued export to the end; the row says succeeded (with counts and paths) or failed (why).

    Safe to call twice: only a queued row is taken (an atomic status change), anything else is returned
    as it is.
    """
    taken = Export.objects.filter(pk=export.pk, status=Export.Status.QUEUED).update(
        status=Export.Status.RUNNING, started_at=timezone.now(), progress=1, stage="starting", error=""
    )
    export.refresh_from_db()
    if not taken:
        return export
    try:
        _export_write(export)
    except Exception as exc:  # the row must say what went wrong, whatever it was
        logger.exception("export %s failed", export.pk)
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        Export.objects.filter(pk=export.pk).update(
            status=Export.Status.FAILED, error=message[:ERROR_CHARS], finished_at=timezone.now()
        )
    else:
        Export.objects.filter(pk=export.pk).update(
            status=Export.Status.SUCCEEDED, progress=100, stage="done", finished_at=timezone.now()
        )
    export.refresh_from_db()
    return export


def _export_write(export: Export) -> None:
    project = export.project
    if project is None:
        raise ExportFailed("the project of this export was deleted")
    options = ExportOptions.from_dict(export.options)
    # The command names its folder (and has checked it may be replaced); the others get one per export.
    folder = (
        Path(export.folder_path) if export.folder_path else Path(settings.EXPORTS_DIR) / f"export-{export.pk}"
    )

    def step(percent: int, stage: str) -> None:
        _progress(export, percent, stage)

    if options.is_raw:
        counts = _write_raw(project=project, options=options, folder=folder, step=step)
    else:
        counts = _write_pairs(project=project, options=options, folder=folder, step=step)
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


def _write_pairs(*, project: Project, options: ExportOptions, folder: Path, step) -> dict[str, Any]:
    data = project_data_read(project=project, options=options, progress=step)
    step(45, "building pairs")
    result = pairs_build(data=data, options=options)
    if result.pairs.empty:
        raise ExportFailed(
            "no preference pairs came out of these options "
            f"({result.counts.items_kept} of {result.counts.items_in} prompts kept, "
            f"{result.counts.ties_dropped} ties dropped); nothing was written"
        )
    step(60, "computing agreement")
    alpha = project_alpha(data=data, draws=options.bootstrap_draws, seed=int(options.seed or 0))
    step(70, "splitting")
    splits = _split(result.pairs, options)
    del data
    card = render_dataset_card(_card_input(project, options, result, splits, alpha))
    if options.kind == "trl-strings":
        splits = {name: to_trl_strings(frame, keep_columns=TRL_KEEP) for name, frame in splits.items()}
    elif options.kind == "trl-messages":
        splits = {name: to_trl_messages(frame, keep_columns=TRL_KEEP) for name, frame in splits.items()}
    step(75, "writing parquet files")
    rows = write_hf_folder(folder, splits, card, overwrite=True)
    return {
        "format": options.kind,
        "strategy": options.strategy,
        "pairs": result.counts.as_dict(),
        "split_rows": rows,
        "alpha": _alpha_json(alpha),
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
            f'Preference pairs from the {project.get_kind_display().lower()} project "{project.name}" '
            f'over the dataset "{project.dataset.name}", exported by Timbang.',
            project.description.strip(),
            LAYOUT_TEXT[options.kind],
        )
        if part
    )
    parameters = {
        **options.pair_config().as_dict(),
        "test_size": options.test_size,
        "seed": options.seed,
        "format": options.kind,
        "project_id": project.pk,
        "dataset_id": project.dataset_id,
    }
    return CardInput(
        pretty_name=options.pretty_name,
        license=options.license,
        languages=languages,
        split_rows={name: len(frame) for name, frame in splits.items()},
        summary=summary,
        parameters=parameters,
        pair_counts=result.counts.as_dict(),
        rubric_version=rubric_version,
        rubrics=selectors.rubric_texts(project, categories),
        guidelines=guidelines or None,
        category_counts=counts_by(splits, "category"),
        language_counts=counts_by(splits, "language"),
        alpha=dict(alpha) or None,
        # No judge run is linked to an export yet: say so rather than leave the question open.
        judge_agreement={"LLM judges": {"agreement with the human preference": None}},
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
        f'Raw annotations of the {project.get_kind_display().lower()} project "{project.name}", one row per '
        f"value in long format ({rows:,} rows): the current answer of every submitted task, gold items "
        "flagged. Annotators appear under pseudonyms only.",
        "",
        "| column | meaning |",
        "|---|---|",
        *[f"| {column} | {text} |" for column, text in RAW_COLUMN_TEXT.items()],
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
