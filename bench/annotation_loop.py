"""Annotation loop benchmark: N simulated annotators do next task + submit over HTTP.

    # once, against the database the server uses (creates users, tokens and a project):
    DATABASE_URL=postgres://... python bench/annotation_loop.py setup --tasks 10000 --annotators 110 --out var/bench.json
    # start the server, e.g. DEBUG=false gunicorn -w 4 -b 127.0.0.1:8011 config.wsgi (same DATABASE_URL), then:
    python bench/annotation_loop.py run --url http://127.0.0.1:8011 --config var/bench.json --annotators 10 --seconds 20
    # CPU time of the application itself, without HTTP or a server (same settings and DATABASE_URL):
    DEBUG=false DATABASE_URL=postgres://... python bench/annotation_loop.py inprocess --config var/bench.json

Each simulated annotator has its own connection (kept open where the server allows it) and API token;
one thread drives them all over non-blocking sockets, which keeps the client's own share of the machine
small. It loops ``GET /api/v1/projects/{id}/next`` then
``POST /api/v1/tasks/{token}/annotations`` (a full likert answer: 5 responses x 2 criteria and a best
pick). ``run`` prints one JSON object: requests per second over both kinds of request, latency
percentiles per kind and overall, error counts, the load average before the run, and the CPU time per
submit of the bench client and of the whole machine (every process: client, server, database and
whatever else runs there).

By default the annotators work back to back, which measures the server's most (and, by Little's law, makes
latency the number of annotators over the throughput). ``--think S`` gives each annotator a pause of mean S
seconds (exponential) before every submit, as people reading a task take: ``--annotators 1000 --think 20``
is a campaign of a thousand people submitting every 20 s, about 50 submits/s offered.

``bench/annotation_loop_ab.sh`` runs ``run`` for several codes in turn (old and new, alternated), each on a
fresh copy of its own setup's database and a fresh server (see docs/benchmarks.md).

``inprocess`` calls the WSGI application directly, one annotator, one request at a time, with the last
token of the setup (so it does not take the tasks of the first ``run`` annotators): the CPU time of this
process per ``next`` and per submit (database time excluded: the database is another process), and the
number of queries of each. ``inprocess --browser`` drives the page loop instead, as the task page sends it:
a logged-in session (the second-to-last setup user, so the two modes do not take each other's claims), the
CSRF token read from the task page, then ``POST /annotate/t/{token}/submit`` with the form fields,
``HX-Request`` and the token, reading the next task's token from the fragment's ``HX-Push-Url``. It prints
the same JSON keys.
"""

from __future__ import annotations

import argparse
import errno
import heapq
import http.client
import io
import itertools
import json
import os
import random
import re
import selectors
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

N_MODELS = 5
CRITERIA = ("relevance", "fluency")


def setup(args: argparse.Namespace) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from rest_framework.authtoken.models import Token

    from annotation import services
    from datasets_app.models import Dataset, Prompt, Response

    started = time.monotonic()
    name = f"bench-{args.tasks}-{int(time.time())}"
    dataset = Dataset.objects.create(name=name)
    prompts = Prompt.objects.bulk_create(
        [
            Prompt(
                dataset=dataset, external_id=f"b{i}", category="analysis", language="ind", turns=[f"Soal {i}"]
            )
            for i in range(args.tasks)
        ],
        batch_size=2000,
    )
    Response.objects.bulk_create(
        [
            Response(prompt=p, model_name=f"model-{m}", turns=[f"Jawaban {m} untuk {p.external_id}"])
            for p in prompts
            for m in range(N_MODELS)
        ],
        batch_size=5000,
    )
    project = services.project_create(
        dataset=dataset, name=name, kind="likert", best_pick="required", overlap=3, groups=["A", "B"], seed=7
    )
    groups = list(project.groups.order_by("id"))
    annotator_role, _ = Group.objects.get_or_create(name="annotator")
    tokens = []
    for i in range(args.annotators):
        user, _ = get_user_model().objects.get_or_create(username=f"bench-ann-{i:03d}")
        user.groups.add(annotator_role)
        services.project_member_add(project=project, user=user, group=groups[i % len(groups)])
        tokens.append(Token.objects.get_or_create(user=user)[0].key)
    services.project_activate(project=project)
    config = {"project": project.pk, "tokens": tokens, "tasks": project.n_tasks}
    Path(args.out).write_text(json.dumps(config))
    print(
        json.dumps(
            {
                "project": project.pk,
                "tasks": project.n_tasks,
                "annotators": len(tokens),
                "setup_seconds": round(time.monotonic() - started, 1),
            }
        )
    )


