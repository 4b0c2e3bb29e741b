"""Arena fixtures for the whole suite (registered in ``tests/conftest.py``): a streaming stub model server,
and the arena's answer tasks kept in the test instead of sent to a broker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from arena import services
from evaluation.services.endpoints import backend_cache_clear
from tests.arena.stream_stub import StreamStub


@pytest.fixture
def stream_stub() -> Iterator[StreamStub]:
    stub = StreamStub().start()
    yield stub
    stub.stop()
    backend_cache_clear()


@pytest.fixture
def no_dispatch(monkeypatch):
    """The answers' tasks kept here instead of sent to a broker (``run_answers`` does the worker's part)."""
    sent: list[tuple[int, str]] = []

    class _Task:
        def apply_async(self, args, queue):
            sent.append((args[0], queue))

    monkeypatch.setattr(services, "task_named", lambda name: _Task())
    return sent
