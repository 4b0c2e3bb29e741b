"""Annotation loop benchmark: N simulated annotators do next task + submit over HTTP.

    # once, against the database the server uses (creates users, tokens and a project):
    DATABASE_URL=postgres://... python bench/annotation_loop.py setup --tasks 10000 --annotators 50 --out var/bench.json
    # start the server, e.g. gunicorn -w 5 -b 127.0.0.1:8011 config.wsgi (same DATABASE_URL), then:
    python bench/annotation_loop.py run --url http://127.0.0.1:8011 --config var/bench.json --annotators 10 --seconds 20

Each simulated annotator is a thread with its own keep-alive connection and API token. It loops
``GET /api/v1/projects/{id}/next`` then ``POST /api/v1/tasks/{token}/annotations`` (a full likert
answer: 5 responses x 2 criteria and a best pick). ``run`` prints one JSON object: requests per second
over both kinds of request, latency percentiles per kind and overall, and error counts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx

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

    def work(token: str) -> None:
        local = {"next": [], "submit": []}
        local_errors: dict[str, int] = {}
        headers = {"Authorization": f"Token {token}"}
        with httpx.Client(base_url=args.url, headers=headers, timeout=30) as client:
            while time.monotonic() < stop_at:
                t0 = time.perf_counter()
                response = client.get(f"/api/v1/projects/{config['project']}/next")
                local["next"].append((time.perf_counter() - t0) * 1000)
                if response.status_code == 204:
                    break
                if response.status_code != 200:
                    local_errors[f"next {response.status_code}"] = (
                        local_errors.get(f"next {response.status_code}", 0) + 1
                    )
                    continue
                task = response.json()["task"]
                t0 = time.perf_counter()
                response = client.post(f"/api/v1/tasks/{task}/annotations", json=body)
                local["submit"].append((time.perf_counter() - t0) * 1000)
                if response.status_code != 201:
                    key = f"submit {response.status_code}"
                    local_errors[key] = local_errors.get(key, 0) + 1
        with lock:
            for kind in latencies:
                latencies[kind].extend(local[kind])
            for key, n in local_errors.items():
                errors[key] = errors.get(key, 0) + n

    started = time.monotonic()
    threads = [threading.Thread(target=work, args=(t,)) for t in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    every = latencies["next"] + latencies["submit"]
    print(
        json.dumps(
            {
                "annotators": len(tokens),
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
    args = parser.parse_args()
    setup(args) if args.command == "setup" else run(args)


if __name__ == "__main__":
    main()
