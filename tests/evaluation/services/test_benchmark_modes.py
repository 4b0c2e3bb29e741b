"""Multiple-choice benchmark modes chosen per run: completion (plain text, first line), refusals counted
apart, accuracy per prompt template, and the mode checked wherever a run starts (service, API, CLI)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from datasets_app.models import TranslationUnit
from evaluation.domain.benchmark_metrics import chrf_pp_sentence
from evaluation.models import BenchmarkResult, BenchmarkRun
from evaluation.selectors import benchmark_tables
from evaluation.services import RunConfigError, benchmark_run_start
from tests.evaluation.inference.openai_stub_server import Reply, completion_body
from tests.evaluation.services.builders import (
    last_user,
    make_endpoint,
    make_question_dataset,
    make_translation_dataset,
)

pytestmark = pytest.mark.django_db


def _text_completion(text: str) -> dict:
    return {
        "object": "text_completion",
        "choices": [{"index": 0, "text": text, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 8},
    }


# The model's continuation after each test question's prompt: the first line is the answer, what follows
# is the model writing the next exam question, as base models do.
CONTINUATIONS = {
    "Alat musik dari bambu?": " C\n\nSoal ujian: Apa nama tarian dari Bali?\n(A) Kecak",
    "Hari kemerdekaan Indonesia?": "\nJawaban: (d)\nSoal ujian: A",
    "Pulau terbesar di Indonesia?": " Maaf, saya tidak bisa menjawab pertanyaan ini.\nB",
}


def _base_model(body):
    prompt = body["prompt"]
    asked = prompt.rsplit("\n\n", 1)[-1]  # the last block is the open question
    question = next(q for q in CONTINUATIONS if q in asked)
    return Reply(body=_text_completion(CONTINUATIONS[question]))


def test_completion_mode_sends_the_k_shot_text_and_reads_the_first_line(
    server, django_capture_on_commit_callbacks
):
    server.responder = _base_model
    with django_capture_on_commit_callbacks(execute=True):
        run = benchmark_run_start(
            task="mcq",
            endpoint=make_endpoint(server, "base"),
            dataset=make_question_dataset(),
            mode="completion",
            options={"k_shot": 2, "shot_split": "shot", "eval_split": "test", "seed": 3},
        )
    run.refresh_from_db()
    assert (run.status, run.mode, run.config["scoring"], run.n_done) == (
        "succeeded",
        "completion",
        "extract",
        3,
    )

    # Plain completions, not chat: /completions with a prompt and no messages.
    assert {r.path for r in server.requests} == {"/v1/completions"}
    assert all("messages" not in r.body for r in server.requests)
    # With seed 3 the draw over 4 templates gives t1 -> id-4, t2 -> id-4, t3 -> id-3.
    results = {r.question.external_id: r for r in BenchmarkResult.objects.filter(benchmark_run=run)}
    assert {k: r.variant for k, r in results.items()} == {"t1": "id-4", "t2": "id-4", "t3": "id-3"}
    t1_prompt = next(r.body["prompt"] for r in server.requests if "bambu" in r.body["prompt"])
    assert t1_prompt.endswith(
        "Soal ujian: Alat musik dari bambu?\n(A) tempe\n(B) Bandung\n(C) angklung\n"
        "(D) 17 Agustus\n(E) Kalimantan\nJawaban:"
    )
    assert "Jawaban: B\n\n" in t1_prompt and "Jawaban: A\n\n" in t1_prompt  # the two solved shots

    assert (results["t1"].prediction, results["t1"].correct, results["t1"].raw["answer_line"]) == (
        "C",
        True,
        "C",
    )
    assert (results["t2"].prediction, results["t2"].correct, results["t2"].raw["rule"]) == (
        "D",
        True,
        "answer_phrase",
    )
    # The refusal is recorded as one (and counts as wrong), not as the "B" on the line after it.
    assert (results["t3"].prediction, results["t3"].correct, results["t3"].raw["rule"]) == (
        "",
        False,
        "refusal",
    )

    tables = benchmark_tables(run=run)
    assert tables["overall"][0]["accuracy"] == pytest.approx(2 / 3)
    assert tables["n_refusals"] == 1
    by_template = {row["variant"]: (row["n"], row["accuracy"]) for row in tables["by"]["variant"]}
    assert by_template == {"id-3": (1, 0.0), "id-4": (2, 1.0)}


def test_cloze_on_a_chat_only_backend_is_refused_saying_why(server):
    with pytest.raises(RunConfigError) as caught:
        benchmark_run_start(
            task="mcq",
            endpoint=make_endpoint(server, "chat-only"),
            dataset=make_question_dataset(),
            mode="cloze",
        )
    assert str(caught.value) == (
        "mode cloze scores options by log-probability, which the openai backend of chat-only cannot do; "
        "choose an endpoint on transformers, vllm or llamacpp, or the chat mode"
    )
    assert not BenchmarkRun.objects.exists() and server.requests == []


@pytest.mark.parametrize(
    ("task", "mode", "options", "message"),
    [
        ("mcq", "guess", {}, "mode must be one of chat, completion, logprob, cloze, got 'guess'"),
        (
            "mcq",
            "cloze",
            {"scoring": "extract"},
            "mode 'cloze' reads answers by 'logprob', not scoring 'extract'",
        ),
        (
            "translation",
            "completion",
            {},
            "mode 'completion' is for multiple choice; translation runs use chat",
        ),
    ],
)
def test_a_bad_mode_is_refused_and_writes_nothing(server, task, mode, options, message):
    with pytest.raises(RunConfigError) as caught:
        benchmark_run_start(
            task=task,
            endpoint=make_endpoint(server),
            dataset=make_question_dataset(),
            mode=mode,
            options=options,
        )
    assert str(caught.value) == message
    assert not BenchmarkRun.objects.exists()


def test_old_style_logprob_scoring_still_picks_the_letter_mode(server):
    endpoint = make_endpoint(server)
    endpoint.backend = "llamacpp"  # a backend that scores options; nothing runs in this test
    endpoint.save(update_fields=["backend"])
    run = benchmark_run_start(
        task="mcq",
        endpoint=endpoint,
        dataset=make_question_dataset(),
        options={"scoring": "logprob"},
    )
    assert (run.mode, run.config["scoring"]) == ("logprob", "logprob")


def test_the_api_takes_the_mode(server, client, django_user_model):
    user = django_user_model.objects.create_user("res", password="pw", is_staff=True, is_superuser=True)
    client.force_login(user)
    endpoint = make_endpoint(server, "api-model")
    dataset = make_question_dataset()
    response = client.post(
        reverse("api-benchmark-run-start"),
        {"task": "mcq", "endpoint": endpoint.slug, "dataset": dataset.pk, "mode": "completion"},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["mode"] == "completion"
    assert BenchmarkRun.objects.get().mode == "completion"
    bad = client.post(
        reverse("api-benchmark-run-start"),
        {"task": "mcq", "endpoint": endpoint.slug, "dataset": dataset.pk, "mode": "guess"},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "mode" in bad.json()


def test_the_command_refuses_an_unknown_endpoint_with_exit_code_2(server):
    dataset = make_question_dataset()
    with pytest.raises(CommandError) as caught:
        call_command("benchmark_run", "--task", "mcq", "--endpoint", "nobody", "--dataset", str(dataset.pk))
    assert caught.value.returncode == 2
    assert str(caught.value) == "--endpoint: no model endpoint with slug 'nobody'"
    assert not BenchmarkRun.objects.exists()


def test_the_command_runs_inline_and_prints_the_tables(server):
    server.responder = _base_model
    endpoint = make_endpoint(server, "base-cli")
    dataset = make_question_dataset()
    out = StringIO()
    call_command(
        "benchmark_run",
        *("--task", "mcq", "--endpoint", endpoint.slug, "--dataset", str(dataset.pk), "--mode", "completion"),
        *(
            "--k-shot",
            "2",
            "--shot-split",
            "shot",
            "--eval-split",
            "test",
            "--seed",
            "3",
            "--inline",
            "--json",
        ),
        stdout=out,
    )
    report = json.loads(out.getvalue())
    assert (report["status"], report["mode"], report["n_done"]) == ("succeeded", "completion", 3)
    assert report["tables"]["overall"][0]["accuracy"] == pytest.approx(2 / 3)
    assert report["tables"]["n_refusals"] == 1
    assert {row["variant"]: row["n_correct"] for row in report["tables"]["by"]["variant"]} == {
        "id-3": 0,
        "id-4": 2,
    }


def test_a_back_translation_run_keeps_the_back_translation_on_the_unit(
    server, django_capture_on_commit_callbacks
):
    backs = {"Kula tindak dhateng peken.": "Saya pergi ke pasar.", "Hatur nuhun pisan.": "Terima kasih."}

    def translator(body):
        text = last_user(body).rsplit("\n\n", 1)[-1]
        return Reply(body=completion_body(backs[text]))

    server.responder = translator
    dataset = make_translation_dataset()
    with django_capture_on_commit_callbacks(execute=True):
        run = benchmark_run_start(
            task="translation",
            endpoint=make_endpoint(server, "back"),
            dataset=dataset,
            options={"back_translate": True},
        )
    run.refresh_from_db()
    assert run.status == "succeeded"
    # Asked from the target language back into the source language, without the target's register.
    prompt = next(last_user(r.body) for r in server.requests if "peken" in last_user(r.body))
    assert "dari bahasa Javanese ke bahasa Indonesian. " in prompt
    units = {u.external_id: u for u in TranslationUnit.objects.filter(dataset=dataset)}
    assert units["u1"].meta["back_translation"] == "Saya pergi ke pasar."
    assert units["u2"].meta["back_translation"] == "Terima kasih."
    scores = {r.unit.external_id: r.score for r in BenchmarkResult.objects.filter(benchmark_run=run)}
    assert scores["u1"] == pytest.approx(1.0)  # the source itself
    assert scores["u2"] == pytest.approx(chrf_pp_sentence("Terima kasih.", "Terima kasih banyak.") / 100)
    with pytest.raises(RunConfigError, match="back_translate is an option of translation runs"):
        benchmark_run_start(
            task="mcq",
            endpoint=make_endpoint(server),
            dataset=make_question_dataset(),
            options={"back_translate": True},
        )
