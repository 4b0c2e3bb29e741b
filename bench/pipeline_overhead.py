"""Pipeline overhead: the same N chat requests sent directly and through a Celery generation run.

    python bench/pipeline_overhead.py --requests 512 --delay 0.5 --concurrency 16

Both sides talk to the same local OpenAI-compatible stub server, which answers every request after a fixed
delay (standing in for model latency), so the only difference is our pipeline: (a) one
``OpenAIBackend.generate`` call with ``max_concurrency`` requests in flight; (b) a ``GenerationRun`` over N
single-turn prompts on an endpoint with the same ``max_concurrency``, chunked into ``--chunk-size`` items per
Celery task, results written as ``Response`` rows, timed from ``generation_run_start`` to the run's
``succeeded``. With ``REDIS_URL`` set, (b) goes through Redis to a real worker process (``--worker-concurrency``
processes, default 2, each taking chunks of ``concurrency / worker-concurrency`` items, so at most
``--concurrency`` requests are in flight on either side) on a fresh SQLite database (or ``--database-url``); otherwise it runs in eager mode in
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
    parser.add_argument("--worker-concurrency", type=int, default=2)
    parser.add_argument(
        "--chunk-size",
        type=int,
        default=0,
        help="default: concurrency / worker-concurrency, so both sides keep "
        "at most --concurrency requests in flight",
    )
    parser.add_argument("--database-url", default="", help="default: a fresh SQLite file in a temp folder")
    args = parser.parse_args()
    if not args.chunk_size:
        args.chunk_size = max(1, args.concurrency // args.worker_concurrency)
    return args


def main() -> None:
    args = parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="timbang-bench-"))
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
    os.environ["DATABASE_URL"] = args.database_url or f"sqlite:///{tmp / 'bench.sqlite3'}"
    os.environ["TIMBANG_VAR_DIR"] = str(tmp)
    os.environ["LOG_LEVEL"] = "WARNING"
    use_worker = bool(os.environ.get("REDIS_URL"))
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "false" if use_worker else "true"

    from tests.evaluation.inference.openai_stub_server import StubOpenAIServer

    server = StubOpenAIServer()
    # http.server listens with a backlog of 5: a burst of new connections would wait for SYN retransmits
    # (1 s), which measures the stub, not the pipeline. A real model server listens with a deep backlog.
    server._server.socket.listen(1024)
    server.start()
    server.delay_s = args.delay

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
        started = time.perf_counter()
        results = backend.generate(requests)
        direct_s = time.perf_counter() - started
    assert all(r.ok for r in results)
    server.max_in_flight = 0

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

    worker = None
    log = open(tmp / "worker.log", "w+")  # noqa: SIM115 - closed below
    if use_worker:
        from config.celery import app

        with app.connection_for_write() as connection:
            connection.default_channel.queue_purge("gpu.bench")
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-Q",
                "gpu.bench",
                "--concurrency",
                str(args.worker_concurrency),
                "--pool",
                "prefork",
                "-l",
                "INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env={**os.environ, "LOG_LEVEL": "INFO"},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while "ready." not in (tmp / "worker.log").read_text():
            if time.monotonic() > deadline or worker.poll() is not None:
                raise SystemExit("worker did not start:\n" + (tmp / "worker.log").read_text()[-2000:])
            time.sleep(0.1)

    try:
        started = time.perf_counter()
        run = generation_run_start(
            dataset=dataset, endpoints=[endpoint], options={"chunk_size": args.chunk_size}
        )
        while True:
            run.refresh_from_db()
            if run.status not in ("queued", "running"):
                break
            time.sleep(0.02)
        pipeline_s = time.perf_counter() - started
    finally:
        if worker is not None:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=30)
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
                "worker_concurrency": args.worker_concurrency if use_worker else None,
                "database": "sqlite" if not args.database_url else "given",
                "direct_seconds": round(direct_s, 3),
                "pipeline_seconds": round(pipeline_s, 3),
                "direct_requests_per_s": round(direct_rps, 2),
                "pipeline_requests_per_s": round(pipeline_rps, 2),
                "ratio": round(pipeline_rps / direct_rps, 4),
                "pipeline_max_in_flight": server.max_in_flight,
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