def answer() -> dict:
    return {
        "answer": {
            "ratings": {str(n): {c: 1 + (n + len(c)) % 5 for c in CRITERIA} for n in range(1, N_MODELS + 1)},
            "best": 2,
        }
    }


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 1)


def machine_busy_seconds() -> float | None:
    """CPU seconds spent by every process on the machine so far (Linux), or ``None`` elsewhere."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class LoopClient:
    """The simulated annotators of ``run``, all driven from this one thread over non-blocking sockets.

    Each annotator has one request in flight at a time and its own API token and connection (kept
    open where the server allows it, a new one where the server closes it). One thread waiting on every
    socket costs the machine less than a thread per annotator, and a response is read as soon as it
    arrives instead of when its thread is next scheduled: the client shares the cores with the server
    it measures. ``latencies`` (ms, per kind of request) and ``errors`` (per kind and status, or the
    name of the network error) fill up as the run goes.
    """

    def __init__(
        self,
        *,
        host: str,
        port: int,
        project: int,
        tokens: list[str],
        payload: bytes,
        separate: bool = False,
        think: float = 0.0,
        timeout: float = 30.0,
    ) -> None:
        self.address = (host, port)
        self.host_header = f"{host}:{port}".encode()
        self.project = project
        self.tokens = tokens
        self.payload = payload
        self.separate = separate
        self.think = think
        self.timeout = timeout
        self.latencies: dict[str, list[float]] = {"next": [], "submit": []}
        self.errors: dict[str, int] = {}
        self.selector = selectors.DefaultSelector()
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._sequence = itertools.count()
        self.live = 0
        self.stop_at = 0.0

    def later(self, delay: float, action: Callable[[], None]) -> None:
        heapq.heappush(self._timers, (time.monotonic() + delay, next(self._sequence), action))

    def error(self, key: str) -> None:
        self.errors[key] = self.errors.get(key, 0) + 1

    def run(self, seconds: float) -> None:
        self.stop_at = time.monotonic() + seconds
        annotators = [_Annotator(self, token, seed) for seed, token in enumerate(self.tokens)]
        self.live = len(annotators)
        for annotator in annotators:
            if self.think:
                # Annotators start spread over one think time, as a campaign's people do, not all at once.
                self.later(annotator.pace.uniform(0, self.think), annotator.step)
            else:
                annotator.step()
        while self.live:
            wait = 1.0
            if self._timers:
                wait = max(0.0, min(wait, self._timers[0][0] - time.monotonic()))
            for key, _events in self.selector.select(wait):
                key.data()
            now = time.monotonic()
            while self._timers and self._timers[0][0] <= now:
                heapq.heappop(self._timers)[2]()
        self.selector.close()


class _Annotator:
    """One simulated annotator of ``LoopClient``: next task, (a pause,) submit, again, until the time is up."""

    def __init__(self, client: LoopClient, token: str, seed: int) -> None:
        self.client = client
        self.pace = random.Random(seed)
        self.headers = b"Authorization: Token %s\r\n" % token.encode()
        self.task: str | None = None
        self.sock: socket.socket | None = None
        self.watched = False  # whether the selector watches the socket (not while a kept-open one idles)
        self.reused = False
        self.retry = False
        self.request = 0  # which request a timeout timer belongs to
        self.kind = "next"
        self.done: Callable[[int, bytes], None] = self.after_next
        self.out = memoryview(b"")
        self.sent = 0
        self.received = bytearray()
        self.started = 0.0

    # --- the loop ---------------------------------------------------------------------------------

    def step(self) -> None:
        if time.monotonic() >= self.client.stop_at:
            self.finish()
        elif self.task is None:
            self.send(
                "next", b"GET", b"/api/v1/projects/%d/next" % self.client.project, None, self.after_next
            )
        else:
            self.think_then_submit()

    def after_next(self, status: int, content: bytes) -> None:
        if status == 204:
            self.finish()
        elif status != 200:
            self.client.error(f"next {status or content.decode()}")
            self.step()
        else:
            self.task = json.loads(content)["task"]
            self.think_then_submit()

    def think_then_submit(self) -> None:
        if not self.client.think:
            self.submit()
            return
        # Reading the task and answering it: exponential, so arrivals at the server are Poisson.
        pause = self.pace.expovariate(1 / self.client.think)
        if time.monotonic() + pause >= self.client.stop_at:
            self.finish()
        else:
            self.client.later(pause, self.submit)

    def submit(self) -> None:
        assert self.task is not None
        path = b"/api/v1/tasks/%s/annotations" % self.task.encode()
        # Without --separate the answer and the next task come in one request.
        self.send(
            "submit",
            b"POST",
            path if self.client.separate else path + b"?next=1",
            self.client.payload,
            self.after_submit,
        )

    def after_submit(self, status: int, content: bytes) -> None:
        self.task = None
        if status == 201 and not self.client.separate:
            following = json.loads(content)["next"]
            if following is None:
                self.finish()
                return
            self.task = following["task"]
        if status != 201:
            self.client.error(f"submit {status or content.decode()}")
        self.step()

    def finish(self) -> None:
        self.close()
        self.client.live -= 1

    # --- one request ------------------------------------------------------------------------------

    def send(
        self,
        kind: str,
        method: bytes,
        path: bytes,
        body: bytes | None,
        done: Callable[[int, bytes], None],
    ) -> None:
        head = b"%s %s HTTP/1.1\r\nHost: %s\r\n%s" % (method, path, self.client.host_header, self.headers)
        if body is not None:
            head += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        self.kind, self.done = kind, done
        self.out = memoryview(head + b"\r\n" + (body or b""))
        self.received = bytearray()
        self.started = time.perf_counter()
        self.request += 1
        request = self.request
        self.client.later(self.client.timeout, lambda: self.request == request and self.fail(TimeoutError()))
        self.transmit(retry=True)

    def transmit(self, *, retry: bool) -> None:
        self.retry, self.sent = retry, 0
        self.reused = self.sock is not None
        if self.sock is None:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.setblocking(False)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            error = self.sock.connect_ex(self.client.address)
            if error not in (0, errno.EINPROGRESS):
                # Counted from the loop, not from here: a server that refuses at once must not make the
                # annotator's next try a deeper call.
                refused = OSError(error, os.strerror(error))
                self.client.later(0, lambda: self.fail(refused))
                return
        self.watch(selectors.EVENT_WRITE, self.writable)

    def watch(self, events: int, handler: Callable[[], None]) -> None:
        assert self.sock is not None
        if self.watched:
            self.client.selector.modify(self.sock, events, handler)
        else:
            self.client.selector.register(self.sock, events, handler)
            self.watched = True

    def writable(self) -> None:
        assert self.sock is not None
        try:
            if self.sent == 0:
                error = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if error:
                    raise OSError(error, os.strerror(error))
            self.sent += self.sock.send(self.out[self.sent :])
        except OSError as exc:
            self.fail(exc)
            return
        if self.sent == len(self.out):
            self.watch(selectors.EVENT_READ, self.readable)

    def readable(self) -> None:
        assert self.sock is not None
        try:
            chunk = self.sock.recv(65536)
        except OSError as exc:
            self.fail(exc)
            return
        if chunk:
            self.received += chunk
            parsed = _response(self.received, ended=False)
        else:
            parsed = _response(self.received, ended=True)
            if parsed is None:
                self.fail(http.client.RemoteDisconnected())
                return
        if parsed is not None:
            status, content, keep = parsed
            if keep and chunk:
                # Kept open for the next request; not watched meanwhile, so that the server closing it
                # while the annotator pauses is found when the next request is sent.
                self.client.selector.unregister(self.sock)
                self.watched = False
            else:
                self.close()
            self.answered(status, content)

    def answered(self, status: int, content: bytes) -> None:
        self.request += 1  # the timeout timer of this request no longer applies
        self.client.latencies[self.kind].append((time.perf_counter() - self.started) * 1000)
        self.done(status, content)

    def fail(self, exc: Exception) -> None:
        reused = self.reused and not self.received
        self.close()
        if reused and self.retry and not isinstance(exc, TimeoutError):
            # A kept-open connection the server had closed before this request reached it: send it again
            # on a new one, once, as a browser does.
            self.transmit(retry=False)
            return
        self.answered(0, type(exc).__name__.encode())

    def close(self) -> None:
        if self.sock is not None:
            if self.watched:
                self.client.selector.unregister(self.sock)
                self.watched = False
            self.sock.close()
            self.sock = None


def _response(data: bytearray, *, ended: bool) -> tuple[int, bytes, bool] | None:
    """``(status, body, whether the connection stays open)`` once ``data`` holds a whole HTTP/1.1
    response, else ``None`` (``ended``: the server has closed the connection, so a body without a length
    ends there)."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = bytes(data[:end]).decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip().lower()
    keep = lines[0].startswith("HTTP/1.1") and headers.get("connection") != "close"
    body = bytes(data[end + 4 :])
    if "content-length" in headers:
        length = int(headers["content-length"])
        return (status, body[:length], keep) if len(body) >= length else None
    if headers.get("transfer-encoding") == "chunked":
        content, at = b"", 0
        while True:
            line_end = body.find(b"\r\n", at)
            if line_end < 0:
                return None
            size = int(body[at:line_end].split(b";")[0], 16)
            if len(body) < line_end + 2 + size + 2:
                return None
            if size == 0:
                return status, content, keep
            content += body[line_end + 2 : line_end + 2 + size]
            at = line_end + 2 + size + 2
    if status in (204, 304) or 100 <= status < 200:
        return status, b"", keep
    return (status, body, False) if ended else None


