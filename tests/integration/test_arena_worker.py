"""Arena battles on a real Celery worker process: the worker streams both answers from a llama.cpp server
through Redis, the live server's event stream delivers the tokens; a worker killed in the middle of the
answers leaves the battle "not counted", with no vote."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from django.conf import settings
from django.test import Client

from annotation.models import Annotation, Task
from arena import services
from arena.models import Battle, BattleAnswer
from config.celery import app as celery_app
from evaluation.models import ModelEndpoint
from evaluation.services.endpoints import backend_cache_clear
from tests.arena.builders import make_arena

pytestmark = pytest.mark.integration

QUEUES = ("gpu.arena-kiri", "gpu.arena-kanan")
SLUGS = ("arena-kiri", "arena-kanan")


@pytest.fixture
def broker():
    """Tasks sent to Redis from this process (test settings run them eagerly otherwise), on empty queues."""
    assert celery_app.conf.broker_url.startswith("redis://")
    assert settings.ARENA_STREAM_REDIS_URL, "the stream goes through Redis here"
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    with celery_app.connection_for_write() as connection:
        for queue in QUEUES:
            connection.default_channel.queue_purge(queue)
    yield
    celery_app.conf.task_always_eager = eager
    backend_cache_clear()


def _arena(llamacpp_server, llamacpp_model_id, voter, **options):
    endpoints = [
        ModelEndpoint.objects.create(
            slug=slug,
            base_url=llamacpp_server,
            model_id=llamacpp_model_id,
            queue=queue,
            backend_options={"timeout_s": 60, "max_attempts": 1},
            sampling_defaults={"temperature": 0.0, "seed": 7},
        )
        for slug, queue in zip(SLUGS, QUEUES, strict=True)
    ]
    return make_arena(endpoints=endpoints, members=[voter], **options)


class EventStream:
    """The battle's server-sent events read over HTTP from the live server, as the page's EventSource."""

    def __init__(self, base_url: str, user, battle: Battle):
        client = Client()
        client.force_login(user)
        cookie = {settings.SESSION_COOKIE_NAME: client.cookies[settings.SESSION_COOKIE_NAME].value}
        self._client = httpx.Client(base_url=base_url, cookies=cookie, timeout=120)
        self._response = self._client.send(
            self._client.build_request("GET", f"/arena/b/{battle.token}/stream"), stream=True
        )
        assert self._response.status_code == 200
        assert self._response.headers["content-type"].startswith("text/event-stream")
        self._lines = self._response.iter_lines()
        self.raw: list[str] = []

    def next_event(self) -> dict | None:
        for line in self._lines:
            self.raw.append(line)
            if line.startswith("data: "):
                return json.loads(line[6:])
        return None

    def rest(self) -> list[dict]:
        events = []
        while (event := self.next_event()) is not None:
            events.append(event)
        return events

    def close(self) -> None:
        self._response.close()
        self._client.close()


def test_a_worker_streams_both_answers_and_the_event_stream_delivers_the_tokens(
    celery_worker_process, broker, live_server, llamacpp_server, llamacpp_model_id, make_user
):
    voter = make_user("annotator", username="pemilih")
    project = _arena(llamacpp_server, llamacpp_model_id, voter, max_tokens=24, timeout_s=120)
    celery_worker_process(queues=",".join(QUEUES), pool="threads", concurrency=2)

    battle = services.battle_start(project=project, user=voter, text="Apa kabar?", language="ind")
    stream = EventStream(live_server.url, voter, battle)
    try:
        events = stream.rest()
    finally:
        stream.close()

    assert events[-1] == {"type": "end", "status": "ready"}
    for side in ("A", "B"):
        deltas = [e for e in events if e["type"] == "delta" and e["side"] == side]
        done = [e for e in events if e["type"] == "done" and e["side"] == side]
        assert deltas, f"no token of side {side} reached the stream"
        assert len(done) == 1
        # The pieces, in order, make the finished answer that was stored.
        assert "".join(e["text"] for e in deltas) == done[0]["text"]
        answer = BattleAnswer.objects.get(battle=battle, side=side, turn=0)
        assert (answer.status, answer.text) == ("done", done[0]["text"])
        assert answer.ttft_ms is not None and answer.n_tokens > 0
    body = "\n".join(stream.raw)
    assert not any(slug in body for slug in SLUGS)  # nothing names a model before the vote

    battle.refresh_from_db()
    assert battle.status == Battle.Status.READY
    services.battle_vote(battle=battle, user=voter, vote="tie")
    assert Annotation.objects.get(assignment__task__project=project, criterion="vote").choice == "tie"


def test_a_worker_killed_mid_stream_leaves_the_battle_not_counted_and_no_vote(
    celery_worker_process, broker, live_server, llamacpp_server, llamacpp_model_id, make_user
):
    # Two answers of up to 200 tokens (one model slot: one after the other) take a few seconds here; the
    # battle's deadline is 25 s away. Killed a second after the first token, the worker never finishes
    # them: at the deadline the battle is not counted.
    voter = make_user("annotator", username="pemilih")
    project = _arena(llamacpp_server, llamacpp_model_id, voter, max_tokens=200, timeout_s=25)
    worker = celery_worker_process(queues=",".join(QUEUES), pool="threads", concurrency=2)

    battle = services.battle_start(
        project=project, user=voter, text="Count from 1 to 300, separated by commas.", language="ind"
    )
    stream = EventStream(live_server.url, voter, battle)
    try:
        first = stream.next_event()
        while first is not None and first["type"] != "delta":
            first = stream.next_event()
        assert first is not None and first["type"] == "delta"
        streaming_since = time.monotonic()
        while time.monotonic() - streaming_since < 1.0 and stream.next_event() is not None:
            pass  # a second of tokens, so the worker has kept some text
        worker.kill()
        killed_at = time.monotonic()
        assert BattleAnswer.objects.filter(battle=battle, status="streaming").exists()  # in the middle
        events = stream.rest()
    finally:
        stream.close()

    assert events[-1] == {"type": "end", "status": "not_counted"}
    assert {e["reason"] for e in events if e["type"] == "failed"} == {"timeout"}
    assert time.monotonic() - killed_at < 60  # at the battle's deadline, not the stream's own limit

    battle.refresh_from_db()
    assert (battle.status, battle.ending, battle.vote) == ("not_counted", "timeout", "")
    answers = BattleAnswer.objects.filter(battle=battle)
    assert set(answers.values_list("status", flat=True)) == {"failed"}
    assert any(answer.text for answer in answers)  # the partial text is kept for review
    with pytest.raises(services.BattleConflict):
        services.battle_vote(battle=battle, user=voter, vote="A")
    assert not Task.objects.filter(project=project).exists()
    assert not Annotation.objects.filter(assignment__task__project=project).exists()
