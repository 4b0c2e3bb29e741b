"""The web tier's half of a battle stream: server-sent events of one turn's two answers.

Subscribed to the battle's Redis channels first, then the stored text of both sides is sent (so nothing
published in between is lost, and a reconnecting browser catches up), then each new piece as the worker
publishes it. The stored answers are read again every ``recheck_s`` seconds (every ``poll_s`` without
Redis), which also catches the end of an answer whose worker died before it could publish. The stream ends
when both sides finished or one failed, or after ``timeout_s``. A battle still answering past its turn's
deadline (a model worker that died, a model that hangs) is ended as not counted at the first read after
the deadline, or at ``timeout_s`` at the latest, so the voter is not kept waiting for the stream's own
limit. Every frame goes through ``arena.domain.battles.sse_frame``, which refuses any key but a side letter,
a turn, text and a status.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from django.db import DatabaseError
from django.utils import timezone

from arena import selectors, services, streams
from arena.domain.battles import (
    SIDES,
    delta_event,
    done_event,
    end_event,
    failed_event,
    new_text,
    sse_frame,
)
from arena.models import Battle, BattleAnswer

HEARTBEAT_S = 15.0
logger = logging.getLogger(__name__)


def battle_stream(
    *,
    battle: Battle,
    turn: int,
    timeout_s: float,
    poll_s: float = 0.25,
    recheck_s: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[bytes]:
    token, battle_id = battle.token, battle.pk
    started = clock()
    overdue_at = started + max(0.0, (battle.turn_deadline - timezone.now()).total_seconds())
    sent = dict.fromkeys(SIDES, 0)
    finished: dict[str, str] = {}
    yield b"retry: 3000\n\n"
    with streams.subscribed(token) as subscription:
        last_read = float("-inf")
        last_frame = started
        while True:
            now = clock()
            if now - last_read >= (recheck_s if subscription else poll_s):
                last_read = now
                try:
                    state = selectors.battle_turn_state(battle_id=battle_id, turn=turn)
                    if state["battle"][0] == Battle.Status.STREAMING and now >= overdue_at:
                        services.battle_expire(battle_id=battle_id)
                        state = selectors.battle_turn_state(battle_id=battle_id, turn=turn)
                except DatabaseError:  # a busy database: the stream goes on and reads again next time
                    logger.warning("arena: could not read battle %s this time", battle_id, exc_info=True)
                    state = None
            else:
                state = None
            if state is not None:
                for frame in _from_state(state, turn, sent, finished):
                    last_frame = now
                    yield frame
                battle_status = state["battle"][0]
                if len(finished) == 2 or "failed" in finished.values() or battle_status == "not_counted":
                    yield sse_frame(end_event(_end_status(battle_status, finished)))
                    return
            if now - started >= timeout_s:
                services.battle_expire(battle_id=battle_id)
                state = selectors.battle_turn_state(battle_id=battle_id, turn=turn)
                yield from _from_state(state, turn, sent, finished)
                status = state["battle"][0]
                yield sse_frame(end_event(_end_status(status, finished) if status != "streaming" else "open"))
                return
            if subscription is None:
                sleep(poll_s)
                continue
            event = subscription.get(timeout=min(1.0, recheck_s))
            if event is None:
                if clock() - last_frame >= HEARTBEAT_S:
                    last_frame = clock()
                    yield b": keep-alive\n\n"
                continue
            frame = _from_event(event, turn, sent, finished)
            if frame is not None:
                last_frame = clock()
                yield frame
                if len(finished) == 2 or "failed" in finished.values():
                    last_read = float("-inf")  # confirm the battle's status from the database, then end


def _end_status(battle_status: str, finished: dict[str, str]) -> str:
    if battle_status == Battle.Status.NOT_COUNTED or "failed" in finished.values():
        return "not_counted"
    return "ready" if battle_status in (Battle.Status.READY, Battle.Status.VOTED) else battle_status


def _from_state(
    state: dict[str, tuple[str, str]], turn: int, sent: dict[str, int], finished: dict[str, str]
) -> Iterator[bytes]:
    for side in SIDES:
        if side in finished or side not in state:
            continue
        status, text = state[side]
        if status == BattleAnswer.Status.DONE:
            finished[side] = "done"
            sent[side] = len(text)
            yield sse_frame(done_event(side, turn, text))
        elif status == BattleAnswer.Status.FAILED:
            finished[side] = "failed"
            reason = "timeout" if state["battle"][1] == Battle.Ending.TIMEOUT else "model_error"
            yield sse_frame(failed_event(side, turn, reason))
        elif len(text) > sent[side]:
            yield sse_frame(delta_event(side, turn, sent[side], text[sent[side] :]))
            sent[side] = len(text)


def _from_event(
    event: dict[str, Any], turn: int, sent: dict[str, int], finished: dict[str, str]
) -> bytes | None:
    side = event.get("side")
    if side not in SIDES or event.get("turn") != turn or side in finished:
        return None
    kind = event.get("type")
    if kind == "delta":
        part, sent[side] = new_text(sent[side], int(event.get("offset", 0)), str(event.get("text", "")))
        return sse_frame(delta_event(side, turn, sent[side] - len(part), part)) if part else None
    if kind == "done":
        finished[side] = "done"
        text = str(event.get("text", ""))
        sent[side] = len(text)
        return sse_frame(done_event(side, turn, text))
    if kind == "failed":
        finished[side] = "failed"
        return sse_frame(failed_event(side, turn, str(event.get("reason", "model_error"))))
    return None
