"""``manage.py judge_run``: a judge run started from the command line, with its tie family."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import JudgeRun
from tests.evaluation.inference.openai_stub_server import Reply, StubOpenAIServer, completion_body
from tests.evaluation.services.builders import make_endpoint, make_pair_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    from evaluation.services import backend_cache_clear

    stub = StubOpenAIServer().start()
    yield stub
    backend_cache_clear()
    stub.stop()


def test_judge_run_command_with_the_tie_family(server, django_capture_on_commit_callbacks):
    server.responder = lambda body: Reply(body=completion_body('{"explanation": "x", "score": "[[C]]"}'))
    make_endpoint(server, "judge")
    dataset = make_pair_dataset(n_prompts=2)
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "judge_run",
            "--endpoint",
            "judge",
            "--dataset",
            str(dataset.pk),
            "--family",
            "with_tie",
            "--json",
            stdout=out,
        )
    report = json.loads(out.getvalue())
    assert (report["pairwise_family"], report["n_total"]) == ("with_tie", 2)
    assert report["template"] == "with_tie/pairwise/en v1"
    run = JudgeRun.objects.get(pk=report["run"])
    assert run.pair_verdicts.filter(verdict="tie").count() == 2


def test_judge_run_command_refuses_bad_input_and_writes_nothing(server):
    make_endpoint(server, "judge")
    with pytest.raises(CommandError, match="--project: no annotation project with id 999") as error:
        call_command("judge_run", "--endpoint", "judge", "--project", "999")
    assert error.value.returncode == 2
    with pytest.raises(CommandError, match="--endpoint: no model endpoint with slug 'nope'"):
        call_command("judge_run", "--endpoint", "nope", "--dataset", "1")
    dataset = make_pair_dataset(n_prompts=1)
    with pytest.raises(CommandError, match="applies to pairwise judges only"):
        call_command(
            "judge_run",
            "--endpoint",
            "judge",
            "--dataset",
            str(dataset.pk),
            "--kind",
            "factual",
            "--family",
            "with_tie",
        )
    assert not JudgeRun.objects.exists()
