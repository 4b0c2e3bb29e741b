"""Battles against a real model: llama.cpp's server over the SmolLM2 GGUF shipped on PyPI, streaming into
both sides of a battle; and a model server killed in the middle of an answer."""

from __future__ import annotations

import threading
import time

import pytest

from annotation.models import Annotation
from arena import services, streams
from arena.models import Battle, BattleAnswer
from evaluation.inference.llamacpp_server import LlamaCppServer
from evaluation.models import ModelEndpoint
from evaluation.services.endpoints import backend_cache_clear
from tests.arena.builders import make_arena, run_answers

pytestmark = pytest.mark.django_db


def _endpoints(base_url: str, model_id: str, slugs=("smol-left", "smol-right")) -> list[ModelEndpoint]:
    return [
        ModelEndpoint.objects.create(
            slug=slug,
            base_url=base_url,
            model_id=model_id,
            backend_options={"timeout_s": 60, "max_attempts": 1},
            sampling_defaults={"temperature": 0.0, "seed": 3},
        )
        for slug in slugs
    ]


@pytest.fixture
def cleanup_backends():
    yield
    backend_cache_clear()


def test_a_battle_streams_from_a_real_llamacpp_server(
    llamacpp_server, llamacpp_model_id, make_user, no_dispatch, settings, cleanup_backends, monkeypatch
):
    settings.ARENA_PROGRESS_EVERY_S = 0.0
    published: list[tuple[str, dict]] = []
    voter = make_user("annotator")
    project = make_arena(
        endpoints=_endpoints(llamacpp_server, llamacpp_model_id), members=[voter], max_tokens=24
    )
    battle = services.battle_start(project=project, user=voter, text="Name three colours.", language="ind")
    # What the worker publishes on the battle's channels, kept here (the Redis relay has its own test).
    monkeypatch.setattr(streams, "publish", lambda token, side, event: published.append((side, event)))
    assert run_answers(battle) == ["done", "done"]
    battle.refresh_from_db()
    assert battle.status == Battle.Status.READY
    for side in ("A", "B"):
        answer = BattleAnswer.objects.get(battle=battle, side=side)
        deltas = [e for s, e in published if s == side and e["type"] == "delta"]
        # Token by token: many pieces, which add up to the stored answer.
        assert len(deltas) >= 5
        assert "".join(e["text"] for e in deltas) == answer.text
        assert [e["offset"] for e in deltas] == [
            sum(len(d["text"]) for d in deltas[:i]) for i in range(len(deltas))
        ]
        assert 0 < answer.n_tokens <= 24 and answer.ttft_ms > 0
        response = battle.response_a if side == "A" else battle.response_b
        response.refresh_from_db()
        assert response.turns == [answer.text] and response.meta["ttft_ms"] == [answer.ttft_ms]
    services.battle_vote(battle=battle, user=voter, vote="A")
    assert Annotation.objects.filter(criterion="vote", choice="A").count() == 1


def test_a_model_server_killed_mid_stream_ends_the_battle_not_counted(
    smollm2_gguf, llamacpp_server, llamacpp_model_id, make_user, no_dispatch, cleanup_backends
):
    voter = make_user("annotator")
    server = LlamaCppServer(smollm2_gguf, alias="doomed", n_ctx=1024, n_threads=1).start()
    try:
        endpoints = _endpoints(server.base_url, "doomed")
        project = make_arena(endpoints=endpoints, members=[voter], max_tokens=400)
        battle = services.battle_start(
            project=project, user=voter, text="Count from one to two hundred in words.", language="ind"
        )
        side_a = BattleAnswer.objects.get(battle=battle, side="A")
        calls = {"n": 0}
        killed = threading.Event()

        def clock():
            # Called once when the stream starts and once per piece: after a few pieces, the server dies.
            calls["n"] += 1
            if calls["n"] == 6 and not killed.is_set():
                killed.set()
                server.stop(timeout_s=0.01)
            return time.monotonic()

        status = services.battle_answer_stream(answer_id=side_a.pk, clock=clock)
    finally:
        server.stop()
    assert killed.is_set()
    assert status == "failed"  # returned: the worker that ran it lives on
    side_a.refresh_from_db()
    battle.refresh_from_db()
    assert (battle.status, battle.ending) == (Battle.Status.NOT_COUNTED, "model_error")
    assert side_a.text  # the part that came is kept for managers, never counted
    battle.response_a.refresh_from_db()
    assert battle.response_a.turns == []
    with pytest.raises(services.BattleConflict):
        services.battle_vote(battle=battle, user=voter, vote="B")
    assert not Annotation.objects.exists()
    # The same worker goes on to serve the next battle on a live server.
    other = make_arena(
        endpoints=_endpoints(llamacpp_server, llamacpp_model_id, slugs=("live-left", "live-right")),
        members=[voter],
        max_tokens=8,
    )
    next_battle = services.battle_start(project=other, user=voter, text="Hi", language="ind")
    assert run_answers(next_battle) == ["done", "done"]
