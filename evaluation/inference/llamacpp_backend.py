"""In-process GGUF models on CPU through llama-cpp-python: generation and option log-likelihoods.

For CPU workers without a model server. Generation goes through ``Llama.create_chat_completion``, which
renders the chat template stored in the GGUF file; a request's JSON schema becomes a llama.cpp grammar
(``response_format={"type": "json_object", "schema": ...}``), which is how small models give parseable
judge output. Sampling follows the study's parameters exactly: llama-cpp-python's own ``min_p`` (0.05 by
default) is switched off, temperature 0 is greedy, and a request's seed seeds its sampler.

Option scoring reads the logits llama.cpp keeps for every evaluated position (``logits_all=True``) and takes
their log-softmax. It does not use ``echo=True`` prompt log-probabilities: in llama-cpp-python 0.3.36 those
are wrong. Options of one question share the prompt's evaluated prefix (its key-value cache), so each
further option costs only its own tokens.

One ``Llama`` object is not thread-safe; calls are serialised with a lock.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.inference.base import Backend, BackendConfigError, ChatRequest, GenerationResult
from evaluation.inference.gguf_models import locate_gguf

logger = logging.getLogger(__name__)

SCORE_MODES = ("sum", "cloze")


def _import_llama() -> Any:
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        from evaluation.inference.registry import BackendNotAvailable

        raise BackendNotAvailable(
            "the 'llamacpp' backend needs llama-cpp-python, which is not installed: run scripts/install-llama-cpp"
        ) from exc
    return Llama


class LlamaCppBackend(Backend):
    """A GGUF model loaded in this process.

    ``model`` is a known model name from :mod:`evaluation.inference.gguf_models` or a path to a GGUF file.
    ``logits_all`` must stay on for :meth:`score_options`; it costs ``n_ctx x vocabulary`` floats of memory
    (400 MB for SmolLM2 at n_ctx 2048). ``llama`` takes an already loaded ``llama_cpp.Llama`` instead.

    By default every request evaluates its prompt from scratch. llama.cpp can reuse the cached prefix a
    prompt shares with the previous request (``reuse_prompt_cache=True``, faster for long shared
    prompts), but logits computed in different batch shapes differ in the last bits, so a seeded sampled
    answer would then depend on what ran before it.
    """

    name = "llamacpp"

    def __init__(
        self,
        *,
        model: str | os.PathLike[str] | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        n_batch: int = 512,
        logits_all: bool = True,
        chat_format: str | None = None,
        reuse_prompt_cache: bool = False,
        verbose: bool = False,
        llama: Any = None,
    ) -> None:
        if llama is None:
            if model is None:
                raise BackendConfigError("give model (a known model name or a GGUF path), or a loaded llama")
            Llama = _import_llama()
            self.model_path: Path | None = locate_gguf(model)
            llama = Llama(
                model_path=str(self.model_path),
                n_ctx=n_ctx,
                n_threads=n_threads or os.cpu_count() or 1,
                n_batch=n_batch,
                logits_all=logits_all,
                chat_format=chat_format,
                verbose=verbose,
            )
        else:
            self.model_path = Path(llama.model_path) if getattr(llama, "model_path", None) else None
        self.llama = llama
        self.reuse_prompt_cache = reuse_prompt_cache
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LlamaCppBackend(model={str(self.model_path)!r})"

    def close(self) -> None:
        llama, self.llama = self.llama, None
        if llama is not None and hasattr(llama, "close"):
            llama.close()

    # ----------------------------------------------------------------------------------------------
    # Generation

    def completion_kwargs(self, request: ChatRequest, choice: int = 0) -> dict[str, Any]:
        """Keyword arguments of ``create_chat_completion`` for ``request``'s ``choice``-th sample."""
        sampling = request.sampling
        kwargs: dict[str, Any] = {
            "messages": [dict(message) for message in request.messages],
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": sampling.top_k or 0,  # 0 switches llama.cpp's top-k filter off
            "min_p": 0.0,
            "max_tokens": sampling.max_tokens,
            "stop": list(sampling.stop or []),
        }
        if sampling.seed is not None:
            # Distinct but reproducible seeds for the n samples of one request.
            kwargs["seed"] = sampling.seed + choice
        if request.response_format is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": dict(request.response_format)}
        return kwargs

    def generate(self, requests: Sequence[ChatRequest]) -> list[GenerationResult]:
        return [self._generate_one(request) for request in requests]

    def _generate_one(self, request: ChatRequest) -> GenerationResult:
        texts: list[str] = []
        prompt_tokens = completion_tokens = 0
        finish_reason: str | None = None
        started = time.perf_counter()
        try:
            for choice in range(request.sampling.n):
                with self._lock:
                    if not self.reuse_prompt_cache:
                        self.llama.reset()
                    response = self.llama.create_chat_completion(**self.completion_kwargs(request, choice))
                first = response["choices"][0]
                texts.append(first["message"].get("content") or "")
                if choice == 0:
                    finish_reason = first.get("finish_reason")
                usage = response.get("usage") or {}
                prompt_tokens = int(usage.get("prompt_tokens", 0))
                completion_tokens += int(usage.get("completion_tokens", 0))
        except (ValueError, RuntimeError, KeyError) as exc:  # e.g. a prompt longer than the context
            logger.warning("llama.cpp request %r failed: %s", request.request_id, exc)
            return GenerationResult(
                request_id=request.request_id,
                text="",
                prompt_tokens=None,
                completion_tokens=None,
                latency_s=time.perf_counter() - started,
                error=f"llama.cpp failed: {exc}",
            )
        return GenerationResult(
            request_id=request.request_id,
            text=texts[0],
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=time.perf_counter() - started,
            finish_reason=finish_reason,
            choices=tuple(texts),
        )

    # ----------------------------------------------------------------------------------------------
    # Option scoring

    def tokenize(self, text: str) -> list[int]:
        """Tokens of ``text`` with the special tokens the model adds at the start (its BOS, if any)."""
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=True, special=False))

    def score_options(self, prompt: str, options: Sequence[str], *, mode: str = "sum") -> list[float]:
        """Log-probability of each option as the continuation of ``prompt``.

        The option's tokens are those of ``prompt + option`` after the longest token prefix shared with
        ``prompt`` alone. ``mode="sum"`` adds their natural-log probabilities (log-probability mode);
        ``mode="cloze"`` divides by their number (cloze mode, not penalising long options for length).
        """
        if mode not in SCORE_MODES:
            raise ValueError(f"mode must be one of {', '.join(SCORE_MODES)}, got {mode!r}")
        if not options:
            raise ValueError("no options to score")
        prompt_ids = self.tokenize(prompt)
        scores = []
        with self._lock:
            for option in options:
                whole = self.tokenize(prompt + option)
                start = _continuation_start(prompt_ids, whole)
                if start == 0:
                    raise ValueError(
                        "the prompt encodes to no tokens, so the first option token has no context"
                    )
                if start == len(whole):
                    raise ValueError(f"option {option!r} adds no tokens to the prompt")
                token_log_probs = self._continuation_log_probs(whole, start)
                total = float(token_log_probs.sum())
                scores.append(total / len(token_log_probs) if mode == "cloze" else total)
        return scores

    def score_many(
        self, items: Sequence[tuple[str, Sequence[str]]], *, mode: str = "sum"
    ) -> list[list[float]]:
        """:meth:`score_options` for several ``(prompt, options)`` questions."""
        return [self.score_options(prompt, options, mode=mode) for prompt, options in items]

    def _continuation_log_probs(self, tokens: Sequence[int], start: int) -> np.ndarray:
        """Log-probabilities of ``tokens[start:]`` given what precedes each, from ``Llama.scores``."""
        self._evaluate(tokens)
        # Row t of scores holds the logits after token t, i.e. the distribution of token t + 1.
        logits = np.asarray(self.llama.scores[start - 1 : len(tokens) - 1], dtype=np.float64)
        targets = np.asarray(tokens[start:], dtype=np.int64)
        return _log_softmax(logits)[np.arange(len(targets)), targets]

    def next_token_log_probs(self, prompt: str) -> Mapping[int, float]:
        """Log-probability of every token as the next one after ``prompt`` (``{token id: log p}``)."""
        tokens = self.tokenize(prompt)
        if not tokens:
            raise ValueError("the prompt encodes to no tokens")
        with self._lock:
            self._evaluate(tokens)
            row = np.asarray(self.llama.scores[len(tokens) - 1 : len(tokens)], dtype=np.float64)
        return dict(enumerate(_log_softmax(row)[0].tolist()))

    def _evaluate(self, tokens: Sequence[int]) -> None:
        """Make the model's state hold exactly ``tokens`` with their logits.

        The longest prefix already evaluated is kept (its cache and logits rows are still valid) and only
        the rest is evaluated; at least the last token is evaluated, so the state is consistent afterwards.
        """
        llama = self.llama
        if not getattr(llama, "_logits_all", True):
            raise BackendConfigError("option scoring needs the model loaded with logits_all=True")
        if len(tokens) > llama.n_ctx():
            raise ValueError(f"{len(tokens)} tokens do not fit the context of {llama.n_ctx()}")
        evaluated = [int(token) for token in llama.input_ids[: llama.n_tokens]]
        reuse = min(_continuation_start(evaluated, tokens), len(tokens) - 1)
        llama.n_tokens = reuse
        llama.eval(list(tokens[reuse:]))


def _continuation_start(prompt_ids: Sequence[int], whole_ids: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    limit = min(len(prompt_ids), len(whole_ids))
    for position in range(limit):
        if prompt_ids[position] != whole_ids[position]:
            return position
    return limit


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
