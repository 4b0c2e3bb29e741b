"""The one interface every model backend implements.

A backend turns a batch of chat requests into a batch of results in the same order. A request that fails
after the backend's retries becomes a :class:`GenerationResult` with ``error`` set, so one bad prompt never
costs the rest of a batch; only configuration errors (a missing API key, a wrong URL, a rejected key) raise,
because every other request would fail the same way. Log-probability scoring of fixed continuations is the
second operation; backends that cannot do it say so with ``NotImplementedError``.

This package runs on GPU hosts without the web application: it imports no Django.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluation.domain.sampling import SamplingParams

ROLES = ("system", "user", "assistant")


class BackendError(Exception):
    """Base class of the errors a backend raises."""


class BackendConfigError(BackendError):
    """The backend is misconfigured: retrying or moving on to the next request cannot help."""


def check_remote_code(model: object, trust_remote_code: bool, remote_code_models: Collection[str]) -> None:
    """Refuse to load a model with its repository's own code (``trust_remote_code``) unless the deployment
    lists it in ``remote_code_models`` (the setting TRUST_REMOTE_CODE_MODELS): that code would run in the
    worker, with the worker's secrets."""
    if trust_remote_code and str(model) not in remote_code_models:
        raise BackendConfigError(
            f"trust_remote_code is not allowed for {str(model)!r}: the model is not listed in "
            "TRUST_REMOTE_CODE_MODELS"
        )


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to run.

    ``response_format`` is a bare JSON schema (as from ``judge_templates.json_schema_for``) or ``None``;
    each backend turns it into its own structured-output request. ``request_id`` comes back on the result so
    callers can match results to their rows.

    ``completion=True`` asks for a plain text completion (a base model continuing a k-shot prompt): the one
    user message is the prompt, sent without a chat template. Backends that cannot do it raise
    :class:`BackendConfigError`.
    """

    messages: Sequence[Mapping[str, str]]
    sampling: SamplingParams = field(default_factory=SamplingParams)
    response_format: Mapping[str, Any] | None = None
    request_id: str = ""
    completion: bool = False

    def __post_init__(self) -> None:
        messages = tuple(dict(message) for message in self.messages)
        if not messages:
            raise ValueError(f"request {self.request_id!r} has no messages")
        for index, message in enumerate(messages):
            if message.get("role") not in ROLES:
                raise ValueError(
                    f"request {self.request_id!r} message {index}: role must be one of {', '.join(ROLES)}, "
                    f"got {message.get('role')!r}"
                )
            if not isinstance(message.get("content"), str):
                raise ValueError(f"request {self.request_id!r} message {index}: content must be a string")
        object.__setattr__(self, "messages", messages)
        if self.completion and (len(messages) != 1 or messages[0]["role"] != "user"):
            raise ValueError(
                f"request {self.request_id!r}: a completion request holds its prompt as one user message"
            )
        if not isinstance(self.sampling, SamplingParams):
            raise ValueError(f"request {self.request_id!r}: sampling must be SamplingParams")
        if self.response_format is not None and not isinstance(self.response_format, Mapping):
            raise ValueError(
                f"request {self.request_id!r}: response_format must be a JSON schema mapping or None"
            )


@dataclass(frozen=True)
class GenerationResult:
    """What came back for one request.

    ``text`` is the first choice; ``choices`` holds all of them when ``SamplingParams.n > 1``. On failure
    ``error`` says why (never containing credentials) and ``text`` is empty. ``latency_s`` is the duration
    of the attempt that produced the result; ``attempts`` counts the tries including retries.
    """

    request_id: str
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    error: str | None = None
    finish_reason: str | None = None
    choices: tuple[str, ...] = ()
    attempts: int = 1
    cancelled: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


CANCELLED_ERROR = "not sent: the run was stopped"


def cancelled_result(request: ChatRequest) -> GenerationResult:
    """The result of a request never sent because its run was stopped: neither done nor failed, so the
    run's Retry sends it again."""
    return GenerationResult(
        request_id=request.request_id,
        text="",
        prompt_tokens=None,
        completion_tokens=None,
        latency_s=0.0,
        error=CANCELLED_ERROR,
        attempts=0,
        cancelled=True,
    )


def stopped(stop: threading.Event | None) -> bool:
    return stop is not None and stop.is_set()


def refuse_completion(backend_name: str, requests: Sequence[ChatRequest]) -> None:
    """Raise for a backend that runs chat requests only when a batch asks for text completion."""
    if any(request.completion for request in requests):
        raise BackendConfigError(
            f"the {backend_name!r} backend runs chat requests only; completion mode needs the openai or "
            "llamacpp backend"
        )


class StreamError(BackendError):
    """A streamed answer that could not be had or broke off; ``timed_out`` when the server went quiet."""

    def __init__(self, message: str, *, timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out


@dataclass(frozen=True)
class StreamChunk:
    """A piece of a streamed answer: new ``text``, and on the last pieces the server's token count of the
    whole answer (when it sends one) and why it stopped."""

    text: str = ""
    completion_tokens: int | None = None
    finish_reason: str | None = None


class Backend(abc.ABC):
    """A model behind ``generate`` (and optionally ``score_options``).

    Backends hold resources (HTTP connections, a loaded model), so they are context managers; ``close`` is
    safe to call twice.
    """

    name: str = "backend"

    @abc.abstractmethod
    def generate(
        self, requests: Sequence[ChatRequest], *, stop: threading.Event | None = None
    ) -> list[GenerationResult]:
        """Run ``requests``; the i-th result belongs to the i-th request.

        Once ``stop`` is set, no further request is sent: each one not yet sent comes back as
        :func:`cancelled_result` (requests already at the server finish and keep their results)."""

    def score_options(self, prompt: str, options: Sequence[str], *, mode: str = "sum") -> list[float]:
        """Log-probability of each option as the continuation of ``prompt`` (natural log, summed over the
        option's tokens; ``mode="cloze"``: divided by their number), in the order given."""
        raise NotImplementedError(
            f"the {self.name!r} backend cannot score options by log-probability; use a backend that exposes "
            "token log-probabilities (transformers, llamacpp) or extract answers from generated text"
        )

    def stream(self, request: ChatRequest) -> Iterator[StreamChunk]:
        """The answer to one chat request piece by piece. Backends without streaming give the whole answer
        as one piece; a failed request raises :class:`StreamError`."""
        result = self.generate([request])[0]
        if result.error is not None:
            raise StreamError(result.error)
        yield StreamChunk(
            text=result.text, completion_tokens=result.completion_tokens, finish_reason=result.finish_reason
        )

    def close(self) -> None:  # noqa: B027 - most backends hold nothing to release
        """Release resources."""

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
