"""A forwarding HTTP proxy that records the JSON bodies sent to a real model server.

Tests against the real llama.cpp server use it to see the exact prompts a judge run sent, without replacing
the server: every request is forwarded unchanged and the server's reply is returned unchanged.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


class RecordingProxy:
    """``base_url`` forwards to ``target`` (an ``http://host:port/v1`` URL); ``bodies`` holds what was sent."""

    def __init__(self, target: str) -> None:
        self.target = target.rstrip("/")
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy._lock:
                    proxy.bodies.append(json.loads(raw or b"{}"))
                path = self.path[len("/v1") :] if self.path.startswith("/v1") else self.path
                reply = httpx.post(
                    proxy.target + path,
                    content=raw,
                    headers={"Content-Type": "application/json"},
                    timeout=300,
                )
                self.send_response(reply.status_code)
                self.send_header("Content-Type", reply.headers.get("content-type", "application/json"))
                self.send_header("Content-Length", str(len(reply.content)))
                self.end_headers()
                self.wfile.write(reply.content)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
