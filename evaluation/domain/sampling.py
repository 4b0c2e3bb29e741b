"""Sampling parameters shared by every inference backend and stored with every run.

The defaults (temperature 0.6, top-p 0.95, top-k 20) are the settings the IndoPref study used for its LLM
judges. They are Timbang's defaults for any run that neither its endpoint nor its judge template sets
otherwise; each shipped judge template states its own sampling (``judge_templates``), e.g. the SeaBench
single-answer grade takes temperature 0 because the SeaBench paper does not state its judge's. The object
is frozen and validated on construction: a bad value fails where it is typed, not deep inside a backend.

A run's parameters are resolved in layers (:func:`resolve_sampling`): for a judge run, the run's explicit
values, else the template's, else the endpoint's defaults, else the defaults here; each value's source is
kept with the run.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from accounts.domain.echo import echoed

DEFAULT_TEMPERATURE = 0.6
DEFAULT_TOP_P = 0.95
DEFAULT_TOP_K = 20
DEFAULT_MAX_TOKENS = 1024


def gettext_noop(message: str) -> str:
    """Marks a message that reaches the run pages for the translation catalogue, as Django's function of this
    name does (the domain does not import Django); the page shows it translated, the API as written."""
    return message


class SamplingParamsError(ValueError):
    """A sampling parameter is out of range or of the wrong type.

    A message with ``%(name)s`` placeholders takes their values as keywords: ``str()`` is the English text
    filled in, and ``message`` with ``params`` let a page translate the text first.
    """

    def __init__(self, message: str, **params: object):
        self.message = message
        self.params = params
        super().__init__(message % params if params else message)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return (isinstance(value, int | float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class SamplingParams:
    """How a backend samples tokens.

    ``top_k=None`` means "do not send top-k" (for hosted APIs that reject the field); ``seed=None`` means
    the server picks. ``stop`` is kept as a tuple so the object stays hashable and immutable.
    """

    temperature: float = DEFAULT_TEMPERATURE
    top_p: float = DEFAULT_TOP_P
    top_k: int | None = DEFAULT_TOP_K
    max_tokens: int = DEFAULT_MAX_TOKENS
    seed: int | None = None
    n: int = 1
    stop: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not _is_number(self.temperature) or not math.isfinite(self.temperature) or self.temperature < 0:
            raise SamplingParamsError(
                gettext_noop("temperature must be a finite number >= 0, got %(value)s"),
                value=repr(self.temperature),
            )
        if not _is_number(self.top_p) or not (0 < self.top_p <= 1):
            raise SamplingParamsError(
                gettext_noop("top_p must be a number in (0, 1], got %(value)s"), value=repr(self.top_p)
            )
        if self.top_k is not None and (not _is_int(self.top_k) or self.top_k < 1):
            raise SamplingParamsError(
                gettext_noop("top_k must be None or an integer >= 1, got %(value)s"), value=repr(self.top_k)
            )
        if not _is_int(self.max_tokens) or self.max_tokens < 1:
            raise SamplingParamsError(
                gettext_noop("max_tokens must be an integer >= 1, got %(value)s"), value=repr(self.max_tokens)
            )
        if self.seed is not None and (not _is_int(self.seed) or self.seed < 0):
            raise SamplingParamsError(
                gettext_noop("seed must be None or an integer >= 0, got %(value)s"), value=repr(self.seed)
            )
        if not _is_int(self.n) or self.n < 1:
            raise SamplingParamsError(f"n must be an integer >= 1, got {self.n!r}")
        object.__setattr__(self, "stop", _normalise_stop(self.stop))

    def replace(self, **changes: Any) -> SamplingParams:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (``stop`` as a list) for storing with a run."""
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "n": self.n,
            "stop": list(self.stop) if self.stop is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SamplingParams:
        """Build from a stored dict; missing keys take the defaults, unknown keys are an error."""
        if not isinstance(data, Mapping):
            raise SamplingParamsError(f"sampling parameters must be a mapping, got {type(data).__name__}")
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = [key for key in data if key not in known]
        if unknown:
            raise SamplingParamsError(
                f"unknown sampling parameter(s): {echoed(unknown)}; known: {', '.join(sorted(known))}"
            )
        return cls(**dict(data))


def _normalise_stop(stop: object) -> tuple[str, ...] | None:
    if stop is None:
        return None
    if isinstance(stop, str):
        stop = (stop,)
    if not isinstance(stop, Sequence) or not all(isinstance(item, str) and item for item in stop):
        raise SamplingParamsError(f"stop must be None, a string or a list of non-empty strings, got {stop!r}")
    return tuple(stop) if stop else None


#: What a judge template may state about sampling (a seed belongs to a run, not to a prompt).
TEMPLATE_SAMPLING_KEYS = ("temperature", "top_p", "top_k", "max_tokens")


def checked_template_sampling(values: object) -> dict[str, Any]:
    """``values`` as a judge template's sampling: a mapping of some of ``TEMPLATE_SAMPLING_KEYS`` with values
    in the same ranges as a run's (``top_k`` may be ``None``: do not send it). Raises
    :class:`SamplingParamsError` naming the bad key or value."""
    if not isinstance(values, Mapping):
        raise SamplingParamsError(
            gettext_noop("sampling must be an object such as %(example)s"), example='{"temperature": 0}'
        )
    unknown = [key for key in values if key not in TEMPLATE_SAMPLING_KEYS]
    if unknown:
        raise SamplingParamsError(
            gettext_noop("unknown sampling parameter(s) %(names)s; a template may set %(known)s"),
            names=echoed(unknown),
            known=", ".join(TEMPLATE_SAMPLING_KEYS),
        )
    given = dict(values)
    SamplingParams(**given)  # the run's ranges; a missing value takes its default
    return given


# Where a resolved sampling value came from.
SOURCE_RUN = "run"
SOURCE_TEMPLATE = "template"
SOURCE_ENDPOINT = "endpoint"
SOURCE_DEFAULT = "default"
SAMPLING_SOURCES = (SOURCE_RUN, SOURCE_TEMPLATE, SOURCE_ENDPOINT, SOURCE_DEFAULT)

#: The parameters whose source a run records (``n`` is set by the run kind, never chosen).
SOURCED_PARAMETERS = ("temperature", "top_p", "top_k", "max_tokens", "seed", "stop")


def resolve_sampling(
    layers: Sequence[tuple[str, Mapping[str, Any]]],
) -> tuple[SamplingParams, dict[str, str]]:
    """The sampling parameters from ``layers`` (``(source, values)``, the most preferred first), and the source
    of each parameter: the first layer that sets it, else ``"default"`` (the defaults above).

    ``resolve_sampling([("run", {"temperature": 0.2}), ("template", {"temperature": 0, "max_tokens": 256}),
    ("endpoint", {"top_k": 40})])`` gives temperature 0.2 (run), max_tokens 256 (template), top_k 40
    (endpoint) and top_p 0.95 (default)."""
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for source, values in reversed(list(layers)):
        for key, value in dict(values or {}).items():
            merged[key] = value
            sources[key] = source
    params = SamplingParams.from_dict(merged)
    return params, {name: sources.get(name, SOURCE_DEFAULT) for name in SOURCED_PARAMETERS}
