"""Benchmark runs in eager mode: multiple choice, translation (chrF++), open QA (substring and judge)."""

from __future__ import annotations

import json
import re

import pytest

from evaluation.domain.benchmark_metrics import chrf_pp_corpus, chrf_pp_sentence
from evaluation.models import BenchmarkResult, BenchmarkRun
from evaluation.selectors import benchmark_tables
from evaluation.services import RunConfigError, benchmark_run_start
from tests.evaluation.inference.openai_stub_server import Reply, completion_body
from tests.evaluation.services.builders import (
    last_user,
    make_endpoint,
    make_prompt_dataset,
    make_question_dataset,
    make_translation_dataset,
)

pytestmark = pytest.mark.django_db


def _start(capture, **kwargs):
    with capture(execute=True):
        run = benchmark_run_start(**kwargs)
    run.refresh_from_db()
    return run


def test_mcq_k_shot_with_rule_extraction_and_accuracy_tables(server, django_capture_on_commit_callbacks):
    answers = {"Alat musik dari bambu?": "(C) angklung", "Hari kemerdekaan Indonesia?": "Jawaban: A"}

    def student(body):
        text = last_user(body)
        last_question = next(q for q in (*answers, "Pulau terbesar di Indonesia?") if text.rstrip().count(q))
        return Reply(body=completion_body(answers.get(last_question, "Jawabannya B atau C")))

    server.responder = student
    run = _start(
        django_capture_on_commit_callbacks,
        task="mcq",
        endpoint=make_endpoint(server, "student"),
        dataset=make_question_dataset(),
        options={"k_shot": 2, "shot_split": "shot", "eval_split": "test", "seed": 1},
    )

    assert (run.status, run.n_total, run.n_done) == ("succeeded", 3, 3)
    results = {
        r.item_key: r for r in BenchmarkResult.objects.filter(benchmark_run=run).select_related("question")
    }
    by_question = {r.question.external_id: r for r in results.values()}
    assert (by_question["t1"].prediction, by_question["t1"].correct) == ("C", True)
    assert (by_question["t2"].prediction, by_question["t2"].correct) == ("A", False)  # key is D
    # Two letters named as the answer: no answer, wrong, with the reason "ambiguous".
    assert (by_question["t3"].prediction, by_question["t3"].correct, by_question["t3"].raw["rule"]) == (
        "",
        False,
        "ambiguous",
    )
    # Two solved examples precede the question: both shot questions appear with their answers.
    prompt = last_user(server.requests[0].body)
    assert "Ibu kota Jawa Barat?" in prompt and "Makanan dari kedelai?" in prompt
    assert by_question["t1"].variant.startswith("id-")
    assert server.requests[0].body["max_tokens"] == 32

    tables = benchmark_tables(run=run)
    # 1 of 3 correct overall; budaya 1 of 2, geografi 0 of 1.
    assert tables["overall"][0]["accuracy"] == pytest.approx(1 / 3)
    assert (tables["n_ambiguous"], tables["n_refusals"]) == (1, 0)
    by_category = {row["category"]: row["accuracy"] for row in tables["by"]["category"]}
    assert by_category == {"budaya": 0.5, "geografi": 0.0}


def test_mcq_by_log_probability_is_refused_before_queueing_on_a_backend_without_scores(server):
    with pytest.raises(RunConfigError, match="which the openai backend of no-logprobs cannot do"):
        benchmark_run_start(
            task="mcq",
            endpoint=make_endpoint(server, "no-logprobs"),
            dataset=make_question_dataset(),
            options={"scoring": "logprob"},
        )
    assert not BenchmarkRun.objects.exists()
    assert server.requests == []


def test_translation_is_scored_with_sentence_chrf_pp(server, django_capture_on_commit_callbacks):
    outputs = {"Saya pergi ke pasar.": "Kula tindak dhateng peken.", "Terima kasih banyak.": "Hatur nuhun."}

    def translator(body):
        source = re.search(r"\n\n(.*)\Z", last_user(body), re.DOTALL).group(1)
        return Reply(body=completion_body(outputs[source]))

    server.responder = translator
    run = _start(
        django_capture_on_commit_callbacks,
        task="translation",
        endpoint=make_endpoint(server, "translator"),
        dataset=make_translation_dataset(),
        options={"direction": "from_source"},
    )
    results = {
        r.unit.external_id: r
        for r in BenchmarkResult.objects.filter(benchmark_run=run).select_related("unit")
    }
    assert results["u1"].score == pytest.approx(1.0)  # identical to the reference: chrF++ 100
    expected = chrf_pp_sentence("Hatur nuhun.", "Hatur nuhun pisan.") / 100
    assert results["u2"].score == pytest.approx(expected)
    assert 0 < expected < 1
    assert "ke bahasa Javanese (krama)" in last_user(
        next(r.body for r in server.requests if "pasar" in last_user(r.body))
    )
    tables = benchmark_tables(run=run)
    assert tables["overall"][0]["mean"] == pytest.approx((1.0 + expected) / 2)
    assert 0 < tables["corpus_chrf_pp"] <= 100


