"""Backend for any server that speaks the OpenAI chat-completions protocol.

vLLM, SGLang, TGI, the llama.cpp server, Ollama and hosted APIs all accept ``POST {base_url}/chat/completions``.
Requests run on one thread pool of ``max_concurrency`` workers per backend object, shared by all its
batches (several chunks of a run may send batches at once from threads of one worker process), and a
semaphore keeps at most ``max_concurrency`` requests in flight against the endpoint.

Retries: HTTP 408, 409, 425, 429 and 5xx, timeouts and connection errors are retried up to ``max_attempts``
tries in all, waiting ``uniform(0, min(backoff_max_s, backoff_base_s * 2**(attempt-1)))`` ("full jitter"),
or at least the server's ``Retry-After`` (capped by ``retry_after_max_s``). Other 4xx answers are final for
that request and come back as an error result; 401, 403 and 404 raise :class:`BackendConfigError`, since a
rejected key or a wrong URL or model name fails every request alike.

Structured output (``structured_output``), by server:

- ``json_schema`` (default): ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``, for
  OpenAI, vLLM, SGLang, Ollama, LM Studio and recent llama.cpp ``llama-server`` builds. The schema's
  ``title`` becomes ``name``; ``strict_schema=False`` for schemas that OpenAI's strict mode would refuse.
- ``json_object``: ``{"type": "json_object", "schema": schema}``, for llama.cpp's server (xllamacpp) and older
  llama.cpp servers.
- ``tgi``: ``{"type": "json_object", "value": schema}``, for Text Generation Inference.
- ``none``: nothing is sent and the prompt alone asks for JSON, for servers without constrained decoding.

``top_k`` is not part of the OpenAI API; it is sent as an extra body field, which vLLM, SGLang, llama.cpp and
Ollama honour. Hosted APIs that reject unknown fields need ``send_top_k=False``.

The API key is read from the environment variable named by ``api_key_env`` when the backend is built and
lives only in the HTTP client's headers: it is never logged, never put in an error message, never returned.
"""

from __future__ import annotations

import email.utils
import functools
import json
import logging
import os
import random
import re
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import httpx

from evaluation.inference.base import (
    Backend,
    BackendConfigError,
    ChatRequest,
    GenerationResult,
    StreamChunk,
    StreamError,
    cancelled_result,
    stopped,
)

logger = logging.getLogger(__name__)

