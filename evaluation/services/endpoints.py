"""Model endpoints: create and update (validated), and the backend object a worker talks to."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_noop

from accounts.domain.echo import echoed
from evaluation.domain.endpoint_policy import endpoint_refusals
from evaluation.domain.sampling import SamplingParams, SamplingParamsError
from evaluation.inference.base import Backend, BackendConfigError
from evaluation.inference.registry import create_backend
from evaluation.models import (
    BACKEND_OPTIONS,
    QUEUE_NAME,
    ModelEndpoint,
    endpoint_policy,
    looks_like_secret,
    trust_remote_code_refused,
)

ENDPOINT_FIELDS = (
    "slug",
    "backend",
    "base_url",
    "model_id",
    "queue",
    "max_concurrency",
    "sampling_defaults",
    "backend_options",
    "api_key_env",
    "is_active",
    "family",
)

# Backends hold connections or loaded weights: a worker process keeps a few, keyed by the endpoint's
# settings so an edit takes effect on the next chunk.
_BACKEND_CACHE_SIZE = 8
_backend_cache: OrderedDict[str, Backend] = OrderedDict()
_backend_cache_lock = threading.Lock()
# The lock of each backend being built, taken by the threads that want it meanwhile.
_backend_builds: dict[str, threading.Lock] = {}


def endpoint_own_queue(slug: str) -> str:
    """The queue an endpoint gets when none is named: ``gpu.<slug>`` in the queue names' alphabet."""
    name = re.sub(r"[^a-z0-9_-]", "-", slug.lower()).lstrip("-_")
    return f"gpu.{name or 'endpoint'}"


def _validate(endpoint: ModelEndpoint) -> None:
    if not (endpoint.queue or "").strip() and endpoint.slug:
        endpoint.queue = endpoint_own_queue(endpoint.slug)
    # Each error keeps its English text with the values apart (``params``): the API answers it filled in,
    # the endpoint page translates the text first.
    errors: dict[str, list[ValidationError]] = {}
    if not QUEUE_NAME.match(endpoint.queue or ""):
        errors.setdefault("queue", []).append(
            ValidationError(gettext_noop("Use 'default' or 'gpu.<name>' (lower case, digits, - and _)."))
        )
    if endpoint.backend == ModelEndpoint.Backend.OPENAI and not endpoint.base_url:
        errors.setdefault("base_url", []).append(
            ValidationError(gettext_noop("An OpenAI-compatible endpoint needs a base URL."))
        )
    try:
        SamplingParams.from_dict(endpoint.sampling_defaults or {})
    except SamplingParamsError as exc:
        errors.setdefault("sampling_defaults", []).append(
            ValidationError(exc.message, params=exc.params or None)
        )
    if not isinstance(endpoint.backend_options, dict):
        errors.setdefault("backend_options", []).append(
            ValidationError(gettext_noop("Backend options must be an object."))
        )
    else:
        allowed = BACKEND_OPTIONS.get(endpoint.backend, frozenset())
        unknown = [name for name in endpoint.backend_options if name not in allowed]
        if unknown:
            errors.setdefault("backend_options", []).append(
                ValidationError(
                    gettext_noop(
                        "Unknown option(s) for the %(backend)s backend: %(unknown)s; allowed: %(allowed)s."
                    ),
                    params={
                        "backend": endpoint.backend,
                        "unknown": echoed(unknown),
                        "allowed": ", ".join(sorted(allowed)),
                    },
                )
            )
        if _contains_secret(endpoint.backend_options):
            errors.setdefault("backend_options", []).append(
                ValidationError(
                    gettext_noop(
                        "Backend options must not contain credentials; name an environment variable in api_key_env."
                    )
                )
            )
    if errors:
        raise ValidationError(errors)
    endpoint.full_clean()


def _contains_secret(value: Any) -> bool:
    if isinstance(value, str):
        return looks_like_secret(value)
    if isinstance(value, Mapping):
        return any(
            "key" in str(k).lower() or "token" in str(k).lower() or _contains_secret(v)
            for k, v in value.items()
        )
    if isinstance(value, list | tuple):
        return any(_contains_secret(v) for v in value)
    return False


@transaction.atomic
def endpoint_create(*, user=None, **fields: Any) -> ModelEndpoint:
    """A new endpoint; raises ``ValidationError`` (e.g. for a key pasted where its variable's name goes)."""
    unknown = sorted(set(fields) - set(ENDPOINT_FIELDS))
    if unknown:
        raise ValidationError({name: ["Unknown field."] for name in unknown})
    endpoint = ModelEndpoint(created_by=user, **fields)
    _validate(endpoint)
    endpoint.save()
    return endpoint