def test_translation_goes_into_indonesian_by_default_with_corpus_chrf_pp_per_language(
    server, django_capture_on_commit_callbacks
):
    # LoraxBench's direction: each unit's local-language text into Indonesian, scored against the source.
    outputs = {"Kula tindak dhateng peken.": "Saya pergi ke pasar.", "Hatur nuhun pisan.": "Terima kasih."}

    def translator(body):
        text = re.search(r"\n\n(.*)\Z", last_user(body), re.DOTALL).group(1)
        return Reply(body=completion_body(outputs[text]))

    server.responder = translator
    dataset = make_translation_dataset()
    run = _start(
        django_capture_on_commit_callbacks,
        task="translation",
        endpoint=make_endpoint(server, "translator"),
        dataset=dataset,
    )
    assert run.config["direction"] == "to_source"
    prompts = [last_user(r.body) for r in server.requests]
    assert any("dari bahasa Javanese ke bahasa Indonesian." in p for p in prompts)
    rows = {
        r.unit.external_id: r
        for r in BenchmarkResult.objects.filter(benchmark_run=run).select_related("unit")
    }
    assert (rows["u1"].language, rows["u1"].reference, rows["u1"].raw["direction"]) == (
        "jav",
        "Saya pergi ke pasar.",
        "to_source",
    )
    assert rows["u2"].language == "sun"
    tables = benchmark_tables(run=run)
    by_language = {row["group"]: row for row in tables["corpus_chrf_pp_by_language"]}
    sun = chrf_pp_corpus(["Terima kasih."], ["Terima kasih banyak."])
    assert by_language["jav"]["corpus_chrf_pp"] == pytest.approx(100.0)
    assert by_language["sun"]["corpus_chrf_pp"] == pytest.approx(sun)
    assert by_language["sun"]["sentence_mean"] == pytest.approx(
        chrf_pp_sentence("Terima kasih.", "Terima kasih banyak.")
    )
    assert tables["corpus_chrf_pp_language_mean"] == pytest.approx((100.0 + sun) / 2)
    registers = [row["group"] for row in tables["corpus_chrf_pp_by_language_register"]]
    assert registers == ["jav / krama", "sun"]


def test_open_qa_by_substring_match(server, django_capture_on_commit_callbacks):
    server.responder = lambda body: Reply(
        body=completion_body(
            "Jawabannya: rujukan 0 giliran 1." if "Pertanyaan 0" in last_user(body) else "entah"
        )
    )
    run = _start(
        django_capture_on_commit_callbacks,
        task="open_qa",
        endpoint=make_endpoint(server, "qa"),
        dataset=make_prompt_dataset(n_prompts=2, two_turn_first=False),
    )
    correct = dict(
        BenchmarkResult.objects.filter(benchmark_run=run).values_list("prompt__external_id", "correct")
    )
    assert correct == {"p0": True, "p1": False}
    assert run.config["match_rule"] == "substring"


@pytest.mark.parametrize(("rule", "expected"), [("substring", True), ("whole_word", False)])
def test_open_qa_match_rule_is_named_and_kept(server, django_capture_on_commit_callbacks, rule, expected):
    # The reference "Rujukan 0 giliran 1" is inside the reply but glued to a word: LoraxBench's substring
    # rule counts it, the whole-word rule does not.
    server.responder = lambda body: Reply(body=completion_body("Jawabannya: Rujukan 0 giliran 1nya."))
    options = {} if rule == "substring" else {"match_rule": rule}
    run = _start(
        django_capture_on_commit_callbacks,
        task="open_qa",
        endpoint=make_endpoint(server, "qa"),
        dataset=make_prompt_dataset(n_prompts=1, two_turn_first=False),
        options=options,
    )
    (result,) = BenchmarkResult.objects.filter(benchmark_run=run)
    assert (run.config["match_rule"], result.correct, result.raw["rule"]) == (rule, expected, rule)


@pytest.mark.parametrize(
    ("task", "mode", "options", "message"),
    [
        (
            "open_qa",
            None,
            {"match_rule": "exact"},
            "match_rule must be one of substring, whole_word, got 'exact'",
        ),
        ("mcq", "cloze", {"cloze_rule": "max"}, "cloze_rule must be one of total, mean, got 'max'"),
        ("mcq", "chat", {"cloze_rule": "mean"}, "cloze_rule is an option of multiple choice in cloze mode"),
        ("mcq", None, {"match_rule": "substring"}, "match_rule is an option of open QA scored by substring"),
    ],
)
def test_a_bad_rule_is_refused_and_writes_nothing(server, task, mode, options, message):
    dataset = make_prompt_dataset(n_prompts=1) if task == "open_qa" else make_question_dataset()
    with pytest.raises(RunConfigError) as caught:
        benchmark_run_start(
            task=task, endpoint=make_endpoint(server), dataset=dataset, mode=mode, options=options
        )
    assert str(caught.value) == message
    assert not BenchmarkRun.objects.exists()


