"""The demo's judge run end to end on CPU: requests per second through the real pipeline and model server.

    python bench/demo_judge_run.py --prompts 2 --slots 4
    python bench/demo_judge_run.py --prompts 2 --slots 1 --model-url http://127.0.0.1:8081/v1

What `make demo` does, in a fresh folder (``TIMBANG_VAR_DIR``, SQLite, the filesystem broker): load the demo
with ``--prompts N`` (no simulated answers), start the model worker scripts/serve starts (the demo endpoint's
queue, ``--worker-concurrency`` chunks at once on threads), then queue the pairwise judge run with ``manage.py
demo --judge-only`` and time it from there to the run's end. The model server is llama.cpp's (xllamacpp) over ``--model`` with ``--slots`` slots
(continuous batching), started here, or an already running OpenAI-compatible server at ``--model-url`` (model
id ``demo``). The demo endpoint sends ``--slots`` requests at once. Prints one JSON object with the calls,
the judgments stored and the share of them parsed as a verdict, the wall time, requests per second and the
time 222 calls (the full demo, both orders) would take at that rate. ``--prompts 37`` is the whole demo.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluation.inference.llamacpp_server import LlamaCppServer  # noqa: E402

FULL_DEMO_CALLS = 222
_DROP = ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "CELERY_TASK_ALWAYS_EAGER")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=2, help="sample prompts loaded (3 pairs each)")
    parser.add_argument("--slots", type=int, default=4, help="server slots and endpoint max_concurrency")
    parser.add_argument("--model", default="smollm2-135m-instruct", help="known model name or GGUF path")
    parser.add_argument("--model-url", default="", help="use this running server instead of starting one")
    parser.add_argument(
        "--threads",
        type=int,
        default=max(1, min(8, (os.cpu_count() or 1) - 1)),
        help="model server threads (default as scripts/model-server: cores - 1)",
    )
    parser.add_argument(
        "--worker-concurrency", type=int, default=3, help="chunks the model worker runs at once (threads)"
    )
    parser.add_argument("--judge-orders", choices=("both", "random"), default="both")
    parser.add_argument("--max-tokens", type=int, default=160, help="as scripts/demo passes for SmolLM2")
    parser.add_argument(
        "--explanation-chars", type=int, default=120, help="explanation cap in the schema (0: none)"
    )
    parser.add_argument("--timeout", type=float, default=3600.0)
    return parser.parse_args()


def _run_status(db: Path) -> tuple | None:
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute(
                "SELECT status, n_done, n_total FROM evaluation_judgerun ORDER BY id DESC LIMIT 1"
            ).fetchone()
    except sqlite3.OperationalError:
        return None


def _parse_counts(db: Path) -> dict[str, int]:
    """Judgments by parse status (``ok``/``error``), and their completion tokens where the server said."""
    with sqlite3.connect(db, timeout=5) as conn:
        counts = dict(conn.execute("SELECT parse_status, COUNT(*) FROM evaluation_judgment GROUP BY 1"))
    return {"ok": counts.get("ok", 0), "error": counts.get("error", 0)}


def main() -> int:
    args = parse_args()
    var = Path(tempfile.mkdtemp(prefix="timbang-judge-bench-"))
    env = {k: v for k, v in os.environ.items() if k not in _DROP}
    env["TIMBANG_VAR_DIR"] = str(var)
    python = sys.executable
    server = None
    if args.model_url:
        url = args.model_url
    else:
        server = LlamaCppServer(
            args.model,
            alias="demo",
            n_ctx=2048 * args.slots,
            n_threads=args.threads,
            n_parallel=args.slots,
            log_path=var / "model-server.log",
        ).start()
        url = server.base_url
    judge = ["--model-url", url, "--judge-orders", args.judge_orders, "--max-tokens", str(args.max_tokens)]
    judge += ["--explanation-chars", str(args.explanation_chars)]
    quiet = {"cwd": ROOT, "env": env, "check": True, "stdout": subprocess.DEVNULL}
    worker = None
    try:
        subprocess.run([python, "manage.py", "migrate", "--noinput", "-v", "0"], **quiet)
        subprocess.run(
            [
                python,
                "manage.py",
                "demo",
                "--password",
                "bench",
                "--no-simulated",
                "--prompts",
                str(args.prompts),
            ]
            + ["--no-judge", "--max-concurrency", str(args.slots), *judge],
            **quiet,
        )
        # The model worker of scripts/serve: the demo endpoint's queue, chunks on threads sharing one bound.
        queues = subprocess.run(
            [python, "manage.py", "model_queues"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        worker = subprocess.Popen(
            [str(Path(python).parent / "celery"), "-A", "config", "worker", "-Q", queues, "-l", "WARNING"]
            + [
                "--pool",
                "threads",
                "--concurrency",
                str(args.worker_concurrency),
                "--prefetch-multiplier",
                "1",
            ],
            cwd=ROOT,
            env=env,
            stdout=open(var / "worker.log", "w"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        started = time.perf_counter()
        subprocess.run([python, "manage.py", "demo", "--judge-only", "--wait-model", "60", *judge], **quiet)
        db = var / "timbang.sqlite3"
        deadline = time.monotonic() + args.timeout
        row = None
        while time.monotonic() < deadline:
            row = _run_status(db)
            if row and row[0] in ("succeeded", "failed", "cancelled"):
                break
            time.sleep(0.5)
        wall = time.perf_counter() - started
    finally:
        if worker is not None:
            os.killpg(worker.pid, signal.SIGTERM)
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a request still being retried: the run is over already
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait(timeout=30)
        if server is not None:
            server.stop()
    status, done, total = row or ("timeout", 0, 0)
    parsed = _parse_counts(var / "timbang.sqlite3")
    judged = parsed["ok"] + parsed["error"]
    calls = done * (2 if args.judge_orders == "both" else 1)
    rate = calls / wall if wall > 0 else 0.0
    print(
        json.dumps(
            {
                "status": status,
                "pairs": total,
                "calls": calls,
                "judgments": judged,
                "parsed": parsed["ok"],
                "parsed_share": round(parsed["ok"] / judged, 4) if judged else None,
                "max_tokens": args.max_tokens,
                "explanation_chars": args.explanation_chars,
                "slots": args.slots,
                "server": args.model_url or f"xllamacpp over {args.model}, {args.threads} threads",
                "worker_concurrency": args.worker_concurrency,
                "wall_s": round(wall, 1),
                "requests_per_s": round(rate, 3),
                "projected_222_calls_s": round(FULL_DEMO_CALLS / rate, 0) if rate else None,
                "load_average_1m": round(os.getloadavg()[0], 2),
            }
        )
    )
    return 0 if status == "succeeded" else 1


if __name__ == "__main__":
    raise SystemExit(main())
