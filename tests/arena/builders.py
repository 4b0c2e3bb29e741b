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
