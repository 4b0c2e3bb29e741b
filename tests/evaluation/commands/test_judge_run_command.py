"""``manage.py judge_run``: a judge run started from the command line, with its tie family."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import JudgeRun
from tests.evaluation.inference.openai_stub_server import Reply, StubOpenAIServer, completion_body
from tests.evaluation.services.builders import last_user, make_endpoint, make_pair_dataset

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


# Committed for real, so that the run's chunks run (eagerly) inside the command, before it reports.
@pytest.mark.django_db(transaction=True)
def test_a_graded_run_reports_the_mean_grade_per_model_and_language(server):
    def grader(body):
        text = last_user(body)
        if "BAD answer 2" in text:
            return Reply(body=completion_body("no idea"))
        score = 5 if "GOOD answer 1" in text else 9 if "GOOD" in text else 3
        return Reply(body=completion_body(json.dumps({"explanation": "x", "score": score})))

    server.responder = grader
    make_endpoint(server, "grader")
    dataset = make_pair_dataset(n_prompts=3)
    dataset.prompts.filter(external_id="q2").update(language="jav")
    out = StringIO()
    call_command(
        "judge_run",
        "--endpoint",
        "grader",
        "--dataset",
        str(dataset.pk),
        "--kind",
        "single_grade",
        "--json",
        stdout=out,
    )
    table = json.loads(out.getvalue())["summary"]["by_language"]
    assert table["languages"] == ["ind", "jav"] and table["metric"] == "mean_grade"
    rows = {row["model"]: row for row in table["rows"]}
    # alpha: ind (9 + 5)/2 = 7, jav 9 -> Avg 8; over its three grades 23/3.
    assert (rows["alpha"]["ind"], rows["alpha"]["jav"], rows["alpha"]["avg"]) == (7.0, 9.0, 8.0)
    assert rows["alpha"]["overall"] == pytest.approx(23 / 3)
    # beta: ind 3; its Javanese grade did not parse, so no value there and no Avg.
    assert (rows["beta"]["ind"], rows["beta"]["jav"], rows["beta"]["avg"]) == (3.0, None, None)
