"""OpenAIBackend against a real HTTP server on 127.0.0.1 (see openai_stub_server.py).

Backoff waits are recorded by an injected ``sleep`` instead of being slept, and the jitter source always
returns 0.5, so every expected delay below is 0.5 * min(backoff_max_s, backoff_base_s * 2**(attempt-1))
unless a Retry-After raises it.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from email.utils import parsedate_to_datetime

import pytest

from evaluation.domain.judge_templates import PAIRWISE, json_schema_for
from evaluation.domain.sampling import SamplingParams
from evaluation.inference.base import BackendConfigError, ChatRequest
from evaluation.inference.openai_backend import OpenAIBackend
from tests.evaluation.inference.openai_stub_server import Reply, StubOpenAIServer, completion_body

KEY_VAR = "TIMBANG_TEST_ENDPOINT_KEY"
SECRET = "sk-test-5ecret-value"


class HalfRandom:
    """Jitter source that always draws the middle of the range."""

    def random(self) -> float:
        return 0.5


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    stub = StubOpenAIServer().start()
    yield stub
    stub.stop()


def make_backend(server: StubOpenAIServer, sleeps: list[float] | None = None, **options) -> OpenAIBackend:
    defaults = {
        "base_url": server.base_url,
        "model": "stub-model",
        "max_attempts": 3,
        "backoff_base_s": 0.1,
        "backoff_max_s": 10.0,
        "timeout_s": 5.0,
        "rng": HalfRandom(),
        "sleep": (sleeps.append if sleeps is not None else (lambda _s: None)),
    }
    defaults.update(options)
    return OpenAIBackend(**defaults)


def user(text: str, request_id: str = "r1", **kwargs) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": text}], request_id=request_id, **kwargs)


def test_normal_answer_sends_the_exact_body_and_the_key_from_the_environment(server):
    schema = json_schema_for(PAIRWISE)
    request = ChatRequest(
        messages=[{"role": "system", "content": "Be fair."}, {"role": "user", "content": "Which is better?"}],
        sampling=SamplingParams(seed=7, max_tokens=64),
        response_format=schema,
        request_id="judgment-42",
    )
    server.script = [Reply(body=completion_body('{"explanation": "x", "score": "Response 2"}', 120, 15))]
    with make_backend(server, api_key_env=KEY_VAR, environ={KEY_VAR: SECRET}) as backend:
        [result] = backend.generate([request])

    [seen] = server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["Authorization"] == f"Bearer {SECRET}"
    assert seen.body == {
        "model": "stub-model",
        "messages": [
            {"role": "system", "content": "Be fair."},
            {"role": "user", "content": "Which is better?"},
        ],
        "temperature": 0.6,
        "top_p": 0.95,
        "max_tokens": 64,
        "seed": 7,
        "top_k": 20,
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "pairwise_verdict",
                "schema": {key: value for key, value in schema.items() if key != "title"},
                "strict": True,
            },
        },
    }
    assert result.request_id == "judgment-42"
    assert result.text == '{"explanation": "x", "score": "Response 2"}'
    assert (result.prompt_tokens, result.completion_tokens) == (120, 15)
    assert result.finish_reason == "stop"
    assert result.error is None and result.ok
    assert result.attempts == 1
    assert 0 <= result.latency_s < 5


def test_llamacpp_style_without_key_or_top_k(server):
    schema = json_schema_for(PAIRWISE)
    backend = make_backend(server, structured_output="json_object", send_top_k=False)
    backend.generate([user("hi", response_format=schema, sampling=SamplingParams(stop=["</s>"], n=2))])
    [seen] = server.requests
    assert "Authorization" not in seen.headers
    assert "top_k" not in seen.body and "seed" not in seen.body
    assert seen.body["response_format"] == {"type": "json_object", "schema": schema}
    assert seen.body["stop"] == ["</s>"]
    assert seen.body["n"] == 2


def test_tgi_and_none_styles_and_extra_body(server):
    schema = json_schema_for(PAIRWISE)
    make_backend(server, structured_output="tgi").generate([user("a", response_format=schema)])
    make_backend(
        server, structured_output="none", extra_body={"max_tokens": 9, "repetition_penalty": 1.1}
    ).generate([user("b", response_format=schema)])
    first, second = server.requests
    assert first.body["response_format"] == {"type": "json_object", "value": schema}
    assert "response_format" not in second.body
    # extra_body is applied last: it can set server-specific fields and override ours.
    assert second.body["max_tokens"] == 9 and second.body["repetition_penalty"] == 1.1


def test_several_choices_come_back(server):
    server.script = [Reply(body=completion_body(["one", "two"]))]
    [result] = make_backend(server).generate([user("hi", sampling=SamplingParams(n=2))])
    assert result.text == "one"
    assert result.choices == ("one", "two")


def test_429_then_200_waits_for_retry_after(server):
    sleeps: list[float] = []
    server.script = [
        Reply(status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "2"})
    ]
    [result] = make_backend(server, sleeps).generate([user("hi")])
    assert result.ok and result.text == "echo: hi"
    assert result.attempts == 2
    assert len(server.requests) == 2
    # jitter would be 0.5 * 0.1 = 0.05 s; Retry-After asks for 2 s, which wins.
    assert sleeps == [2.0]


def test_retry_after_as_http_date_is_measured_from_the_injected_clock(server):
    sleeps: list[float] = []
    date = "Wed, 21 Oct 2026 07:28:00 GMT"
    now = parsedate_to_datetime(date).timestamp() - 3.0
    server.script = [Reply(status=503, headers={"Retry-After": date})]
    [result] = make_backend(server, sleeps, wall_clock=lambda: now).generate([user("hi")])
    assert result.ok
    assert sleeps == [pytest.approx(3.0)]


def test_retry_after_is_capped(server):
    sleeps: list[float] = []
    server.script = [Reply(status=429, headers={"Retry-After": "3600"})]
    make_backend(server, sleeps, retry_after_max_s=1.5).generate([user("hi")])
    assert sleeps == [1.5]


def test_500_then_200_retries_with_jittered_backoff(server):
    sleeps: list[float] = []
    server.script = [Reply(status=500, body={"error": {"message": "boom"}})]
    [result] = make_backend(server, sleeps).generate([user("hi")])
    assert result.ok and result.attempts == 2
    assert sleeps == [pytest.approx(0.05)]  # 0.5 * min(10, 0.1 * 2**0)


def test_stall_past_the_timeout_is_retried(server):
    sleeps: list[float] = []
    server.script = [Reply(body=completion_body("late"), delay_s=0.6)]
    started = time.perf_counter()
    [result] = make_backend(server, sleeps, timeout_s=0.2).generate([user("hi")])
    elapsed = time.perf_counter() - started
    assert result.ok and result.text == "echo: hi"
    assert result.attempts == 2
    assert len(server.requests) == 2
    assert sleeps == [pytest.approx(0.05)]
    assert elapsed < 0.55  # the client gave up after ~0.2 s instead of waiting for the stalled answer


def test_always_500_gives_an_error_result_after_max_attempts(server):
    sleeps: list[float] = []
    server.responder = lambda body: Reply(status=500, body={"error": {"message": "engine dead"}})
    [result] = make_backend(server, sleeps, max_attempts=4, backoff_max_s=0.15).generate([user("hi", "q9")])
    assert not result.ok
    assert result.request_id == "q9"
    assert result.text == ""
    assert result.error == "gave up after 4 attempts: HTTP 500: engine dead"
    assert result.attempts == 4
    assert len(server.requests) == 4
    # ceilings min(0.15, 0.1 * 2**k) for k = 0, 1, 2 are 0.1, 0.15, 0.15; half of each:
    assert sleeps == pytest.approx([0.05, 0.075, 0.075])


def test_connection_refused_is_retried_then_reported():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps: list[float] = []
    backend = OpenAIBackend(
        base_url=f"http://127.0.0.1:{port}/v1",
        model="m",
        max_attempts=2,
        backoff_base_s=0.1,
        rng=HalfRandom(),
        sleep=sleeps.append,
    )
    [result] = backend.generate([user("hi")])
    assert result.error == "gave up after 2 attempts: connection error (ConnectError)"
    assert sleeps == [0.05]


def test_400_is_final_for_that_request_only(server):
    def responder(body):
        content = body["messages"][-1]["content"]
        if content == "too long":
            return Reply(status=400, body={"error": {"message": "context length exceeded"}})
        return Reply(body=completion_body(f"echo: {content}"))

    server.responder = responder
    sleeps: list[float] = []
    results = make_backend(server, sleeps, max_concurrency=2).generate(
        [user("a", "0"), user("too long", "1"), user("c", "2")]
    )
    assert [r.request_id for r in results] == ["0", "1", "2"]
    assert [r.text for r in results] == ["echo: a", "", "echo: c"]
    assert results[1].error == "HTTP 400: context length exceeded"
    assert results[1].attempts == 1
    assert sleeps == []
    assert len(server.requests) == 3


def test_malformed_success_body_is_an_error_result(server):
    server.script = [Reply(body="<html>gateway</html>")]
    [result] = make_backend(server).generate([user("hi")])
    assert result.error is not None and result.error.startswith("malformed response body")


def test_rejected_key_raises_a_configuration_error_without_the_key(server):
    server.responder = lambda body: Reply(status=401, body={"error": {"message": f"invalid key {SECRET}"}})
    backend = make_backend(server, api_key_env=KEY_VAR, environ={KEY_VAR: SECRET})
    with pytest.raises(BackendConfigError) as caught:
        backend.generate([user("a", "0"), user("b", "1")])
    message = str(caught.value)
    assert "HTTP 401" in message and "check the API key" in message
    assert SECRET not in message and "[redacted]" in message
    assert SECRET not in repr(backend)


def test_unknown_model_raises_a_configuration_error(server):
    server.responder = lambda body: Reply(status=404, body={"error": {"message": "model does not exist"}})
    with pytest.raises(BackendConfigError, match="HTTP 404 .*model does not exist"):
        make_backend(server).generate([user("a")])


def test_missing_environment_variable_is_a_configuration_error(server):
    with pytest.raises(BackendConfigError, match=f"environment variable {KEY_VAR} .* is not set"):
        make_backend(server, api_key_env=KEY_VAR, environ={})


def test_key_is_read_from_the_process_environment(server, monkeypatch):
    monkeypatch.setenv(KEY_VAR, SECRET)
    make_backend(server, api_key_env=KEY_VAR).generate([user("hi")])
    assert server.requests[0].headers["Authorization"] == f"Bearer {SECRET}"


def test_concurrency_never_exceeds_the_bound_and_order_is_kept(server):
    server.delay_s = 0.1
    requests = [user(f"q{i}", str(i)) for i in range(12)]
    results = make_backend(server, max_concurrency=3).generate(requests)
    assert [r.request_id for r in results] == [str(i) for i in range(12)]
    assert [r.text for r in results] == [f"echo: q{i}" for i in range(12)]
    # 12 requests of 0.1 s on 3 slots: the bound is reached and never passed.
    assert server.max_in_flight == 3


def test_concurrency_of_one_is_sequential(server):
    server.delay_s = 0.02
    make_backend(server, max_concurrency=1).generate([user(f"q{i}", str(i)) for i in range(4)])
    assert server.max_in_flight == 1
    assert len(server.requests) == 4


def test_empty_batch_sends_nothing(server):
    assert make_backend(server).generate([]) == []
    assert server.requests == []


def test_score_options_is_not_supported(server):
    with pytest.raises(NotImplementedError, match="cannot score options by log-probability"):
        make_backend(server).score_options("Jawaban:", [" A", " B"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"base_url": "127.0.0.1:8000"}, "base_url must be an http"),
        ({"model": " "}, "model must be"),
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"max_attempts": 0}, "max_attempts"),
        ({"structured_output": "grammar"}, "structured_output must be one of"),
        ({"timeout_s": 0}, "timeout_s"),
    ],
)
def test_bad_configuration_is_refused(options, message):
    settings = {"base_url": "http://127.0.0.1:1/v1", "model": "m", **options}
    with pytest.raises(BackendConfigError, match=message):
        OpenAIBackend(**settings)


def test_batches_sent_from_several_threads_share_one_bound_and_keep_their_own_order(server):
    server.delay_s = 0.05
    backend = make_backend(server, max_concurrency=4)
    batches = {name: [user(f"{name}{i}", f"{name}{i}") for i in range(6)] for name in ("a", "b", "c")}
    results: dict[str, list] = {}
    threads = [
        threading.Thread(target=lambda n=name: results.__setitem__(n, backend.generate(batches[n])))
        for name in batches
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    for name, batch in batches.items():
        assert [r.request_id for r in results[name]] == [r.request_id for r in batch]
        assert [r.text for r in results[name]] == [f"echo: {name}{i}" for i in range(6)]
    # 18 requests of 0.05 s from three batches at once: the one bound is reached and never passed.
    assert server.max_in_flight == 4
    backend.close()


def test_every_backend_checks_certificates_with_the_one_context_built_for_the_process():
    import ssl

    from evaluation.inference.openai_backend import tls_context

    context = tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert tls_context() is context
    first = OpenAIBackend(base_url="https://models.example.org/v1", model="m")
    second = OpenAIBackend(base_url="https://other.example.org/v1", model="m")
    try:
        pools = [backend._client._transport._pool for backend in (first, second)]
        assert pools[0]._ssl_context is context and pools[1]._ssl_context is context
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize(
    ("queues", "warmed"),
    [
        (["gpu.judge"], True),
        (["default"], True),
        (["default", "gpu.a"], True),
        (["exports"], False),
        ([], False),
    ],
)
def test_a_worker_taking_model_chunks_builds_the_clients_certificate_checks_before_it_is_ready(
    queues, warmed
):
    from types import SimpleNamespace

    from evaluation import tasks
    from evaluation.inference.openai_backend import tls_context

    tls_context.cache_clear()
    consumer = SimpleNamespace(
        task_consumer=SimpleNamespace(queues=[SimpleNamespace(name=name) for name in queues])
    )
    tasks._warm_model_clients(consumer)
    assert (tls_context.cache_info().currsize == 1) is warmed
