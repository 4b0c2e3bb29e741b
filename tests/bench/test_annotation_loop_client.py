"""The HTTP client of ``bench/annotation_loop.py run``, against small stand-in servers: what it counts
must be what the server saw, whatever the server does with the connection."""

from __future__ import annotations

import importlib.util
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location(
        "annotation_loop", REPO_ROOT / "bench" / "annotation_loop.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench()
PAYLOAD = json.dumps(bench.answer()).encode()


@dataclass
class Seen:
    """What the stand-in server received and how it should answer."""

    nexts: list[str] = field(default_factory=list)  # the token of each GET next
    submits: list[tuple[str, str, str]] = field(default_factory=list)  # (token, task, query) per POST
    bodies: list[bytes] = field(default_factory=list)
    connections: int = 0
    fail_every: int = 0  # every n-th submit answers 500
    tasks_left: int = 10**9  # when 0, next answers 204 and a submit's next is null
    keep_open: bool = True  # HTTP/1.1 with connections kept open, else one request per connection
    drop_idle: bool = False  # close a kept-open connection after each answer without saying so
    chunked: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


def serve(seen: Seen) -> Iterator[int]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if seen.keep_open else "HTTP/1.0"

        def setup(self) -> None:
            super().setup()
            with seen.lock:
                seen.connections += 1

        def log_message(self, *args: object) -> None:
            pass

        def token(self) -> str:
            auth = self.headers["Authorization"]
            assert auth.startswith("Token ")
            return auth.removeprefix("Token ")

        def answer(self, status: int, body: dict | None) -> None:
            content = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if seen.chunked and content:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                half = len(content) // 2
                for part in (content[:half], content[half:]):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
            else:
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)
            if seen.drop_idle:
                self.close_connection = True

        def new_task(self) -> str | None:
            with seen.lock:
                if seen.tasks_left <= 0:
                    return None
                seen.tasks_left -= 1
                return f"t{len(seen.nexts) + len(seen.submits)}"

        def do_GET(self) -> None:
            assert self.path == "/api/v1/projects/7/next", self.path
            with seen.lock:
                seen.nexts.append(self.token())
            task = self.new_task()
            self.answer(200, {"task": task}) if task else self.answer(204, None)

        def do_POST(self) -> None:
            path, _, query = self.path.partition("?")
            task = path.removeprefix("/api/v1/tasks/").removesuffix("/annotations")
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with seen.lock:
                seen.submits.append((self.token(), task, query))
                seen.bodies.append(body)
                failed = seen.fail_every and len(seen.submits) % seen.fail_every == 0
            if failed:
                self.answer(500, {"detail": "no"})
                return
            if query == "next=1":
                following = self.new_task()
                self.answer(201, {"next": {"task": following} if following else None})
            else:
                self.answer(201, {"id": 1})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def drive(port: int, *, annotators: int = 3, seconds: float = 0.6, **options: object):
    client = bench.LoopClient(
        host="127.0.0.1",
        port=port,
        project=7,
        tokens=[f"tok{n}" for n in range(annotators)],
        payload=PAYLOAD,
        **options,
    )
    client.run(seconds)
    return client


@pytest.mark.parametrize(
    "shape",
    [
        {"keep_open": True},
        {"keep_open": False},
        {"keep_open": True, "drop_idle": True},
        {"keep_open": True, "chunked": True},
    ],
    ids=["kept-open", "closed-each-time", "closed-without-saying", "chunked"],
)
def test_every_answer_the_server_gave_is_counted_once_and_nothing_else(shape: dict) -> None:
    seen = Seen(**shape)
    for port in serve(seen):
        client = drive(port)
    assert client.errors == {}
    assert len(client.latencies["next"]) == len(seen.nexts) == 3  # one per annotator, then ?next=1
    assert len(client.latencies["submit"]) == len(seen.submits) > 30
    assert {token for token, _, _ in seen.submits} == {"tok0", "tok1", "tok2"}
    assert {query for _, _, query in seen.submits} == {"next=1"}
    assert set(seen.bodies) == {PAYLOAD}
    # Each task handed out is submitted once, by the annotator it went to, in the order given.
    tasks = [task for _, task, _ in seen.submits]
    assert len(tasks) == len(set(tasks))
    if shape.get("keep_open") and not shape.get("drop_idle"):
        assert seen.connections == 3
    else:
        assert seen.connections == len(seen.nexts) + len(seen.submits)


