"""Backends by name, imported only when asked for.

GPU and local-model backends pull in heavy optional packages (torch, vllm, xllamacpp); importing
them lazily keeps the web application and CPU-only workers free of those packages. A name whose module is
not there yet, or whose optional packages are not installed, raises :class:`BackendNotAvailable` saying
which, instead of an ImportError from deep inside.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import Any

from evaluation.inference.base import Backend, BackendConfigError


class BackendNotAvailable(BackendConfigError):
    """The backend is unknown, not implemented yet, or its optional packages are missing."""


@dataclass(frozen=True)
class _Entry:
    module: str
    attribute: str
    install_hint: str
    requires: tuple[str, ...] = ()
    scores_options: bool = True  # log-probability and cloze modes (``Backend.score_options``)
    completes_text: bool = False  # plain text completion (completion mode, for base models)


_BACKENDS: dict[str, _Entry] = {
    "openai": _Entry(
        "evaluation.inference.openai_backend",
        "OpenAIBackend",
        "httpx is a core dependency",
        scores_options=False,
        completes_text=True,
    ),
    "transformers": _Entry(
        "evaluation.inference.transformers_backend",
        "TransformersBackend",
        "install the 'transformers' extra (transformers and torch; on GPU hosts the 'gpu' extra)",
        requires=("torch", "transformers"),
    ),
    "vllm": _Entry(
        "evaluation.inference.vllm_backend",
        "VllmBackend",
        "install the 'gpu' extra (vllm) on a host with a CUDA GPU",
        requires=("vllm",),
    ),
    "llamacpp": _Entry(
        "evaluation.inference.llamacpp_backend",
        "LlamaCppBackend",
        "install xllamacpp (prebuilt llama.cpp wheels on PyPI; `make install` installs it)",
        requires=("xllamacpp",),
        completes_text=True,
    ),
}
_ALIASES = {"llama.cpp": "llamacpp", "llama_cpp": "llamacpp", "llama-cpp": "llamacpp", "hf": "transformers"}

BACKEND_NAMES: tuple[str, ...] = tuple(_BACKENDS)


def normalise_backend_name(name: str) -> str:
    key = name.strip().lower()
    return _ALIASES.get(key, key)


def backend_scores_options(name: str) -> bool:
    """Whether the backend ``name`` scores options by log-probability (known without importing it)."""
    entry = _BACKENDS.get(normalise_backend_name(name))
    return entry is not None and entry.scores_options


def backend_completes_text(name: str) -> bool:
    """Whether the backend ``name`` runs plain text completion (known without importing it)."""
    entry = _BACKENDS.get(normalise_backend_name(name))
    return entry is not None and entry.completes_text


def backend_class(name: str) -> type[Backend]:
    """The backend class registered as ``name``; raises :class:`BackendNotAvailable` if it cannot be used."""
    key = normalise_backend_name(name)
    entry = _BACKENDS.get(key)
    if entry is None:
        raise BackendNotAvailable(f"unknown backend {name!r}; known backends: {', '.join(BACKEND_NAMES)}")
    if importlib.util.find_spec(entry.module) is None:
        raise BackendNotAvailable(f"the {key!r} backend's module {entry.module} is missing from this install")
    # Checked before importing, so a missing optional package reads the same for every backend.
    missing = [package for package in entry.requires if importlib.util.find_spec(package) is None]
    if missing:
        raise BackendNotAvailable(
            f"the {key!r} backend needs the package {missing[0]!r}, which is not installed: {entry.install_hint}"
        )
    try:
        module = importlib.import_module(entry.module)
    except ModuleNotFoundError as exc:
        raise BackendNotAvailable(
            f"the {key!r} backend needs the package {exc.name!r}, which is not installed: {entry.install_hint}"
        ) from exc
    cls = getattr(module, entry.attribute, None)
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise BackendNotAvailable(
            f"the {key!r} backend is not implemented yet ({entry.module}.{entry.attribute})"
        )
    return cls


def create_backend(name: str, **options: Any) -> Backend:
    """A backend instance: ``create_backend("openai", base_url=..., model=..., api_key_env=...)``."""
    return backend_class(name)(**options)
