"""Arena test builders: endpoints (over a streaming stub server or a real llama.cpp server), an active
arena with its members, and a way to run the answers of a battle the way the model worker would."""

from __future__ import annotations

import itertools

from annotation import services as annotation_services
from arena import services
from arena.models import BattleAnswer
from evaluation.models import ModelEndpoint

# Names that must never reach a voter before the vote: the blinding scans look for each of them.
SECRET_SLUGS = ("zeta-hidden-model", "omega-veiled-model")
_names = itertools.count(1)


def make_endpoints(base_url: str, model_id: str = "stub", slugs=SECRET_SLUGS) -> list[ModelEndpoint]:
    return [
        ModelEndpoint.objects.create(
            slug=slug,
            base_url=base_url,
            model_id=model_id,
            backend_options={"timeout_s": 5, "max_attempts": 1},
            sampling_defaults={"temperature": 0.0, "seed": 7},
        )
        for slug in slugs
    ]


def make_arena(*, endpoints, members=(), **options):
    project = services.arena_create(
        name=options.pop("name", f"Arena {next(_names)}"), endpoints=endpoints, **options
    )
    group = project.groups.first()
    for user in members:
        annotation_services.project_member_add(project=project, user=user, group=group)
    annotation_services.project_activate(project=project)
    project.refresh_from_db()
    return project


def run_answers(battle, **kwargs) -> list[str]:
    """Stream both answers of the battle's current turn in this process, as the model worker would."""
    turn = battle.n_turns - 1 if battle.n_turns else 0
    ids = BattleAnswer.objects.filter(battle=battle, turn=turn).order_by("side").values_list("pk", flat=True)
    return [services.battle_answer_stream(answer_id=answer_id, **kwargs) for answer_id in ids]


def add_battles(project, user, endpoint_a, endpoint_b, votes: dict[str, int], **fields) -> list:
    """Battles of endpoint_a (side A) against endpoint_b with the given numbers of each vote, written in bulk
    as a history (voted by default; ``fields`` such as ``status`` or ``excluded`` set on every one)."""
    from django.utils import timezone

    from arena.models import Battle
    from datasets_app.models import Prompt, Response

    rows = [vote for vote, n in votes.items() for _ in range(n)]
    start = next(_names) * 100_000
    prompts = Prompt.objects.bulk_create(
        Prompt(
            dataset_id=project.dataset_id, external_id=f"history-{start + n}", language="ind", turns=["Halo"]
        )
        for n in range(len(rows))
    )
    responses = Response.objects.bulk_create(
        Response(prompt=prompt, model_name=endpoint.model_name, turns=["Halo juga"], origin="generated")
        for prompt in prompts
        for endpoint in (endpoint_a, endpoint_b)
    )
    now = timezone.now()
    fields = {"status": Battle.Status.VOTED, **fields}
    return Battle.objects.bulk_create(
        Battle(
            project=project,
            user=user,
            prompt=prompt,
            endpoint_a=endpoint_a,
            endpoint_b=endpoint_b,
            response_a=responses[2 * n],
            response_b=responses[2 * n + 1],
            sampler="uniform",
            probability=1.0,
            language="ind",
            turn_deadline=now,
            vote=vote if fields["status"] == Battle.Status.VOTED else "",
            **fields,
        )
        for n, (prompt, vote) in enumerate(zip(prompts, rows, strict=True))
    )
