"""Pairwise judge runs: the tie family chosen per run, tie replies kept or refused, per-turn prompts."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from analytics.domain.judge_agreement import human_judge_agreement
from annotation.models import Project, Task
from datasets_app.models import Dataset, Prompt, Response
from evaluation.models import JudgeRun, Judgment, PairVerdict
from evaluation.services import judge_run_start
from evaluation.services.judging import judge_template_default
from evaluation.services.runs import RunConfigError
from tests.evaluation.inference.openai_stub_server import Reply, completion_body
from tests.evaluation.services.builders import last_user, make_endpoint, make_pair_dataset

pytestmark = pytest.mark.django_db


def _start(capture, **kwargs) -> JudgeRun:
    with capture(execute=True):
        run = judge_run_start(**kwargs)
    run.refresh_from_db()
    return run


def _replying(score: str):
    return lambda body: Reply(body=completion_body(json.dumps({"explanation": "sama", "score": score})))


def test_a_with_tie_run_stores_tie_verdicts_that_count_as_ties(server, django_capture_on_commit_callbacks):
    server.responder = _replying("seri")
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "tie-judge"),
        dataset=make_pair_dataset(n_prompts=2),
        pairwise_family="with_tie",
        options={"language": "id"},
    )
    assert (run.pairwise_family, run.template.name, run.template.language) == ("with_tie", "with_tie", "id")
    body = server.requests[0].body
    assert body["response_format"]["json_schema"]["schema"]["properties"]["score"]["enum"] == [
        "A",
        "B",
        "seri",
    ]
    assert '"score": "A", "B" atau "seri"}' in last_user(body)
    judgments = Judgment.objects.filter(judge_run=run)
    assert set(judgments.values_list("parse_status", "shown_verdict", "verdict")) == {("ok", "tie", "tie")}
    verdicts = list(
        PairVerdict.objects.filter(judge_run=run).order_by("id").values_list("verdict", "consistency")
    )
    assert verdicts == [("tie", "consistent"), ("tie", "consistent")]
    # A tie verdict is one trial: it agrees with a human tie, and drops out of the without-ties figure.
    items = [v.target_key for v in PairVerdict.objects.filter(judge_run=run).order_by("id")]
    human = pd.DataFrame({"item": items, "annotator": ["h1", "h1"], "vote": ["tie", "A"]})
    judge = pd.DataFrame({"item": items, "vote": [v for v, _ in verdicts]})
    rate = human_judge_agreement(human, judge)
    assert (rate.agree_with_ties, rate.n_with_ties, rate.n_without_ties) == (1, 2, 0)


def test_the_same_tie_reply_is_a_kept_parse_error_in_the_no_tie_family(
    server, django_capture_on_commit_callbacks
):
    server.responder = _replying("tie")
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "strict"),
        dataset=make_pair_dataset(n_prompts=1),
    )
    assert (run.status, run.pairwise_family, run.template.name) == ("succeeded", "no_tie", "default")
    judgments = Judgment.objects.filter(judge_run=run)
    assert judgments.count() == 2
    for judgment in judgments:
        assert (judgment.parse_status, judgment.verdict, judgment.score) == ("error", "", None)
        assert json.loads(judgment.raw_output)["score"] == "tie"
        assert "tie" in judgment.parse_reason
    assert PairVerdict.objects.get(judge_run=run).verdict == "error"


def test_the_family_follows_an_explicit_template_and_a_mismatch_is_refused(server):
    endpoint = make_endpoint(server, "fam")
    dataset = make_pair_dataset(n_prompts=1)
    with_tie = judge_template_default(kind="pairwise", language="en", name="with_tie")
    run = judge_run_start(judge_kind="pairwise", endpoint=endpoint, dataset=dataset, template=with_tie)
    assert run.pairwise_family == "with_tie"
    with pytest.raises(RunConfigError, match=r"belongs to the with_tie family, but the run asks for no_tie"):
        judge_run_start(
            judge_kind="pairwise",
            endpoint=endpoint,
            dataset=dataset,
            template=with_tie,
            pairwise_family="no_tie",
        )
    with pytest.raises(RunConfigError, match="pairwise_family must be one of no_tie, with_tie, got 'both'"):
        judge_run_start(judge_kind="pairwise", endpoint=endpoint, dataset=dataset, pairwise_family="both")
    with pytest.raises(RunConfigError, match="applies to pairwise judges only, not to single_grade"):
        judge_run_start(
            judge_kind="single_grade", endpoint=endpoint, dataset=dataset, pairwise_family="with_tie"
        )
    assert JudgeRun.objects.count() == 1  # refused runs wrote nothing


def test_a_turn_2_task_shows_the_judge_turn_1_of_both_conversations(
    server, django_capture_on_commit_callbacks
):
    server.responder = _replying("Response 1")
    dataset = Dataset.objects.create(name="two-turn")
    prompt = Prompt.objects.create(
        dataset=dataset,
        external_id="t",
        category="roleplay",
        language="ind",
        turns=["Jadilah pemandu wisata di Yogyakarta.", "Sekarang sarankan makanan khas."],
    )
    alpha = Response.objects.create(
        prompt=prompt, model_name="alpha", turns=["Selamat datang di Kraton!", "Cobalah gudeg."]
    )
    beta = Response.objects.create(
        prompt=prompt, model_name="beta", turns=["Halo, saya pemandu.", "Bakpia enak."]
    )
    project = Project.objects.create(name="turns", kind="pairwise", dataset=dataset)
    Task.objects.create(
        project=project,
        prompt=prompt,
        response_ids=[alpha.pk, beta.pk],
        response_a=alpha,
        response_b=beta,
        turn=1,
    )
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "turns"),
        annotation_project=project,
    )
    assert run.n_done == 1 and len(server.requests) == 2
    ab = next(
        last_user(r.body) for r in server.requests if "[Response 1]\nTurn 1:\nSelamat" in last_user(r.body)
    )
    assert (
        "[User request]\nTurn 1:\nJadilah pemandu wisata di Yogyakarta.\n\n"
        "Turn 2 (the turn to judge):\nSekarang sarankan makanan khas.\n\n"
        "[Response 1]\nTurn 1:\nSelamat datang di Kraton!\n\nTurn 2 (the turn to judge):\nCobalah gudeg.\n\n"
        "[Response 2]\nTurn 1:\nHalo, saya pemandu.\n\nTurn 2 (the turn to judge):\nBakpia enak.\n\n"
    ) in ab
    assert "Judge only the answers to the last user message (turn 2)" in ab
    verdict = PairVerdict.objects.get(judge_run=run)
    assert (verdict.turn, verdict.verdict, verdict.consistency) == (1, "tie", "biased_first")