def run(args: argparse.Namespace) -> None:
    config = json.loads(Path(args.config).read_text())
    tokens = config["tokens"][: args.annotators]
    if len(tokens) < args.annotators:
        raise SystemExit(f"the setup made only {len(tokens)} annotators")
    url = urlsplit(args.url)
    client = LoopClient(
        host=url.hostname or "127.0.0.1",
        port=url.port or 80,
        project=config["project"],
        tokens=tokens,
        payload=json.dumps(answer()).encode(),
        separate=args.separate,
        think=args.think,
    )
    load_before = [round(v, 2) for v in os.getloadavg()]
    busy_before, client_before = machine_busy_seconds(), time.process_time()
    started = time.monotonic()
    client.run(args.seconds)
    elapsed = time.monotonic() - started
    busy_after, client_cpu = machine_busy_seconds(), time.process_time() - client_before
    latencies, errors = client.latencies, client.errors
    every = latencies["next"] + latencies["submit"]
    n_submits = len(latencies["submit"])

    def per_submit(seconds: float | None) -> float | None:
        return round(1000 * seconds / n_submits, 1) if seconds is not None and n_submits else None

    print(
        json.dumps(
            {
                "annotators": len(tokens),
                "think_s": args.think,
                "tasks": config["tasks"],
                "seconds": round(elapsed, 1),
                "requests": len(every),
                "requests_per_s": round(len(every) / elapsed, 1),
                "submits_per_s": round(len(latencies["submit"]) / elapsed, 1),
                "p50_ms": percentile(every, 0.5),
                "p95_ms": percentile(every, 0.95),
                "next_p50_ms": percentile(latencies["next"], 0.5),
                "next_p95_ms": percentile(latencies["next"], 0.95),
                "submit_p50_ms": percentile(latencies["submit"], 0.5),
                "submit_p95_ms": percentile(latencies["submit"], 0.95),
                "mean_ms": round(statistics.fmean(every), 1) if every else None,
                "errors": sum(errors.values()),
                "errors_by_kind": errors,
                "load_average_before": load_before,
                "cpus": os.cpu_count(),
                "client_cpu_ms_per_submit": per_submit(client_cpu),
                "machine_cpu_ms_per_submit": per_submit(
                    busy_after - busy_before if busy_before is not None and busy_after is not None else None
                ),
            }
        )
    )


