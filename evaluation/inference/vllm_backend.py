"""Offline batched inference with vLLM, for a Celery worker on a GPU host (extra ``gpu``).

vLLM is imported when a :class:`VllmBackend` is built, never when this module is imported, so the web
application and CPU workers can import the inference package without it; a missing vLLM raises
:class:`~evaluation.inference.registry.BackendNotAvailable` saying what to install.

A whole batch of chat requests goes to one ``LLM.chat`` call with one ``SamplingParams`` per request
(vLLM schedules them together); the chat template is the model's own. A request's JSON schema becomes a
structured-output constraint: ``StructuredOutputsParams(json=...)`` on vLLM >= 0.10, or
``GuidedDecodingParams(json=...)`` on older releases. Option scoring reads the prompt log-probabilities
vLLM returns for ``prompt + option`` (``prompt_logprobs``), one generation call for all options.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from evaluation.domain.option_scores import SCORE_MODES, option_score
from evaluation.inference.base import (
    Backend,
    BackendConfigError,
    ChatRequest,
    GenerationResult,
    cancelled_result,
    check_remote_code,
    refuse_completion,
    stopped,
)
from evaluation.inference.registry import BackendNotAvailable

logger = logging.getLogger(__name__)


def import_vllm() -> Any:
    """The ``vllm`` module, or :class:`BackendNotAvailable` with the install instruction."""
    try:
        import vllm
    except ImportError as exc:
        raise BackendNotAvailable(
            "the 'vllm' backend needs the package 'vllm', which is not installed: install the 'gpu' extra "
            "(pip install '.[gpu]') on a host with a CUDA GPU, or use the 'openai' backend against a vLLM server"
        ) from exc
    return vllm


class VllmBackend(Backend):
    """A model served in this process by ``vllm.LLM``.

    ``model`` is a local folder or model id; the remaining options go to ``vllm.LLM`` (``llm_options`` for
    anything else, e.g. ``{"enforce_eager": True}``). ``llm`` takes an already built ``LLM``.
    """

    name = "vllm"

    def __init__(
        self,
        *,
        model: str | None = None,
        tensor_parallel_size: int = 1,
        dtype: str = "auto",
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        seed: int = 0,
        trust_remote_code: bool = False,
        remote_code_models: Collection[str] = (),
        llm_options: Mapping[str, Any] | None = None,
        llm: Any = None,
    ) -> None:
        if llm is None and model:
            check_remote_code(model, trust_remote_code, remote_code_models)
        self._vllm = import_vllm()
        if llm is None:
            if not model:
                raise BackendConfigError("give model (a folder or model id) or an LLM object")
            options: dict[str, Any] = {
                "model": model,
                "tensor_parallel_size": tensor_parallel_size,
                "dtype": dtype,
                "gpu_memory_utilization": gpu_memory_utilization,
                "seed": seed,
                "trust_remote_code": trust_remote_code,
            }
            if max_model_len is not None:
                options["max_model_len"] = max_model_len
            options.update(llm_options or {})
            llm = self._vllm.LLM(**options)
        self.model_name = model or "vllm"
        self.llm = llm

    def __repr__(self) -> str:
        return f"VllmBackend(model={self.model_name!r})"

    def close(self) -> None:
        self.llm = None

    # ----------------------------------------------------------------------------------------------
    # Generation

    def sampling_params(self, request: ChatRequest) -> Any:
        """vLLM ``SamplingParams`` for ``request``."""
        sampling = request.sampling
        options: dict[str, Any] = {
            "n": sampling.n,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": sampling.top_k if sampling.top_k is not None else -1,  # -1: no top-k filter
            "max_tokens": sampling.max_tokens,
            "seed": sampling.seed,
        }
        if sampling.stop:
            options["stop"] = list(sampling.stop)
        if request.response_format is not None:
            options.update(self._structured_output(dict(request.response_format)))
        return self._vllm.SamplingParams(**options)

    def _structured_output(self, schema: dict[str, Any]) -> dict[str, Any]:
        # Imported by name: recent vLLM releases load their submodules lazily.
        module = importlib.import_module("vllm.sampling_params")
        if hasattr(module, "StructuredOutputsParams"):
            return {"structured_outputs": module.StructuredOutputsParams(json=schema)}
        if hasattr(module, "GuidedDecodingParams"):
            return {"guided_decoding": module.GuidedDecodingParams(json=schema)}
        raise BackendConfigError("this vLLM version has no structured outputs; upgrade to vLLM >= 0.6.4")

    def generate(
        self, requests: Sequence[ChatRequest], *, stop: threading.Event | None = None
    ) -> list[GenerationResult]:
        requests = list(requests)
        refuse_completion(self.name, requests)
        if not requests:
            return []
        if stopped(stop):  # vLLM runs a batch as one call: a stop is honoured before it starts
            return [cancelled_result(request) for request in requests]
        try:
            return self._generate_batch(requests)
        except (ValueError, RuntimeError) as exc:
            if len(requests) == 1:
                return [_error_result(requests[0], f"vLLM failed: {exc}")]
            # One bad prompt (e.g. longer than max_model_len) fails vLLM's whole call: retry one by one.
            logger.warning("vLLM batch of %d failed (%s); retrying one by one", len(requests), exc)
            return [result for request in requests for result in self.generate([request], stop=stop)]

    def _generate_batch(self, requests: Sequence[ChatRequest]) -> list[GenerationResult]:
        conversations = [[dict(message) for message in request.messages] for request in requests]
        params = [self.sampling_params(request) for request in requests]
        started = time.perf_counter()
        outputs = self.llm.chat(conversations, sampling_params=params, use_tqdm=False)
        elapsed = time.perf_counter() - started
        results = []
        for request, output in zip(requests, outputs, strict=True):
            texts = tuple(completion.text for completion in output.outputs)
            results.append(
                GenerationResult(
                    request_id=request.request_id,
                    text=texts[0] if texts else "",
                    prompt_tokens=len(output.prompt_token_ids or ()),
                    completion_tokens=sum(len(completion.token_ids) for completion in output.outputs),
                    latency_s=elapsed,  # the batch runs as a whole
                    finish_reason=output.outputs[0].finish_reason if output.outputs else None,
                    choices=texts,
                )
            )
        return results

    # ----------------------------------------------------------------------------------------------
    # Option scoring

    def score_options(self, prompt: str, options: Sequence[str], *, mode: str = "sum") -> list[float]:
        """Log-probability of each option as the continuation of ``prompt`` (see :meth:`score_many`)."""
        return self.score_many([(prompt, options)], mode=mode)[0]

    def score_many(
        self, items: Sequence[tuple[str, Sequence[str]]], *, mode: str = "sum"
    ) -> list[list[float]]:
        """Scores for several ``(prompt, options)`` questions in one vLLM call.

        An option's tokens are those of ``prompt + option`` after the longest token prefix shared with
        ``prompt``; ``mode="sum"`` adds their log-probabilities, ``mode="cloze"`` averages them.
        """
        if mode not in SCORE_MODES:
            raise ValueError(f"mode must be one of {', '.join(SCORE_MODES)}, got {mode!r}")
        tokenizer = self.llm.get_tokenizer()
        sequences: list[tuple[list[int], int]] = []
        for prompt, options in items:
            if not options:
                raise ValueError("no options to score")
            prompt_ids = list(tokenizer(prompt)["input_ids"])
            for option in options:
                whole = list(tokenizer(prompt + option)["input_ids"])
                start = _continuation_start(prompt_ids, whole)
                if start == 0:
                    raise ValueError(
                        "the prompt encodes to no tokens, so the first option token has no context"
                    )
                if start == len(whole):
                    raise ValueError(f"option {option!r} adds no tokens to the prompt")
                sequences.append((whole, start))
        # prompt_logprobs=1 returns, for every prompt position, the actual token's log-probability (and the
        # single most likely token's); one generated token is the least vLLM accepts.
        params = self._vllm.SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=1)
        prompts = [{"prompt_token_ids": ids} for ids, _start in sequences]
        outputs = self.llm.generate(prompts, sampling_params=params, use_tqdm=False)
        totals = []
        for (ids, start), output in zip(sequences, outputs, strict=True):
            positions = output.prompt_logprobs
            values = [_logprob_value(positions[t][ids[t]]) for t in range(start, len(ids))]
            totals.append(option_score(values, mode))
        scores, offset = [], 0
        for _prompt, options in items:
            scores.append(totals[offset : offset + len(options)])
            offset += len(options)
        return scores


def _logprob_value(entry: Any) -> float:
    """vLLM gives ``Logprob`` objects (``.logprob``); some versions give plain floats."""
    return float(getattr(entry, "logprob", entry))


def _continuation_start(prompt_ids: Sequence[int], whole_ids: Sequence[int]) -> int:
    limit = min(len(prompt_ids), len(whole_ids))
    for position in range(limit):
        if prompt_ids[position] != whole_ids[position]:
            return position
    return limit


def _error_result(request: ChatRequest, message: str) -> GenerationResult:
    return GenerationResult(
        request_id=request.request_id,
        text="",
        prompt_tokens=None,
        completion_tokens=None,
        latency_s=0.0,
        error=message,
    )
