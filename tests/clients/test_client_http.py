"""The client's HTTP behaviour on a transport that answers as the test says (no server): retries on 429 and
503 with Retry-After, errors carrying the API's body, fields checked before sending, pagination."""

from datetime import UTC, datetime

import httpx
import pytest
from timbang_client import Timbang
from timbang_client.client import retry_after_seconds
from timbang_client.errors import BadRequest, Conflict, JobFailed, NotFound, RetriesExhausted


def client_with(answers, sleeps, **options):
    """A client whose requests get ``answers`` in turn (each a callable of the request or a Response)."""
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = answers[min(len(seen), len(answers)) - 1]
        return answer(request) if callable(answer) else answer

    client = Timbang(
        "http://timbang.test",
        token="k",
        transport=httpx.MockTransport(handler),
        sleep=sleeps.append,
        jitter=lambda: 1.0,
        **options,
    )
    return client, seen


def test_503_and_429_are_retried_after_retry_after_then_the_answer_is_returned():
    sleeps = []
    client, seen = client_with(
        [
            httpx.Response(503, headers={"Retry-After": "2"}, json={"detail": "database unavailable"}),
            httpx.Response(429, headers={"Retry-After": "7"}),
            httpx.Response(200, json={"id": 5, "groups": ["A"]}),
        ],
        sleeps,
    )
    assert client.projects.get(5) == {"id": 5, "groups": ["A"]}
    assert sleeps == [2.0, 7.0] and len(seen) == 3
    assert seen[0].headers["authorization"] == "Token k" and seen[0].url.path == "/api/v1/projects/5"


def test_without_retry_after_the_pause_doubles_up_to_the_cap_and_then_gives_up_with_the_body():
    sleeps = []
    client, seen = client_with(
        [httpx.Response(503, json={"detail": "busy"})],
        sleeps,
        max_retries=4,
        backoff_base=1.0,
        backoff_cap=5.0,
    )
    with pytest.raises(RetriesExhausted) as raised:
        client.annotation.next(3)
    assert sleeps == [1.0, 2.0, 4.0, 5.0] and len(seen) == 5
    assert raised.value.status_code == 503 and raised.value.body == {"detail": "busy"}


def test_a_connection_refused_is_retried():
    sleeps = []

    def refuse(request):
        raise httpx.ConnectError("refused", request=request)

    client, seen = client_with([refuse, httpx.Response(204)], sleeps)
    assert client.annotation.next(1) is None and len(sleeps) == 1


def test_errors_carry_the_status_and_the_api_body():
    body = {"detail": "The answer is not valid.", "errors": {"ratings.1.fluency": ["Choose 1 to 5."]}}
    client, _ = client_with([httpx.Response(400, json=body)], [])
    with pytest.raises(BadRequest) as raised:
        client.annotation.submit("tok", {"ratings": {}})
    assert raised.value.errors == {"ratings.1.fluency": ["Choose 1 to 5."]}
    assert "POST http://timbang.test/api/v1/tasks/tok/annotations -> 400: The answer is not valid." == str(
        raised.value
    )
    client, _ = client_with([httpx.Response(404, text="Not here")], [])
    with pytest.raises(NotFound) as missing:
        client.exports.get(9)
    assert missing.value.body == "Not here"
    client, _ = client_with([httpx.Response(409, json={"detail": "running"})], [])
    with pytest.raises(Conflict):
        client.projects.delete(1)


def test_fields_outside_the_operation_are_refused_before_anything_is_sent():
    client, seen = client_with([httpx.Response(201, json={})], [])
    with pytest.raises(TypeError, match="projects.create takes no field\\(s\\) colour"):
        client.projects.create(name="x", kind="likert", dataset=1, colour="red")
    assert seen == []


def test_pagination_follows_next_links():
    pages = {
        None: {
            "count": 3,
            "next": "http://timbang.test/api/v1/datasets/?page=2",
            "results": [{"id": 1}, {"id": 2}],
        },
        "2": {"count": 3, "next": None, "results": [{"id": 3}]},
    }
    client, seen = client_with([lambda r: httpx.Response(200, json=pages[r.url.params.get("page")])], [])
    assert [d["id"] for d in client.datasets.list()] == [1, 2, 3]
    assert [r.url.params.get("page") for r in seen] == [None, "2"]


def test_waiting_for_a_job_polls_until_it_ends_and_raises_when_it_failed():
    sleeps = []
    states = [
        {"id": 4, "status": "queued"},
        {"id": 4, "status": "running"},
        {"id": 4, "status": "failed", "error": "disk full"},
    ]
    client, _ = client_with([httpx.Response(200, json=s) for s in states], sleeps)
    with pytest.raises(JobFailed, match="export 4 failed: disk full") as raised:
        client.exports.wait(4, poll=0.5)
    assert raised.value.job["error"] == "disk full" and sleeps == [0.5, 0.5]


def test_retry_after_as_seconds_or_an_http_date():
    now = datetime(2026, 11, 29, 9, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds("Sun, 29 Nov 2026 09:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("Sun, 29 Nov 2026 08:00:00 GMT", now=now) == 0.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None