def inprocess(args: argparse.Namespace) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.core.handlers.wsgi import WSGIHandler
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    config = json.loads(Path(args.config).read_text())
    app = WSGIHandler()
    if args.browser:
        _inprocess_browser(args, config, app)
        return
    token = config["tokens"][-1]
    body = json.dumps(answer()).encode()

    def call(method: str, path: str, data: bytes = b"") -> tuple[int, bytes]:
        path, _, query = path.partition("?")
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "127.0.0.1",
            "HTTP_AUTHORIZATION": f"Token {token}",
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(data),
            "wsgi.errors": sys.stderr,
            "CONTENT_LENGTH": str(len(data)),
        }
        if data:
            environ["CONTENT_TYPE"] = "application/json"
        status: list[str] = []
        content = b"".join(app(environ, lambda s, headers, exc_info=None: status.append(s)))
        return int(status[0].split()[0]), content

    current: list[str] = []

    def task() -> str:
        if not current:
            code, content = call("GET", f"/api/v1/projects/{config['project']}/next")
            if code != 200:
                raise SystemExit(f"next answered {code}: {content[:200]!r}")
            current.append(json.loads(content)["task"])
        return current[-1]

    def submit(held: str) -> tuple[int, bytes]:
        if args.separate:
            current.clear()
            return call("POST", f"/api/v1/tasks/{held}/annotations", body)
        code, content = call("POST", f"/api/v1/tasks/{held}/annotations?next=1", body)
        current.clear()
        if code == 201:
            following = json.loads(content)["next"]
            if following is None:
                raise SystemExit("no task left for the bench annotator; run setup again")
            current.append(following["task"])
        return code, content

    def loop() -> tuple[float, float, float]:
        # With ?next=1 a loop is one request (the submit claims the next task); separately it is two.
        w0, t0 = time.perf_counter(), time.process_time()
        held = task() if args.separate else ""
        t1 = time.process_time()
        code, content = submit(held or task())
        t2, w2 = time.process_time(), time.perf_counter()
        if code != 201:
            raise SystemExit(f"submit answered {code}: {content[:200]!r}")
        return t1 - t0, t2 - t1, w2 - w0

    for _ in range(args.warmup):
        loop()
    # Counted right away: every request clears the connection's query log when it starts.
    n_next = 0
    if args.separate:
        with CaptureQueriesContext(connection) as queries:
            held = task()
        n_next = len(queries)
    else:
        held = task()
    with CaptureQueriesContext(connection) as queries:
        submit(held)
    n_submit = len(queries)
    load_before = [round(v, 2) for v in os.getloadavg()]
    times = [loop() for _ in range(args.loops)]
    _print_inprocess(
        args, "separate" if args.separate else "submit?next=1", times, n_next, n_submit, load_before
    )


