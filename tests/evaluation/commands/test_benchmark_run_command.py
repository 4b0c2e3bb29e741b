"""``manage.py benchmark_run``: the protocol rules named on the command line reach the run."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import BenchmarkRun
from tests.evaluation.inference.openai_stub_server import Reply, StubOpenAIServer, completion_body
from tests.evaluation.services.builders import make_endpoint, make_prompt_dataset, make_translation_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    from evaluation.services import backend_cache_clear

    stub = StubOpenAIServer().start()
    yield stub
    backend_cache_clear()
    stub.stop()


def _run(*args: str) -> dict:
    out = StringIO()
    call_command("benchmark_run", *args, "--inline", "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_translation_direction_and_its_language_table(server):
    server.responder = lambda body: Reply(body=completion_body("Kula tindak dhateng peken."))
    make_endpoint(server, "mt")
    dataset = make_translation_dataset()
    report = _run(
        "--task",
        "translation",
        "--endpoint",
        "mt",
        "--dataset",
        str(dataset.pk),
        "--direction",
        "from_source",
    )
    run = BenchmarkRun.objects.get()
    assert run.config["direction"] == "from_source"
    groups = [row["group"] for row in report["tables"]["corpus_chrf_pp_by_language"]]
    assert groups == ["jav", "sun"]


def test_the_open_qa_match_rule(server):
    server.responder = lambda body: Reply(body=completion_body("Rujukan 0 giliran 1nya"))
    make_endpoint(server, "qa")
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    _run("--task", "open_qa", "--endpoint", "qa", "--dataset", str(dataset.pk), "--match-rule", "whole_word")
    assert BenchmarkRun.objects.get().config["match_rule"] == "whole_word"


def test_an_unknown_rule_is_refused(server):
    make_endpoint(server, "qa")
    with pytest.raises(CommandError, match="invalid choice: 'exact'"):
        _run("--task", "open_qa", "--endpoint", "qa", "--dataset", "1", "--match-rule", "exact")
