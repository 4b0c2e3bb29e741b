"""Writes of the arena (``<entity>_<verb>``, keyword-only, atomic): set an arena up, start a battle, stream
one side's answer (run by the model worker), continue the conversation, vote, and end a battle whose model
failed or took too long as "not counted".

A vote is stored as a pairwise annotation (``annotation.Task`` + ``Assignment`` + ``Annotation`` with
criterion ``vote``), so agreement, raw and preference-pair exports read arena votes like pairwise ones.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

import numpy as np
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import DatabaseError, transaction
from django.db.models import Count
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.refusals import Refused
from annotation.models import Annotation, Assignment, Membership, Project, Task
from annotation.services import annotator_group_create
from arena import streams
from arena.domain.battles import (
    BLOCKED,
    CATEGORIES,
    EMPTY,
    SIDES,
    TOO_LONG,
    UNKNOWN_LANGUAGE,
    VOTES,
    PromptProblem,
    conversation,
    delta_event,
    done_event,
    failed_event,
    prompt_problems,
)
from arena.domain.sampling import PairChoice, live_ratings, sample_pair, vote_matrix
from arena.models import Arena, Battle, BattleAnswer, new_battle_token
from datasets_app.jobs import task_named
from datasets_app.models import Dataset, Prompt, Response
from evaluation.inference.base import BackendError, ChatRequest, StreamError
from evaluation.models import ModelEndpoint
from evaluation.services.endpoints import endpoint_backend, endpoint_sampling

logger = logging.getLogger(__name__)

STREAM_TASK = "arena.battle_answer_stream"


class ArenaError(Refused):
    """A request the arena refuses; the message is safe to show (``accounts.refusals.shown``)."""


class ArenaInvalid(ArenaError):
    """Settings of a new arena that cannot be used, keyed by field."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


class BattleConflict(ArenaError):
    """The battle is not in a state that allows this (a vote before both answers are complete)."""


class PromptRefused(ArenaError):
    pass


PROBLEM_TEXT = {
    EMPTY: gettext_noop("Write a prompt first."),
    TOO_LONG: gettext_noop("The prompt is longer than this arena allows (%(limit)s characters)."),
    BLOCKED: gettext_noop("The prompt contains a term this arena does not accept: %(term)s."),
    UNKNOWN_LANGUAGE: gettext_noop("Choose the language of your prompt."),
    "unknown_register": gettext_noop("This register does not belong to the chosen language."),
}


def _refusal(problem: PromptProblem) -> PromptRefused:
    params = {"limit": problem.limit} if problem.code == TOO_LONG else {}
    if problem.code == BLOCKED:
        params = {"term": problem.term}
    return PromptRefused(PROBLEM_TEXT[problem.code], **params)


# --- setting an arena up --------------------------------------------------------------------------------


