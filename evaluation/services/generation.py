"""Generation runs: every chosen model answers every prompt of a dataset (n samples each), turn by turn."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils.translation import gettext_noop

from accounts.domain.echo import echoed
from datasets_app.models import Dataset, Prompt, Response
from evaluation.domain.sampling import SamplingParams, SamplingParamsError
from evaluation.inference.base import ChatRequest
from evaluation.models import GenerationRun, ModelEndpoint, RunChunk
from evaluation.services.endpoints import endpoint_backend, endpoint_sampling
from evaluation.services.runs import (
    ItemOutcome,
    RunConfigError,
    check_chunk_size,
    chunk_process,
    chunks_create,
    run_launch,
)

GENERATION_OPTIONS = frozenset(
    {"sampling", "seed", "max_tokens", "system_prompt", "chunk_size", "prompt_ids"}
)
MAX_SYSTEM_PROMPT_CHARS = 20_000


def checked_system_prompt(value: Any) -> str:
    """The run's system prompt: text of at most ``MAX_SYSTEM_PROMPT_CHARS`` characters; empty (or only
    whitespace) for none."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RunConfigError(
            gettext_noop("system_prompt must be text, got %(type)s"), type=type(value).__name__
        )
    if len(value) > MAX_SYSTEM_PROMPT_CHARS:
        raise RunConfigError(
            gettext_noop("system_prompt is longer than %(most)s characters (%(got)s)"),
            most=MAX_SYSTEM_PROMPT_CHARS,
            got=len(value),
        )
    return value if value.strip() else ""


def response_model_name(endpoint_slug: str, sample: int, n_per_prompt: int) -> str:
    """The ``model_name`` of a generated response: the endpoint's slug, with ``#k`` when sampling n > 1."""
    return endpoint_slug if n_per_prompt == 1 else f"{endpoint_slug}#{sample + 1}"


@transaction.atomic
def generation_run_start(
    *,
    dataset: Dataset,
    endpoints: Sequence[ModelEndpoint],
    n_per_prompt: int = 1,
    options: dict[str, Any] | None = None,
    name: str = "",
    user=None,
) -> GenerationRun:
    """Plan and queue a generation run. ``options``: ``sampling`` (overrides of the endpoints' defaults),
    ``seed``, ``max_tokens``, ``system_prompt`` (sent as the first chat message of every conversation, before
    the prompt's own turns), ``chunk_size``, ``prompt_ids`` (a subset of the dataset)."""
    options = dict(options or {})
    unknown = [name for name in options if name not in GENERATION_OPTIONS]
    if unknown:
        raise RunConfigError(f"unknown option(s): {echoed(unknown)}")
    endpoints = list(endpoints)
    if not endpoints:
        raise RunConfigError("choose at least one model endpoint")
    if isinstance(n_per_prompt, bool) or not isinstance(n_per_prompt, int) or not 1 <= n_per_prompt <= 100:
        raise RunConfigError("n_per_prompt must be an integer in 1..100")
    chunk_size = check_chunk_size(options.get("chunk_size"))
    system_prompt = checked_system_prompt(options.get("system_prompt"))
    overrides = dict(options.get("sampling") or {})
    for key in ("seed", "max_tokens"):
        if options.get(key) is not None:
            overrides[key] = options[key]
    try:
        sampling = {e.slug: endpoint_sampling(e, overrides).replace(n=1).to_dict() for e in endpoints}
    except SamplingParamsError as exc:
        raise RunConfigError(exc.message, **exc.params) from exc
    config = {
        "sampling": sampling,
        "seed": overrides.get("seed"),
        "system_prompt": system_prompt,
        "chunk_size": chunk_size,
    }
    run = GenerationRun.objects.create(
        dataset=dataset, n_per_prompt=n_per_prompt, config=config, name=name, created_by=user
    )
    run.endpoints.set(endpoints)

    prompts = dataset.prompts.order_by("id")
    if options.get("prompt_ids"):
        prompts = prompts.filter(pk__in=options["prompt_ids"])
    prompt_ids = list(prompts.values_list("pk", flat=True))
    total = 0
    index = 0
    for endpoint in endpoints:
        items = [
            {
                "key": f"{response_model_name(endpoint.slug, sample, n_per_prompt)}|{prompt_id}",
                "prompt": prompt_id,
                "sample": sample,
            }
            for prompt_id in prompt_ids
            for sample in range(n_per_prompt)
        ]
        chunks = chunks_create(
            run=run, endpoint=endpoint, items=items, chunk_size=chunk_size, first_index=index
        )
        index += len(chunks)
        total += len(items)
    run_launch(run=run, n_total=total)
    return run