@transaction.atomic
def endpoint_update(*, endpoint: ModelEndpoint, **fields: Any) -> ModelEndpoint:
    unknown = sorted(set(fields) - set(ENDPOINT_FIELDS))
    if unknown:
        raise ValidationError({name: ["Unknown field."] for name in unknown})
    for name, value in fields.items():
        setattr(endpoint, name, value)
    _validate(endpoint)
    endpoint.save()
    return endpoint


def endpoint_sampling(endpoint: ModelEndpoint, overrides: Mapping[str, Any] | None = None) -> SamplingParams:
    """The endpoint's default sampling parameters with a run's overrides on top (study defaults below)."""
    return SamplingParams.from_dict({**(endpoint.sampling_defaults or {}), **dict(overrides or {})})


def process_share(bound: int, processes: int) -> int:
    """Requests in flight one of ``processes`` worker processes may keep, so that together they keep at most
    ``bound`` (and at least one each): 32 over 2 processes is 16 each, 5 over 2 is 2 each."""
    return max(1, bound // max(1, processes))


def backend_kwargs(endpoint: ModelEndpoint) -> dict[str, Any]:
    """Constructor arguments of the endpoint's backend (the key itself is read by the backend)."""
    options = dict(endpoint.backend_options or {})
    if endpoint.backend == ModelEndpoint.Backend.OPENAI:
        return {
            "base_url": endpoint.base_url,
            "model": endpoint.model_id,
            "api_key_env": endpoint.api_key_env or None,
            "max_concurrency": process_share(endpoint.max_concurrency, settings.MODEL_WORKER_PROCESSES),
            **options,
        }
    if endpoint.backend in (ModelEndpoint.Backend.TRANSFORMERS, ModelEndpoint.Backend.VLLM):
        options["remote_code_models"] = list(settings.TRUST_REMOTE_CODE_MODELS)
    return {"model": endpoint.model_id, **options}


class EndpointNotAllowed(BackendConfigError):
    """The endpoint names a key variable or host the deployment does not allow (a row stored before the
    rule, or the rule changed since): no backend is built, so no request is sent."""


def endpoint_check_allowed(endpoint: ModelEndpoint) -> None:
    """Raise :class:`EndpointNotAllowed` unless the deployment's policy allows the endpoint's key variable
    and (for OpenAI-compatible servers) its host."""
    base_url = endpoint.base_url if endpoint.backend == ModelEndpoint.Backend.OPENAI else ""
    refusals = endpoint_refusals(
        api_key_env=endpoint.api_key_env or "", base_url=base_url or "", policy=endpoint_policy()
    )
    reasons = [refusal.message for refusal in refusals]
    if trust_remote_code_refused(endpoint.backend, endpoint.model_id, endpoint.backend_options):
        reasons.append(
            f"backend_options: trust_remote_code is not allowed for {endpoint.model_id!r} "
            "(setting TRUST_REMOTE_CODE_MODELS)."
        )
    if reasons:
        raise EndpointNotAllowed(f"endpoint {endpoint.slug!r} refused, no request sent: {' '.join(reasons)}")


def _fingerprint(endpoint: ModelEndpoint) -> str:
    data = {"backend": endpoint.backend, "pk": endpoint.pk, **backend_kwargs(endpoint)}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def endpoint_backend(endpoint: ModelEndpoint) -> Backend:
    """The backend for ``endpoint``, reused across chunks in this process while its settings are unchanged.

    Checked against the deployment's policy every time, cached or not, before any key is read. Chunks
    running on threads of one worker process share one backend, hence one bound on requests in flight; the
    first of them builds it and the others wait for that one (building loads a model's weights, or an HTTP
    client's certificates, which several threads at once would do several times over)."""
    endpoint_check_allowed(endpoint)
    key = _fingerprint(endpoint)
    with _backend_cache_lock:
        backend = _backend_cache.get(key)
        if backend is not None:
            _backend_cache.move_to_end(key)
            return backend
        building = _backend_builds.setdefault(key, threading.Lock())
    evicted: list[Backend] = []
    with building:
        with _backend_cache_lock:
            backend = _backend_cache.get(key)
            if backend is not None:  # built by the thread this one waited for
                _backend_cache.move_to_end(key)
                return backend
        try:
            backend = create_backend(endpoint.backend, **backend_kwargs(endpoint))
        finally:
            with _backend_cache_lock:
                _backend_builds.pop(key, None)
        with _backend_cache_lock:
            _backend_cache[key] = backend
            while len(_backend_cache) > _BACKEND_CACHE_SIZE:
                evicted.append(_backend_cache.popitem(last=False)[1])
    for old in evicted:
        old.close()
    return backend


def backend_cache_clear() -> None:
    """Close and forget every cached backend (tests, and workers after an endpoint is deleted)."""
    with _backend_cache_lock:
        while _backend_cache:
            _, backend = _backend_cache.popitem()
            backend.close()
