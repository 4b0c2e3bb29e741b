"""Pipeline overhead: the same N chat requests sent directly and through a Celery generation run.

    python bench/pipeline_overhead.py --requests 512 --delay 0.5 --concurrency 16

Both sides talk to the same local OpenAI-compatible stub server, which answers every request after a fixed
delay (standing in for model latency), so the only difference is our pipeline: (a) one
``OpenAIBackend.generate`` call with ``max_concurrency`` requests in flight; (b) a ``GenerationRun`` over N
single-turn prompts on an endpoint with the same ``max_concurrency``, chunked into ``--chunk-size`` items per
Celery task, results written as ``Response`` rows, timed from ``generation_run_start`` to the run's
``succeeded``. With ``REDIS_URL`` set, (b) goes through Redis to a real worker process on a fresh SQLite
database (or ``--database-url``). By default that worker uses the threads pool, as model queues should
(evaluation/README.md, "Keeping a model server busy"): one process runs ``--worker-concurrency`` chunks
(default 3) of ``concurrency`` items at once, and the endpoint's one backend in that process keeps at most
``--concurrency`` requests in flight across them. ``--worker-pool prefork`` gives the older layout:
``--worker-concurrency`` processes (default 2), one chunk of ``concurrency / worker-concurrency`` items each.
``--worker-processes N`` starts N threads workers as ``MODEL_WORKER_PROCESSES=N`` makes scripts/serve do,
each keeping ``concurrency / N`` requests in flight. Either way at most ``--concurrency`` requests are in
flight on both sides. The stub server runs in a process of its own (``--stub-in-process`` puts it in the
bench's process, as the script did before), so that neither side shares an interpreter lock with it:
otherwise, on a fast server, the direct client competes with the stub for one process while the pipeline's
worker has a process to itself, and the ratio measures that. Without ``REDIS_URL`` (b) runs in eager mode in
this process, which leaves out the broker (said in the output). Prints one JSON object; the goal
(DESIGN.md §9) is a ratio of at least 0.9.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=512)
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the stub server takes per request")
    parser.add_argument("--concurrency", type=int, default=16, help="endpoint max_concurrency, both sides")
    parser.add_argument(
        "--worker-pool",
        choices=("threads", "prefork"),
        default="threads",
        help="threads: one worker process runs --worker-concurrency chunks at once, sharing one backend and "
        "so one bound of --concurrency requests in flight; prefork: --worker-concurrency processes, one "
        "chunk each",
    )
    parser.add_argument("--worker-concurrency", type=int, default=0, help="default: 3 threads, 2 processes")
    parser.add_argument(
        "--worker-processes",
        type=int,
        default=1,
        help="worker processes (MODEL_WORKER_PROCESSES): each keeps concurrency / N requests in flight",
    )
    parser.add_argument(
        "--chunk-size",
        type=int,
        default=0,
        help="default: concurrency on threads (one chunk fills the window, the others stand ready); "
        "concurrency / worker-concurrency on prefork, so both sides keep at most --concurrency requests "
        "in flight",
    )
    parser.add_argument("--database-url", default="", help="default: a fresh SQLite file in a temp folder")
    parser.add_argument(
        "--stub-in-process",
        action="store_true",
        help="run the stub server on threads of this process (the direct client then shares its interpreter)",
    )
    args = parser.parse_args()
    if not args.worker_concurrency:
        args.worker_concurrency = 3 if args.worker_pool == "threads" else 2
    if not args.chunk_size:
        share = 1 if args.worker_pool == "threads" else args.worker_concurrency
        args.chunk_size = max(1, args.concurrency // share)
    return args


def process_cpu_s(group: int) -> float:
    """User + system CPU seconds so far of the live processes of process group ``group`` (the worker and,
    on prefork, its pool children), threads included (Linux)."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # a process that ended meanwhile
        if int(fields[2]) == group:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _serve_stub(delay: float, pipe) -> None:
    """The stub server in a child process; answers the parent's ``reset`` and ``stats`` over ``pipe``."""
    from tests.evaluation.inference.openai_stub_server import StubOpenAIServer

    server = StubOpenAIServer()
    server._server.socket.listen(1024)
    server.start()
    server.delay_s = delay
    pipe.send(server.base_url)
    while True:
        command = pipe.recv()
        if command == "reset":
            server.reset_counts()
            server.requests.clear()
            pipe.send(None)
        elif command == "stats":
            with server._lock:
                server._count(0)  # brings the integral up to now
                pipe.send(
                    (
                        server.in_flight_seconds,
                        server.max_in_flight,
                        server.first_arrival,
                        server.last_departure,
                    )
                )
        else:
            server.stop()
            pipe.send(None)
            return


