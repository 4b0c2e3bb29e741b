"""Dispatch by job kind, in this one place: each kind's handler, and the public entry points that need one.

A kind's handler names its module's functions: ``validate`` (settings of a project being changed),
``tasks_create`` (the tasks of a new project), ``claim_filter`` (which tasks a caller may claim now, and
what the claim loads), ``submit`` (store an answer to a locked assignment), ``review_check`` and
``after_review`` (what a review of its work may do, and what it does). ``project_create``,
``project_update``, ``assignment_claim``, ``assignment_submit`` and ``review_create`` call through it.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.events import REVIEW_REJECTED, event_emit
from annotation.models import JOB_KINDS, Annotation, Assignment, Project, Review
from annotation.services.loop import (
    AnnotationError,
    ClaimFilter,
    ProjectInvalid,
    SubmitResult,
    assignment_claim_filtered,
    assignment_for_update,
    claim_state_ahead,
    reopen,
)
from annotation.services.projects import (
    annotator_group_create,
    job_project_new,
    job_project_validate,
    project_settings_apply,
)
from annotation.services.questions import (
    authoring_claim_filter,
    authoring_review_check,
    authoring_reviewed,
    authoring_submit,
    authoring_tasks_create,
    mcq_claim_filter,
    mcq_submit,
    mcq_tasks_create,
)
from annotation.services.rating import (
    rating_claim_filter,
    rating_project_new,
    rating_project_validate,
    rating_submit,
    rating_tasks_create,
)
from annotation.services.reviews import review_store, review_target_lock
from annotation.services.spans import span_claim_filter, span_submit, span_tasks_create
from annotation.services.translation import (
    translation_claim_filter,
    translation_review_claim_filter,
    translation_review_submit,
    translation_submit,
    translation_tasks_create,
)
from datasets_app.models import Dataset

__all__ = [
    "KIND_HANDLERS",
    "KindHandler",
    "assignment_claim",
    "assignment_submit",
    "assignment_submit_next",
    "SubmitNextResult",
    "job_project_create",
    "job_submit",
    "project_create",
    "project_update",
    "review_create",
]


def _no_review_check(assignment: Assignment) -> None:
    """Rating work may be accepted or rejected (a rejection reopens it for its annotator)."""


def _nothing_after_review(*, assignment: Assignment, review: Review, now: datetime) -> None:
    return None


@dataclass(frozen=True)
class KindHandler:
    validate: Callable[[Project], None]
    tasks_create: Callable[..., int]  # (*, project) -> number of tasks
    claim_filter: ClaimFilter
    submit: Callable[..., SubmitResult]
    review_check: Callable[[Assignment], None] = _no_review_check
    after_review: Callable[..., object] = _nothing_after_review
    # Translation work is sent back through its translation review job, which owns the unit's rounds; the
    # review queue may accept it (a checked mark) but not reject it.
    reject_allowed: bool = True
    # The submit's last write is ``loop.mark_submitted``: a submit with the next task may read the claim's
    # state in that statement (``loop.claim_state_ahead``).
    submit_ends_with_mark: bool = False


_RATING = KindHandler(
    validate=rating_project_validate,
    tasks_create=rating_tasks_create,
    claim_filter=rating_claim_filter,
    submit=rating_submit,
    submit_ends_with_mark=True,
)

# MQM and ESA differ in the answer they take (ESA adds a score), which span_submit reads from the project.
_SPANS = KindHandler(
    validate=job_project_validate,
    tasks_create=span_tasks_create,
    claim_filter=span_claim_filter,
    submit=span_submit,
)


def _arena_validate(project: Project) -> None:
    if project.gold_rate:
        raise ProjectInvalid({"gold_rate": gettext_noop("Gold items exist only in rating jobs.")})


def _arena_claim_filter(user_id: int) -> tuple[Q, tuple[str, ...]]:
    """An arena's tasks are made by its battles, already answered: nothing is ever handed out."""
    return Q(pk__in=[]), ()


