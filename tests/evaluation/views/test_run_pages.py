"""Run pages: role checks, the polling progress fragment, cancel, results tables."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import translation

from evaluation.services import benchmark_run_start, generation_run_start, judge_run_start
from tests.evaluation.inference.openai_stub_server import Reply, completion_body
from tests.evaluation.services.builders import (
    fair_judge,
    last_user,
    make_endpoint,
    make_pair_dataset,
    make_prompt_dataset,
    make_question_dataset,
)

pytestmark = pytest.mark.django_db


def _pairwise_run(server, capture):
    """A finished pairwise judge run over two prompts' pairs, judged by ``server``'s responder."""
    with capture(execute=True):
        return judge_run_start(
            judge_kind="pairwise",
            endpoint=make_endpoint(server, "judge"),
            dataset=make_pair_dataset(n_prompts=2),
        )


def test_annotators_cannot_see_runs_or_endpoints(role_client):
    client = role_client("annotator")
    assert client.get("/evaluation/").status_code == 403
    assert client.get("/evaluation/endpoints/").status_code == 403


def test_a_running_run_polls_its_progress_and_can_be_cancelled(
    role_client, server, django_capture_on_commit_callbacks
):
    client = role_client("researcher")
    dataset = make_prompt_dataset(n_prompts=3, two_turn_first=False)
    with django_capture_on_commit_callbacks(execute=False):  # nothing runs: the run stays queued
        run = generation_run_start(dataset=dataset, endpoints=[make_endpoint(server, "slow")])

    page = client.get(f"/evaluation/runs/generation/{run.pk}/").content.decode()
    assert 'hx-trigger="every 2s"' in page
    assert "0 / 3" in page

    fragment = client.get(f"/evaluation/runs/generation/{run.pk}/?fragment=progress", HTTP_HX_REQUEST="true")
    text = fragment.content.decode()
    assert text.strip().startswith('<div id="run-progress"') and "<html" not in text

    cancelled = client.post(
        f"/evaluation/runs/generation/{run.pk}/cancel", HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Cancelled" in cancelled
    assert "every 2s" not in cancelled  # polling stops once the run has ended
    assert client.get(f"/evaluation/runs/robot/{run.pk}/").status_code == 404


def test_a_finished_judge_run_shows_verdicts_and_no_polling(
    role_client, server, django_capture_on_commit_callbacks
):
    server.responder = fair_judge
    client = role_client("project_manager")
    run = _pairwise_run(server, django_capture_on_commit_callbacks)
    page = client.get(f"/evaluation/runs/judge/{run.pk}/").content.decode()
    assert "every 2s" not in page
    assert page.count("<td>A</td>") == 2
    assert f"/api/v1/evaluation/judge-runs/{run.pk}/verdicts.csv" in page

    runs = client.get("/evaluation/").content.decode()
    assert f"/evaluation/runs/judge/{run.pk}/" in runs
    assert "judge" in client.get("/evaluation/endpoints/").content.decode()


def test_a_finished_benchmark_run_shows_its_breakdowns_by_each_dimension(
    role_client, server, django_capture_on_commit_callbacks
):
    server.responder = lambda body: Reply(
        body=completion_body("Rujukan 0 giliran 1." if "Pertanyaan 0" in last_user(body) else "entah")
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = benchmark_run_start(
            task="open_qa",
            endpoint=make_endpoint(server, "qa"),
            dataset=make_prompt_dataset(n_prompts=2, two_turn_first=False),
        )
    response = role_client("researcher").get(f"/evaluation/runs/benchmark/{run.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    tables = dict(re.findall(r'data-testid="breakdown-(\w+)"><tbody>(.*?)</tbody>', page))
    assert set(tables) == {"category", "language", "register", "language_register"}
    # p0 (analysis) is answered, p1 (math) is not; both are in Indonesian and have no register.
    assert re.findall(r"<tr><td>(.*?)</td>", tables["category"]) == ["analysis", "math"]
    assert re.findall(r"<tr><td>(.*?)</td>", tables["language"]) == ["Indonesian"]
    assert re.findall(r"<tr><td>(.*?)</td>", tables["language_register"]) == ["Indonesian"]
    assert "1.000" in tables["category"] and "0.500" in tables["language"]


def test_turns_on_the_run_page_count_from_one(role_client, server, django_capture_on_commit_callbacks):
    from evaluation.models import PairVerdict

    server.responder = fair_judge
    client = role_client("project_manager")
    run = _pairwise_run(server, django_capture_on_commit_callbacks)
    first, second = PairVerdict.objects.filter(judge_run=run).order_by("pk")
    PairVerdict.objects.filter(pk=first.pk).update(turn=0)
    PairVerdict.objects.filter(pk=second.pk).update(turn=1)
    page = client.get(f"/evaluation/runs/judge/{run.pk}/").content.decode()
    turns = re.findall(r'<td data-testid="turn">([^<]*)</td>', page)
    assert sorted(turns) == ["1", "2"]  # stored 0 and 1
    assert list(PairVerdict.objects.filter(judge_run=run).order_by("pk").values_list("turn", flat=True)) == [
        0,
        1,
    ]


@pytest.mark.parametrize(
    ("lang", "heading"), [("en", "4 outputs that did not parse"), ("id", "4 keluaran yang tidak terbaca")]
)
def test_the_run_page_shows_what_the_judge_wrote_where_it_did_not_parse(
    role_client, server, django_capture_on_commit_callbacks, lang, heading
):
    from tests.evaluation.services.builders import garbage_judge

    server.responder = garbage_judge
    client = role_client("researcher")
    run = _pairwise_run(server, django_capture_on_commit_callbacks)
    page = client.get(f"/evaluation/runs/judge/{run.pk}/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    section = page[page.index('data-testid="unparsed"') :]
    assert heading in section
    assert section.count("I really cannot say which one I prefer, sorry.") == 4
    assert "no verdict or score found" in section


def test_the_benchmark_page_shows_the_rule_and_what_the_model_wrote_when_no_answer_was_read(
    role_client, server, django_capture_on_commit_callbacks
):
    server.responder = lambda body: Reply(body=completion_body("Saya kurang yakin, mungkin yang kedua."))
    client = role_client("researcher")
    with django_capture_on_commit_callbacks(execute=True):
        run = benchmark_run_start(
            task="mcq", endpoint=make_endpoint(server, "mcq"), dataset=make_question_dataset()
        )
    page = client.get(f"/evaluation/runs/benchmark/{run.pk}/", HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "tidak ada yang terbaca; model menulis" in page
    assert "Saya kurang yakin, mungkin yang kedua." in page and "not_found" in page


def test_a_cancelled_run_shows_what_was_not_sent_and_retry_finishes_it_in_both_languages(
    role_client, api_client_for, server, django_capture_on_commit_callbacks
):
    client = role_client("researcher")
    dataset = make_prompt_dataset(n_prompts=3, two_turn_first=False)
    with django_capture_on_commit_callbacks(execute=False):  # cancelled before any chunk ran
        run = generation_run_start(dataset=dataset, endpoints=[make_endpoint(server, "gen")])
    api = api_client_for("researcher")
    refused = api.post(f"/api/v1/evaluation/generation-runs/{run.pk}/retry")
    assert refused.status_code == 409 and "still running" in refused.json()["detail"]
    client.post(f"/evaluation/runs/generation/{run.pk}/cancel")

    page = client.get(f"/evaluation/runs/generation/{run.pk}/").content.decode()
    assert "0 / 3 done · 3 not sent (cancelled)" in page
    assert "Retry the 3 items without a result" in page
    page_id = client.get(f"/evaluation/runs/generation/{run.pk}/", HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "3 tidak dikirim (dibatalkan)" in page_id and "Ulangi 3 butir yang belum berhasil" in page_id

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/evaluation/runs/generation/{run.pk}/retry", follow=True)
    text = response.content.decode()
    assert "3 items without a result were queued again." in text
    run.refresh_from_db()
    assert (run.status, run.n_done, run.n_failed) == ("succeeded", 3, 0)
    assert len(server.requests) == 3
    assert "Retry the" not in client.get(f"/evaluation/runs/generation/{run.pk}/").content.decode()

    again = api.post(f"/api/v1/evaluation/generation-runs/{run.pk}/retry")
    assert again.json() == {"queued": 0, "status": "succeeded"}


def _graded_run(server, capture):
    """A finished single-grade run over two responses, graded 7.5 and 8 (mean 7.75)."""
    from datasets_app.models import Response

    server.responder = lambda body: Reply(
        body=completion_body("Skor: 7,5" if "Jawaban satu" in last_user(body) else '{"score": 8}')
    )
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    prompt = dataset.prompts.get()
    Response.objects.create(prompt=prompt, model_name="m1", turns=["Jawaban satu"])
    Response.objects.create(prompt=prompt, model_name="m2", turns=["Jawaban dua"])
    with capture(execute=True):
        return judge_run_start(
            judge_kind="single_grade",
            endpoint=make_endpoint(server, "grader", sampling_defaults={"top_k": 40}),
            dataset=dataset,
            options={"max_tokens": 200},
        )


@pytest.mark.parametrize(
    ("lang", "scores", "mean"), [("en", ["7.5", "8"], "7.75"), ("id", ["7,5", "8"], "7,75")]
)
def test_graded_scores_show_their_decimals_and_whole_scores_none(
    role_client, server, django_capture_on_commit_callbacks, lang, scores, mean
):
    run = _graded_run(server, django_capture_on_commit_callbacks)
    page = (
        role_client("researcher")
        .get(f"/evaluation/runs/judge/{run.pk}/", HTTP_ACCEPT_LANGUAGE=lang)
        .content.decode()
    )
    assert sorted(re.findall(r'<td class="num" data-testid="score">([^<]*)</td>', page)) == scores
    assert f'<span data-testid="mean-score">{mean}</span>' in page


@pytest.mark.parametrize(
    ("lang", "sources"),
    [
        ("en", ["the judge template", "Timbang's default", "the endpoint's default", "set for this run"]),
        ("id", ["templat juri", "bawaan Timbang", "bawaan endpoint", "diatur untuk proses ini"]),
    ],
)
def test_the_judge_run_page_shows_the_sampling_used_and_where_each_value_came_from(
    role_client, server, django_capture_on_commit_callbacks, lang, sources
):
    run = _graded_run(server, django_capture_on_commit_callbacks)
    page = (
        role_client("researcher")
        .get(f"/evaluation/runs/judge/{run.pk}/", HTTP_ACCEPT_LANGUAGE=lang)
        .content.decode()
    )
    table = page[page.index('data-testid="sampling"') :].split("</table>", 1)[0]
    rows = re.findall(
        r"<tr><td><code>(\w+)</code></td><td class=\"num\">([^<]*)</td><td>([^<]*)</td></tr>", table
    )
    shown = {name: (value, source.replace("&#x27;", "'")) for name, value, source in rows}
    # temperature 0 from the SeaBench template, top_p Timbang's 0.95, top_k the endpoint's, max_tokens the run's.
    assert [shown[name][1] for name in ("temperature", "top_p", "top_k", "max_tokens")] == sources
    assert shown["top_k"][0] == "40" and shown["max_tokens"][0] == "200"
    system = page[page.index('data-testid="system-message"') :].split("</details>", 1)[0]
    assert "You are a careful evaluator of AI assistant answers." in system


def test_the_generation_run_page_shows_its_system_prompt(
    role_client, server, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = generation_run_start(
            dataset=make_prompt_dataset(n_prompts=1, two_turn_first=False),
            endpoints=[make_endpoint(server, "assistant")],
            options={"system_prompt": "You are a helpful assistant."},
        )
    client = role_client("researcher")
    page = client.get(f"/evaluation/runs/generation/{run.pk}/").content.decode()
    shown = page[page.index('data-testid="system-prompt"') :].split("</div>", 1)[0]
    assert "You are a helpful assistant." in shown
    with django_capture_on_commit_callbacks(execute=True):
        bare = generation_run_start(
            dataset=make_prompt_dataset(n_prompts=1, two_turn_first=False, name="other"),
            endpoints=[make_endpoint(server, "bare")],
        )
    page = client.get(f"/evaluation/runs/generation/{bare.pk}/", HTTP_ACCEPT_LANGUAGE="id").content.decode()
    shown = page[page.index('data-testid="system-prompt"') :].split("</div>", 1)[0]
    assert "Tidak ada: setiap percakapan dimulai dengan giliran pertama prompt." in shown


def test_a_run_whose_queue_no_worker_consumes_says_so_until_a_worker_reports_it(
    role_client, server, django_capture_on_commit_callbacks, settings
):
    from evaluation.services.workers import worker_queues_report

    cache.clear()
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a deployment: chunks wait on the broker for a worker
    client = role_client("researcher")
    dataset = make_prompt_dataset(n_prompts=2, two_turn_first=False)
    with django_capture_on_commit_callbacks(execute=False):
        run = generation_run_start(
            dataset=dataset, endpoints=[make_endpoint(server, "lonely", queue="gpu.lonely")]
        )
    url = f"/evaluation/runs/generation/{run.pk}/"

    fragment = client.get(f"{url}?fragment=progress", HTTP_HX_REQUEST="true").content.decode()
    assert "No worker consumes the queue <code>gpu.lonely</code>" in fragment
    assert client.get(reverse("api-run-detail", kwargs={"kind": "generation", "run_id": run.pk})).json()[
        "queues_without_worker"
    ] == ["gpu.lonely"]
    with translation.override("id"):
        page = client.get(url, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "Tidak ada worker yang membaca antrean <code>gpu.lonely</code>" in page

    # A worker reporting another queue changes nothing; one reporting this queue clears the warning.
    worker_queues_report(hostname="models1@gpu-host", queues=["default", "gpu.other"])
    assert "gpu.lonely" in client.get(url).content.decode()
    worker_queues_report(hostname="models2@gpu-host", queues=["gpu.lonely"])
    assert "No worker consumes" not in client.get(url).content.decode()
    assert (
        client.get(reverse("api-run-detail", kwargs={"kind": "generation", "run_id": run.pk})).json()[
            "queues_without_worker"
        ]
        == []
    )

    # A report older than WORKER_REPORT_STALE_S is a worker that stopped.
    settings.WORKER_REPORT_STALE_S = 0
    assert "No worker consumes" in client.get(url).content.decode()
    cache.clear()


def test_the_benchmark_page_counts_answers_naming_two_letters_as_ambiguous(
    role_client, server, django_capture_on_commit_callbacks
):
    server.responder = lambda body: Reply(body=completion_body("Jawabannya B atau C."))
    client = role_client("researcher")
    with django_capture_on_commit_callbacks(execute=True):
        run = benchmark_run_start(
            task="mcq", endpoint=make_endpoint(server, "mcq"), dataset=make_question_dataset()
        )
    page = client.get(f"/evaluation/runs/benchmark/{run.pk}/", HTTP_ACCEPT_LANGUAGE="id").content.decode()
    counts = re.search(r'data-testid="mcq-mode">(.*?)</p>', page, re.DOTALL).group(1)
    assert "Penolakan menjawab: 0" in counts and f"Ambigu (dua huruf atau lebih): {run.n_total}" in counts
    assert "<td>ambiguous</td>" in page
