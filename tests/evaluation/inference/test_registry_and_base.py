"""Backend factory by name, and the request/result types every backend shares."""

from __future__ import annotations

import importlib.util

import pytest

from evaluation.domain.sampling import SamplingParams
from evaluation.inference.base import Backend, ChatRequest, GenerationResult
from evaluation.inference.openai_backend import OpenAIBackend
from evaluation.inference.registry import BACKEND_NAMES, BackendNotAvailable, backend_class, create_backend


def test_openai_backend_is_created_by_name():
    backend = create_backend("OpenAI", base_url="http://127.0.0.1:9/v1", model="m", max_concurrency=2)
    assert isinstance(backend, OpenAIBackend)
    assert backend.max_concurrency == 2
    backend.close()


@pytest.mark.parametrize(
    "name, class_name, package",
    [
        ("transformers", "TransformersBackend", "torch"),
        ("vllm", "VllmBackend", "vllm"),
        ("llamacpp", "LlamaCppBackend", "xllamacpp"),
        ("llama.cpp", "LlamaCppBackend", "xllamacpp"),
    ],
)
def test_local_backends_load_or_name_their_missing_package(name, class_name, package):
    if importlib.util.find_spec(package) is None:
        with pytest.raises(BackendNotAvailable, match=f"backend needs the package '{package}'"):
            backend_class(name)
    else:
        assert backend_class(name).__name__ == class_name


def test_unknown_backend_lists_the_known_ones():
    with pytest.raises(
        BackendNotAvailable, match="unknown backend 'sglang'; known backends: openai, transformers"
    ):
        backend_class("sglang")
    assert BACKEND_NAMES == ("openai", "transformers", "vllm", "llamacpp")


def test_chat_request_validates_messages():
    with pytest.raises(ValueError, match="has no messages"):
        ChatRequest(messages=[], request_id="x")
    with pytest.raises(ValueError, match="role must be one of system, user, assistant, got 'bot'"):
        ChatRequest(messages=[{"role": "bot", "content": "hi"}])
    with pytest.raises(ValueError, match="content must be a string"):
        ChatRequest(messages=[{"role": "user", "content": None}])
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}])
    assert request.sampling == SamplingParams()
    assert request.messages == ({"role": "user", "content": "hi"},)


class EchoBackend(Backend):
    name = "echo"

    def generate(self, requests):
        return [GenerationResult(r.request_id, r.messages[-1]["content"], None, None, 0.0) for r in requests]


def test_a_minimal_backend_gets_the_default_score_options_refusal_and_context_manager():
    with EchoBackend() as backend:
        [result] = backend.generate(
            [ChatRequest(messages=[{"role": "user", "content": "halo"}], request_id="1")]
        )
        assert result.ok and result.text == "halo" and result.attempts == 1
        with pytest.raises(NotImplementedError, match="the 'echo' backend cannot score options"):
            backend.score_options("prompt", [" A"])
