"""Reads of the arena: a voter's own battles (blinded views are built in the views from these), the answers
of a turn for the stream relay, seed prompts, and the voted battles as rows for the leaderboard and the
export (``battle_leaderboard_rows``: the columns of the ``leaderboard`` command's battle CSV)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from annotation.models import Project
from arena.domain.battles import SideAnswer, leaderboard_row
from arena.models import Arena, Battle, BattleAnswer
from datasets_app.models import Prompt


def arena_of(project: Project) -> Arena:
    return Arena.objects.prefetch_related("endpoints").get(project_id=project.pk)


def battle_for_user(*, token: str, user: AbstractBaseUser) -> Battle:
    """The caller's own battle by its token; ``Battle.DoesNotExist`` for anyone else's (a 404)."""
    return Battle.objects.select_related("project", "prompt").get(token=token, user_id=user.pk)


def battle_answers(battle: Battle) -> dict[tuple[int, str], BattleAnswer]:
    return {(a.turn, a.side): a for a in BattleAnswer.objects.filter(battle_id=battle.pk)}


def battle_turn_state(*, battle_id: int, turn: int) -> dict[str, tuple[str, str]]:
    """``{side: (status, text)}`` of one turn's answers, and ``(status, ending)`` of the battle under
    ``"battle"``."""
    rows = BattleAnswer.objects.filter(battle_id=battle_id, turn=turn).values_list("side", "status", "text")
    state: dict[str, tuple[str, str]] = {side: (status, text) for side, status, text in rows}
    battle = Battle.objects.filter(pk=battle_id).values_list("status", "ending").first()
    state["battle"] = battle or ("", "")
    return state


def battles_recent(*, project: Project, user: AbstractBaseUser, limit: int = 10) -> QuerySet[Battle]:
    return Battle.objects.filter(project_id=project.pk, user_id=user.pk).select_related("prompt")[:limit]


def seed_prompts(*, arena: Arena, language: str = "", limit: int = 5) -> list[Prompt]:
    """A few prompts of the arena's seed dataset (of the chosen language when it has some)."""
    if arena.seed_dataset_id is None:
        return []
    prompts = Prompt.objects.filter(dataset_id=arena.seed_dataset_id)
    if language and prompts.filter(language=language).exists():
        prompts = prompts.filter(language=language)
    return list(prompts.order_by("?")[:limit])


def battle_manager_list(*, project: Project, limit: int = 200) -> QuerySet[Battle]:
    return (
        Battle.objects.filter(project_id=project.pk)
        .select_related("endpoint_a", "endpoint_b", "prompt")
        .order_by("-created_at", "-id")[:limit]
    )


def _voted(project_ids: Iterable[int] | None) -> QuerySet[Battle]:
    battles = Battle.objects.filter(status=Battle.Status.VOTED, excluded=False)
    if project_ids is not None:
        battles = battles.filter(project_id__in=list(project_ids))
    return battles.select_related("endpoint_a", "endpoint_b").order_by("created_at", "id")


def _answers_by_battle(battle_ids: Sequence[int]) -> dict[int, dict[str, list[tuple[str, int]]]]:
    found: dict[int, dict[str, list[tuple[str, int]]]] = defaultdict(lambda: {"A": [], "B": []})
    rows = (
        BattleAnswer.objects.filter(battle_id__in=battle_ids, status=BattleAnswer.Status.DONE)
        .order_by("battle_id", "turn")
        .values_list("battle_id", "side", "text", "n_tokens")
    )
    for battle_id, side, text, n_tokens in rows:
        found[battle_id][side].append((text, n_tokens))
    return found


def battle_leaderboard_rows(*, project_ids: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """Every voted battle (of the given arenas, or all) as a row of ``LEADERBOARD_COLUMNS``: ``model_a``,
    ``model_b`` (endpoint slugs), ``winner`` (``model_a``/``model_b``/``tie``/``tie (bothbad)``),
    ``language``, ``register``, ``category``, ``length_a``/``length_b`` in tokens, markdown style counts,
    ``turns``, ``sampler``, ``probability`` and the battle's token. Battles not counted, and battles a
    reviewer took out of the leaderboard, are left out."""
    battles = list(_voted(project_ids))
    answers = _answers_by_battle([b.pk for b in battles])
    rows = []
    for battle in battles:
        sides = answers[battle.pk]
        rows.append(
            leaderboard_row(
                battle=battle.token,
                vote=battle.vote,
                a=SideAnswer(
                    battle.endpoint_a.model_name, [t for t, _ in sides["A"]], [n for _, n in sides["A"]]
                ),
                b=SideAnswer(
                    battle.endpoint_b.model_name, [t for t, _ in sides["B"]], [n for _, n in sides["B"]]
                ),
                language=battle.language,
                register=battle.register,
                category=battle.category,
                sampler=battle.sampler,
                probability=battle.probability,
            )
        )
    return rows


def battle_export_rows(*, project: Project) -> list[dict[str, Any]]:
    """Voted battles of one arena for the dataset export: both conversations as messages, the vote, the
    leaderboard columns, timings, and the voter's user id (the export turns it into a pseudonym)."""
    battles = list(_voted([project.pk]).select_related("prompt"))
    rows_by_token = {row["battle"]: row for row in battle_leaderboard_rows(project_ids=[project.pk])}
    timings: dict[int, dict[str, list[float | None]]] = defaultdict(lambda: {"A": [], "B": []})
    for battle_id, side, ttft in (
        BattleAnswer.objects.filter(battle__in=battles, status=BattleAnswer.Status.DONE)
        .order_by("battle_id", "turn")
        .values_list("battle_id", "side", "ttft_ms")
    ):
        timings[battle_id][side].append(ttft)
    answers = _answers_by_battle([b.pk for b in battles])
    out = []
    for battle in battles:
        user_turns = list(battle.prompt.turns)
        conversations = {}
        for side in ("A", "B"):
            texts = [t for t, _ in answers[battle.pk][side]]
            messages = []
            for n, text in enumerate(user_turns):
                messages.append({"role": "user", "content": text})
                if n < len(texts):
                    messages.append({"role": "assistant", "content": texts[n]})
            conversations[side] = messages
        out.append(
            {
                **rows_by_token[battle.token],
                "vote": battle.vote,
                "reason": battle.reason,
                "conversation_a": conversations["A"],
                "conversation_b": conversations["B"],
                "ttft_ms_a": timings[battle.pk]["A"],
                "ttft_ms_b": timings[battle.pk]["B"],
                "voter_id": battle.user_id,
                "created_at": battle.created_at,
                "voted_at": battle.voted_at,
            }
        )
    return out
