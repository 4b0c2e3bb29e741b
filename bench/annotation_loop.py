"""Annotation loop benchmark: N simulated annotators do next task + submit over HTTP.

    # once, against the database the server uses (creates users, tokens and a project):
    DATABASE_URL=postgres://... python bench/annotation_loop.py setup --tasks 10000 --annotators 110 --out var/bench.json
    # start the server, e.g. DEBUG=false gunicorn -w 4 -b 127.0.0.1:8011 config.wsgi (same DATABASE_URL), then:
    python bench/annotation_loop.py run --url http://127.0.0.1:8011 --config var/bench.json --annotators 10 --seconds 20
    # CPU time of the application itself, without HTTP or a server (same settings and DATABASE_URL):
    DEBUG=false DATABASE_URL=postgres://... python bench/annotation_loop.py inprocess --config var/bench.json

Each simulated annotator is a thread with its own connection (kept alive where the server allows it)
and API token. It loops ``GET /api/v1/projects/{id}/next`` then
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
number of queries of each.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
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


def run(args: argparse.Namespace) -> None:
    config = json.loads(Path(args.config).read_text())
    tokens = config["tokens"][: args.annotators]
    if len(tokens) < args.annotators:
        raise SystemExit(f"the setup made only {len(tokens)} annotators")
    latencies: dict[str, list[float]] = {"next": [], "submit": []}
    errors: dict[str, int] = {}
    lock = threading.Lock()
    stop_at = time.monotonic() + args.seconds
    body = answer()

    url = urlsplit(args.url)
    payload = json.dumps(body).encode()

    def work(token: str, seed: int) -> None:
        pace = random.Random(seed)
        local: dict[str, list[float]] = {"next": [], "submit": []}
        local_errors: dict[str, int] = {}
        headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        # The standard library's client: it costs a fraction of the CPU of httpx per request, which
        # matters when the client shares the machine's cores with the server it measures.
        client = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=30)

        def request(kind: str, method: str, path: str, data: bytes | None = None) -> tuple[int, bytes]:
            t0 = time.perf_counter()
            try:
                client.request(method, path, body=data, headers=headers)
                response = client.getresponse()
                status, content = response.status, response.read()
            except (OSError, http.client.HTTPException) as exc:  # counted as an error named after it
                client.close()
                status, content = 0, type(exc).__name__.encode()
            local[kind].append((time.perf_counter() - t0) * 1000)
            return status, content

        task = None
        if args.think:
            # Annotators start spread over one think time, as a campaign's people do, not all at once.
            time.sleep(pace.uniform(0, args.think))
        while time.monotonic() < stop_at:
            if task is None:
                status, content = request("next", "GET", f"/api/v1/projects/{config['project']}/next")
                if status == 204:
                    break
                if status != 200:
                    key = f"next {status or content.decode()}"
                    local_errors[key] = local_errors.get(key, 0) + 1
                    continue
                task = json.loads(content)["task"]
            if args.think:
                # Reading the task and answering it: exponential, so arrivals at the server are Poisson.
                pause = pace.expovariate(1 / args.think)
                if time.monotonic() + pause >= stop_at:
                    break
                time.sleep(pause)
            if args.separate:
                status, content = request("submit", "POST", f"/api/v1/tasks/{task}/annotations", payload)
                task = None
            else:
                # The answer and the next task in one request.
                status, content = request(
                    "submit", "POST", f"/api/v1/tasks/{task}/annotations?next=1", payload
                )
                if status == 201:
                    following = json.loads(content)["next"]
                    if following is None:
                        break
                    task = following["task"]
                else:
                    task = None
            if status != 201:
                key = f"submit {status or content.decode()}"
                local_errors[key] = local_errors.get(key, 0) + 1
        client.close()
        with lock:
            for kind in latencies:
                latencies[kind].extend(local[kind])
            for key, n in local_errors.items():
                errors[key] = errors.get(key, 0) + n

    load_before = [round(v, 2) for v in os.getloadavg()]
    busy_before, client_before = machine_busy_seconds(), time.process_time()
    started = time.monotonic()
    threads = [threading.Thread(target=work, args=(t, n)) for n, t in enumerate(tokens)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    busy_after, client_cpu = machine_busy_seconds(), time.process_time() - client_before
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

    def loop() -> tuple[float, float]:
        # With ?next=1 a loop is one request (the submit claims the next task); separately it is two.
        t0 = time.process_time()
        held = task() if args.separate else ""
        t1 = time.process_time()
        code, content = submit(held or task())
        t2 = time.process_time()
        if code != 201:
            raise SystemExit(f"submit answered {code}: {content[:200]!r}")
        return t1 - t0, t2 - t1

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

    def ms(values: list[float]) -> dict[str, float]:
        return {
            "median": round(1000 * statistics.median(values), 2),
            "mean": round(1000 * statistics.fmean(values), 2),
        }

    print(
        json.dumps(
            {
                "loops": args.loops,
                "protocol": "separate" if args.separate else "submit?next=1",
                "next_cpu_ms": ms([t[0] for t in times]),
                "submit_cpu_ms": ms([t[1] for t in times]),
                "loop_cpu_ms": ms([t[0] + t[1] for t in times]),
                "next_queries": n_next,
                "submit_queries": n_submit,
                "loop_queries": n_next + n_submit,
                "load_average_before": load_before,
            }
        )
    )


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
        ] + (["--separate"] if args.separate else [])
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or found is None:
            raise SystemExit(f"callgrind run failed: {done.stderr[-2000:]}")
        counts.append(int(found.group(1)))
    print(
        json.dumps(
            {
                "loops": args.loops,
                "protocol": "separate" if args.separate else "submit?next=1",
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
    p_instructions = sub.add_parser(
        "instructions", help="instructions per loop under callgrind (runs inprocess twice; needs valgrind)"
    )
    p_instructions.add_argument("--config", default="var/bench-annotation.json")
    p_instructions.add_argument("--loops", type=int, default=40)
    p_instructions.add_argument("--warmup", type=int, default=5)
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