def generation_existing_keys(run: GenerationRun, items: list[dict[str, Any]]) -> set[str]:
    prompt_ids = {item["prompt"] for item in items}
    return {
        f"{model_name}|{prompt_id}"
        for model_name, prompt_id in Response.objects.filter(
            generation_run=run, prompt_id__in=prompt_ids
        ).values_list("model_name", "prompt_id")
    }


def _messages(system_prompt: str, user_turns: Sequence[str], answers: Sequence[str]) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    for n, user_turn in enumerate(user_turns):
        messages.append({"role": "user", "content": user_turn})
        if n < len(answers):
            messages.append({"role": "assistant", "content": answers[n]})
    return messages


def generation_compute(
    *,
    run: GenerationRun,
    items: list[dict[str, Any]],
    endpoint: ModelEndpoint,
    stop: threading.Event | None = None,
) -> list[ItemOutcome]:
    """Answer the chunk's prompts turn by turn: turn t of every conversation is one batch, and each later
    turn sees the model's own earlier answers. Once ``stop`` is set no further request is sent, and a
    conversation with a turn not sent has no outcome (its earlier turns are sent again by a Retry)."""
    backend = endpoint_backend(endpoint)
    sampling = SamplingParams.from_dict(run.config["sampling"][endpoint.slug])
    system_prompt = run.config.get("system_prompt") or ""
    prompts = Prompt.objects.in_bulk([item["prompt"] for item in items])
    answers: dict[str, list[str]] = {item["key"]: [] for item in items}
    stats: dict[str, dict[str, Any]] = {
        item["key"]: {"latency_s": 0.0, "prompt_tokens": 0, "completion_tokens": 0, "finish_reasons": []}
        for item in items
    }
    errors: dict[str, str] = {}
    unsent: set[str] = set()
    by_key = {item["key"]: item for item in items}
    for item in items:
        if item["prompt"] not in prompts:
            errors[item["key"]] = "the prompt no longer exists"
    n_turns = max((len(p.turns) for p in prompts.values()), default=0)
    for turn in range(n_turns):
        requests = []
        for key, item in by_key.items():
            prompt = prompts.get(item["prompt"])
            if key in errors or key in unsent or prompt is None or turn >= len(prompt.turns):
                continue
            item_sampling = sampling
            if sampling.seed is not None:
                item_sampling = sampling.replace(seed=sampling.seed + item["sample"])
            requests.append(
                ChatRequest(
                    messages=_messages(system_prompt, prompt.turns[: turn + 1], answers[key]),
                    sampling=item_sampling,
                    request_id=key,
                )
            )
        if not requests:
            break
        for result in backend.generate(requests, stop=stop):
            key = result.request_id
            if result.cancelled:
                unsent.add(key)
                continue
            if not result.ok:
                errors[key] = f"turn {turn + 1}: {result.error}"
                continue
            answers[key].append(result.text)
            stat = stats[key]
            stat["latency_s"] += result.latency_s
            stat["prompt_tokens"] += result.prompt_tokens or 0
            stat["completion_tokens"] += result.completion_tokens or 0
            stat["finish_reasons"].append(result.finish_reason)

    outcomes = []
    for key, item in by_key.items():
        if key in unsent:
            continue
        if key in errors:
            outcomes.append(ItemOutcome(key=key, error=errors[key]))
            continue
        model_name = key.split("|", 1)[0]
        row = Response(
            prompt_id=item["prompt"],
            model_name=model_name,
            turns=answers[key],
            origin=Response.Origin.GENERATED,
            generation_run=run,
            meta={
                "endpoint": endpoint.slug,
                "model_id": endpoint.model_id,
                "sample": item["sample"],
                **stats[key],
            },
        )
        outcomes.append(ItemOutcome(key=key, rows=[row]))
    return outcomes


def generation_chunk_process(*, chunk: RunChunk, run: GenerationRun) -> bool:
    return chunk_process(
        chunk=chunk, run=run, existing_keys=generation_existing_keys, compute=generation_compute
    )
