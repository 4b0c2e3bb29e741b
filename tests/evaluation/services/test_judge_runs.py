"""Judge runs end to end in eager mode against scripted judges on the stub OpenAI server."""

from __future__ import annotations

import json

import pytest

from annotation.models import Project, Task
from datasets_app.models import Response
from evaluation.models import JudgeRun, JudgeTemplate, Judgment, PairVerdict
from evaluation.services import category_aspects_set, judge_run_start, judge_template_update
from evaluation.services.judging import judge_template_default
from evaluation.services.runs import RunConfigError
from tests.evaluation.inference.openai_stub_server import Reply, completion_body
from tests.evaluation.services.builders import (
    fair_judge,
    first_position_judge,
    garbage_judge,
    last_user,
    make_endpoint,
    make_pair_dataset,
    make_prompt_dataset,
)

pytestmark = pytest.mark.django_db


def _start(capture, **kwargs) -> JudgeRun:
    with capture(execute=True):
        run = judge_run_start(**kwargs)
    run.refresh_from_db()
    return run


def test_pairwise_both_orders_combine_into_consistent_verdicts(server, django_capture_on_commit_callbacks):
    server.responder = fair_judge
    dataset = make_pair_dataset(n_prompts=2)
    judge = make_endpoint(server, "judge")

    run = _start(django_capture_on_commit_callbacks, judge_kind="pairwise", endpoint=judge, dataset=dataset)

    assert (run.status, run.n_total, run.n_done, run.n_failed) == ("succeeded", 2, 2, 0)
    # One pair per prompt, asked in both orders: 4 calls and 4 judgments.
    assert len(server.requests) == 4
    judgments = Judgment.objects.filter(judge_run=run)
    assert judgments.count() == 4
    assert set(judgments.values_list("order", flat=True)) == {"ab", "ba"}
    # alpha (GOOD) is canonical A (first by model name); shown second in order "ba", so the judge said
    # "Response 2" there, which maps back to A.
    ba = judgments.filter(order="ba").first()
    assert (ba.shown_verdict, ba.verdict, ba.parse_status) == ("Response 2", "A", "ok")
    assert ba.template_kind == "pairwise" and ba.template_version == 2  # the per-turn-aware default
    verdicts = PairVerdict.objects.filter(judge_run=run)
    assert list(verdicts.values_list("verdict", "consistency")) == [("A", "consistent"), ("A", "consistent")]
    a_model = Response.objects.get(pk=verdicts.first().response_a_id).model_name
    assert a_model == "alpha"
    # The judge was asked for JSON with the template's schema, at the study sampling settings.
    body = server.requests[0].body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["score"]["enum"] == [
        "Response 1",
        "Response 2",
    ]
    assert (body["temperature"], body["top_p"], body["top_k"]) == (0.6, 0.95, 20)


def test_a_position_biased_judge_gives_ties_flagged_biased_first(server, django_capture_on_commit_callbacks):
    server.responder = first_position_judge
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "biased"),
        dataset=make_pair_dataset(n_prompts=1),
    )
    verdict = PairVerdict.objects.get(judge_run=run)
    assert (verdict.verdict, verdict.consistency) == ("tie", "biased_first")


def test_malformed_judge_output_is_a_parse_error_not_a_score_and_the_run_succeeds(
    server, django_capture_on_commit_callbacks
):
    server.responder = garbage_judge
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "garbage"),
        dataset=make_pair_dataset(n_prompts=1),
    )
    assert (run.status, run.n_done, run.n_failed) == ("succeeded", 1, 0)
    for judgment in Judgment.objects.filter(judge_run=run):
        assert judgment.parse_status == "error"
        assert judgment.verdict == "" and judgment.score is None
        assert judgment.raw_output == "I really cannot say which one I prefer, sorry."
    verdict = PairVerdict.objects.get(judge_run=run)
    assert (verdict.verdict, verdict.consistency) == ("error", "error")


def test_one_unparsable_order_keeps_the_other_verdict_flagged_error(
    server, django_capture_on_commit_callbacks
):
    def half_garbage(body):
        return garbage_judge(body) if "GOOD" in last_user(body).split("[Response 2]")[1] else fair_judge(body)

    server.responder = half_garbage
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "half"),
        dataset=make_pair_dataset(n_prompts=1),
    )
    verdict = PairVerdict.objects.get(judge_run=run)
    # Order "ab" shows GOOD first and parses (A); order "ba" shows GOOD second and is garbage.
    assert (verdict.verdict, verdict.consistency) == ("A", "error")


def test_single_randomised_order_is_seeded_and_mapped_back(server, django_capture_on_commit_callbacks):
    server.responder = fair_judge
    # The order of each pair is drawn from the seed and the pair's ids; with 24 pairs both orders come up
    # whatever ids the database hands out (all one order has probability 2 / 2**24).
    dataset = make_pair_dataset(n_prompts=24)
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "once"),
        dataset=dataset,
        order_mode="single_random",
        options={"seed": 3},
    )
    judgments = Judgment.objects.filter(judge_run=run)
    assert judgments.count() == 24 == len(server.requests)
    orders = list(judgments.order_by("target_key").values_list("order", flat=True))
    assert set(orders) == {"ab", "ba"}
    assert set(PairVerdict.objects.filter(judge_run=run).values_list("verdict", "consistency")) == {
        ("A", "single")
    }

    again = _start(
        django_capture_on_commit_callbacks,
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "twice"),
        dataset=dataset,
        order_mode="single_random",
        options={"seed": 3},
    )
    assert (
        list(Judgment.objects.filter(judge_run=again).order_by("target_key").values_list("order", flat=True))
        == orders
    )