def _print_inprocess(
    args: argparse.Namespace,
    protocol: str,
    times: list[tuple[float, float, float]],
    n_next: int,
    n_submit: int,
    load_before: list[float],
) -> None:
    def ms(values: list[float]) -> dict[str, float]:
        return {
            "median": round(1000 * statistics.median(values), 2),
            "mean": round(1000 * statistics.fmean(values), 2),
        }

    print(
        json.dumps(
            {
                "loops": args.loops,
                "protocol": protocol,
                "next_cpu_ms": ms([t[0] for t in times]),
                "submit_cpu_ms": ms([t[1] for t in times]),
                "loop_cpu_ms": ms([t[0] + t[1] for t in times]),
                # Wall time includes the database's work (and waits), which CPU time leaves out.
                "loop_wall_ms": ms([t[2] for t in times]),
                "next_queries": n_next,
                "submit_queries": n_submit,
                "loop_queries": n_next + n_submit,
                "load_average_before": load_before,
            }
        )
    )


def _browser_form() -> bytes:
    """``answer()`` as the task page's form posts it (``r-<n>-<criterion>``, ``best``, ``comment``)."""
    from urllib.parse import urlencode

    given = answer()["answer"]
    fields = [
        (f"r-{number}-{criterion}", str(value))
        for number, values in given["ratings"].items()
        for criterion, value in values.items()
    ]
    fields += [("best", str(given["best"])), ("comment", ""), ("seconds", "12.5")]
    return urlencode(fields).encode()