def _arena_submit(**kwargs: object) -> SubmitResult:
    raise AnnotationError(gettext_noop("Arena votes are cast on the battle page."))


def _arena_tasks_create(*, project: Project) -> int:
    return 0


_ARENA = KindHandler(
    validate=_arena_validate,
    tasks_create=_arena_tasks_create,
    claim_filter=_arena_claim_filter,
    submit=_arena_submit,
    reject_allowed=False,
)

KIND_HANDLERS: dict[str, KindHandler] = {
    Project.Kind.LIKERT: _RATING,
    Project.Kind.BEST_OF_N: _RATING,
    Project.Kind.PAIRWISE: _RATING,
    Project.Kind.TRANSLATION: KindHandler(
        validate=job_project_validate,
        tasks_create=translation_tasks_create,
        claim_filter=translation_claim_filter,
        submit=translation_submit,
        reject_allowed=False,
    ),
    Project.Kind.TRANSLATION_REVIEW: KindHandler(
        validate=job_project_validate,
        tasks_create=translation_tasks_create,
        claim_filter=translation_review_claim_filter,
        submit=translation_review_submit,
        reject_allowed=False,
    ),
    Project.Kind.QUESTION_AUTHORING: KindHandler(
        validate=job_project_validate,
        tasks_create=authoring_tasks_create,
        claim_filter=authoring_claim_filter,
        submit=authoring_submit,
        review_check=authoring_review_check,
        after_review=authoring_reviewed,
    ),
    Project.Kind.MCQ_ANSWER: KindHandler(
        validate=job_project_validate,
        tasks_create=mcq_tasks_create,
        claim_filter=mcq_claim_filter,
        submit=mcq_submit,
    ),
    Project.Kind.TRANSLATION_MQM: _SPANS,
    Project.Kind.TRANSLATION_ESA: _SPANS,
    Project.Kind.ARENA: _ARENA,
}


# --- projects -------------------------------------------------------------------------------------------


def _project_fill(project: Project, groups: Sequence[str]) -> Project:
    """Give a new draft project the tasks of its kind and its groups (each with k places per task)."""
    project.n_tasks = KIND_HANDLERS[project.kind].tasks_create(project=project)
    project.save(update_fields=["n_tasks"])
    for group_name in dict.fromkeys(groups):
        annotator_group_create(project=project, name=group_name)
    return project


@transaction.atomic
def project_create(
    *,
    dataset: Dataset | None = None,
    name: str,
    kind: str,
    criteria: Sequence[str] | None = None,
    best_pick: str = "off",
    allow_all_bad: bool = False,
    overlap: int = 3,
    seed: int | None = None,
    lease_minutes: int = 30,
    allow_edits: bool = True,
    instructions_id: str = "",
    instructions_en: str = "",
    description: str = "",
    pair_mode: str = "all",
    pairs_per_prompt: int = 3,
    turn_mode: str = "overall",
    gold_rate: float = 0.0,
    groups: Sequence[str] = ("A",),
    created_by: AbstractBaseUser | None = None,
    max_ambiguous: int = 3,
    flag_settings: Mapping[str, object] | None = None,
    span_settings: Mapping[str, object] | None = None,
) -> Project:
    """A draft project over ``dataset`` with its tasks and groups (members are added afterwards).

    Rating jobs: see ``annotation.services.rating``; translation, question authoring and answering
    projects: ``job_project_create``.
    """
    seed = secrets.randbelow(2**31) if seed is None else seed
    if kind == Project.Kind.ARENA:
        raise ProjectInvalid(
            {"kind": gettext_noop("An arena is set up with its model endpoints on the arena's own page.")}
        )
    if kind in JOB_KINDS:
        return job_project_create(
            dataset=dataset,
            name=name,
            kind=kind,
            overlap=overlap,
            seed=seed,
            lease_minutes=lease_minutes,
            allow_edits=allow_edits,
            instructions_id=instructions_id,
            instructions_en=instructions_en,
            description=description,
            groups=groups,
            created_by=created_by,
            max_ambiguous=max_ambiguous,
            flag_settings=dict(flag_settings or {}),
            span_settings=dict(span_settings or {}),
        )
    project = rating_project_new(
        dataset=dataset,
        name=name,
        kind=kind,
        criteria=criteria,
        best_pick=best_pick,
        allow_all_bad=allow_all_bad,
        overlap=overlap,
        seed=seed,
        lease_minutes=lease_minutes,
        allow_edits=allow_edits,
        instructions_id=instructions_id,
        instructions_en=instructions_en,
        description=description,
        pair_mode=pair_mode,
        pairs_per_prompt=pairs_per_prompt,
        turn_mode=turn_mode,
        gold_rate=gold_rate,
        groups=groups,
        created_by=created_by,
    )
    return _project_fill(project, groups)


