"""Judge runs against scripted judges: decimal grades, the template's system message, the template's sampling
and where each sampling value of a run came from."""

from __future__ import annotations

import pytest

from datasets_app.models import Response
from evaluation import selectors
from evaluation.models import JudgeRun, Judgment
from evaluation.services import benchmark_run_start, judge_run_start, judge_template_update
from evaluation.services.judging import judge_template_default
from evaluation.services.runs import RunConfigError
from tests.evaluation.inference.openai_stub_server import Reply, completion_body
from tests.evaluation.services.builders import last_user, make_endpoint, make_prompt_dataset

pytestmark = pytest.mark.django_db

# What the graded judge answers for each response's text: shapes the judges write in the wild.
REPLIES = {
    "Jawaban satu": "The answer is good but incomplete. Rating: [[7.5]]",
    "Jawaban dua": '{"explanation": "fine", "score": 8}',
    "Jawaban tiga": "Penjelasan: cukup baik. Skor: 6,25",
}


def _graded_dataset():
    """One prompt with three single-turn responses (models m1, m2, m3)."""
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    prompt = dataset.prompts.get()
    for n, text in enumerate(REPLIES, start=1):
        Response.objects.create(prompt=prompt, model_name=f"m{n}", turns=[text])
    return dataset


def _answer_by_response(body):
    text = last_user(body)
    reply = next(reply for answer, reply in REPLIES.items() if answer in text)
    return Reply(body=completion_body(reply))


def _start(capture, **kwargs) -> JudgeRun:
    with capture(execute=True):
        run = judge_run_start(**kwargs)
    run.refresh_from_db()
    return run


def test_decimal_grades_are_stored_as_given_and_averaged(server, django_capture_on_commit_callbacks):
    server.responder = _answer_by_response
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="single_grade",
        endpoint=make_endpoint(server, "grader"),
        dataset=_graded_dataset(),
    )
    scores = dict(Judgment.objects.filter(judge_run=run).values_list("response_a__model_name", "score"))
    assert scores == {"m1": 7.5, "m2": 8.0, "m3": 6.25}
    assert set(Judgment.objects.filter(judge_run=run).values_list("parse_status", flat=True)) == {"ok"}
    # (7.5 + 8 + 6.25) / 3 = 21.75 / 3 = 7.25; read as whole numbers (7, 8, 6) it would be 7.
    assert selectors.judge_run_summary(run=run)["mean_score"] == pytest.approx(7.25)


def test_a_decimal_grade_outside_the_range_is_a_parse_error(server, django_capture_on_commit_callbacks):
    server.responder = lambda body: Reply(body=completion_body("Skor: 10,5"))
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    Response.objects.create(prompt=dataset.prompts.get(), model_name="m", turns=["x"])
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="single_grade",
        endpoint=make_endpoint(server, "g"),
        dataset=dataset,
    )
    judgment = Judgment.objects.get(judge_run=run)
    assert (judgment.parse_status, judgment.score) == ("error", None)
    assert judgment.parse_reason == "keyword: score 10.5 is outside 1-10"
    assert selectors.judge_run_summary(run=run)["mean_score"] is None


def test_the_template_system_text_is_the_first_message_the_backend_receives(
    server, django_capture_on_commit_callbacks
):
    server.responder = lambda body: Reply(body=completion_body('{"explanation": "ok", "score": 5}'))
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    Response.objects.create(prompt=dataset.prompts.get(), model_name="m", turns=["Jakarta"])
    shipped = judge_template_default(kind="factual", language="en")
    edited = judge_template_update(
        template=shipped, system="You are a helpful assistant. Answer in JSON.", user=shipped.user
    )
    _start(
        django_capture_on_commit_callbacks,
        judge_kind="factual",
        endpoint=make_endpoint(server, "f"),
        dataset=dataset,
        template=edited,
    )
    messages = server.requests[0].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == "You are a helpful assistant. Answer in JSON."

    # An empty system text sends no system message at all.
    bare = judge_template_update(template=edited, system="", user=edited.user)
    _start(
        django_capture_on_commit_callbacks,
        judge_kind="factual",
        endpoint=make_endpoint(server, "f2"),
        dataset=dataset,
        template=bare,
    )
    assert [m["role"] for m in server.requests[1].body["messages"]] == ["user"]