def _inprocess_browser(args: argparse.Namespace, config: dict, app: Callable) -> None:
    """``inprocess --browser``: the htmx loop of the task page, one request a loop (the submit answers
    with the next task's fragment), with a session cookie and the CSRF token, as a browser sends it."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from rest_framework.authtoken.models import Token

    from annotation import services
    from annotation.models import Project

    user = Token.objects.select_related("user").get(key=config["tokens"][-2]).user
    user = get_user_model().objects.get(pk=user.pk)
    # A real session in the configured session store, as the login page leaves one.
    login = Client()
    login.force_login(user)
    cookies = {"sessionid": login.cookies["sessionid"].value}
    form = _browser_form()

    def call(method: str, path: str, data: bytes = b"", *, htmx: bool = False) -> tuple[int, dict, bytes]:
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "127.0.0.1",
            "HTTP_COOKIE": "; ".join(f"{k}={v}" for k, v in cookies.items()),
            "HTTP_ACCEPT_LANGUAGE": "id",
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(data),
            "wsgi.errors": sys.stderr,
            "CONTENT_LENGTH": str(len(data)),
        }
        if data:
            environ["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
        if htmx:
            environ.update(
                HTTP_HX_REQUEST="true",
                HTTP_HX_TARGET="task",
                HTTP_HX_CURRENT_URL=f"http://127.0.0.1{path.removesuffix('submit')}",
                HTTP_X_CSRFTOKEN=csrf[0],
                HTTP_REFERER=f"http://127.0.0.1{path.removesuffix('submit')}",
            )
        status: list[str] = []
        headers: dict[str, str] = {}

        def start(s: str, pairs: list, exc_info: object = None) -> None:
            status.append(s)
            for name, value in pairs:
                if name.lower() == "set-cookie":
                    cookie_name, _, rest = value.partition("=")
                    cookies[cookie_name] = rest.split(";", 1)[0]
                headers[name.lower()] = value

        content = b"".join(app(environ, start))
        return int(status[0].split()[0]), headers, content

    project = Project.objects.get(pk=config["project"])
    first = services.assignment_claim(project=project, user=user)
    if first is None:
        raise SystemExit("no task left for the bench annotator; run setup again")
    code, _headers, page = call("GET", f"/annotate/t/{first.token}/")
    found = re.search(rb'"X-CSRFToken": "([^"]+)"', page)
    if code != 200 or found is None:
        raise SystemExit(f"task page answered {code}: {page[:200]!r}")
    csrf = [found.group(1).decode()]
    current = [first.token]

    def submit() -> tuple[int, bytes]:
        code, headers, content = call("POST", f"/annotate/t/{current[0]}/submit", form, htmx=True)
        pushed = re.fullmatch(r"/annotate/t/([^/]+)/", headers.get("hx-push-url", ""))
        if code != 200 or pushed is None:
            raise SystemExit(f"submit answered {code} {headers}: {content[:300]!r}")
        current[0] = pushed.group(1)
        return code, content

    def loop() -> tuple[float, float, float]:
        w0, t0 = time.perf_counter(), time.process_time()
        submit()
        t1, w1 = time.process_time(), time.perf_counter()
        return 0.0, t1 - t0, w1 - w0

    for _ in range(args.warmup):
        loop()
    with CaptureQueriesContext(connection) as queries:
        _code, fragment = submit()
    n_submit = len(queries)
    if args.show_queries:
        for query in queries:
            print(query["sql"][:160], file=sys.stderr)
    print(f"fragment: {len(fragment)} bytes", file=sys.stderr)
    load_before = [round(v, 2) for v in os.getloadavg()]
    times = [loop() for _ in range(args.loops)]
    _print_inprocess(args, "htmx submit", times, 0, n_submit, load_before)


def instructions(args: argparse.Namespace) -> None:
    """Instructions per loop under callgrind: ``inprocess`` runs twice, with 5 loops and with 5 +
    ``--loops``, and the difference of the two counts (start-up, warm-up and query counting cancel out)
    is divided by ``--loops``. Machine-independent, unlike CPU time. Needs valgrind; takes minutes."""
    counts = []
    for loops in (5, 5 + args.loops):
        command = [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "inprocess",
            "--config",
            args.config,
            "--loops",
            str(loops),
            "--warmup",
            str(args.warmup),
        ]
        command += ["--separate"] if args.separate else []
        command += ["--browser"] if args.browser else []
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or found is None:
            raise SystemExit(f"callgrind run failed: {done.stderr[-2000:]}")
        counts.append(int(found.group(1)))
    print(
        json.dumps(
            {
                "loops": args.loops,
                "protocol": "htmx submit"
                if args.browser
                else "separate"
                if args.separate
                else "submit?next=1",
                "instructions_per_loop": round((counts[1] - counts[0]) / args.loops),
                "instructions_total": counts,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_setup = sub.add_parser(
        "setup", help="create users, tokens and a likert project (needs Django settings)"
    )
    p_setup.add_argument("--tasks", type=int, default=10_000)
    p_setup.add_argument("--annotators", type=int, default=50)
    p_setup.add_argument("--out", default="var/bench-annotation.json")
    p_run = sub.add_parser("run", help="drive next + submit against a running server")
    p_run.add_argument("--url", default="http://127.0.0.1:8000")
    p_run.add_argument("--config", default="var/bench-annotation.json")
    p_run.add_argument("--annotators", type=int, default=10)
    p_run.add_argument("--seconds", type=float, default=20)
    p_run.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean seconds an annotator spends on a task before submitting (exponential; 0: back to back, "
        "the server's most; e.g. 1000 annotators at 20 s offer 50 submits/s)",
    )
    p_inprocess = sub.add_parser(
        "inprocess",
        help="CPU time and queries per next and per submit, in this process (needs Django settings)",
    )
    p_inprocess.add_argument("--config", default="var/bench-annotation.json")
    p_inprocess.add_argument("--loops", type=int, default=300)
    p_inprocess.add_argument("--warmup", type=int, default=5)
    p_inprocess.add_argument(
        "--browser",
        action="store_true",
        help="the task page's htmx loop (session, CSRF, HX-Request; the submit answers with the next "
        "task's fragment) instead of the JSON API",
    )
    p_inprocess.add_argument(
        "--show-queries", action="store_true", help="with --browser: print the loop's statements to stderr"
    )
    p_instructions = sub.add_parser(
        "instructions", help="instructions per loop under callgrind (runs inprocess twice; needs valgrind)"
    )
    p_instructions.add_argument("--config", default="var/bench-annotation.json")
    p_instructions.add_argument("--loops", type=int, default=40)
    p_instructions.add_argument("--warmup", type=int, default=5)
    p_instructions.add_argument(
        "--browser", action="store_true", help="the htmx loop (as inprocess --browser)"
    )
    for p in (p_run, p_inprocess, p_instructions):
        p.add_argument(
            "--separate",
            action="store_true",
            help="GET next, then POST the answer: two requests a loop (the protocol before ?next=1)",
        )
    args = parser.parse_args()
    {"setup": setup, "run": run, "inprocess": inprocess, "instructions": instructions}[args.command](args)


if __name__ == "__main__":
    main()
