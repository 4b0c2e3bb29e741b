"""OpenAIBackend against a real llama.cpp OpenAI-compatible server process over SmolLM2-135M.

The server (see conftest.py) is llama.cpp's own (xllamacpp, ``evaluation.inference.llamacpp_server``),
started once per session on a free loopback port. These tests go through the same code path a production run takes against vLLM, SGLang or a hosted
API: HTTP, JSON bodies, concurrency, usage counts and structured output.
"""

from __future__ import annotations

import json

import httpx
import pytest

from evaluation.domain.judge_templates import PAIRWISE, RESPONSE_1, RESPONSE_2, json_schema_for
from evaluation.domain.sampling import SamplingParams
from evaluation.inference.base import BackendConfigError, ChatRequest
from evaluation.inference.openai_backend import OpenAIBackend

STUDY = SamplingParams(temperature=0.6, top_p=0.95, top_k=20, max_tokens=24, seed=42)


@pytest.fixture
def backend(llamacpp_server, llamacpp_model_id) -> OpenAIBackend:
    # llama.cpp's server takes a schema as {"type": "json_object", "schema": ...}.
    made = OpenAIBackend(
        base_url=llamacpp_server,
        model=llamacpp_model_id,
        structured_output="json_object",
        max_concurrency=2,
        timeout_s=60,
        max_attempts=2,
        backoff_base_s=0.1,
    )
    yield made
    made.close()


def test_generation_with_the_study_sampling_parameters(backend):
    requests = [
        ChatRequest(
            messages=[{"role": "user", "content": "Name three colours."}], sampling=STUDY, request_id="a"
        ),
        ChatRequest(
            messages=[
                {"role": "system", "content": "You answer in one short sentence."},
                {"role": "user", "content": "What is the capital of France?"},
            ],
            sampling=STUDY,
            request_id="b",
        ),
    ]
    body = backend.request_body(requests[0])
    assert (body["temperature"], body["top_p"], body["top_k"], body["seed"], body["max_tokens"]) == (
        0.6,
        0.95,
        20,
        42,
        24,
    )

    first = backend.generate(requests)

    assert [r.request_id for r in first] == ["a", "b"]
    for result in first:
        assert result.ok, result.error
        assert result.text.strip()
        assert result.prompt_tokens > 10 and 0 < result.completion_tokens <= 24
        assert result.finish_reason in {"stop", "length"}
        assert result.attempts == 1 and result.latency_s > 0
    # No check that seed 42 reproduces the text: the server reuses cached prompt prefixes, so the logits of
    # a repeated request can differ in the last bits and a sampled token can flip.


def test_schema_constrained_pairwise_judgement_parses(backend):
    request = ChatRequest(
        messages=[
            {"role": "system", "content": "You are a fair judge. Reply with JSON only."},
            {
                "role": "user",
                "content": "Question: What is the capital of France?\n\nResponse 1: The capital is Paris.\n\n"
                "Response 2: The capital is Berlin.\n\nWhich response is better? Give a short explanation.",
            },
        ],
        sampling=SamplingParams(temperature=0.0, top_k=20, max_tokens=96, seed=1),
        response_format=json_schema_for(PAIRWISE),
        request_id="judge",
    )
    assert backend.request_body(request)["response_format"]["type"] == "json_object"

    [result] = backend.generate([request])

    assert result.ok, result.error
    assert result.finish_reason == "stop"  # the grammar closed the object within max_tokens
    verdict = json.loads(result.text)
    assert set(verdict) == {"explanation", "score"}
    assert isinstance(verdict["explanation"], str)
    assert verdict["score"] in {RESPONSE_1, RESPONSE_2}


def test_the_server_lists_the_model_under_its_alias(llamacpp_server, llamacpp_model_id):
    models = httpx.get(f"{llamacpp_server}/models", timeout=10).json()
    assert [model["id"] for model in models["data"]] == [llamacpp_model_id]


def test_a_wrong_path_is_a_configuration_error(llamacpp_server, llamacpp_model_id):
    wrong = OpenAIBackend(base_url=llamacpp_server.removesuffix("/v1") + "/nope", model=llamacpp_model_id)
    with wrong, pytest.raises(BackendConfigError, match="answered HTTP 404"):
        wrong.generate([ChatRequest(messages=[{"role": "user", "content": "Hi"}], request_id="x")])