STRUCTURED_OUTPUT_STYLES = ("json_schema", "json_object", "tgi", "none")
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
CONFIG_ERROR_STATUS = frozenset({401, 403, 404})
_ERROR_EXCERPT_CHARS = 300
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]+")


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The certificate checks of every model client of this process, as httpx makes them by default (its CA
    bundle, ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` honoured), built once: reading the CA bundle takes about a
    tenth of a second, which every backend built for a run's first chunk waited for."""
    return httpx.create_ssl_context()


@dataclass(frozen=True)
class _Attempt:
    """One HTTP try: a result, or a reason to retry (with the server's Retry-After, if any)."""

    result: GenerationResult | None = None
    retry_reason: str | None = None
    retry_after_s: float | None = None
    cancelled: bool = False


class OpenAIBackend(Backend):
    """Chat completions against an OpenAI-compatible endpoint, with bounded concurrency and retries.

    ``rng`` (anything with ``random()``), ``sleep``, ``clock`` (for latency) and ``wall_clock`` (for
    ``Retry-After`` dates) are injectable so tests run deterministically and without real waiting.
    """

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        max_concurrency: int = 8,
        timeout_s: float = 120.0,
        max_attempts: int = 4,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 30.0,
        retry_after_max_s: float = 120.0,
        structured_output: str = "json_schema",
        send_top_k: bool = True,
        strict_schema: bool = True,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
        rng: random.Random | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.perf_counter,
        wall_clock: Callable[[], float] = time.time,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not re.match(r"^https?://[^/\s]+", base_url):
            raise BackendConfigError(f"base_url must be an http(s) URL, got {base_url!r}")
        if not isinstance(model, str) or not model.strip():
            raise BackendConfigError("model must be a non-empty model id")
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise BackendConfigError(f"max_concurrency must be an integer >= 1, got {max_concurrency!r}")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise BackendConfigError(f"max_attempts must be an integer >= 1, got {max_attempts!r}")
        if not timeout_s > 0:
            raise BackendConfigError(f"timeout_s must be > 0, got {timeout_s!r}")
        if backoff_base_s < 0 or backoff_max_s < 0 or retry_after_max_s < 0:
            raise BackendConfigError("backoff_base_s, backoff_max_s and retry_after_max_s must be >= 0")
        if structured_output not in STRUCTURED_OUTPUT_STYLES:
            raise BackendConfigError(
                f"structured_output must be one of {', '.join(STRUCTURED_OUTPUT_STYLES)}, got {structured_output!r}"
            )

        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.max_concurrency = max_concurrency
        self.timeout_s = float(timeout_s)
        self.max_attempts = max_attempts
        self.backoff_base_s = float(backoff_base_s)
        self.backoff_max_s = float(backoff_max_s)
        self.retry_after_max_s = float(retry_after_max_s)
        self.structured_output = structured_output
        self.send_top_k = send_top_k
        self.strict_schema = strict_schema
        self.extra_body = dict(extra_body or {})
        self._rng = rng if rng is not None else random.Random()
        self._rng_lock = threading.Lock()
        self._sleep = sleep
        self._clock = clock
        self._wall_clock = wall_clock
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

        headers = {"Content-Type": "application/json", **dict(extra_headers or {})}
        if api_key_env:
            key = (environ if environ is not None else os.environ).get(api_key_env, "")
            if not key.strip():
                raise BackendConfigError(
                    f"environment variable {api_key_env} (named by the endpoint's api_key_env) is not set"
                )
            headers["Authorization"] = f"Bearer {key.strip()}"
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(self.timeout_s),
            limits=httpx.Limits(max_connections=max_concurrency, max_keepalive_connections=max_concurrency),
            transport=transport,
            verify=tls_context(),
        )

    def __repr__(self) -> str:
        return f"OpenAIBackend(base_url={self.base_url!r}, model={self.model!r}, api_key_env={self.api_key_env!r})"

    @property
    def completions_url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def url_for(self, request: ChatRequest) -> str:
        """``/chat/completions``, or ``/completions`` for a plain text completion."""
        return f"{self.base_url}/completions" if request.completion else self.completions_url

    def close(self) -> None:
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        self._client.close()

    def _executor(self) -> ThreadPoolExecutor:
        """The backend's one pool of ``max_concurrency`` threads, shared by every batch: batches sent from
        several threads at once (chunks running side by side in one worker process) queue their requests
        on it in order, and no batch pays for starting threads of its own."""
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.max_concurrency, thread_name_prefix="openai-backend"
                )
            return self._pool

    # ----------------------------------------------------------------------------------------------
    # Request body

    def response_format_field(self, schema: Mapping[str, Any]) -> dict[str, Any] | None:
        """The ``response_format`` value for ``schema`` in this backend's structured-output style."""
        schema = dict(schema)
        if self.structured_output == "json_schema":
            # OpenAI names allow letters, digits, _ and -, 64 at most.
            name = _SCHEMA_NAME.sub("_", str(schema.pop("title", None) or "response"))[:64] or "response"
            return {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": self.strict_schema},
            }
        if self.structured_output == "json_object":
            return {"type": "json_object", "schema": schema}
        if self.structured_output == "tgi":
            return {"type": "json_object", "value": schema}
        return None

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for ``request``; ``extra_body`` entries are applied last and win."""
        sampling = request.sampling
        body: dict[str, Any] = {
            "model": self.model,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_tokens,
        }
        if request.completion:
            body["prompt"] = request.messages[0]["content"]
        else:
            body["messages"] = [dict(message) for message in request.messages]
        if sampling.n != 1:
            body["n"] = sampling.n
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        if sampling.stop is not None:
            body["stop"] = list(sampling.stop)
        if self.send_top_k and sampling.top_k is not None:
            body["top_k"] = sampling.top_k
        if request.response_format is not None:
            response_format = self.response_format_field(request.response_format)
            if response_format is not None:
                body["response_format"] = response_format
        body.update(self.extra_body)
        return body

    # ----------------------------------------------------------------------------------------------
    # Running

    def generate(
        self, requests: Sequence[ChatRequest], *, stop: threading.Event | None = None
    ) -> list[GenerationResult]:
        requests = list(requests)
        if not requests:
            return []
        abort = threading.Event()
        pool = self._executor()
        futures = [pool.submit(self._run_request, request, abort, stop) for request in requests]
        wait(futures, return_when=FIRST_EXCEPTION)
        failed = next((f for f in futures if f.done() and not f.cancelled() and f.exception()), None)
        if failed is not None:
            abort.set()
            for future in futures:
                future.cancel()
            # Requests of this batch already running end at their next attempt; wait for them, as the
            # batch's own pool used to, so nothing of this batch is sent after it raised.
            wait(futures)
            raise failed.exception()
        return [future.result() for future in futures]

    def _run_request(
        self, request: ChatRequest, abort: threading.Event, stop: threading.Event | None = None
    ) -> GenerationResult:
        body = self.request_body(request)
        reason = "not attempted"
        for attempt in range(1, self.max_attempts + 1):
            if abort.is_set():
                return self._error(request, "batch aborted by a configuration error", 0.0, attempt - 1)
            if stopped(stop):
                return cancelled_result(request)
            outcome = self._attempt(request, body, attempt, stop)
            if outcome.cancelled:
                return cancelled_result(request)
            if outcome.result is not None:
                return outcome.result
            reason = outcome.retry_reason or "unknown error"
            if attempt < self.max_attempts:
                delay = self._backoff_delay(attempt, outcome.retry_after_s)
                logger.warning(
                    "request %r to %s failed (%s), attempt %d of %d; retrying in %.2fs",
                    request.request_id,
                    self.completions_url,
                    reason,
                    attempt,
                    self.max_attempts,
                    delay,
                )
                self._sleep(delay)
        logger.warning(
            "request %r to %s gave up after %d attempts: %s",
            request.request_id,
            self.completions_url,
            self.max_attempts,
            reason,
        )
        return self._error(
            request, f"gave up after {self.max_attempts} attempts: {reason}", 0.0, self.max_attempts
        )

    def _attempt(
        self, request: ChatRequest, body: dict[str, Any], attempt: int, stop: threading.Event | None = None
    ) -> _Attempt:
        with self._slots:
            if stopped(stop):  # stopped while waiting for a free slot
                return _Attempt(cancelled=True)
            started = self._clock()
            try:
                response = self._client.post(self.url_for(request), json=body)
            except httpx.TimeoutException:
                return _Attempt(retry_reason=f"timed out after {self.timeout_s:g}s")
            except httpx.TransportError as exc:
                return _Attempt(retry_reason=f"connection error ({type(exc).__name__})")
            latency = self._clock() - started

        status = response.status_code
        if status == 200:
            return _Attempt(result=self._parse_success(request, response, latency, attempt))
        detail = self._redact(_error_excerpt(response))
        if status in CONFIG_ERROR_STATUS:
            hint = "check the API key" if status in (401, 403) else "check base_url and the model id"
            raise BackendConfigError(f"{self.url_for(request)} answered HTTP {status} ({hint}): {detail}")
        if status in RETRYABLE_STATUS or status >= 500:
            return _Attempt(
                retry_reason=f"HTTP {status}: {detail}",
                retry_after_s=self._retry_after(response.headers.get("Retry-After")),
            )
        return _Attempt(result=self._error(request, f"HTTP {status}: {detail}", latency, attempt))

    # ----------------------------------------------------------------------------------------------
    # Streaming (one request, token by token: the arena)

    def stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        """The answer as the server sends it (``"stream": true``), one :class:`StreamChunk` per event.

        Tried once, never retried: a voter is watching, and a second try would show a different answer. An
        HTTP error, a connection lost or a server silent for ``timeout_s``, a malformed event, or a stream
        that ends before the server said it was done raise :class:`StreamError` (the key never in it).
        """
        body = self.request_body(request)
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        finished = False
        try:
            with self._slots, self._client.stream("POST", self.url_for(request), json=body) as response:
                if response.status_code != 200:
                    response.read()
                    raise StreamError(
                        f"HTTP {response.status_code}: {self._redact(_error_excerpt(response))}"
                    )
                for line in response.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        finished = True
                        break
                    chunk = _stream_chunk(data, completion=request.completion)
                    if chunk.finish_reason is not None:
                        finished = True
                    if chunk.text or chunk.completion_tokens is not None or chunk.finish_reason:
                        yield chunk
        except httpx.TimeoutException:
            raise StreamError(f"no answer for {self.timeout_s:g}s", timed_out=True) from None
        except httpx.TransportError as exc:
            raise StreamError(f"connection error ({type(exc).__name__})") from None
        if not finished:
            raise StreamError("the stream ended before the server finished the answer")

    def _parse_success(
        self, request: ChatRequest, response: httpx.Response, latency: float, attempt: int
    ) -> GenerationResult:
        try:
            data = response.json()
            choices = data["choices"]
            if not isinstance(choices, list) or not choices:
                raise ValueError("no choices")
            texts = tuple(
                _completion_text(choice) if request.completion else _message_text(choice)
                for choice in choices
            )
            finish_reason = choices[0].get("finish_reason")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return self._error(request, f"malformed response body ({exc})", latency, attempt)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return GenerationResult(
            request_id=request.request_id,
            text=texts[0],
            prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
            completion_tokens=_int_or_none(usage.get("completion_tokens")),
            latency_s=latency,
            error=None,
            finish_reason=finish_reason if isinstance(finish_reason, str) else None,
            choices=texts,
            attempts=attempt,
        )

    def _error(self, request: ChatRequest, message: str, latency: float, attempts: int) -> GenerationResult:
        return GenerationResult(
            request_id=request.request_id,
            text="",
            prompt_tokens=None,
            completion_tokens=None,
            latency_s=latency,
            error=message,
            finish_reason=None,
            choices=(),
            attempts=attempts,
        )

    def _backoff_delay(self, attempt: int, retry_after_s: float | None) -> float:
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1))
        with self._rng_lock:
            delay = self._rng.random() * ceiling
        if retry_after_s is not None:
            delay = max(delay, min(retry_after_s, self.retry_after_max_s))
        return delay

    def _retry_after(self, header: str | None) -> float | None:
        """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date), or None."""
        if not header:
            return None
        header = header.strip()
        try:
            seconds = float(header)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(header)
            except (TypeError, ValueError, IndexError):
                return None
            seconds = when.timestamp() - self._wall_clock()
        if seconds != seconds:  # NaN
            return None
        return max(0.0, seconds)

    def _redact(self, text: str) -> str:
        authorization = self._client.headers.get("Authorization", "")
        key = authorization.removeprefix("Bearer ").strip()
        return text.replace(key, "[redacted]") if key else text


def _stream_chunk(data: str, *, completion: bool) -> StreamChunk:
    """One ``data:`` event of a streamed chat completion (or text completion)."""
    try:
        payload = json.loads(data)
    except ValueError:
        raise StreamError("malformed stream event (not JSON)") from None
    if not isinstance(payload, dict):
        raise StreamError("malformed stream event (not an object)")
    if isinstance(payload.get("error"), dict | str):
        raise StreamError("the server reported an error in the stream")
    choices = payload.get("choices") or []
    text, finish = "", None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        first = choices[0]
        if completion:
            value = first.get("text")
        else:
            delta = first.get("delta")
            value = delta.get("content") if isinstance(delta, dict) else None
        text = value if isinstance(value, str) else ""
        finish = first.get("finish_reason") if isinstance(first.get("finish_reason"), str) else None
    usage = payload.get("usage")
    tokens = _int_or_none(usage.get("completion_tokens")) if isinstance(usage, dict) else None
    return StreamChunk(text=text, completion_tokens=tokens, finish_reason=finish)


def _message_text(choice: Any) -> str:
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise ValueError("choice without a message")
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _completion_text(choice: Any) -> str:
    text = choice.get("text") if isinstance(choice, dict) else None
    if text is None:
        raise ValueError("completion choice without text")
    return text if isinstance(text, str) else ""


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _error_excerpt(response: httpx.Response) -> str:
    """The server's error message, shortened: ``{"error": {"message"}}``, ``{"detail"}`` or raw text."""
    text = response.text
    try:
        data = response.json()
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
        elif isinstance(error, str):
            text = error
        elif isinstance(data.get("detail"), str):
            text = data["detail"]
        elif isinstance(data.get("message"), str):
            text = data["message"]
    text = " ".join(text.split())
    if len(text) > _ERROR_EXCERPT_CHARS:
        text = text[: _ERROR_EXCERPT_CHARS - 3] + "..."
    return text or "(empty body)"