def test_sampling_comes_from_the_run_else_the_template_else_the_endpoint(
    server, django_capture_on_commit_callbacks
):
    server.responder = lambda body: Reply(body=completion_body('{"explanation": "ok", "score": 5}'))
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    Response.objects.create(prompt=dataset.prompts.get(), model_name="m", turns=["x"])
    shipped = judge_template_default(kind="single_grade", language="en")
    template = judge_template_update(
        template=shipped,
        system=shipped.system,
        user=shipped.user,
        sampling={"temperature": 0.1, "max_tokens": 300, "top_p": 0.8},
    )
    endpoint = make_endpoint(
        server, "j", sampling_defaults={"temperature": 0.9, "top_k": 40, "max_tokens": 2000}
    )
    run = _start(
        django_capture_on_commit_callbacks,
        judge_kind="single_grade",
        endpoint=endpoint,
        dataset=dataset,
        template=template,
        options={"sampling": {"top_p": 0.5}, "seed": 4},
    )
    body = server.requests[0].body
    assert (body["temperature"], body["top_p"], body["top_k"], body["max_tokens"], body["seed"]) == (
        0.1,
        0.5,
        40,
        300,
        4,
    )
    assert run.config["sampling_sources"] == {
        "temperature": "template",
        "top_p": "run",
        "top_k": "endpoint",
        "max_tokens": "template",
        "seed": "run",
        "stop": "default",
    }


def test_the_shipped_seabench_grade_runs_at_temperature_zero_unless_the_run_says_otherwise(
    server, django_capture_on_commit_callbacks
):
    # The seeded templates carry their preset's sampling (the migration wrote it on the seeded rows).
    assert judge_template_default(kind="single_grade", language="id").sampling == {"temperature": 0.0}
    assert judge_template_default(kind="pairwise", language="en").sampling == {
        "temperature": 0.6,
        "top_p": 0.95,
        "top_k": 20,
    }
    assert judge_template_default(kind="pairwise", language="en", name="with_tie").sampling == {
        "temperature": 0.0
    }
    server.responder = lambda body: Reply(body=completion_body('{"explanation": "ok", "score": 5}'))
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    Response.objects.create(prompt=dataset.prompts.get(), model_name="m", turns=["x"])
    endpoint = make_endpoint(server, "plain")  # no sampling defaults of its own

    default = _start(
        django_capture_on_commit_callbacks, judge_kind="single_grade", endpoint=endpoint, dataset=dataset
    )
    assert server.requests[0].body["temperature"] == 0.0
    assert default.config["sampling_sources"]["temperature"] == "template"
    assert default.config["sampling_sources"]["top_p"] == "default"

    hotter = _start(
        django_capture_on_commit_callbacks,
        judge_kind="single_grade",
        endpoint=endpoint,
        dataset=dataset,
        options={"sampling": {"temperature": 0.7}},
    )
    assert server.requests[1].body["temperature"] == 0.7
    assert hotter.config["sampling_sources"]["temperature"] == "run"


def test_a_template_edit_keeps_its_sampling_unless_given_and_refuses_bad_sampling():
    shipped = judge_template_default(kind="single_grade", language="en")
    kept = judge_template_update(template=shipped, system="Be strict.", user=shipped.user)
    assert kept.sampling == {"temperature": 0.0}
    cleared = judge_template_update(template=kept, system="Be strict.", user=shipped.user, sampling={})
    assert cleared.sampling == {}

    from evaluation.domain.judge_templates import TemplateError

    with pytest.raises(TemplateError, match="template sampling: temperature must be a finite number >= 0"):
        judge_template_update(template=kept, system="", user=shipped.user, sampling={"temperature": -1})
    with pytest.raises(TemplateError, match="unknown sampling parameter"):
        judge_template_update(template=kept, system="", user=shipped.user, sampling={"seed": 1})


def test_a_run_sampling_that_is_not_an_object_is_refused(server):
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    with pytest.raises(RunConfigError, match="sampling must be an object"):
        judge_run_start(
            judge_kind="single_grade",
            endpoint=make_endpoint(server, "j"),
            dataset=dataset,
            options={"sampling": [0.2]},
        )
    assert not JudgeRun.objects.exists()


def test_an_open_qa_judge_takes_the_factual_template_sampling(server, django_capture_on_commit_callbacks):
    def reply(body):
        if "[Gold answer]" in last_user(body):
            return Reply(body=completion_body("Skor: 4,5"))
        return Reply(body=completion_body("Jawaban"))

    server.responder = reply
    with django_capture_on_commit_callbacks(execute=True):
        run = benchmark_run_start(
            task="open_qa",
            endpoint=make_endpoint(server, "qa"),
            dataset=make_prompt_dataset(n_prompts=1, two_turn_first=False),
            judge_endpoint=make_endpoint(server, "qa-judge", sampling_defaults={"temperature": 0.8}),
            options={"scoring": "judge"},
        )
    run.refresh_from_db()
    judge_body = next(r.body for r in server.requests if "[Gold answer]" in last_user(r.body))
    assert judge_body["temperature"] == 0.0
    assert run.config["judge_sampling_sources"]["temperature"] == "template"
    # A 4.5 of 5 is 0.9.
    assert run.results.get().score == pytest.approx(0.9)
