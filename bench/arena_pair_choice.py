"""Arena pair choice benchmark: what the active sampler costs a battle start at a given history.

    DATABASE_URL=postgres://... python bench/arena_pair_choice.py [--models 10] [--battles 10000]
                                                               [--repeats 200] [--seed 0]

Builds, inside one transaction that is rolled back at the end (nothing stays in the database), an active
arena with ``--models`` endpoints and ``--battles`` voted battles between them (uniform pairs, outcomes
from Bradley-Terry with known strengths, 10 % ties, 5 % both-bad, 2 % taken out by a reviewer), then
times ``arena.services.pair_choose`` ``--repeats`` times: the aggregate query of the arena's counted
battles, the live Bradley-Terry ratings (``arena.domain.sampling.live_ratings``) and the active pair
choice. It also times the two parts alone: the query, and the domain work on its rows.

Prints one JSON object (milliseconds per pair choice: median, p90, max; queries per choice).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class _Rollback(Exception):
    pass


def _summary(seconds: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000.0 for s in seconds)
    return {
        "median_ms": round(statistics.median(ms), 3),
        "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 3),
        "max_ms": round(ms[-1], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--battles", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.db.models import Count
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from arena import services
    from arena.domain.sampling import live_ratings, sample_pair, vote_matrix
    from arena.models import Arena, Battle
    from datasets_app.models import Prompt, Response
    from evaluation.models import ModelEndpoint

    rng = np.random.default_rng(args.seed)
    out: dict = {"models": args.models, "battles": args.battles, "repeats": args.repeats}
    try:
        with transaction.atomic():
            tag = f"bench-pairs-{int(time.time())}"
            endpoints = [
                ModelEndpoint.objects.create(
                    slug=f"{tag}-m{i}", base_url="http://127.0.0.1:9/v1", model_id="x"
                )
                for i in range(args.models)
            ]
            project = services.arena_create(name=tag, endpoints=endpoints, sampler="active")
            arena = Arena.objects.get(project=project)
            user = get_user_model().objects.create(username=tag)
            started = time.perf_counter()
            strengths = rng.normal(0.0, 0.6, args.models)
            a = rng.integers(0, args.models, args.battles)
            b = (a + rng.integers(1, args.models, args.battles)) % args.models
            p_a = 1.0 / (1.0 + np.exp(-(strengths[a] - strengths[b])))
            u = rng.random(args.battles)
            votes = np.where(
                u < 0.10,
                "tie",
                np.where(u < 0.15, "both_bad", np.where(rng.random(args.battles) < p_a, "A", "B")),
            )
            excluded = rng.random(args.battles) < 0.02
            prompts = Prompt.objects.bulk_create(
                (
                    Prompt(dataset_id=project.dataset_id, external_id=f"h{n}", language="ind", turns=["Halo"])
                    for n in range(args.battles)
                ),
                batch_size=2000,
            )
            responses = Response.objects.bulk_create(
                (
                    Response(
                        prompt=prompt, model_name=endpoints[m].model_name, turns=["x"], origin="generated"
                    )
                    for n, prompt in enumerate(prompts)
                    for m in (a[n], b[n])
                ),
                batch_size=4000,
            )
            now = timezone.now()
            Battle.objects.bulk_create(
                (
                    Battle(
                        project=project,
                        user=user,
                        prompt=prompts[n],
                        endpoint_a=endpoints[a[n]],
                        endpoint_b=endpoints[b[n]],
                        response_a=responses[2 * n],
                        response_b=responses[2 * n + 1],
                        sampler="uniform",
                        probability=1.0,
                        language="ind",
                        turn_deadline=now,
                        status=Battle.Status.VOTED,
                        vote=str(votes[n]),
                        excluded=bool(excluded[n]),
                    )
                    for n in range(args.battles)
                ),
                batch_size=2000,
            )
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE arena_battle")
            out["setup_seconds"] = round(time.perf_counter() - started, 2)
            active = list(arena.endpoints.filter(is_active=True).order_by("pk"))

            choose = []
            with CaptureQueriesContext(connection) as captured:
                for _ in range(args.repeats):
                    t0 = time.perf_counter()
                    services.pair_choose(arena=arena, endpoints=active, rng=rng)
                    choose.append(time.perf_counter() - t0)
            out["pair_choose"] = {**_summary(choose), "queries_per_choice": len(captured) / args.repeats}

            query, domain = [], []
            rows = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                rows = list(
                    Battle.objects.filter(project_id=project.pk, status=Battle.Status.VOTED, excluded=False)
                    .values_list("endpoint_a_id", "endpoint_b_id", "vote")
                    .annotate(n=Count("id"))
                    .order_by()
                )
                query.append(time.perf_counter() - t0)
            index = {endpoint.pk: n for n, endpoint in enumerate(active)}
            outcomes = [(index[x], index[y], vote, n) for x, y, vote, n in rows]
            names = [endpoint.model_name for endpoint in active]
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                sample_pair(
                    names,
                    rng,
                    sampler="active",
                    votes=vote_matrix(len(active), outcomes),
                    ratings=live_ratings(len(active), outcomes),
                )
                domain.append(time.perf_counter() - t0)
            out["query_alone"] = {**_summary(query), "rows": len(rows)}
            out["ratings_and_choice_alone"] = _summary(domain)
            out["database"] = connection.vendor
            raise _Rollback
    except _Rollback:
        pass
    print(json.dumps(out))


if __name__ == "__main__":
    main()
