"""A webhook receiver on the loopback interface, started by the test: it records every request and answers
with the status codes it is given, one per request (the last one repeated)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.cache import cache

from tests.annotation.conftest import make_project  # noqa: F401  (the fixture, for these tests)
from webhooks.services import SUBSCRIPTIONS_KEY


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    answers: list[int]
    received: list[Received] = field(default_factory=list)
    retry_after: str | None = None


@pytest.fixture
def receiver():
    state = Receiver(url="", answers=[204])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            state.received.append(Received({k.lower(): v for k, v in self.headers.items()}, body))
            index = min(len(state.received), len(state.answers)) - 1
            self.send_response(state.answers[index])
            if state.retry_after is not None:
                self.send_header("Retry-After", state.retry_after)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def loopback_allowed(settings):
    """The site allows receivers on the loopback network (the test's receiver); retries without waiting."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.WEBHOOK_RETRY_BASE_S = 0
    settings.WEBHOOK_RETRY_CAP_S = 0
    return settings


@pytest.fixture(autouse=True)
def _forget_subscriptions():
    """The cache outlives the test's database rows: what this test's endpoints listened to is forgotten."""
    cache.delete(SUBSCRIPTIONS_KEY)
    yield
    cache.delete(SUBSCRIPTIONS_KEY)
