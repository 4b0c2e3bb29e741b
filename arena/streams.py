"""Redis pub/sub between the model worker that streams a battle side and the web process relaying it.

One channel per battle side (``timbang:arena:<battle token>:<A|B>``); messages are the JSON events of
``arena.domain.battles`` (side letter, turn, text, status: never a model name). Without a Redis URL
(``ARENA_STREAM_REDIS_URL``, the embedded mode) nothing is published and the relay reads the answers the
worker keeps in the database instead.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)

_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def enabled() -> bool:
    return bool(settings.ARENA_STREAM_REDIS_URL)


def channel(token: str, side: str) -> str:
    return f"timbang:arena:{token}:{side}"


def _client():
    import redis

    url = settings.ARENA_STREAM_REDIS_URL
    with _clients_lock:
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        return client


def publish(token: str, side: str, event: Mapping[str, Any]) -> None:
    """Send one event to the side's channel; a Redis hiccup is logged, never fatal (the answer is kept in
    the database and the relay reads it from there too)."""
    if not enabled():
        return
    try:
        _client().publish(channel(token, side), json.dumps(dict(event), ensure_ascii=False))
    except Exception:  # noqa: BLE001 - the stream is a convenience; the stored answer is the record
        logger.warning("arena: could not publish to %s", channel(token, side), exc_info=True)


class Subscription:
    """Messages of a battle's two channels; ``get(timeout)`` returns one event or ``None``."""

    def __init__(self, pubsub: Any):
        self._pubsub = pubsub

    def get(self, timeout: float) -> dict[str, Any] | None:
        if self._pubsub is None:
            return None
        try:
            message = self._pubsub.get_message(ignore_subscribe_messages=True, timeout=max(0.0, timeout))
        except Exception:  # noqa: BLE001 - fall back to the database for the rest of this stream
            logger.warning("arena: lost the Redis subscription", exc_info=True)
            self._pubsub = None
            return None
        if not message or message.get("type") != "message":
            return None
        try:
            return json.loads(message["data"])
        except (TypeError, ValueError):
            return None


@contextmanager
def subscribed(token: str) -> Iterator[Subscription | None]:
    """Subscribed to both sides of a battle for the block (``None`` without Redis, or when Redis is down)."""
    if not enabled():
        yield None
        return
    try:
        pubsub = _client().pubsub()
        pubsub.subscribe(channel(token, "A"), channel(token, "B"))
    except Exception:  # noqa: BLE001
        logger.warning("arena: could not subscribe to battle channels", exc_info=True)
        yield None
        return
    try:
        yield Subscription(pubsub)
    finally:
        try:
            pubsub.close()
        except Exception:  # noqa: BLE001
            pass
