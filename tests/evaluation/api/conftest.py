from __future__ import annotations

from collections.abc import Iterator

import pytest

from evaluation.services import backend_cache_clear
from tests.evaluation.inference.openai_stub_server import StubOpenAIServer


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    """A stub OpenAI-compatible server; cached backends pointing at it are closed afterwards."""
    stub = StubOpenAIServer().start()
    yield stub
    backend_cache_clear()
    stub.stop()
