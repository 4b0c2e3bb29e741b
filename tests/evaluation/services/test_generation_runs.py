"""Generation runs end to end in eager mode against the stub OpenAI server."""

from __future__ import annotations

import pytest

from datasets_app.models import Response
from evaluation.models import GenerationRun, RunChunk
from evaluation.services import generation_run_start, run_cancel
from evaluation.services.generation import generation_compute
from evaluation.services.runs import RunConfigError, chunk_commit
from evaluation.tasks import generation_chunk
from tests.evaluation.services.builders import make_endpoint, make_prompt_dataset

pytestmark = pytest.mark.django_db


def _start(capture, **kwargs) -> GenerationRun:
    with capture(execute=True):
        run = generation_run_start(**kwargs)
    run.refresh_from_db()
    return run


def test_models_times_prompts_give_one_response_each_with_multi_turn_history(
    server, django_capture_on_commit_callbacks
):
    dataset = make_prompt_dataset(n_prompts=3)
    first = make_endpoint(server, "model-one")
    second = make_endpoint(server, "model-two")

    run = _start(
        django_capture_on_commit_callbacks,
        dataset=dataset,
        endpoints=[first, second],
        options={"seed": 7, "max_tokens": 64, "chunk_size": 2},
    )

    assert run.status == "succeeded"
    # 2 models x 3 prompts = 6 items; prompt p0 has 2 turns, so 2 x (3 + 1) = 8 requests.
    assert (run.n_total, run.n_done, run.n_failed) == (6, 6, 0)
    assert len(server.requests) == 8
    responses = Response.objects.filter(generation_run=run)
    assert responses.count() == 6
    assert set(responses.values_list("model_name", flat=True)) == {"model-one", "model-two"}
    two_turn = responses.get(model_name="model-one", prompt__external_id="p0")
    assert two_turn.origin == "generated"
    assert two_turn.turns == ["echo: Pertanyaan 0", "echo: Lanjutan 0"]
    # The second turn was asked with the model's own first answer in the history.
    second_turn_request = next(
        r.body for r in server.requests if r.body["messages"][-1]["content"] == "Lanjutan 0"
    )
    assert [m["role"] for m in second_turn_request["messages"]] == ["user", "assistant", "user"]
    assert second_turn_request["messages"][1]["content"] == "echo: Pertanyaan 0"
    assert second_turn_request["seed"] == 7
    assert second_turn_request["max_tokens"] == 64
    # Study defaults fill what the run did not set.
    assert (
        second_turn_request["temperature"],
        second_turn_request["top_p"],
        second_turn_request["top_k"],
    ) == (
        0.6,
        0.95,
        20,
    )
    assert run.config["sampling"]["model-one"]["seed"] == 7
    # 3 items per endpoint in chunks of 2: 2 chunks each.
    assert RunChunk.objects.filter(run_kind="generation", run_id=run.pk).count() == 4


def test_the_system_prompt_is_the_first_message_of_every_conversation_and_every_turn(
    server, django_capture_on_commit_callbacks
):
    dataset = make_prompt_dataset(n_prompts=2)  # p0 has two turns, p1 one
    run = _start(
        django_capture_on_commit_callbacks,
        dataset=dataset,
        endpoints=[make_endpoint(server, "assistant")],
        options={"system_prompt": "You are a helpful assistant."},
    )
    assert run.status == "succeeded" and run.config["system_prompt"] == "You are a helpful assistant."
    # 2 prompts, 3 turns in all: 3 requests, each starting with the system prompt, then the conversation.
    conversations = sorted(
        [(m["role"], m["content"]) for m in request.body["messages"]] for request in server.requests
    )
    system = ("system", "You are a helpful assistant.")
    assert conversations == [
        [system, ("user", "Pertanyaan 0")],
        [system, ("user", "Pertanyaan 0"), ("assistant", "echo: Pertanyaan 0"), ("user", "Lanjutan 0")],
        [system, ("user", "Pertanyaan 1")],
    ]
    # The system prompt is not part of the stored answers.
    answers = Response.objects.filter(generation_run=run).order_by("prompt__external_id")
    assert [r.turns for r in answers] == [["echo: Pertanyaan 0", "echo: Lanjutan 0"], ["echo: Pertanyaan 1"]]


def test_without_a_system_prompt_the_conversation_starts_with_the_user(
    server, django_capture_on_commit_callbacks
):
    run = _start(
        django_capture_on_commit_callbacks,
        dataset=make_prompt_dataset(n_prompts=1, two_turn_first=False),
        endpoints=[make_endpoint(server, "bare")],
        options={"system_prompt": "   "},
    )
    assert run.config["system_prompt"] == ""
    assert [m["role"] for m in server.requests[0].body["messages"]] == ["user"]


def test_n_per_prompt_gives_numbered_samples_with_distinct_seeds(server, django_capture_on_commit_callbacks):
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    endpoint = make_endpoint(server, "sampler")

    run = _start(
        django_capture_on_commit_callbacks,
        dataset=dataset,
        endpoints=[endpoint],
        n_per_prompt=3,
        options={"seed": 100},
    )

    assert run.n_done == 3
    assert sorted(Response.objects.filter(generation_run=run).values_list("model_name", flat=True)) == [
        "sampler#1",
        "sampler#2",
        "sampler#3",
    ]
    assert sorted(r.body["seed"] for r in server.requests) == [100, 101, 102]