@transaction.atomic
def job_project_create(
    *,
    dataset: Dataset | None,
    name: str,
    kind: str,
    overlap: int,
    seed: int,
    lease_minutes: int,
    allow_edits: bool,
    instructions_id: str,
    instructions_en: str,
    description: str,
    groups: Sequence[str],
    created_by: AbstractBaseUser | None,
    max_ambiguous: int,
    flag_settings: dict[str, object],
    span_settings: dict[str, object] | None = None,
) -> Project:
    """A draft translation, translation review, question authoring or answering project.

    Translation jobs get one task per unit of the dataset (claims then wait for each unit's status).
    Answering gets one task per accepted question, and more as questions are accepted. Authoring starts
    empty: its tasks come with the uploaded (category, concept) pairs; without a dataset, one is created
    for the questions the authors write.
    """
    project = job_project_new(
        dataset=dataset,
        name=name,
        kind=kind,
        overlap=overlap,
        seed=seed,
        lease_minutes=lease_minutes,
        allow_edits=allow_edits,
        instructions_id=instructions_id,
        instructions_en=instructions_en,
        description=description,
        groups=groups,
        created_by=created_by,
        max_ambiguous=max_ambiguous,
        flag_settings=flag_settings,
        span_settings=span_settings,
    )
    return _project_fill(project, groups)


@transaction.atomic
def project_update(*, project: Project, **changes: object) -> Project:
    """Change settings that do not reshape the tasks; overlap only while the project is a draft."""
    project_settings_apply(project=project, changes=changes)
    KIND_HANDLERS[project.kind].validate(project)
    project.save()
    return project


# --- the annotation loop --------------------------------------------------------------------------------


def _claim_filter_for(kind: str) -> ClaimFilter:
    return KIND_HANDLERS[kind].claim_filter


@transaction.atomic
def assignment_claim(
    *, project: Project, user: AbstractBaseUser, now: datetime | None = None
) -> Assignment | None:
    """The caller's next task in ``project``, or ``None`` when their group needs nothing more from them.

    Resumes the caller's own open claim first; otherwise reclaims the project's expired leases and takes
    the first open place of the caller's group in the caller's shuffled order, skipping tasks the caller
    ever had (submitted, skipped or expired) and tasks the project's kind does not hand out yet. At the
    project's gold rate a gold item comes instead.
    """
    return assignment_claim_filtered(
        project=project,
        user=user,
        now=now or timezone.now(),
        claim_filter_for=_claim_filter_for,
    )


@transaction.atomic
def assignment_submit(
    *,
    token: str,
    user: AbstractBaseUser,
    payload: object,
    seconds: float | None = None,
    now: datetime | None = None,
) -> SubmitResult:
    """Store the caller's answer to their assignment ``token`` through its project's kind.

    Posting the same answer again changes nothing; a different answer to a submitted task is an edit
    where the kind allows one. ``seconds`` is the time the page was in view as measured by the browser;
    it is capped by the time since the claim.
    """
    now = now or timezone.now()
    assignment = assignment_for_update(token=token, user=user)
    return KIND_HANDLERS[assignment.project.kind].submit(
        assignment=assignment, payload=payload, seconds=seconds, now=now
    )