@transaction.atomic
def arena_create(
    *,
    name: str,
    endpoints: Sequence[ModelEndpoint],
    reveal: str = Arena.Reveal.AFTER_VOTE,
    sampler: str = Arena.Sampler.UNIFORM,
    rules_en: str = "",
    rules_id: str = "",
    consent_en: str = "",
    consent_id: str = "",
    seed_dataset: Dataset | None = None,
    max_prompt_chars: int = 2000,
    battles_per_hour: int = 30,
    blocked_terms: Sequence[str] = (),
    max_turns: int = 3,
    max_tokens: int = 512,
    timeout_s: int = 120,
    description: str = "",
    groups: Sequence[str] = ("A",),
    created_by: AbstractBaseUser | None = None,
) -> Project:
    """A draft project of kind ``arena`` with its own prompt dataset (the battles' prompts go there), its
    groups and its arena settings. Members are added and the project activated as for any project."""
    errors: dict[str, str] = {}
    name = (name or "").strip()
    chosen = list(dict.fromkeys(endpoints))
    if not name:
        errors["name"] = gettext_noop("Give the arena a name.")
    elif Dataset.objects.filter(name=_dataset_name(name)).exists():
        errors["name"] = gettext_noop("An arena or dataset with this name exists already.")
    if len(chosen) < 2:
        errors["endpoints"] = gettext_noop("Choose at least two model endpoints.")
    if reveal not in Arena.Reveal.values:
        errors["reveal"] = gettext_noop("Choose when model names are shown.")
    if sampler not in Arena.Sampler.values:
        errors["sampler"] = gettext_noop("Choose how pairs are sampled.")
    for field, value, low, high in (
        ("max_prompt_chars", max_prompt_chars, 1, 100_000),
        ("battles_per_hour", battles_per_hour, 1, 10_000),
        ("max_turns", max_turns, 1, 20),
        ("max_tokens", max_tokens, 1, 32_768),
        ("timeout_s", timeout_s, 5, 3600),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            errors[field] = f"expected a whole number from {low} to {high}"
    if not groups:
        errors["groups"] = gettext_noop("A project needs at least one annotator group.")
    if errors:
        raise ArenaInvalid(errors)
    dataset = Dataset.objects.create(
        name=_dataset_name(name),
        kind=Dataset.Kind.PROMPTS,
        description="Prompts typed by people in the arena, with both models' answers.",
        source="arena",
        created_by=created_by,
    )
    project = Project.objects.create(
        name=name,
        description=description,
        kind=Project.Kind.ARENA,
        dataset=dataset,
        overlap=1,
        seed=secrets.randbelow(2**31),
        allow_edits=False,
        created_by=created_by,
    )
    for group in dict.fromkeys(groups):
        annotator_group_create(project=project, name=group)
    arena = Arena.objects.create(
        project=project,
        reveal=reveal,
        sampler=sampler,
        rules_en=rules_en,
        rules_id=rules_id,
        consent_en=consent_en,
        consent_id=consent_id,
        seed_dataset=seed_dataset,
        max_prompt_chars=max_prompt_chars,
        battles_per_hour=battles_per_hour,
        blocked_terms=[str(t).strip() for t in blocked_terms if str(t).strip()],
        max_turns=max_turns,
        max_tokens=max_tokens,
        timeout_s=timeout_s,
    )
    arena.endpoints.set(chosen)
    return project


def _dataset_name(name: str) -> str:
    return f"{name} (arena prompts)"


# --- battles --------------------------------------------------------------------------------------------


def pair_choose(*, arena: Arena, endpoints: Sequence[ModelEndpoint], rng: np.random.Generator) -> PairChoice:
    """The two endpoints of a new battle by the arena's sampler (``arena.domain.sampling``): uniform over
    pairs, or active, which favours the pair whose next vote narrows the rating intervals most, from the
    votes each pair has had and the current Bradley-Terry ratings of the arena's counted battles (voted,
    not taken out; every endpoint that ever battled takes part in the fit); every pair keeps a floor. The
    choice carries its probability."""
    names = [endpoint.model_name for endpoint in endpoints]
    if arena.sampler != Arena.Sampler.ACTIVE:
        return sample_pair(names, rng, sampler=arena.sampler)
    counted = list(
        Battle.objects.filter(project_id=arena.project_id, status=Battle.Status.VOTED, excluded=False)
        .values_list("endpoint_a_id", "endpoint_b_id", "vote")
        .annotate(n=Count("id"))
        .order_by()
    )
    ids = [endpoint.pk for endpoint in endpoints]
    ids += sorted({pk for a, b, _, _ in counted for pk in (a, b)} - set(ids))
    index = {pk: n for n, pk in enumerate(ids)}
    outcomes = [(index[a], index[b], vote, n) for a, b, vote, n in counted]
    active = np.arange(len(endpoints))
    votes = vote_matrix(len(ids), outcomes)[np.ix_(active, active)]
    ratings = live_ratings(len(ids), outcomes)[active]
    return sample_pair(names, rng, sampler=arena.sampler, votes=votes, ratings=ratings)


def _membership(project: Project, user: AbstractBaseUser) -> Membership:
    membership = Membership.objects.select_for_update().filter(project_id=project.pk, user_id=user.pk).first()
    if membership is None:
        raise ArenaError(gettext_noop("You are not a member of this arena."))
    return membership


def _check_prompt(arena: Arena, text: str, language: str, register: str) -> str:
    problems = prompt_problems(
        text,
        max_chars=arena.max_prompt_chars,
        blocked_terms=arena.blocked_terms or [],
        language=language,
        register=register,
    )
    if problems:
        raise _refusal(problems[0])
    return text.strip()


@transaction.atomic
def battle_start(
    *,
    project: Project,
    user: AbstractBaseUser,
    text: str,
    language: str,
    register: str = "",
    category: str = "",
    rng: np.random.Generator | None = None,
    now: datetime | None = None,
) -> Battle:
    """A new battle on the caller's prompt: two endpoints by the sampler, both answers queued on their
    endpoints' model queues once the transaction commits."""
    now = now or timezone.now()
    _membership(project, user)  # locked: one person's battles start one at a time
    if project.kind != Project.Kind.ARENA:
        raise ArenaError(gettext_noop("This project is not an arena."))
    if project.status != Project.Status.ACTIVE:
        raise ArenaError(gettext_noop("This arena is not open for battles."))
    arena = Arena.objects.get(project_id=project.pk)
    language = (language or "").strip().lower()
    register = (register or "").strip()
    text = _check_prompt(arena, text, language, register)
    category = (category or "").strip()
    if category and category not in CATEGORIES:
        raise PromptRefused(
            gettext_noop("Unknown category %(category)s; choose one of %(allowed)s."),
            category=category[:40],
            allowed=", ".join(CATEGORIES),
        )
    recent = Battle.objects.filter(
        project_id=project.pk, user_id=user.pk, created_at__gte=now - timedelta(hours=1)
    ).count()
    if recent >= arena.battles_per_hour:
        raise ArenaError(
            gettext_noop("You have reached this arena's limit of %(n)s battles an hour. Try again later."),
            n=arena.battles_per_hour,
        )
    endpoints = list(arena.endpoints.filter(is_active=True).order_by("pk"))
    if len(endpoints) < 2:
        raise ArenaError(gettext_noop("This arena has fewer than two model endpoints in service."))
    choice = pair_choose(arena=arena, endpoints=endpoints, rng=rng or np.random.default_rng())
    by_name = {endpoint.model_name: endpoint for endpoint in endpoints}
    endpoint_a, endpoint_b = by_name[choice.model_a], by_name[choice.model_b]
    token = new_battle_token()
    prompt = Prompt.objects.create(
        dataset_id=project.dataset_id,
        external_id=f"battle-{token}",
        category=category,
        language=language,
        register=register,
        turns=[text],
    )
    responses = [
        Response.objects.create(
            prompt=prompt,
            model_name=endpoint.model_name,
            turns=[],
            origin=Response.Origin.GENERATED,
            meta={"arena_side": side, "ttft_ms": [], "tokens": []},
        )
        for side, endpoint in zip(SIDES, (endpoint_a, endpoint_b), strict=True)
    ]
    battle = Battle.objects.create(
        token=token,
        project=project,
        user=user,
        prompt=prompt,
        endpoint_a=endpoint_a,
        endpoint_b=endpoint_b,
        response_a=responses[0],
        response_b=responses[1],
        sampler=choice.sampler,
        probability=choice.probability,
        language=language,
        register=register,
        category=prompt.category,
        turn_deadline=now + timedelta(seconds=arena.timeout_s),
    )
    _answers_queue(battle, turn=0)
    return battle


def _answers_queue(battle: Battle, *, turn: int) -> None:
    answers = BattleAnswer.objects.bulk_create(
        [BattleAnswer(battle=battle, side=side, turn=turn) for side in SIDES]
    )
    sends = [
        (answer.pk, (battle.endpoint_a if answer.side == "A" else battle.endpoint_b).queue)
        for answer in answers
    ]

    def send() -> None:
        for answer_id, queue in sends:
            task_named(STREAM_TASK).apply_async(args=[answer_id], queue=queue)

    transaction.on_commit(send)


def _locked_battle(battle: Battle, user: AbstractBaseUser) -> Battle:
    locked = Battle.objects.select_for_update().select_related("project").get(pk=battle.pk)
    if locked.user_id != user.pk:
        raise Battle.DoesNotExist
    return locked


@transaction.atomic
def battle_continue(
    *, battle: Battle, user: AbstractBaseUser, text: str, now: datetime | None = None
) -> Battle:
    """The caller's next message to both models, once both answered the last one."""
    now = now or timezone.now()
    battle = _locked_battle(battle, user)
    arena = Arena.objects.get(project_id=battle.project_id)
    if battle.status != Battle.Status.READY:
        raise BattleConflict(gettext_noop("Wait until both answers are complete."))
    if battle.n_turns >= arena.max_turns:
        raise BattleConflict(
            gettext_noop("This arena allows %(n)s messages per battle; vote now."), n=arena.max_turns
        )
    text = _check_prompt(arena, text, battle.language, battle.register)
    prompt = Prompt.objects.select_for_update().get(pk=battle.prompt_id)
    prompt.turns = [*prompt.turns, text]
    prompt.save(update_fields=["turns"])
    battle.n_turns += 1
    battle.status = Battle.Status.STREAMING
    battle.turn_deadline = now + timedelta(seconds=arena.timeout_s)
    battle.save(update_fields=["n_turns", "status", "turn_deadline"])
    _answers_queue(battle, turn=battle.n_turns - 1)
    return battle


@transaction.atomic
def battle_vote(
    *, battle: Battle, user: AbstractBaseUser, vote: str, reason: str = "", now: datetime | None = None
) -> Battle:
    """Store the caller's vote as a pairwise annotation of a task made for the battle.

    Only once both answers of the last turn are complete; casting the same vote again changes nothing, a
    different one is refused (the names may have been revealed)."""
    now = now or timezone.now()
    battle = _locked_battle(battle, user)
    if vote not in VOTES:
        raise ArenaError(gettext_noop("Choose A, B, tie or both bad."))
    if battle.status == Battle.Status.VOTED:
        if battle.vote == vote:
            return battle
        raise BattleConflict(gettext_noop("You have voted in this battle already."))
    if battle.status == Battle.Status.NOT_COUNTED:
        raise BattleConflict(gettext_noop("This battle is not counted, so it takes no vote."))
    if battle.status != Battle.Status.READY:
        raise BattleConflict(gettext_noop("Wait until both answers are complete."))
    membership = _membership(battle.project, user)
    ids = [battle.response_a_id, battle.response_b_id]
    task = Task.objects.create(
        project_id=battle.project_id,
        prompt_id=battle.prompt_id,
        response_ids=ids,
        response_a_id=ids[0],
        response_b_id=ids[1],
    )
    assignment = Assignment.objects.create(
        project_id=battle.project_id,
        task=task,
        group_id=membership.group_id,
        annotator_id=user.pk,
        status=Assignment.Status.SUBMITTED,
        permutation=[0, 1],
        started_at=battle.created_at,
        submitted_at=now,
        seconds_on_task=max(0.0, (now - battle.created_at).total_seconds()),
    )
    rows = [
        Annotation(
            assignment=assignment,
            round=1,
            criterion="vote",
            choice=vote,
            response_id={"A": ids[0], "B": ids[1]}.get(vote),
        )
    ]
    reason = (reason or "").strip()
    if reason:
        rows.append(Annotation(assignment=assignment, round=1, criterion="comment", comment=reason))
    Annotation.objects.bulk_create(rows)
    battle.status = Battle.Status.VOTED
    battle.vote = vote
    battle.reason = reason
    battle.voted_at = now
    battle.task = task
    battle.assignment = assignment
    battle.save(update_fields=["status", "vote", "reason", "voted_at", "task", "assignment"])
    return battle


@transaction.atomic
def battle_exclude(
    *,
    battle: Battle,
    reviewer: AbstractBaseUser,
    reason: str,
    excluded: bool = True,
    now: datetime | None = None,
) -> Battle:
    """Take a voted battle out of the leaderboard and the export (``excluded=False`` puts it back). The
    battle, its vote and its annotation stay stored; a reason is required to take it out."""
    battle = Battle.objects.select_for_update().get(pk=battle.pk)
    reason = (reason or "").strip()
    if battle.status != Battle.Status.VOTED:
        raise BattleConflict(gettext_noop("Only a voted battle counts on the leaderboard."))
    if excluded and not reason:
        raise ArenaError(gettext_noop("Say why the battle is taken out of the leaderboard."))
    battle.excluded = excluded
    battle.excluded_reason = reason if excluded else ""
    battle.excluded_by = reviewer if excluded else None
    battle.excluded_at = (now or timezone.now()) if excluded else None
    battle.save(update_fields=["excluded", "excluded_reason", "excluded_by", "excluded_at"])
    return battle


@transaction.atomic
def battle_expire(*, battle_id: int, now: datetime | None = None) -> Battle | None:
    """End a battle whose answers are overdue as "not counted" (timeout); a no-op for any other battle."""
    now = now or timezone.now()
    battle = Battle.objects.select_for_update().filter(pk=battle_id).first()
    if battle is None or battle.status != Battle.Status.STREAMING or now <= battle.turn_deadline:
        return battle
    late = list(
        BattleAnswer.objects.select_for_update().filter(
            battle_id=battle.pk,
            turn=battle.n_turns - 1,
            status__in=[BattleAnswer.Status.PENDING, BattleAnswer.Status.STREAMING],
        )
    )
    for answer in late:
        answer.status = BattleAnswer.Status.FAILED
        answer.error = "no complete answer before the battle's deadline"
        answer.finished_at = now
        answer.save(update_fields=["status", "error", "finished_at"])
    _not_counted(battle, Battle.Ending.TIMEOUT)
    token, events = battle.token, [(a.side, failed_event(a.side, a.turn, "timeout")) for a in late]
    transaction.on_commit(lambda: [streams.publish(token, side, event) for side, event in events])
    return battle


def _not_counted(battle: Battle, ending: str) -> None:
    if battle.status in (Battle.Status.STREAMING, Battle.Status.READY):
        battle.status = Battle.Status.NOT_COUNTED
        battle.ending = ending
        battle.save(update_fields=["status", "ending"])


# --- one side's answer, streamed by the model worker ----------------------------------------------------


def battle_answer_stream(
    *, answer_id: int, clock: Callable[[], float] = time.monotonic, now: Callable[[], datetime] = timezone.now
) -> str:
    """Stream one side's answer from its endpoint: publish each piece, keep the text as it grows, store the
    finished answer on the side's ``Response``. A model error or a deadline passed ends the battle as not
    counted. Returns the answer's final status; a second delivery of a finished answer does nothing."""
    with transaction.atomic():
        answer = (
            BattleAnswer.objects.select_for_update()
            .select_related("battle", "battle__endpoint_a", "battle__endpoint_b", "battle__prompt")
            .filter(pk=answer_id)
            .first()
        )
        if answer is None or answer.status in (BattleAnswer.Status.DONE, BattleAnswer.Status.FAILED):
            return answer.status if answer else "missing"
        battle = answer.battle
        if battle.status not in (Battle.Status.STREAMING, Battle.Status.READY):
            answer.status = BattleAnswer.Status.FAILED
            answer.error = "the battle had ended before this answer started"
            answer.save(update_fields=["status", "error"])
            return answer.status
        # A second delivery of an answer left STREAMING (its worker was killed) starts it again.
        answer.status = BattleAnswer.Status.STREAMING
        answer.attempts += 1
        answer.text = ""
        answer.n_tokens = 0
        answer.started_at = now()
        answer.save(update_fields=["status", "attempts", "text", "n_tokens", "started_at"])
    arena = Arena.objects.get(project_id=battle.project_id)
    endpoint = battle.endpoint_a if answer.side == "A" else battle.endpoint_b
    earlier = list(
        BattleAnswer.objects.filter(battle_id=battle.pk, side=answer.side, turn__lt=answer.turn)
        .order_by("turn")
        .values_list("text", flat=True)
    )
    messages = conversation(battle.prompt.turns[: answer.turn + 1], earlier)
    seconds_left = (battle.turn_deadline - now()).total_seconds()
    started = clock()
    deadline = started + max(0.0, seconds_left)
    text, pieces, tokens, ttft_ms = "", 0, None, None
    last_saved = started
    side, turn, token = answer.side, answer.turn, battle.token
    try:
        request = ChatRequest(
            messages=messages,
            sampling=endpoint_sampling(endpoint, {"max_tokens": arena.max_tokens}),
            request_id=f"battle-{battle.pk}-{turn}-{side}",
        )
        for chunk in endpoint_backend(endpoint).stream(request):
            at = clock()
            if chunk.text:
                if ttft_ms is None:
                    ttft_ms = (at - started) * 1000.0
                streams.publish(token, side, delta_event(side, turn, len(text), chunk.text))
                text += chunk.text
                pieces += 1
            if chunk.completion_tokens is not None:
                tokens = chunk.completion_tokens
            if at > deadline:
                raise StreamError("over the arena's time limit", timed_out=True)
            if at - last_saved >= settings.ARENA_PROGRESS_EVERY_S:
                _progress_save(answer_id, text, pieces, ttft_ms)
                last_saved = at
    except StreamError as exc:
        return _answer_failed(answer_id, text, "timeout" if exc.timed_out else "model_error", str(exc), now())
    except (BackendError, ValueError) as exc:
        return _answer_failed(answer_id, text, "model_error", str(exc), now())
    except Exception as exc:  # a soft time limit, a bug: the battle must still end, never hang
        logger.exception("arena: answer %s failed", answer_id)
        return _answer_failed(answer_id, text, "model_error", f"{type(exc).__name__}: {exc}", now())
    duration_ms = (clock() - started) * 1000.0
    return _answer_finished(
        answer_id, text, tokens if tokens is not None else pieces, ttft_ms, duration_ms, now()
    )


def _progress_save(answer_id: int, text: str, pieces: int, ttft_ms: float | None) -> None:
    """Keep the text so far (what a relay without Redis shows, and what a reconnecting page catches up on).
    A busy database skips one save: the answer goes on, and the finished text is stored in any case."""
    try:
        BattleAnswer.objects.filter(pk=answer_id, status=BattleAnswer.Status.STREAMING).update(
            text=text, n_tokens=pieces, ttft_ms=ttft_ms
        )
    except DatabaseError:
        logger.warning("arena: progress of answer %s not saved this time", answer_id, exc_info=True)


@transaction.atomic
def _answer_finished(
    answer_id: int, text: str, n_tokens: int, ttft_ms: float | None, duration_ms: float, at: datetime
) -> str:
    answer = BattleAnswer.objects.select_related("battle").get(pk=answer_id)
    battle = Battle.objects.select_for_update().get(pk=answer.battle_id)
    answer = BattleAnswer.objects.select_for_update().get(pk=answer_id)
    if answer.status != BattleAnswer.Status.STREAMING:
        return answer.status  # ended meanwhile (the battle's deadline passed)
    answer.status = BattleAnswer.Status.DONE
    answer.text = text
    answer.n_tokens = n_tokens
    answer.ttft_ms = ttft_ms
    answer.duration_ms = duration_ms
    answer.finished_at = at
    answer.save(update_fields=["status", "text", "n_tokens", "ttft_ms", "duration_ms", "finished_at"])
    response_id = battle.response_a_id if answer.side == "A" else battle.response_b_id
    response = Response.objects.select_for_update().get(pk=response_id)
    turns = list(response.turns)[: answer.turn]
    meta = dict(response.meta or {})
    response.turns = [*turns, text]
    meta["ttft_ms"] = [*list(meta.get("ttft_ms") or [])[: answer.turn], ttft_ms]
    meta["tokens"] = [*list(meta.get("tokens") or [])[: answer.turn], n_tokens]
    response.meta = meta
    response.save(update_fields=["turns", "meta"])
    if battle.status == Battle.Status.STREAMING and not (
        BattleAnswer.objects.filter(battle_id=battle.pk, turn=answer.turn)
        .exclude(status=BattleAnswer.Status.DONE)
        .exists()
    ):
        battle.status = Battle.Status.READY
        battle.save(update_fields=["status"])
    token, side, turn = battle.token, answer.side, answer.turn
    transaction.on_commit(lambda: streams.publish(token, side, done_event(side, turn, text)))
    return answer.status


@transaction.atomic
def _answer_failed(answer_id: int, text: str, reason: str, error: str, at: datetime) -> str:
    answer = BattleAnswer.objects.get(pk=answer_id)
    battle = Battle.objects.select_for_update().get(pk=answer.battle_id)
    answer = BattleAnswer.objects.select_for_update().get(pk=answer_id)
    if answer.status != BattleAnswer.Status.STREAMING:
        return answer.status
    answer.status = BattleAnswer.Status.FAILED
    answer.text = text
    answer.error = error[:2000]
    answer.finished_at = at
    answer.save(update_fields=["status", "text", "error", "finished_at"])
    _not_counted(battle, Battle.Ending.TIMEOUT if reason == "timeout" else Battle.Ending.MODEL_ERROR)
    token, side, turn = battle.token, answer.side, answer.turn
    transaction.on_commit(lambda: streams.publish(token, side, failed_event(side, turn, reason)))
    return answer.status
