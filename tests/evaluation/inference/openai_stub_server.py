"""A real HTTP server on 127.0.0.1 that plays an OpenAI-compatible endpoint for backend tests.

It records every request (path, headers, JSON body), counts how many are in flight at once, and answers
each request from a script (in arrival order) or from a responder function (by content), so tests can
stage 429s, 500s, stalls and malformed bodies against the real HTTP client.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; str -> sent as is; None -> a completion echoing the last user message
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any


def completion_body(
    content: str | list[str], prompt_tokens: int = 11, completion_tokens: int = 7
) -> dict[str, Any]:
    contents = [content] if isinstance(content, str) else content
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "stub-model",
        "choices": [
            {"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            for i, text in enumerate(contents)
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class StubOpenAIServer:
    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.script: list[Reply] = []
        self.responder: Callable[[Any], Reply] | None = None
        self.delay_s = 0.0
        self.in_flight = 0
        self.max_in_flight = 0
        # The integral of in_flight over time: divided by a period, the mean number of requests in flight.
        self.in_flight_seconds = 0.0
        self._in_flight_changed = time.monotonic()
        # Wall-clock times (time.time(), comparable across processes) of the first request to arrive and the
        # last reply to leave since the counts were reset: where a pipeline's time before and after goes.
        self.first_arrival: float | None = None
        self.last_departure: float | None = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> StubOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _count(self, change: int) -> None:
        """Add ``change`` to ``in_flight``; call with ``_lock`` held."""
        now = time.monotonic()
        self.in_flight_seconds += self.in_flight * (now - self._in_flight_changed)
        self._in_flight_changed = now
        self.in_flight += change
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        if change > 0 and self.first_arrival is None:
            self.first_arrival = time.time()
        elif change < 0:
            self.last_departure = time.time()

    def reset_counts(self) -> None:
        with self._lock:
            self.max_in_flight = self.in_flight
            self.in_flight_seconds = 0.0
            self._in_flight_changed = time.monotonic()
            self.first_arrival = self.last_departure = None

    def _next_reply(self, body: Any) -> Reply:
        with self._lock:
            if self.script:
                return self.script.pop(0)
        if self.responder is not None:
            return self.responder(body)
        last_user = next(
            (m.get("content", "") for m in reversed(body.get("messages", [])) if m.get("role") == "user"), ""
        )
        return Reply(body=completion_body(f"echo: {last_user}"), delay_s=self.delay_s)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                pass

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with stub._lock:
                    stub.requests.append(RecordedRequest(self.path, dict(self.headers.items()), body))
                    stub._count(+1)
                counted = True
                try:
                    reply = stub._next_reply(body if isinstance(body, dict) else {})
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                    # Leave the count before answering: the client may send its next request as soon as
                    # it has read this answer.
                    with stub._lock:
                        stub._count(-1)
                        counted = False
                    payload = reply.body if reply.body is not None else completion_body("ok")
                    data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)
                finally:
                    if counted:
                        with stub._lock:
                            stub._count(-1)

        return Handler