def test_separate_asks_for_each_task_before_its_submit() -> None:
    seen = Seen()
    for port in serve(seen):
        client = drive(port, annotators=2, separate=True)
    assert client.errors == {}
    assert len(seen.nexts) == len(client.latencies["next"])
    assert len(seen.submits) == len(client.latencies["submit"])
    assert abs(len(seen.nexts) - len(seen.submits)) <= 2
    assert {query for _, _, query in seen.submits} == {""}


def test_refusals_are_counted_by_kind_and_status_and_the_annotator_goes_on() -> None:
    seen = Seen(fail_every=5)
    for port in serve(seen):
        client = drive(port)
    n_failed = len(seen.submits) // 5
    assert n_failed > 3
    assert client.errors == {"submit 500": n_failed}
    # After a refused submit the annotator asks for a task again, unless the time was up by then.
    assert n_failed - 3 <= len(seen.nexts) - 3 <= n_failed


def test_an_annotator_stops_when_no_task_is_left() -> None:
    seen = Seen(tasks_left=7)
    started = time.monotonic()
    for port in serve(seen):
        client = drive(port, seconds=5)
    assert time.monotonic() - started < 4
    assert client.errors == {}
    # 3 tasks from next, 4 more from the first submits; each submitted once, and each annotator's last
    # submit got no next task, so all three stopped long before the 5 seconds were up.
    assert sorted(task for _, task, _ in seen.submits) == sorted(f"t{n}" for n in range(1, 8))
    assert len(client.latencies["submit"]) == 7
    assert client.live == 0


def test_a_server_that_is_not_there_is_counted_as_errors_until_the_time_is_up() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = drive(port, annotators=2, seconds=0.3)
    assert list(client.errors) == ["next ConnectionRefusedError"]
    assert client.errors["next ConnectionRefusedError"] == len(client.latencies["next"]) > 10
    assert client.latencies["submit"] == []


def test_a_request_that_gets_no_answer_times_out() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # accepts connections, never answers
        client = drive(silent.getsockname()[1], annotators=1, seconds=0.5, timeout=0.2)
    assert client.errors == {"next TimeoutError": len(client.latencies["next"])}
    assert 2 <= len(client.latencies["next"]) <= 4
    assert all(ms >= 200 for ms in client.latencies["next"])


def test_think_time_paces_the_submits() -> None:
    seen = Seen()
    for port in serve(seen):
        client = drive(port, annotators=4, seconds=1.0, think=0.1)
    assert client.errors == {}
    # 4 annotators pausing 0.1 s on average over about 1 s: about 40 submits, far fewer than back to back.
    assert 15 <= len(seen.submits) <= 70


@pytest.mark.parametrize(
    ("data", "ended", "parsed"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", False, (200, b"ok", True)),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok", False, None),
        (b"HTTP/1.1 201 Created\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", False, (201, b"", False)),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", False, (200, b"ok", False)),
        (b"HTTP/1.1 204 No Content\r\n\r\n", False, (204, b"", True)),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n",
            False,
            (200, b"abc", True),
        ),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\n", False, None),
        (b"HTTP/1.1 200 OK\r\n\r\nto the end", False, None),
        (b"HTTP/1.1 200 OK\r\n\r\nto the end", True, (200, b"to the end", False)),
        (b"HTTP/1.1 200 OK\r\nContent-", True, None),
    ],
)
def test_response_parsing(data: bytes, ended: bool, parsed: tuple | None) -> None:
    assert bench._response(bytearray(data), ended=ended) == parsed