def test_a_chunk_delivered_twice_writes_and_counts_once(server, django_capture_on_commit_callbacks):
    dataset = make_prompt_dataset(n_prompts=3, two_turn_first=False)
    endpoint = make_endpoint(server, "once")
    run = _start(django_capture_on_commit_callbacks, dataset=dataset, endpoints=[endpoint])
    chunk = RunChunk.objects.get(run_kind="generation", run_id=run.pk)
    n_requests = len(server.requests)

    assert generation_chunk.delay(chunk.pk).get() is False  # redelivered after it committed: a no-op

    run.refresh_from_db()
    assert (run.n_done, run.n_failed) == (3, 0)
    assert Response.objects.filter(generation_run=run).count() == 3
    assert len(server.requests) == n_requests


def test_two_deliveries_racing_on_one_chunk_commit_once(server, django_capture_on_commit_callbacks):
    dataset = make_prompt_dataset(n_prompts=2, two_turn_first=False)
    endpoint = make_endpoint(server, "race")
    with django_capture_on_commit_callbacks(execute=False):  # queue nothing: we play both workers
        run = generation_run_start(dataset=dataset, endpoints=[endpoint])
    chunk = RunChunk.objects.get(run_kind="generation", run_id=run.pk)
    GenerationRun.objects.filter(pk=run.pk).update(status="running")

    # Both deliveries computed their results before either committed.
    first = generation_compute(run=run, items=chunk.items, endpoint=endpoint)
    second = generation_compute(run=run, items=chunk.items, endpoint=endpoint)
    assert chunk_commit(chunk=chunk, run=run, outcomes=first, n_already_done=0) is True
    assert chunk_commit(chunk=chunk, run=run, outcomes=second, n_already_done=0) is False

    run.refresh_from_db()
    assert (run.status, run.n_done, run.n_failed) == ("succeeded", 2, 0)
    assert Response.objects.filter(generation_run=run).count() == 2


def test_failed_requests_count_as_failed_and_a_run_with_no_success_fails(
    server, django_capture_on_commit_callbacks
):
    from tests.evaluation.inference.openai_stub_server import Reply

    server.responder = lambda body: Reply(status=500, body={"error": {"message": "boom"}})
    dataset = make_prompt_dataset(n_prompts=2, two_turn_first=False)
    endpoint = make_endpoint(server, "broken")

    run = _start(django_capture_on_commit_callbacks, dataset=dataset, endpoints=[endpoint])

    assert (run.status, run.n_done, run.n_failed) == ("failed", 0, 2)
    assert "2 of 2 item(s) failed" in run.error
    assert "HTTP 500: boom" in run.error
    assert not Response.objects.filter(generation_run=run).exists()


def test_a_rejected_key_fails_the_run_without_counting_items(server, django_capture_on_commit_callbacks):
    from tests.evaluation.inference.openai_stub_server import Reply

    server.responder = lambda body: Reply(status=401, body={"error": {"message": "bad key"}})
    dataset = make_prompt_dataset(n_prompts=2, two_turn_first=False)
    endpoint = make_endpoint(server, "unauthorised")

    run = _start(django_capture_on_commit_callbacks, dataset=dataset, endpoints=[endpoint])

    assert run.status == "failed"
    assert "HTTP 401" in run.error
    assert (run.n_done, run.n_failed) == (0, 0)


def test_cancel_before_the_chunks_run_stops_them(server, django_capture_on_commit_callbacks):
    dataset = make_prompt_dataset(n_prompts=4, two_turn_first=False)
    endpoint = make_endpoint(server, "cancelled")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = generation_run_start(dataset=dataset, endpoints=[endpoint], options={"chunk_size": 2})

    assert run_cancel(run=run) is True
    for callback in callbacks:
        callback()  # the chunk tasks arrive after the cancel

    run.refresh_from_db()
    assert run.status == "cancelled"
    assert run.finished_at is not None
    assert server.requests == []
    assert run_cancel(run=run) is False  # already ended


def test_an_empty_dataset_finishes_at_once(server, django_capture_on_commit_callbacks):
    from datasets_app.models import Dataset

    run = _start(
        django_capture_on_commit_callbacks,
        dataset=Dataset.objects.create(name="empty"),
        endpoints=[make_endpoint(server, "idle")],
    )
    assert (run.status, run.n_total) == ("succeeded", 0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"endpoints": []}, "at least one model endpoint"),
        ({"n_per_prompt": 0}, "n_per_prompt"),
        ({"options": {"temperature": 1.0}}, "unknown option"),
        ({"options": {"sampling": {"top_p": 2}}}, "top_p"),
        ({"options": {"chunk_size": 0}}, "chunk_size"),
        ({"options": {"system_prompt": ["Be brief."]}}, "system_prompt must be text, got list"),
        ({"options": {"system_prompt": "x" * 20_001}}, "system_prompt is longer than 20000 characters"),
    ],
)
def test_bad_run_settings_are_refused_before_anything_is_written(server, kwargs, message):
    dataset = make_prompt_dataset(n_prompts=1)
    arguments = {"dataset": dataset, "endpoints": [make_endpoint(server, "refused")], **kwargs}
    with pytest.raises(RunConfigError, match=message):
        generation_run_start(**arguments)
    assert not GenerationRun.objects.exists()
