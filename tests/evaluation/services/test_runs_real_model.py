"""A generation run and a schema-constrained judge run through the production path against a real model.

The model is SmolLM2-135M-Instruct (GGUF, shipped on PyPI) behind llama.cpp's OpenAI-compatible server,
started once per test session by the ``llamacpp_server`` fixture. Nothing is mocked: endpoint, backend,
Celery chunk tasks (eager), parsing and storage are the ones production uses.
"""

from __future__ import annotations

import json

import pytest

from datasets_app.models import Response
from evaluation.models import Judgment, ModelEndpoint, PairVerdict
from evaluation.services import backend_cache_clear, generation_run_start, judge_run_start
from tests.evaluation.services.builders import make_pair_dataset, make_prompt_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def smollm2_endpoint(llamacpp_server, llamacpp_model_id):
    endpoint = ModelEndpoint.objects.create(
        slug="smollm2",
        backend=ModelEndpoint.Backend.OPENAI,
        base_url=llamacpp_server,
        model_id=llamacpp_model_id,
        max_concurrency=2,
        # llama.cpp's server takes the schema inside a json_object response format.
        backend_options={"structured_output": "json_object", "timeout_s": 120, "max_attempts": 2},
    )
    yield endpoint
    backend_cache_clear()


def test_generation_run_on_a_real_model(smollm2_endpoint, django_capture_on_commit_callbacks):
    dataset = make_prompt_dataset(n_prompts=2, two_turn_first=True)
    with django_capture_on_commit_callbacks(execute=True):
        run = generation_run_start(
            dataset=dataset, endpoints=[smollm2_endpoint], options={"seed": 1, "max_tokens": 12}
        )
    run.refresh_from_db()
    assert (run.status, run.n_total, run.n_done, run.n_failed) == ("succeeded", 2, 2, 0)
    responses = {r.prompt.external_id: r for r in Response.objects.filter(generation_run=run)}
    assert set(responses) == {"p0", "p1"}
    # p0 has two user turns: the model answered each, turn by turn.
    assert len(responses["p0"].turns) == 2 and len(responses["p1"].turns) == 1
    assert all(isinstance(t, str) and t.strip() for r in responses.values() for t in r.turns)
    assert all(r.origin == "generated" and r.model_name == "smollm2" for r in responses.values())


def test_schema_constrained_pairwise_judge_run_on_a_real_model(
    smollm2_endpoint, django_capture_on_commit_callbacks
):
    dataset = make_pair_dataset(n_prompts=1)
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_run_start(
            judge_kind="pairwise",
            endpoint=smollm2_endpoint,
            dataset=dataset,
            options={"seed": 3, "max_tokens": 96, "sampling": {"temperature": 0.0}},
        )
    run.refresh_from_db()
    assert run.status == "succeeded" and run.n_total == 1
    judgments = list(Judgment.objects.filter(judge_run=run).order_by("order"))
    assert [j.order for j in judgments] == ["ab", "ba"]
    for judgment in judgments:
        assert judgment.raw_output
        if judgment.parse_status == "ok":
            # The grammar made the model answer with the schema's keys and one of the two allowed labels.
            data = json.loads(judgment.raw_output)
            assert set(data) >= {"explanation", "score"}
            assert data["score"] in ("Response 1", "Response 2")
            assert judgment.verdict in ("A", "B")
        else:
            assert judgment.verdict in (None, "")
    # With max_tokens this small the explanation may be cut short; at least one order must parse.
    assert any(j.parse_status == "ok" for j in judgments)
    verdict = PairVerdict.objects.get(judge_run=run)
    assert verdict.consistency in ("consistent", "biased_first", "biased_second", "error")
