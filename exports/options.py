"""Export options: what an export depends on (``ExportOptions``, stored complete on the ``Export`` row),
the parsing of the command's and the API's option strings, the refusals, and the checks every family of
export shares (seed, licence, dataset name, provenance; a corpus export's single train split).

A family (``exports.families``) resolves the rest of its options on top of these.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from django.utils.translation import gettext_noop

from annotation.models import Project
from exports import selectors
from exports.domain.dataset_card import PROVENANCES
from exports.domain.preference_pairs import PairConfig

PAIR_KINDS = ("hf", "trl-strings", "trl-messages")
RAW_FORMATS = {"raw-parquet": "parquet", "raw-csv": "csv", "raw-jsonl": "jsonl"}
PARALLEL_CORPUS = "parallel-corpus"
QUESTION_SET = "question-set"
ERROR_SPANS = "error-spans"
MQM_TSV = "mqm-tsv"
CORPUS_KINDS = (PARALLEL_CORPUS, QUESTION_SET, ERROR_SPANS, MQM_TSV)
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
DEFAULT_LICENSE = "other"
BOOTSTRAP_DRAWS = 1000
MAX_BOOTSTRAP_DRAWS = 10_000
SPLIT_SPEC_RE = re.compile(r"\s*(?:test\s*=\s*)?([0-9]*\.?[0-9]+)\s*")


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


def rating_options_resolve(
    *, project: Project, options: ExportOptions, errors: dict[str, str]
) -> ExportOptions:
    """The options of an export of a rating project that do not shape pairs, with the project's defaults;
    refusals go into ``errors`` (the family raises them with its own)."""
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
    return replace(
        options,
        seed=seed,
        provenance=_provenance(project, provenance),
        license=default_license(project, options),
        pretty_name=default_pretty_name(project, options),
        categories=parse_list(options.categories),
        languages=parse_list(options.languages),
        registers=parse_list(options.registers),
    )


def answers_options_resolve(
    *, project: Project, options: ExportOptions, errors: dict[str, str]
) -> ExportOptions:
    """The options of an export of a rating project's answers as they are (raw annotations, a Label Studio
    project): the card's options, no pair strategy or weights; refusals go into ``errors``."""
    resolved = rating_options_resolve(project=project, options=options, errors=errors)
    if options.reliability_weights:
        errors["reliability_weights"] = "applies to preference pairs from pairwise votes only"
    return replace(resolved, strategy=None, weights=None)


def default_license(project: Project, options: ExportOptions) -> str:
    """The licence asked for, else the dataset's, else ``other``."""
    return options.license.strip() or project.dataset.license.strip().lower() or DEFAULT_LICENSE


def default_pretty_name(project: Project, options: ExportOptions) -> str:
    return options.pretty_name.strip() or f"{project.name} (Timbang export)"


def _provenance(project: Project, stated: str) -> str:
    """The stated provenance, or ``unstated``; ``simulated`` whenever every annotator was simulated.

    When only some annotators were simulated the card says how many, whatever was stated.
    """
    n_annotators, n_simulated = selectors.annotator_counts(project)
    if n_simulated and n_simulated == n_annotators:
        return "simulated"
    return stated or "unstated"


def corpus_options_resolve(
    *, project: Project, options: ExportOptions, takes_max_ambiguous: bool = False
) -> ExportOptions:
    """A corpus export takes the whole final corpus as one train split: pair options and filters are
    refused rather than silently ignored, so the stored options say exactly what was done.

    ``takes_max_ambiguous``: the export leaves out questions flagged ambiguous too often (by default, over
    the project's limit); otherwise that option is refused."""
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
    if takes_max_ambiguous:
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
        license=default_license(project, options),
        pretty_name=default_pretty_name(project, options),
        max_ambiguous=max_ambiguous,
    )
