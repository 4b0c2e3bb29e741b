"""In-process GGUF models on CPU through xllamacpp (llama.cpp's own server code): generation and option scores.

For CPU workers without a model server. The model is loaded into an ``xllamacpp.Server`` in this process;
requests go to its handlers directly (``handle_chat_completions`` / ``handle_completions``), no HTTP in
between. Generation renders the chat template stored in the GGUF file; a request's JSON schema becomes a
llama.cpp grammar (``response_format={"type": "json_object", "schema": ...}``), which is how small models give
parseable judge output. Sampling follows the study's parameters exactly: llama.cpp's own ``min_p`` (0.05 by
default) is switched off, temperature 0 is greedy, and a request's seed seeds its sampler.

Option scoring. llama.cpp's server reports log-probabilities of generated tokens only, not of prompt tokens.
Each option token is therefore generated once, forced: the prompt is sent as token ids up to that token,
``logit_bias`` makes the token the one picked, and ``n_probs`` makes the server report its log-probability
computed from the raw logits (before the bias). The key-value cache keeps the shared prefix, so each further
token costs one evaluated position. Tokenisation uses the server's ``/tokenize`` on a loopback port of its own,
so the token ids are the model's own.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from evaluation.domain.option_scores import SCORE_MODES, option_score
from evaluation.inference.base import (
    Backend,
    BackendConfigError,
    ChatRequest,
    GenerationResult,
    cancelled_result,
    stopped,
)
from evaluation.inference.gguf_models import locate_gguf
from evaluation.inference.registry import BackendNotAvailable

logger = logging.getLogger(__name__)

# Added to the logit of the token being scored: large enough that it is always the one sampled.
_FORCE_BIAS = 1.0e6


def import_xllamacpp() -> Any:
    try:
        import xllamacpp
    except ImportError as exc:
        raise BackendNotAvailable(
            "the 'llamacpp' backend needs xllamacpp, which is not installed: pip install xllamacpp"
        ) from exc
    return xllamacpp


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaCppBackend(Backend):
    """A GGUF model loaded in this process.

    ``model`` is a known model name from :mod:`evaluation.inference.gguf_models` or a path to a GGUF file.
    ``n_ctx`` is the context of the one slot this backend uses. ``server`` takes an already started
    ``xllamacpp.Server`` (with ``base_url`` the address its HTTP API listens on, for tokenising).

    By default every request evaluates its prompt from scratch (``cache_prompt`` off). llama.cpp can reuse the
    cached prefix a prompt shares with the previous request (``reuse_prompt_cache=True``, faster for long
    shared prompts), but logits computed in different batch shapes differ in the last bits, so a seeded
    sampled answer would then depend on what ran before it.
    """

    name = "llamacpp"

    def __init__(
        self,
        *,
        model: str | os.PathLike[str] | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        n_batch: int = 512,
        reuse_prompt_cache: bool = False,
        server: Any = None,
        base_url: str | None = None,
    ) -> None:
        if server is None:
            if model is None:
                raise BackendConfigError(
                    "give model (a known model name or a GGUF path), or a started server"
                )
            xllamacpp = import_xllamacpp()
            self.model_path: Path | None = locate_gguf(model)
            params = xllamacpp.CommonParams()
            params.model.path = str(self.model_path)
            params.n_ctx = n_ctx
            params.n_batch = n_batch
            params.n_parallel = 1
            params.cpuparams.n_threads = n_threads or os.cpu_count() or 1
            params.cpuparams_batch.n_threads = params.cpuparams.n_threads
            params.hostnames = ["127.0.0.1"]
            params.port = _free_loopback_port()
            server = xllamacpp.Server(params)
            base_url = server.listening_address
        else:
            self.model_path = None
        if not base_url:
            raise BackendConfigError("a given server needs the base_url of its HTTP API (for /tokenize)")
        self.server = server
        self.base_url = base_url.rstrip("/")
        self.n_ctx = n_ctx
        self.reuse_prompt_cache = reuse_prompt_cache
        self._http = httpx.Client(timeout=60.0)
        # One slot: requests from several threads would queue in the server anyway; the lock keeps a
        # scoring sequence (several forced tokens) from interleaving with another request.
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LlamaCppBackend(model={str(self.model_path)!r})"

    def close(self) -> None:
        server, self.server = self.server, None
        self._http.close()
        del server  # the server stops its loop and frees the model when the last reference goes

    # ----------------------------------------------------------------------------------------------
    # Generation

    def completion_kwargs(self, request: ChatRequest, choice: int = 0) -> dict[str, Any]:
        """The request body for ``request``'s ``choice``-th sample: chat messages, or the plain prompt of a
        completion request (no chat template)."""
        sampling = request.sampling
        body: dict[str, Any] = {
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": sampling.top_k or 0,  # 0 switches llama.cpp's top-k filter off
            "min_p": 0.0,
            "max_tokens": sampling.max_tokens,
            "stop": list(sampling.stop or []),
            "cache_prompt": self.reuse_prompt_cache,
        }
        if request.completion:
            body["prompt"] = request.messages[0]["content"]
        else:
            body["messages"] = [dict(message) for message in request.messages]
        if sampling.seed is not None:
            # Distinct but reproducible seeds for the n samples of one request.
            body["seed"] = sampling.seed + choice
        if request.response_format is not None:
            body["response_format"] = {"type": "json_object", "schema": dict(request.response_format)}
        return body

    def generate(
        self, requests: Sequence[ChatRequest], *, stop: threading.Event | None = None
    ) -> list[GenerationResult]:
        return [cancelled_result(r) if stopped(stop) else self._generate_one(r) for r in requests]

    def _generate_one(self, request: ChatRequest) -> GenerationResult:
        texts: list[str] = []
        prompt_tokens = completion_tokens = 0
        finish_reason: str | None = None
        started = time.perf_counter()
        for choice in range(request.sampling.n):
            with self._lock:
                body = self.completion_kwargs(request, choice)
                response = (
                    self.server.handle_completions(body)
                    if request.completion
                    else self.server.handle_chat_completions(body)
                )
            error = _error_message(response)
            if error is not None:  # e.g. a prompt longer than the context
                logger.warning("llama.cpp request %r failed: %s", request.request_id, error)
                return GenerationResult(
                    request_id=request.request_id,
                    text="",
                    prompt_tokens=None,
                    completion_tokens=None,
                    latency_s=time.perf_counter() - started,
                    error=f"llama.cpp failed: {error}",
                )
            first = response["choices"][0]
            texts.append(
                (first.get("text") or "") if request.completion else (first["message"].get("content") or "")
            )
            if choice == 0:
                finish_reason = first.get("finish_reason")
            usage = response.get("usage") or {}
            prompt_tokens = int(usage.get("prompt_tokens", 0))
            completion_tokens += int(usage.get("completion_tokens", 0))
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
        response = self._http.post(
            f"{self.base_url}/tokenize", json={"content": text, "add_special": True, "parse_special": False}
        )
        response.raise_for_status()
        return [int(token) for token in response.json()["tokens"]]

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
        for option in options:
            whole = self.tokenize(prompt + option)
            start = _continuation_start(prompt_ids, whole)
            if start == 0:
                raise ValueError("the prompt encodes to no tokens, so the first option token has no context")
            if start == len(whole):
                raise ValueError(f"option {option!r} adds no tokens to the prompt")
            if len(whole) > self.n_ctx:
                raise ValueError(f"{len(whole)} tokens do not fit the context of {self.n_ctx}")
            token_log_probs = self.continuation_log_probs(whole, start)
            scores.append(option_score(token_log_probs, mode))
        return scores

    def score_many(
        self, items: Sequence[tuple[str, Sequence[str]]], *, mode: str = "sum"
    ) -> list[list[float]]:
        """:meth:`score_options` for several ``(prompt, options)`` questions."""
        return [self.score_options(prompt, options, mode=mode) for prompt, options in items]

    def continuation_log_probs(self, tokens: Sequence[int], start: int) -> list[float]:
        """Log-probabilities of ``tokens[start:]``, each given the tokens before it."""
        values = []
        with self._lock:
            for position in range(start, len(tokens)):
                target = int(tokens[position])
                [entry] = self.next_token_entries(
                    tokens[:position], n_probs=1, logit_bias=[[target, _FORCE_BIAS]]
                )
                if int(entry["id"]) != target:
                    raise RuntimeError(f"llama.cpp sampled token {entry['id']} where {target} was forced")
                values.append(float(entry["logprob"]))
        return values

    def next_token_log_probs(self, prompt: str) -> Mapping[int, float]:
        """Log-probability of every token as the next one after ``prompt`` (``{token id: log p}``)."""
        tokens = self.tokenize(prompt)
        if not tokens:
            raise ValueError("the prompt encodes to no tokens")
        with self._lock:
            # n_probs larger than the vocabulary makes the server report every token.
            [entry] = self.next_token_entries(tokens, n_probs=1 << 24)
        return {int(item["id"]): float(item["logprob"]) for item in entry["top_logprobs"]}

    def next_token_entries(
        self, tokens: Sequence[int], *, n_probs: int, logit_bias: list[list[float]] | None = None
    ) -> list[dict[str, Any]]:
        body: dict[str, Any] = {
            "prompt": [int(token) for token in tokens],
            "max_tokens": 1,
            "temperature": 0.0,
            "n_probs": n_probs,
            "cache_prompt": True,  # the prefix shared with the previous position stays evaluated
        }
        if logit_bias:
            body["logit_bias"] = logit_bias
        response = self.server.handle_completions(body)
        error = _error_message(response)
        if error is not None:
            raise ValueError(f"llama.cpp failed: {error}")
        return response["choices"][0]["logprobs"]["content"]


def _error_message(response: Any) -> str | None:
    if isinstance(response, Mapping) and "error" in response:
        error = response["error"]
        return str(error.get("message", error)) if isinstance(error, Mapping) else str(error)
    return None


def _continuation_start(prompt_ids: Sequence[int], whole_ids: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    limit = min(len(prompt_ids), len(whole_ids))
    for position in range(limit):
        if prompt_ids[position] != whole_ids[position]:
            return position
    return limit
