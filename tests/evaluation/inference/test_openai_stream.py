"""``OpenAIBackend.stream``: a chat completion piece by piece against a real streaming HTTP server."""

from __future__ import annotations

import pytest

from evaluation.inference.base import Backend, ChatRequest, GenerationResult, StreamChunk, StreamError
from evaluation.inference.openai_backend import OpenAIBackend
from tests.arena.stream_stub import StreamStub


@pytest.fixture
def stub():
    server = StreamStub().start()
    yield server
    server.stop()


def _backend(stub, **options) -> OpenAIBackend:
    return OpenAIBackend(base_url=stub.base_url, model="m", timeout_s=options.pop("timeout_s", 5), **options)


REQUEST = ChatRequest(messages=[{"role": "user", "content": "Halo"}], request_id="r1")


def test_stream_yields_pieces_then_usage(stub):
    with _backend(stub) as backend:
        chunks = list(backend.stream(REQUEST))
    assert [c.text for c in chunks if c.text] == ["Halo", ", ", "apa ", "kabar?"]
    assert chunks[-2] == StreamChunk(text="", completion_tokens=None, finish_reason="stop")
    assert chunks[-1].completion_tokens == 9
    body = stub.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "Halo"}]


@pytest.mark.parametrize(
    ("script", "message", "timed_out"),
    [
        ({"status": 503}, "HTTP 503: overloaded", False),
        ({"cut_after": 2}, "", False),
        ({"stall_s": 1.5}, "no answer for 1s", True),
    ],
)
def test_stream_failures_raise_stream_error(stub, script, message, timed_out):
    for key, value in script.items():
        setattr(stub.script, key, value)
    received = []
    with _backend(stub, timeout_s=1) as backend, pytest.raises(StreamError) as caught:
        for chunk in backend.stream(REQUEST):
            received.append(chunk.text)
    assert message in str(caught.value)
    assert caught.value.timed_out is timed_out
    if "cut_after" in script:
        assert received == ["Halo", ", "]  # what came before the cut was given out
    assert len(stub.bodies) == 1  # never retried: a watched answer is not started twice


class OnePiece(Backend):
    """A backend without streaming of its own (as transformers, vLLM and in-process llama.cpp are)."""

    def __init__(self, error=None):
        self.error = error

    def generate(self, requests, *, stop=None):
        return [
            GenerationResult(
                request_id=r.request_id,
                text="" if self.error else "utuh",
                prompt_tokens=1,
                completion_tokens=None if self.error else 2,
                latency_s=0.0,
                error=self.error,
                finish_reason=None if self.error else "stop",
            )
            for r in requests
        ]


def test_backends_without_streaming_give_one_piece():
    assert list(OnePiece().stream(REQUEST)) == [
        StreamChunk(text="utuh", completion_tokens=2, finish_reason="stop")
    ]
    with pytest.raises(StreamError, match="boom"):
        list(OnePiece(error="boom").stream(REQUEST))
