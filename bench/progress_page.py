"""Progress page benchmark: the manager's project page, with the quality signals, on a large project.

    DATABASE_URL=sqlite:////tmp/timbang-progress-bench.sqlite3 python bench/progress_page.py --annotations 100000
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/timbang_bench python bench/progress_page.py

Migrates the database named by ``DATABASE_URL`` (use a throw-away one), builds a likert project
(5 responses x 2 criteria per task, so 10 annotation rows per submitted task) with bulk inserts: tasks
through ``project_create``, then submitted assignments spread over ``--annotators`` members with k = 5 and
their annotation rows. Times ``GET /annotate/manage/<id>/`` through Django's test client (the whole view:
progress report, quality signals, template) after one warm-up request, and counts its queries. Prints one
JSON object: seconds per request (median and max of ``--repeat``), queries, rows built. ``--profile N``
then profiles three more requests in process (cProfile) and prints the N functions with the most own time
to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

N_MODELS = 5
CRITERIA = ("relevance", "fluency")
OVERLAP = 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotations", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", type=int, default=0, help="print the N costliest functions (cProfile)")
    parser.add_argument(
        "--reuse", action="store_true", help="time the newest bench project already in the database"
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    os.environ.setdefault("DATABASE_URL", "sqlite:////tmp/timbang-progress-bench.sqlite3")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command
    from django.utils import timezone

    from annotation import services
    from annotation.models import Annotation, Assignment, Project
    from datasets_app.models import Dataset, Prompt, Response

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    call_command("migrate", verbosity=0)

    existing = Project.objects.filter(name__startswith="progress-bench-").order_by("-id").first()
    if args.reuse and existing is not None:
        _time(
            existing, User=get_user_model(), args=args, built=0.0, n_assignments=existing.assignments.count()
        )
        return
    rng = random.Random(args.seed)
    started = time.perf_counter()
    per_task = N_MODELS * len(CRITERIA)
    n_tasks = max(1, args.annotations // (per_task * OVERLAP))
    name = f"progress-bench-{int(time.time())}"
    dataset = Dataset.objects.create(name=name)
    prompts = Prompt.objects.bulk_create(
        [
            Prompt(
                dataset=dataset, external_id=f"p{i}", category="analysis", language="ind", turns=[f"Soal {i}"]
            )
            for i in range(n_tasks)
        ],
        batch_size=2000,
    )
    Response.objects.bulk_create(
        [
            Response(prompt=p, model_name=f"m{m}", turns=[f"Jawaban {m}"])
            for p in prompts
            for m in range(N_MODELS)
        ],
        batch_size=5000,
    )
    project = services.project_create(
        dataset=dataset, name=name, kind="likert", overlap=OVERLAP, groups=["A"], seed=args.seed
    )
    group = project.groups.get()
    User = get_user_model()
    annotator_role, _ = Group.objects.get_or_create(name="annotator")
    users = []
    for j in range(args.annotators):
        user = User.objects.create(username=f"{name}-a{j}")
        user.groups.add(annotator_role)
        services.project_member_add(project=project, user=user, group=group)
        users.append(user)
    services.project_activate(project=project)
    now = timezone.now()
    tasks = list(project.tasks.order_by("id").values_list("id", "response_ids"))
    assignments = []
    for t, (task_id, _) in enumerate(tasks):
        for o in range(OVERLAP):
            user = users[(t + o) % len(users)]
            permutation = list(range(N_MODELS))
            rng.shuffle(permutation)
            seconds = rng.choice([3.0, 20.0, 45.0, 90.0])
            assignments.append(
                Assignment(
                    project=project,
                    task_id=task_id,
                    group=group,
                    annotator=user,
                    status=Assignment.Status.SUBMITTED,
                    permutation=permutation,
                    started_at=now - timedelta(seconds=seconds),
                    submitted_at=now,
                    seconds_on_task=seconds,
                )
            )
    assignments = Assignment.objects.bulk_create(assignments, batch_size=5000)
    response_ids = dict(tasks)
    rows = [
        Annotation(
            assignment=a,
            round=1,
            response_id=rid,
            criterion=criterion,
            value_int=rng.randint(1, 5),
        )
        for a in assignments
        for rid in response_ids[a.task_id]
        for criterion in CRITERIA
    ]
    Annotation.objects.bulk_create(rows, batch_size=10_000)
    built = time.perf_counter() - started

    _time(project, User=User, args=args, built=built, n_assignments=len(assignments))


def _time(project, *, User, args, built: float, n_assignments: int) -> None:
    from django.contrib.auth.models import Group
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from annotation.models import Annotation

    manager, _ = User.objects.get_or_create(username=f"{project.name}-pm")
    manager.groups.add(Group.objects.get_or_create(name="project_manager")[0])
    client = Client()
    client.force_login(manager)
    url = reverse("annotation:manage_detail", args=[project.pk])
    assert client.get(url).status_code == 200
    times, cpu = [], []
    for _ in range(args.repeat):
        with CaptureQueriesContext(connection) as queries:
            start, start_cpu = time.perf_counter(), time.process_time()
            response = client.get(url)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        assert response.status_code == 200 and b"quality-signals" in response.content
    result = {
        "database": connection.vendor,
        "annotations": Annotation.objects.filter(assignment__project=project).count(),
        "assignments": n_assignments,
        "annotators": project.memberships.count(),
        "seconds_median": round(statistics.median(times), 4),
        "seconds_max": round(max(times), 4),
        # CPU time of this process per request (SQLite runs in it): the figure the host's load does not inflate.
        "cpu_seconds_median": round(statistics.median(cpu), 4),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "queries": len(queries.captured_queries),
        "build_seconds": round(built, 1),
    }
    print(json.dumps(result))
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(3):
            client.get(url)
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