def test_open_qa_by_factual_judge_divides_by_five(server, django_capture_on_commit_callbacks):
    def both(body):
        if "[Gold answer]" in last_user(body):
            score = 4 if "Pertanyaan 0" in last_user(body) else None
            text = json.dumps({"explanation": "x", "score": score}) if score else "no idea"
            return Reply(body=completion_body(text))
        return Reply(body=completion_body("some answer"))

    server.responder = both
    endpoint = make_endpoint(server, "qa-model")
    run = _start(
        django_capture_on_commit_callbacks,
        task="open_qa",
        endpoint=endpoint,
        judge_endpoint=make_endpoint(server, "qa-judge"),
        dataset=make_prompt_dataset(n_prompts=2, two_turn_first=False),
        options={"scoring": "judge"},
    )
    rows = {
        r.prompt.external_id: r
        for r in BenchmarkResult.objects.filter(benchmark_run=run).select_related("prompt")
    }
    assert rows["p0"].score == pytest.approx(0.8)  # 4 / 5
    assert rows["p1"].score is None and rows["p1"].raw["judge_parse_status"] == "error"
    assert run.status == "succeeded"


def _english_knower(body):
    """Answers right when asked in English (template en-1: "Question:"), wrong otherwise."""
    text = last_user(body)
    keys = {
        "Alat musik dari bambu?": "C",
        "Hari kemerdekaan Indonesia?": "D",
        "Pulau terbesar di Indonesia?": "E",
    }
    question = next(q for q in keys if q in text)
    return Reply(body=completion_body(keys[question] if "Question:" in text else "A"))


@pytest.mark.parametrize(("aggregation", "expected"), [("mean", 0.5), ("max", 1.0)])
def test_a_template_set_asks_every_question_with_every_template_and_combines_their_accuracy(
    server, django_capture_on_commit_callbacks, aggregation, expected
):
    server.responder = _english_knower
    run = _start(
        django_capture_on_commit_callbacks,
        task="mcq",
        endpoint=make_endpoint(server, "student"),
        dataset=make_question_dataset(),
        options={"eval_split": "test", "templates": ["en-1", "id-1"], "aggregation": aggregation},
    )
    assert (run.status, run.n_total, run.n_done) == ("succeeded", 6, 6)
    assert [t["id"] for t in run.config["templates"]] == ["en-1", "id-1"]
    tables = benchmark_tables(run=run)
    per_template = {row["variant"]: row["overall"] for row in tables["templates"]["table"]["rows"]}
    assert per_template == {"en-1": 1.0, "id-1": 0.0}
    assert tables["templates"]["combined"]["overall"] == expected
    assert tables["language_avg"] == expected  # one language: its combined figure
    assert tables["overall"][0]["accuracy"] == 0.5  # the pooled figure stays beside it


def test_drawn_templates_ask_each_question_once_and_a_set_of_unknown_ids_is_refused(
    server, django_capture_on_commit_callbacks
):
    server.responder = _english_knower
    run = _start(
        django_capture_on_commit_callbacks,
        task="mcq",
        endpoint=make_endpoint(server, "student"),
        dataset=make_question_dataset(),
        options={"eval_split": "test", "templates": ["en-1", "id-1"], "aggregation": "draw", "seed": 3},
    )
    assert run.n_total == 3 and len(server.requests) == 3
    assert "templates" not in benchmark_tables(run=run)
    with pytest.raises(RunConfigError, match="unknown prompt template"):
        benchmark_run_start(
            task="mcq",
            endpoint=make_endpoint(server, "other"),
            dataset=make_question_dataset(name="again"),
            options={"templates": ["nope"]},
        )
    with pytest.raises(RunConfigError, match="aggregation must be one of draw, mean, max"):
        benchmark_run_start(
            task="mcq",
            endpoint=make_endpoint(server, "third"),
            dataset=make_question_dataset(name="third"),
            options={"aggregation": "median"},
        )


def test_translation_asks_with_a_template_the_researcher_added(server, django_capture_on_commit_callbacks):
    from evaluation.services.prompt_templates import prompt_template_create

    prompt_template_create(
        slug="paper-mt",
        task="translation",
        language="en",
        body="Translate from {{source}} to {{target}}:\n{{text}}\nTranslation:",
        note="the paper's prompt",
    )
    server.responder = lambda body: Reply(body=completion_body("Saya pergi ke pasar."))
    run = _start(
        django_capture_on_commit_callbacks,
        task="translation",
        endpoint=make_endpoint(server, "mt"),
        dataset=make_translation_dataset(),
        options={"templates": ["paper-mt", "mt-en-1"], "aggregation": "max", "prompt_language": "en"},
    )
    sent = [last_user(r.body) for r in server.requests]
    assert sum(text.startswith("Translate from ") and text.endswith("\nTranslation:") for text in sent) == (
        run.n_total // 2
    )
    assert set(BenchmarkResult.objects.filter(benchmark_run=run).values_list("variant", flat=True)) == {
        "paper-mt",
        "mt-en-1",
    }
    with pytest.raises(RunConfigError, match="incomplete"):
        prompt_template_create(slug="bad", task="translation", language="en", body="{{text}} only")