class StubProcess:
    """The stub server's counters, read from its own process."""

    def __init__(self, delay: float) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=_serve_stub, args=(delay, child), daemon=True)
        self._process.start()
        self.base_url = self._pipe.recv()

    def reset_counts(self) -> None:
        self._pipe.send("reset")
        self._pipe.recv()

    def _stats(self) -> tuple[float, int, float | None, float | None]:
        self._pipe.send("stats")
        return self._pipe.recv()

    @property
    def in_flight_seconds(self) -> float:
        return self._stats()[0]

    @property
    def max_in_flight(self) -> int:
        return self._stats()[1]

    @property
    def first_arrival(self) -> float | None:
        return self._stats()[2]

    @property
    def last_departure(self) -> float | None:
        return self._stats()[3]

    def cpu_s(self) -> float:
        """User + system CPU seconds of the stub's process so far, its threads included (Linux)."""
        fields = Path(f"/proc/{self._process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self._pipe.send("stop")
        self._pipe.recv()
        self._process.join(timeout=10)


def main() -> None:
    args = parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="timbang-bench-"))
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
    os.environ["DATABASE_URL"] = args.database_url or f"sqlite:///{tmp / 'bench.sqlite3'}"
    os.environ["TIMBANG_VAR_DIR"] = str(tmp)
    os.environ["LOG_LEVEL"] = "WARNING"
    use_worker = bool(os.environ.get("REDIS_URL"))
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "false" if use_worker else "true"

    if args.stub_in_process:
        from tests.evaluation.inference.openai_stub_server import StubOpenAIServer

        server = StubOpenAIServer()
        # http.server listens with a backlog of 5: a burst of new connections would wait for SYN retransmits
        # (1 s), which measures the stub, not the pipeline. A real model server listens with a deep backlog.
        server._server.socket.listen(1024)
        server.start()
        server.delay_s = args.delay
    else:
        server = StubProcess(args.delay)  # started before Django is set up: the child inherits no connection

    # (a) direct
    from evaluation.domain.sampling import SamplingParams
    from evaluation.inference.base import ChatRequest
    from evaluation.inference.openai_backend import OpenAIBackend

    requests = [
        ChatRequest(
            messages=[{"role": "user", "content": f"Pertanyaan {i}"}],
            sampling=SamplingParams(),
            request_id=str(i),
        )
        for i in range(args.requests)
    ]
    with OpenAIBackend(base_url=server.base_url, model="stub", max_concurrency=args.concurrency) as backend:
        server.reset_counts()
        cpu_started = time.process_time()
        stub_cpu_started = server.cpu_s() if isinstance(server, StubProcess) else 0.0
        started = time.perf_counter()
        results = backend.generate(requests)
        direct_s = time.perf_counter() - started
        direct_cpu_s = time.process_time() - cpu_started
        direct_stub_cpu_s = (server.cpu_s() if isinstance(server, StubProcess) else 0.0) - stub_cpu_started
    assert all(r.ok for r in results)
    direct_mean_in_flight = server.in_flight_seconds / direct_s

    # (b) through a run
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from datasets_app.models import Dataset, Prompt, Response
    from evaluation.models import GenerationRun, ModelEndpoint
    from evaluation.services import generation_run_start

    dataset = Dataset.objects.create(name="bench")
    Prompt.objects.bulk_create(
        Prompt(dataset=dataset, external_id=f"p{i}", language="ind", turns=[f"Pertanyaan {i}"])
        for i in range(args.requests)
    )
    endpoint = ModelEndpoint.objects.create(
        slug="bench",
        base_url=server.base_url,
        model_id="stub",
        max_concurrency=args.concurrency,
        queue="gpu.bench",
    )

    workers: list[subprocess.Popen] = []
    logs: list = []
    if use_worker:
        from config.celery import app

        with app.connection_for_write() as connection:
            connection.default_channel.queue_purge("gpu.bench")
        for n in range(args.worker_processes):
            log_path = tmp / f"worker-{n}.log"
            logs.append(open(log_path, "w+"))  # noqa: SIM115 - closed below
            workers.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "config",
                        "worker",
                        "-n",
                        f"bench{n}@%h",
                        "-Q",
                        "gpu.bench",
                        "--concurrency",
                        str(args.worker_concurrency),
                        "--pool",
                        args.worker_pool,
                        "-l",
                        "INFO",
                        "--without-gossip",
                        "--without-mingle",
                        "--without-heartbeat",
                    ],
                    cwd=ROOT,
                    # Each process keeps its share of the endpoint's bound in flight (scripts/serve).
                    env={
                        **os.environ,
                        "LOG_LEVEL": "INFO",
                        "MODEL_WORKER_PROCESSES": str(args.worker_processes),
                    },
                    stdout=logs[-1],
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        deadline = time.monotonic() + 60
        for n, worker in enumerate(workers):
            while "ready." not in (tmp / f"worker-{n}.log").read_text():
                if time.monotonic() > deadline or worker.poll() is not None:
                    raise SystemExit(
                        "worker did not start:\n" + (tmp / f"worker-{n}.log").read_text()[-2000:]
                    )
                time.sleep(0.1)

    try:
        server.reset_counts()
        bench_cpu_started = time.process_time()
        stub_cpu_started = server.cpu_s() if isinstance(server, StubProcess) else 0.0
        worker_cpu_started = sum(process_cpu_s(worker.pid) for worker in workers)
        started = time.perf_counter()
        started_wall = time.time()
        run = generation_run_start(
            dataset=dataset, endpoints=[endpoint], options={"chunk_size": args.chunk_size}
        )
        while True:
            run.refresh_from_db()
            if run.status not in ("queued", "running"):
                break
            time.sleep(0.02)
        pipeline_s = time.perf_counter() - started
        done_wall = time.time()
        first_arrival, last_departure = server.first_arrival, server.last_departure
        pipeline_mean_in_flight = server.in_flight_seconds / pipeline_s
        pipeline_max_in_flight = server.max_in_flight
        bench_cpu_s = time.process_time() - bench_cpu_started
        pipeline_stub_cpu_s = (server.cpu_s() if isinstance(server, StubProcess) else 0.0) - stub_cpu_started
        worker_cpu_s = sum(process_cpu_s(worker.pid) for worker in workers) - worker_cpu_started
    finally:
        for worker in workers:
            os.killpg(worker.pid, signal.SIGTERM)
        for worker in workers:
            worker.wait(timeout=30)
        for log in logs:
            log.close()
        server.stop()

    n_rows = Response.objects.filter(generation_run=run).count()
    direct_rps = args.requests / direct_s
    pipeline_rps = n_rows / pipeline_s
    print(
        json.dumps(
            {
                "requests": args.requests,
                "server_delay_s": args.delay,
                "max_concurrency": args.concurrency,
                "chunk_size": args.chunk_size,
                "mode": "redis + worker process"
                if use_worker
                else "eager (no broker; set REDIS_URL for a real worker)",
                "worker_pool": args.worker_pool if use_worker else None,
                "worker_concurrency": args.worker_concurrency if use_worker else None,
                "worker_processes": args.worker_processes if use_worker else None,
                "database": "sqlite" if not args.database_url else "given",
                "direct_seconds": round(direct_s, 3),
                "pipeline_seconds": round(pipeline_s, 3),
                "direct_requests_per_s": round(direct_rps, 2),
                "pipeline_requests_per_s": round(pipeline_rps, 2),
                "ratio": round(pipeline_rps / direct_rps, 4),
                "pipeline_max_in_flight": pipeline_max_in_flight,
                # Where the pipeline's time outside the model goes: from the run's start to the first request
                # the server sees, and from the last reply it sends to the run read as finished.
                "pipeline_start_to_first_request_s": round(first_arrival - started_wall, 3)
                if first_arrival
                else None,
                "pipeline_last_reply_to_finished_s": round(done_wall - last_departure, 3)
                if last_departure
                else None,
                # Time-weighted means, as the server saw them: the share of its capacity each side used.
                "direct_mean_in_flight": round(direct_mean_in_flight, 2),
                "pipeline_mean_in_flight": round(pipeline_mean_in_flight, 2),
                # CPU milliseconds per request. Direct: this process, the client (and the stub server with
                # --stub-in-process). Pipeline: the worker process (client, Celery, ORM) plus this process
                # (the polling loop, the stub server with --stub-in-process and, in eager mode, everything).
                "direct_cpu_ms_per_request": round(1000 * direct_cpu_s / args.requests, 3),
                "pipeline_worker_cpu_ms_per_request": round(1000 * worker_cpu_s / args.requests, 3),
                "pipeline_bench_cpu_ms_per_request": round(1000 * bench_cpu_s / args.requests, 3),
                # The stub server's own process (0 with --stub-in-process: it is then in the figures above).
                "stub_process": not args.stub_in_process,
                "direct_stub_cpu_ms_per_request": round(1000 * direct_stub_cpu_s / args.requests, 3),
                "pipeline_stub_cpu_ms_per_request": round(1000 * pipeline_stub_cpu_s / args.requests, 3),
                "load_average_1m": round(os.getloadavg()[0], 2),
                "run_status": run.status,
                "responses_written": n_rows,
                "ideal_seconds": round(args.requests / args.concurrency * args.delay, 3),
                "run_model": GenerationRun.__name__,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
