"""VllmBackend without a GPU: vLLM is imported only when the backend is built, and its absence is a clear
error. The request mapping (sampling parameters, structured outputs, prompt log-probabilities) is checked
against a stand-in ``vllm`` module that records what it is given and answers in vLLM's output shapes; the
backend has not been run against real vLLM on a GPU here.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import pytest

from evaluation.domain.judge_templates import PAIRWISE, json_schema_for
from evaluation.domain.sampling import SamplingParams
from evaluation.inference.base import ChatRequest
from evaluation.inference.registry import BackendNotAvailable, backend_class

vllm_installed = importlib.util.find_spec("vllm") is not None


def test_importing_the_backend_module_does_not_import_vllm():
    code = (
        "import sys; import evaluation.inference.vllm_backend, evaluation.inference.registry; "
        "print('vllm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.skipif(vllm_installed, reason="vllm is installed here, so its absence cannot be shown")
def test_missing_vllm_is_a_clear_error_from_the_registry_and_the_class(monkeypatch):
    with pytest.raises(BackendNotAvailable, match="the 'vllm' backend needs the package 'vllm'.*'gpu' extra"):
        backend_class("vllm")
    from evaluation.inference.vllm_backend import VllmBackend

    with pytest.raises(BackendNotAvailable, match=r"pip install '\.\[gpu\]'"):
        VllmBackend(model="some/model")


# --- stand-in vllm module -------------------------------------------------------------------------


class FakeSamplingParams:
    def __init__(self, **options: Any) -> None:
        self.options = options


@dataclass
class FakeStructuredOutputsParams:
    json: Any = None


@dataclass
class FakeLogprob:
    logprob: float


@dataclass
class FakeCompletion:
    text: str
    token_ids: list[int]
    finish_reason: str


@dataclass
class FakeRequestOutput:
    prompt_token_ids: list[int]
    outputs: list[FakeCompletion] = field(default_factory=list)
    prompt_logprobs: list[dict[int, FakeLogprob] | None] | None = None


class CharTokenizer:
    """One token per character: "ab" -> [97, 98]."""

    def __call__(self, text: str) -> dict[str, list[int]]:
        return {"input_ids": [ord(c) for c in text]}


class FakeLLM:
    def __init__(self) -> None:
        self.chat_calls: list[tuple[list, list]] = []
        self.generate_calls: list[tuple[list, Any]] = []

    def chat(self, conversations, sampling_params, use_tqdm):
        self.chat_calls.append((conversations, sampling_params))
        if any("too long" in conv[-1]["content"] for conv in conversations):
            raise ValueError("prompt is longer than max_model_len")
        return [
            FakeRequestOutput(
                prompt_token_ids=[1] * len(conv[-1]["content"]),
                outputs=[
                    FakeCompletion(f"answer {i}", [5] * (i + 2), "stop") for i in range(params.options["n"])
                ],
            )
            for conv, params in zip(conversations, sampling_params, strict=True)
        ]

    def get_tokenizer(self):
        return CharTokenizer()

    def generate(self, prompts, sampling_params, use_tqdm):
        self.generate_calls.append((prompts, sampling_params))
        # Log-probability of token t at position i: -(t - 96) / 10, so "a" -> -0.1, "b" -> -0.2, ...
        return [
            FakeRequestOutput(
                prompt_token_ids=p["prompt_token_ids"],
                prompt_logprobs=[None]
                + [{t: FakeLogprob(-(t - 96) / 10)} for t in p["prompt_token_ids"][1:]],
            )
            for p in prompts
        ]


@pytest.fixture
def fake_vllm(monkeypatch) -> types.ModuleType:
    module = types.ModuleType("vllm")
    sampling_module = types.ModuleType("vllm.sampling_params")
    sampling_module.StructuredOutputsParams = FakeStructuredOutputsParams
    module.SamplingParams = FakeSamplingParams
    module.LLM = lambda **options: ("built", options)
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sampling_module)
    return module


def test_sampling_params_and_structured_output_are_mapped(fake_vllm):
    from evaluation.inference.vllm_backend import VllmBackend

    llm = FakeLLM()
    backend = VllmBackend(llm=llm)
    schema = json_schema_for(PAIRWISE)
    requests = [
        ChatRequest(
            messages=[{"role": "user", "content": "halo"}],
            sampling=SamplingParams(seed=11, max_tokens=32, n=2),
            request_id="a",
        ),
        ChatRequest(
            messages=[{"role": "user", "content": "judge"}],
            sampling=SamplingParams(temperature=0.0, top_k=None, stop=("\n\n",)),
            response_format=schema,
            request_id="b",
        ),
    ]

    results = backend.generate(requests)

    [(conversations, params)] = llm.chat_calls
    assert conversations == [[{"role": "user", "content": "halo"}], [{"role": "user", "content": "judge"}]]
    assert params[0].options == {
        "n": 2,
        "temperature": 0.6,
        "top_p": 0.95,
        "top_k": 20,
        "max_tokens": 32,
        "seed": 11,
    }
    assert params[1].options["top_k"] == -1 and params[1].options["stop"] == ["\n\n"]
    assert params[1].options["structured_outputs"] == FakeStructuredOutputsParams(json=schema)
    assert [r.request_id for r in results] == ["a", "b"]
    assert results[0].choices == ("answer 0", "answer 1") and results[0].text == "answer 0"
    assert results[0].prompt_tokens == 4 and results[0].completion_tokens == 2 + 3
    assert results[1].finish_reason == "stop"


def test_a_failing_prompt_fails_alone(fake_vllm):
    from evaluation.inference.vllm_backend import VllmBackend

    llm = FakeLLM()
    requests = [
        ChatRequest(messages=[{"role": "user", "content": "this is too long"}], request_id="bad"),
        ChatRequest(messages=[{"role": "user", "content": "fine"}], request_id="good"),
    ]
    bad, good = VllmBackend(llm=llm).generate(requests)
    assert bad.error == "vLLM failed: prompt is longer than max_model_len" and bad.text == ""
    assert good.ok and good.text == "answer 0"
    assert len(llm.chat_calls) == 3  # the batch, then each request alone


def test_option_scores_come_from_prompt_logprobs(fake_vllm):
    from evaluation.inference.vllm_backend import VllmBackend

    llm = FakeLLM()
    backend = VllmBackend(llm=llm)
    # Prompt "x" (1 token); option "ab" scores log p(a) + log p(b) = -0.1 + -0.2 = -0.3; "c" -> -0.3.
    assert backend.score_options("x", ["ab", "c"]) == pytest.approx([-0.3, -0.3])
    assert backend.score_options("x", ["ab", "c"], mode="cloze") == pytest.approx([-0.15, -0.3])
    prompts, params = llm.generate_calls[0]
    assert prompts == [{"prompt_token_ids": [120, 97, 98]}, {"prompt_token_ids": [120, 99]}]
    assert params.options == {"max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 1}


def test_model_options_reach_llm(fake_vllm):
    from evaluation.inference.vllm_backend import VllmBackend

    backend = VllmBackend(model="/models/qwen", max_model_len=4096, llm_options={"enforce_eager": True})
    assert backend.llm == (
        "built",
        {
            "model": "/models/qwen",
            "tensor_parallel_size": 1,
            "dtype": "auto",
            "gpu_memory_utilization": 0.9,
            "seed": 0,
            "trust_remote_code": False,
            "max_model_len": 4096,
            "enforce_eager": True,
        },
    )
