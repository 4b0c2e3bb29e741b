"""Run pages: role checks, the polling progress fragment, cancel, results tables."""

from __future__ import annotations

import re

import pytest

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
    assert set(tables) == {"category", "language", "register"}
    # p0 (analysis) is answered, p1 (math) is not; both are in Indonesian and have no register.
    assert re.findall(r"<tr><td>(.*?)</td>", tables["category"]) == ["analysis", "math"]
    assert re.findall(r"<tr><td>(.*?)</td>", tables["language"]) == ["ind"]
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