def test_single_grade_judges_each_turn_with_reference_and_edited_aspects(
    server, django_capture_on_commit_callbacks
):
    server.responder = lambda body: Reply(body=completion_body('{"explanation": "ok", "score": 7}'))
    dataset = make_prompt_dataset(n_prompts=1)  # p0 has two turns and a reference per turn
    prompt = dataset.prompts.get()
    Response.objects.create(prompt=prompt, model_name="m", turns=["Jawab satu", "Jawab dua"])
    category_aspects_set(category="analysis", language="en", aspects=["Kindness first", "Then accuracy"])

    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="single_grade",
        endpoint=make_endpoint(server, "grader"),
        dataset=dataset,
    )

    assert (run.status, run.n_done) == ("succeeded", 2)
    judgments = Judgment.objects.filter(judge_run=run).order_by("turn")
    assert [(j.turn, j.order, j.score) for j in judgments] == [(0, "single", 7), (1, "single", 7)]
    second = (
        server.requests[1].body
        if "Jawab dua" in last_user(server.requests[1].body)
        else server.requests[0].body
    )
    text = last_user(second)
    assert "1. Kindness first\n2. Then accuracy" in text
    assert "Rujukan 0 giliran 2" in text  # the second turn's reference
    assert "User: Pertanyaan 0\nAssistant: Jawab satu" in text  # earlier turn as context
    assert second["response_format"]["json_schema"]["schema"]["properties"]["score"]["enum"] == list(
        range(1, 11)
    )


def test_single_grade_on_an_annotation_project_uses_its_own_aspects_and_a_dataset_run_does_not(
    server, django_capture_on_commit_callbacks
):
    server.responder = lambda body: Reply(body=completion_body('{"explanation": "ok", "score": 6}'))
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)  # p0: category "analysis"
    prompt = dataset.prompts.get()
    response = Response.objects.create(prompt=prompt, model_name="m", turns=["Jawab"])
    project = Project.objects.create(name="ratings", kind="likert", dataset=dataset)
    Task.objects.create(project=project, prompt=prompt, response_ids=[response.pk], turn=0)
    category_aspects_set(category="analysis", language="en", aspects=["Shared rigour"])
    category_aspects_set(
        category="analysis", language="en", aspects=["Project warmth", "Project brevity"], project=project
    )

    on_project = _start(
        django_capture_on_commit_callbacks,
        judge_kind="single_grade",
        endpoint=make_endpoint(server, "grader-project"),
        annotation_project=project,
    )
    on_dataset = _start(
        django_capture_on_commit_callbacks,
        judge_kind="single_grade",
        endpoint=make_endpoint(server, "grader-dataset"),
        dataset=dataset,
    )

    assert (on_project.status, on_project.n_done, on_dataset.status, on_dataset.n_done) == (
        "succeeded",
        1,
        "succeeded",
        1,
    )
    project_text, dataset_text = (last_user(request.body) for request in server.requests)
    assert "1. Project warmth\n2. Project brevity" in project_text
    assert "Shared rigour" not in project_text
    assert "1. Shared rigour" in dataset_text
    assert "Project warmth" not in dataset_text


def _one_graded_judgment(server, capture, reply: dict) -> tuple[JudgeRun, Judgment]:
    """A single-grade run over one response whose judge answers ``reply``, and its judgment."""
    server.responder = lambda body: Reply(body=reply)
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    Response.objects.create(prompt=dataset.prompts.get(), model_name="m", turns=["x"])
    run = _start(capture, judge_kind="single_grade", endpoint=make_endpoint(server, "g"), dataset=dataset)
    return run, Judgment.objects.get(judge_run=run)


def test_an_out_of_range_grade_is_a_parse_error(server, django_capture_on_commit_callbacks):
    reply = completion_body('{"explanation": "great", "score": 12}')
    run, judgment = _one_graded_judgment(server, django_capture_on_commit_callbacks, reply)
    assert (judgment.parse_status, judgment.score, run.status) == ("error", None, "succeeded")


def test_factual_judge_compares_with_the_gold_answer(server, django_capture_on_commit_callbacks):
    server.responder = lambda body: Reply(body=completion_body('{"explanation": "right", "score": 4}'))
    dataset = make_prompt_dataset(n_prompts=2, two_turn_first=False)
    for prompt in dataset.prompts.all():
        Response.objects.create(prompt=prompt, model_name="m", turns=["Jawaban"])
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="factual",
        endpoint=make_endpoint(server, "f"),
        dataset=dataset,
    )
    assert Judgment.objects.filter(judge_run=run, score=4).count() == 2
    assert "[Gold answer]\nRujukan 0 giliran 1" in last_user(
        server.requests[0].body
    ) or "[Gold answer]\nRujukan 1" in last_user(server.requests[0].body)