@dataclass(frozen=True)
class SubmitNextResult:
    """A submit and the caller's next task, from one transaction: ``next`` is ``None`` when nothing is
    left for them, with ``next_refused`` saying why when the project refused the claim."""

    submitted: SubmitResult
    next: Assignment | None
    next_refused: str = ""


@transaction.atomic
def assignment_submit_next(
    *,
    token: str,
    user: AbstractBaseUser,
    payload: object = None,
    payload_for: Callable[[Project], object] | None = None,
    seconds: float | None = None,
    now: datetime | None = None,
) -> SubmitNextResult:
    """``assignment_submit`` and then ``assignment_claim`` in the submitted task's project, in one
    transaction, so an annotator's loop is one request. An invalid or refused answer raises as
    ``assignment_submit`` does and claims nothing; a refused claim (the project was paused, the caller
    removed) keeps the answer and says why.

    ``payload_for``, given instead of ``payload``, makes the answer from the project of the locked
    assignment: a page's form, whose fields depend on the project's kind, is read without a statement
    of its own before the lock."""
    now = now or timezone.now()
    assignment = assignment_for_update(token=token, user=user)
    if payload_for is not None:
        payload = payload_for(assignment.project)
    handler = KIND_HANDLERS[assignment.project.kind]
    ahead = (
        claim_state_ahead(project_id=assignment.project_id, user_id=user.pk, now=now)
        if handler.submit_ends_with_mark
        else contextlib.nullcontext()
    )
    with ahead:
        submitted = handler.submit(assignment=assignment, payload=payload, seconds=seconds, now=now)
        try:
            # The claim refuses before it writes anything, so the answer above stays whole.
            following = assignment_claim_filtered(
                project=assignment.project, user=user, now=now, claim_filter_for=_claim_filter_for
            )
        except AnnotationError as exc:
            return SubmitNextResult(submitted=submitted, next=None, next_refused=str(exc))
    return SubmitNextResult(submitted=submitted, next=following)


def job_submit(
    *, assignment: Assignment, payload: object, seconds: float | None, now: datetime
) -> SubmitResult:
    """Route a locked assignment's answer to its job."""
    return KIND_HANDLERS[assignment.project.kind].submit(
        assignment=assignment, payload=payload, seconds=seconds, now=now
    )


@transaction.atomic
def review_create(
    *,
    assignment: Assignment,
    reviewer: AbstractBaseUser,
    verdict: str,
    comment: str = "",
    annotation: Annotation | None = None,
    now: datetime | None = None,
) -> Review:
    """Accept or reject a submitted assignment (or one of its values). A rejection sends the task back
    to the same annotator as a new round, holding the group's place for them."""
    now = now or timezone.now()
    assignment = review_target_lock(
        assignment=assignment, reviewer=reviewer, verdict=verdict, comment=comment, annotation=annotation
    )
    handler = KIND_HANDLERS[assignment.project.kind]
    if verdict == Review.Verdict.REJECT and not handler.reject_allowed:
        raise AnnotationError(
            "Translations and translation reviews are sent back in the translation review job, not here."
        )
    handler.review_check(assignment)
    review = review_store(
        assignment=assignment, reviewer=reviewer, verdict=verdict, comment=comment, annotation=annotation
    )
    handler.after_review(assignment=assignment, review=review, now=now)
    if verdict == Review.Verdict.REJECT:
        reopen(assignment, now=now)
        event_emit(
            name=REVIEW_REJECTED,
            project_id=assignment.project_id,
            data={
                "project": assignment.project_id,
                "task": assignment.task_id,
                "assignment": assignment.pk,
                "review": review.pk,
                "round": review.round,
            },
        )
    return review
