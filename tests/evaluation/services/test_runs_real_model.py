"""A generation run and a schema-constrained judge run through the production path against a real model.

The model is SmolLM2-135M-Instruct (GGUF, shipped on PyPI) behind llama.cpp's OpenAI-compatible server,
started once per test session by the ``llamacpp_server`` fixture. Nothing is mocked: endpoint, backend,
Celery chunk tasks (eager), parsing and storage are the ones production uses.
"""

from __future__ import annotations

import json
import re

import pytest

from annotation.models import Project, Task
from datasets_app.models import Dataset, Prompt, Response
from evaluation.domain.judge_parsing import parse_judge_output
from evaluation.models import Judgment, ModelEndpoint, PairVerdict
from evaluation.services import backend_cache_clear, generation_run_start, judge_run_start
from tests.evaluation.services.builders import make_pair_dataset, make_prompt_dataset
from tests.evaluation.services.recording_proxy import RecordingProxy

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
            # Under the grammar a reply can only fail by running out of tokens (SmolLM2's explanation can
            # repeat itself past the budget): it is then the start of the schema's object, and a score it
            # already gave is one of the two allowed labels.
            assert judgment.verdict in (None, "")
            assert judgment.raw_output.lstrip().startswith("{")
            given = re.search(r'"score"\s*:\s*"([^"]*)"', judgment.raw_output)
            assert given is None or given.group(1) in ("Response 1", "Response 2")
    verdict = PairVerdict.objects.get(judge_run=run)
    assert verdict.consistency in ("consistent", "biased_first", "biased_second", "error")


@pytest.mark.timeout(600)  # a few seconds on an idle 2-core machine; minutes on a busy one
def test_both_pairwise_families_on_a_demo_shaped_project_with_a_real_model(
    llamacpp_server, llamacpp_model_id, django_capture_on_commit_callbacks
):
    """A pairwise task on turn 2 of a two-turn prompt x 2 orders x 2 families = 4 real judge calls."""
    dataset = Dataset.objects.create(name="demo-shaped")
    two = Prompt.objects.create(
        dataset=dataset,
        external_id="p2",
        category="roleplay",
        language="ind",
        turns=["Sebutkan satu pulau.", "Apa ibu kota provinsinya?"],
    )
    project = Project.objects.create(name="Demo-shaped pairwise", kind="pairwise", dataset=dataset)
    for prompt, turn, a_turns, b_turns in ((two, 1, ["Bali.", "Denpasar."], ["Lombok.", "Surabaya."]),):
        a = Response.objects.create(prompt=prompt, model_name="alpha", turns=a_turns)
        b = Response.objects.create(prompt=prompt, model_name="beta", turns=b_turns)
        Task.objects.create(
            project=project, prompt=prompt, response_ids=[a.pk, b.pk], response_a=a, response_b=b, turn=turn
        )
    with RecordingProxy(llamacpp_server) as proxy:
        endpoint = ModelEndpoint.objects.create(
            slug="smollm2-proxy",
            backend=ModelEndpoint.Backend.OPENAI,
            base_url=proxy.base_url,
            model_id=llamacpp_model_id,
            max_concurrency=1,
            backend_options={"structured_output": "json_object", "timeout_s": 280, "max_attempts": 2},
        )
        runs = {}
        try:
            for family in ("no_tie", "with_tie"):
                with django_capture_on_commit_callbacks(execute=True):
                    runs[family] = judge_run_start(
                        judge_kind="pairwise",
                        endpoint=endpoint,
                        annotation_project=project,
                        pairwise_family=family,
                        options={"seed": 5, "max_tokens": 48, "sampling": {"temperature": 0.0}},
                    )
        finally:
            backend_cache_clear()
    # A request retried after a timeout is sent again unchanged: count distinct prompts.
    prompts = list(
        dict.fromkeys(next(m["content"] for m in b["messages"] if m["role"] == "user") for b in proxy.bodies)
    )
    assert len(prompts) == 4
    # The turn-2 task showed the judge turn 1 of the user and of both assistants, in both families.
    assert all("Apa ibu kota provinsinya?" in p for p in prompts)
    assert all("Turn 1:\nSebutkan satu pulau." in p for p in prompts)
    assert all("Turn 1:\nBali." in p and "Turn 1:\nLombok." in p for p in prompts)
    assert sum('"score": "A", "B" or "tie"}' in p for p in prompts) == 2
    assert sum('"score": "Response 1" or "Response 2"}' in p for p in prompts) == 2
    for family, run in runs.items():
        run.refresh_from_db()
        assert (run.status, run.n_total, run.pairwise_family) == ("succeeded", 1, family)
        judgments = list(Judgment.objects.filter(judge_run=run))
        assert len(judgments) == 2
        allowed = {"A", "B", "tie"} if family == "with_tie" else {"A", "B"}
        for judgment in judgments:
            # The stored verdict is what the parser reads from the raw reply, with the run's tie rule.
            again = parse_judge_output(judgment.raw_output, "pairwise", allow_tie=family == "with_tie")
            assert judgment.parse_status == again.status
            if judgment.parse_status == "ok":
                assert judgment.verdict in allowed and judgment.shown_verdict == again.value
        assert PairVerdict.objects.filter(judge_run=run).count() == 1
