"""A real HTTP server on 127.0.0.1 that streams chat completions the way OpenAI-compatible servers do
(``data:`` events, then ``data: [DONE]``), for arena tests that need a failure on cue: an HTTP error, a
connection cut in the middle of an answer, or a server that stalls."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Script:
    pieces: tuple[str, ...] = ("Halo", ", ", "apa ", "kabar?")
    delay_s: float = 0.0
    status: int = 200
    cut_after: int | None = None  # close the connection after this many pieces, without [DONE]
    stall_s: float = 0.0  # wait this long before the first piece
    usage_tokens: int | None = 9


class StreamStub:
    def __init__(self) -> None:
        self.script = Script()
        self.bodies: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> StreamStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                stub.bodies.append(body)
                script = stub.script
                if script.status != 200:
                    payload = json.dumps({"error": {"message": "overloaded"}}).encode()
                    self.send_response(script.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                time.sleep(script.stall_s)
                for n, piece in enumerate(script.pieces):
                    if script.cut_after is not None and n >= script.cut_after:
                        self.wfile.flush()
                        self.connection.shutdown(2)
                        return
                    event = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(script.delay_s)
                last = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                self.wfile.write(f"data: {json.dumps(last)}\n\n".encode())
                if script.usage_tokens is not None:
                    usage = {"choices": [], "usage": {"completion_tokens": script.usage_tokens}}
                    self.wfile.write(f"data: {json.dumps(usage)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        return Handler
