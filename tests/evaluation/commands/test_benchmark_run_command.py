"""``manage.py benchmark_run``: the protocol rules named on the command line reach the run."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluation.domain.benchmark_metrics import chrf_pp_corpus
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
    # The per-language table: jav's translation is exact (100), sun's is scored against its reference.
    sun = chrf_pp_corpus(["Kula tindak dhateng peken."], ["Hatur nuhun pisan."])
    table = report["tables"]["by_language"]
    assert table["languages"] == ["jav", "sun"] and table["metric"] == "corpus_chrf_pp"
    (row,) = table["rows"]
    assert (row["model"], row["jav"], row["sun"]) == ("mt", pytest.approx(100.0), pytest.approx(sun))
    assert report["tables"]["language_avg"] == pytest.approx((100.0 + sun) / 2) == row["avg"]
    assert report["comparison"] is None  # the only run of the dataset

    server.responder = lambda body: Reply(body=completion_body("Hatur nuhun pisan."))
    make_endpoint(server, "mt2")
    second = _run(
        "--task",
        "translation",
        "--endpoint",
        "mt2",
        "--dataset",
        str(dataset.pk),
        "--direction",
        "from_source",
    )
    jav = chrf_pp_corpus(["Hatur nuhun pisan."], ["Kula tindak dhateng peken."])
    compared = [(r["model"], r["jav"], r["sun"], r["avg"]) for r in second["comparison"]["rows"]]
    best_first = sorted(
        [("mt", 100.0, sun, (100.0 + sun) / 2), ("mt2", jav, 100.0, (jav + 100.0) / 2)], key=lambda r: -r[3]
    )
    assert compared == [tuple(pytest.approx(v) if isinstance(v, float) else v for v in r) for r in best_first]


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


def test_a_template_set_with_the_best_template_per_language(server):
    """Two templates; the model translates well only when asked with mt-en-2 ("sentence:"), so the best
    template's corpus chrF++ (100) beats the mean of the two."""

    def answer(body):
        text = body["messages"][-1]["content"]
        good = (
            "Kula tindak dhateng peken."
            if "jav" in text.lower() or "javanese" in text.lower()
            else "Hatur nuhun pisan."
        )
        return Reply(body=completion_body(good if "sentence:" in text else "salah"))

    server.responder = answer
    make_endpoint(server, "mt")
    dataset = make_translation_dataset()
    args = [
        "--task",
        "translation",
        "--endpoint",
        "mt",
        "--dataset",
        str(dataset.pk),
        "--direction",
        "from_source",
    ]
    report = _run(*args, "--prompt-language", "en", "--templates", "mt-en-1,mt-en-2", "--aggregation", "max")
    sets = report["tables"]["templates"]
    per_template = {row["variant"]: row["avg"] for row in sets["table"]["rows"]}
    assert per_template["mt-en-2"] == pytest.approx(100.0) and per_template["mt-en-1"] < 10
    assert sets["combined"]["avg"] == pytest.approx(100.0) == report["tables"]["language_avg"]
    assert sets["combined"]["best"] == {"jav": "mt-en-2", "sun": "mt-en-2"}
    mean = _run(*args, "--prompt-language", "en", "--templates", "mt-en-1,mt-en-2", "--aggregation", "mean")
    assert mean["tables"]["language_avg"] == pytest.approx((100.0 + per_template["mt-en-1"]) / 2)
    with pytest.raises(CommandError, match="unknown prompt template"):
        _run(*args, "--templates", "mt-en-9")