def test_judge_on_annotation_project_tasks_keeps_task_pair_and_turn(
    server, django_capture_on_commit_callbacks
):
    server.responder = fair_judge
    dataset = make_pair_dataset(n_prompts=2)
    project = Project.objects.create(name="pairs", kind="pairwise", dataset=dataset)
    task_ids = []
    for prompt in dataset.prompts.order_by("id"):
        good, bad = prompt.responses.order_by("model_name")
        # Humans saw (bad, good): canonical A is the bad one in this project.
        task_ids.append(
            Task.objects.create(
                project=project,
                prompt=prompt,
                response_ids=[bad.pk, good.pk],
                response_a=bad,
                response_b=good,
                turn=0,
            ).pk
        )

    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "aligned"),
        annotation_project=project,
    )

    assert run.source == "annotation_project" and run.n_done == 2
    verdicts = PairVerdict.objects.filter(judge_run=run).order_by("annotation_task_id")
    assert [(v.annotation_task_id, v.turn, v.verdict, v.consistency) for v in verdicts] == [
        (task_ids[0], 0, "B", "consistent"),
        (task_ids[1], 0, "B", "consistent"),
    ]
    assert set(Judgment.objects.filter(judge_run=run).values_list("annotation_task_id", flat=True)) == set(
        task_ids
    )


def test_editing_a_template_makes_a_new_version_used_by_new_runs(server, django_capture_on_commit_callbacks):
    server.responder = fair_judge
    original = judge_template_default(kind="pairwise", language="en")
    assert original.version == 2
    edited = judge_template_update(
        template=original, system="Be strict.", user=original.user.replace("Compare", "Carefully compare")
    )
    assert (edited.version, original.version) == (3, 2)
    assert JudgeTemplate.objects.filter(name="default", kind="pairwise", language="en").count() == 2

    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "v2"),
        dataset=make_pair_dataset(n_prompts=1),
    )
    assert run.template_id == edited.pk
    assert set(Judgment.objects.filter(judge_run=run).values_list("template_version", flat=True)) == {3}
    assert server.requests[0].body["messages"][0] == {"role": "system", "content": "Be strict."}


def test_a_template_edit_that_drops_a_placeholder_is_refused():
    from evaluation.domain.judge_templates import TemplateError

    original = judge_template_default(kind="pairwise", language="id")
    with pytest.raises(TemplateError, match="response_2"):
        judge_template_update(
            template=original, system="", user="Bandingkan {{question}} dan {{response_1}}."
        )


def test_indonesian_template_and_structured_output_off(server, django_capture_on_commit_callbacks):
    server.responder = lambda body: Reply(
        body=completion_body(json.dumps({"penjelasan": "x", "skor": "Response 1"}))
    )
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "id-judge"),
        dataset=make_pair_dataset(n_prompts=1),
        options={"language": "id", "structured_output": False},
    )
    assert run.template.language == "id"
    assert "response_format" not in server.requests[0].body
    assert "[Respon 1]" in last_user(server.requests[0].body)
    assert PairVerdict.objects.get(judge_run=run).consistency == "biased_first"


def test_a_run_needs_exactly_one_source(server):
    with pytest.raises(RunConfigError, match="either a dataset or an annotation project"):
        judge_run_start(judge_kind="pairwise", endpoint=make_endpoint(server, "nosrc"))


def test_a_reply_cut_off_at_max_tokens_is_a_truncated_parse_error(server, django_capture_on_commit_callbacks):
    reply = completion_body('{"explanation": "Respons pertama lebih lengkap karena')
    reply["choices"][0]["finish_reason"] = "length"
    _, judgment = _one_graded_judgment(server, django_capture_on_commit_callbacks, reply)
    assert (judgment.parse_status, judgment.parse_reason, judgment.score) == ("error", "truncated", None)


def test_the_explanation_limit_caps_the_output_schema_the_model_is_given(
    server, django_capture_on_commit_callbacks
):
    server.responder = fair_judge
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "judge"),
        dataset=make_pair_dataset(n_prompts=1),
        options={"explanation_max_chars": 120},
    )
    assert run.config["explanation_max_chars"] == 120
    for request in server.requests:
        schema = request.body["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["explanation"]["maxLength"] == 120
        assert schema["properties"]["score"]["enum"]  # the verdict stays constrained as before


@pytest.mark.parametrize("limit", [0, "120", True, 10**9, "x" * 5000])
def test_a_bad_explanation_limit_is_refused_and_writes_nothing(server, limit):
    from evaluation.services import RunConfigError

    with pytest.raises(
        RunConfigError, match="explanation_max_chars must be a whole number from 1 to"
    ) as caught:
        judge_run_start(
            judge_kind="pairwise",
            endpoint=make_endpoint(server, "judge"),
            dataset=make_pair_dataset(n_prompts=1),
            options={"explanation_max_chars": limit},
        )
    assert len(str(caught.value)) < 200
    assert not JudgeRun.objects.exists()
