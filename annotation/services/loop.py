"""The annotation loop every job kind shares: claim, lease, submit of the stored rows, skip, reopen,
lease reclaim, and the errors and result types of the services above it.

Nothing here knows a job kind: ``annotation.services.kinds`` passes each kind's claim filter to
``assignment_claim_filtered`` and routes submissions to the kind's module, which stores its rows and
calls ``mark_submitted`` / ``reopen`` here.

Lock order, the same in every write, so concurrent requests never wait on each other in a circle:
membership row (claim only) -> assignment rows -> task slot rows (in id order). Claims take slot rows
with ``SKIP LOCKED`` so annotators racing for work pass each other instead of queueing; on SQLite the
IMMEDIATE transaction mode serialises writers and the same code is correct without row locks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.events import TASK_SUBMITTED, event_emit
from accounts.refusals import Refused
from annotation.domain.blinding import response_permutation, task_shuffle_keys
from annotation.domain.gold import is_gold_slot
from annotation.models import (
    ORDER_SLOTS,
    Annotation,
    AnnotatorGroup,
    Assignment,
    Membership,
    Project,
    Task,
    TaskSlot,
)
from annotation.services import loop_sql
from annotation.services.loop_sql import claim_state_ahead
from annotation.services.qualification import qualification_claim

__all__ = [
    "BATCH_SIZE",
    "REVIEW_LEASE",
    "AnnotationError",
    "AssignmentClosed",
    "ClaimFilter",
    "ClaimFilterFor",
    "NotAMember",
    "ProjectInvalid",
    "ProjectNotOpen",
    "QualificationRefused",
    "SubmissionInvalid",
    "SubmitResult",
    "answer_object",
    "assignment_claim_filtered",
    "assignment_for_update",
    "assignment_skip",
    "assignments_release",
    "claim_state_ahead",
    "leases_reclaim",
    "mark_submitted",
    "reopen",
    "slots_create",
    "tasks_add",
]

BATCH_SIZE = 2000
# A task sent back by a reviewer waits this long for its annotator before it returns to the pool.
REVIEW_LEASE = timedelta(days=3)

# What makes a task of one kind claimable for a caller (their user id), and the relations the claim loads.
ClaimFilter = Callable[[int], tuple[Q, tuple[str, ...]]]
# The claim filter of a project kind (the claim learns the kind with the locked membership).
ClaimFilterFor = Callable[[str], ClaimFilter]


class AnnotationError(Refused):
    """A request the annotation rules refuse; the message is safe to show to the user and may hold
    ``%(name)s`` placeholders with their values as keywords (``accounts.refusals.Refused``)."""


class ProjectInvalid(AnnotationError):
    def __init__(self, errors: Mapping[str, str]):
        self.errors = dict(errors)
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.errors.items()))


class NotAMember(AnnotationError):
    pass


class ProjectNotOpen(AnnotationError):
    pass


class QualificationRefused(AnnotationError):
    """The project's qualification gate serves the caller no real task."""


class AssignmentClosed(AnnotationError):
    """The assignment can no longer take this answer (expired and filled, skipped, or edits closed)."""


class SubmissionInvalid(AnnotationError):
    def __init__(self, errors: dict[str, list[str]]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))


@dataclass(frozen=True)
class SubmitResult:
    assignment: Assignment
    outcome: str  # "created", "unchanged" or "edited"


# --- tasks and their places -----------------------------------------------------------------------------


def slots_create(*, group: AnnotatorGroup, tasks: Iterable[Task]) -> int:
    """Give ``group`` its k places on each of ``tasks`` (one ``TaskSlot`` row each, with its order keys)."""
    project = group.project
    batch: list[TaskSlot] = []
    created = 0
    for task in tasks:
        keys = task_shuffle_keys(project.seed, task.pk, ORDER_SLOTS)
        batch.append(
            TaskSlot(
                project_id=project.pk,
                group=group,
                task_id=task.pk,
                capacity=project.overlap,
                open_count=project.overlap,
                **{f"order_key_{i}": key for i, key in enumerate(keys)},
            )
        )
        if len(batch) >= BATCH_SIZE:
            TaskSlot.objects.bulk_create(batch)
            created += len(batch)
            batch = []
    TaskSlot.objects.bulk_create(batch)
    return created + len(batch)


def tasks_add(*, project: Project, tasks: Sequence[Task]) -> int:
    """Store new tasks of a running project and give every group its k places on them."""
    if not tasks:
        return 0
    created = Task.objects.bulk_create(tasks, batch_size=BATCH_SIZE)
    for group in project.groups.all():
        slots_create(group=group, tasks=created)
    Project.objects.filter(pk=project.pk).update(
        n_tasks=Task.objects.filter(project=project, is_gold=False).count()
    )
    project.refresh_from_db(fields=["n_tasks"])
    return len(created)


# --- leases ---------------------------------------------------------------------------------------------


def assignments_release(*, held: Sequence[tuple[int, int | None]], status: str, reason: str = "") -> int:
    """Turn held assignments (``(id, slot_id)`` pairs, locked) into ``status`` and give their places back
    to the pool."""
    if not held:
        return 0
    ids = [assignment_id for assignment_id, _ in held]
    changed = Assignment.objects.filter(id__in=ids, status=Assignment.Status.ASSIGNED).update(
        status=status, skip_reason=reason
    )
    per_slot = Counter(slot_id for _, slot_id in held if slot_id is not None)
    for slot_id in sorted(per_slot):
        n = per_slot[slot_id]
        TaskSlot.objects.filter(pk=slot_id).update(
            active_count=F("active_count") - n, open_count=F("open_count") + n
        )
    return changed


def _expire_leases(*, project_id: int | None, now: datetime) -> int:
    qs = Assignment.objects.filter(status=Assignment.Status.ASSIGNED, lease_expires_at__lt=now)
    if project_id is not None:
        qs = qs.filter(project_id=project_id)
    # SKIP LOCKED: a lease being submitted right now is left to its submitter.
    held = list(qs.select_for_update(skip_locked=True).values_list("id", "slot_id"))
    return assignments_release(held=held, status=Assignment.Status.EXPIRED)


@transaction.atomic
def leases_reclaim(*, project: Project | None = None, now: datetime | None = None) -> int:
    """Expire every unsubmitted claim whose lease has passed; their places return to the pool."""
    return _expire_leases(project_id=project.pk if project else None, now=now or timezone.now())


# --- claim ----------------------------------------------------------------------------------------------


def _key_ranges(offset: int, cursor: int | None, field: str) -> list[Q]:
    # The annotator's order is the slot's key order rotated to start at ``offset``. From the cursor on
    # come tasks not yet looked at; after them, the ones passed over earlier (then full, locked by
    # another claim, or already the annotator's) in case a skip or an expired lease reopened them.
    gte, lt, gt, lte = (f"{field}__gte", f"{field}__lt", f"{field}__gt", f"{field}__lte")
    if cursor is None:
        return [Q(**{gte: offset}), Q(**{lt: offset})]
    if cursor >= offset:
        return [Q(**{gt: cursor}), Q(**{lt: offset}), Q(**{gte: offset, lte: cursor})]
    return [Q(**{gt: cursor, lt: offset}), Q(**{gte: offset}), Q(**{lte: cursor})]


def _next_open_slot(membership: Membership, user_id: int, claim_filter: ClaimFilter) -> TaskSlot | None:
    field = f"order_key_{membership.order_slot}"
    had = Assignment.objects.filter(task_id=OuterRef("task_id"), annotator_id=user_id)
    ready, related = claim_filter(user_id)
    base = (
        TaskSlot.objects.filter(group_id=membership.group_id, open_count__gt=0)
        .filter(~Exists(had))
        .filter(ready)
        .select_related(*related)
        .select_for_update(skip_locked=True, of=("self",))
        .order_by(field, "task_id")
    )
    for key_range in _key_ranges(membership.order_offset, membership.cursor_key, field):
        slot = base.filter(key_range).first()
        if slot is not None:
            return slot
    return None


def _next_gold_task(project: Project, user_id: int) -> Task | None:
    had = Assignment.objects.filter(task_id=OuterRef("pk"), annotator_id=user_id)
    return (
        Task.objects.filter(project_id=project.pk, is_gold=True)
        .filter(~Exists(had))
        .select_related("prompt")
        .order_by("id")
        .first()
    )


def _assignment_built(
    *,
    project: Project,
    task: Task,
    membership: Membership,
    user_id: int,
    now: datetime,
    slot: TaskSlot | None,
) -> Assignment:
    (assignment,) = loop_sql.new_instances(
        Assignment,
        [
            {
                "group_id": membership.group_id,
                "annotator_id": user_id,
                "is_gold": task.is_gold,
                "permutation": response_permutation(project.seed, task.pk, user_id, len(task.response_ids))
                if task.response_ids
                else [],
                "lease_expires_at": now + timedelta(minutes=project.lease_minutes),
                "started_at": now,
            }
        ],
        related=[{"project": project, "task": task, "slot": slot}],
    )
    return assignment


def _assignment_new(
    *,
    project: Project,
    task: Task,
    membership: Membership,
    user_id: int,
    now: datetime,
    slot: TaskSlot | None,
) -> Assignment:
    assignment = _assignment_built(
        project=project, task=task, membership=membership, user_id=user_id, now=now, slot=slot
    )
    assignment.save(force_insert=True)
    return assignment


def _own_open_claim(project: Project, user_id: int, own_id: int, *, now: datetime) -> Assignment | None:
    """The caller's held assignment in ``project``, if any, with what the task page needs.

    A held claim whose lease ran out but which nobody reclaimed yet is still the caller's: it gets a new
    lease, so coming back to an open task after a break resumes it instead of losing it.
    """
    held = Assignment.objects.filter(
        project_id=project.pk, annotator_id=user_id, status=Assignment.Status.ASSIGNED
    ).order_by("id")
    own = held.select_related("task__prompt").filter(id=own_id).first()
    if own is None:
        return None
    own.project = project
    if own.lease_expires_at is not None and own.lease_expires_at < now:
        lease = now + timedelta(minutes=project.lease_minutes)
        # Another claim may be expiring it this moment: then it is no longer ours to resume.
        if not held.filter(id=own.pk).update(lease_expires_at=lease):
            return None
        own.lease_expires_at = lease
    return own


def _lapsed_claim_renewed(
    *, project: Project, membership: Membership, assignment_id: int, now: datetime
) -> Assignment | None:
    """Give the caller back a task whose lease ran out on them, when the caller's group still has an open
    place on it: the expired assignment is held again (same token and blinded order) with a new lease.

    Locks the assignment before the place, the loop's lock order; ``None`` when the place was taken
    meanwhile or the assignment changed (a late submit of it in another window)."""
    lapsed = (
        Assignment.objects.select_for_update(of=("self",))
        .select_related("task__prompt")
        .filter(pk=assignment_id, status=Assignment.Status.EXPIRED, slot__isnull=False)
        .first()
    )
    if lapsed is None:
        return None
    taken = TaskSlot.objects.filter(pk=lapsed.slot_id, group_id=membership.group_id, open_count__gt=0).update(
        open_count=F("open_count") - 1, active_count=F("active_count") + 1
    )
    if not taken:
        return None
    lapsed.project = project
    lapsed.status = Assignment.Status.ASSIGNED
    lapsed.started_at = now
    lapsed.lease_expires_at = now + timedelta(minutes=project.lease_minutes)
    lapsed.save(update_fields=["status", "started_at", "lease_expires_at"])
    return lapsed


def _key_bounds(offset: int, cursor: int | None) -> list[list[tuple[str, int]]]:
    # ``_key_ranges`` as (operator, value) bounds, for the claim written as SQL.
    if cursor is None:
        return [[("gte", offset)], [("lt", offset)]]
    if cursor >= offset:
        return [[("gt", cursor)], [("lt", offset)], [("gte", offset), ("lte", cursor)]]
    return [[("gt", cursor), ("lt", offset)], [("gte", offset)], [("lte", cursor)]]


def assignment_claim_filtered(
    *, project: Project, user: AbstractBaseUser, now: datetime, claim_filter_for: ClaimFilterFor
) -> Assignment | None:
    """The caller's next task among those the project kind's claim filter lets through
    (``kinds.assignment_claim`` passes the filters of the kinds); call inside a transaction.

    Resumes the caller's own open claim first (renewing its lease if it ran out unreclaimed); otherwise
    reclaims the project's expired leases, gives the caller back a task whose lease ran out on them while
    their group still has an open place on it, and else takes the first open place of the caller's group
    in the caller's shuffled order, skipping tasks the caller ever had (submitted, skipped or expired). At
    the project's gold rate a gold item comes instead.

    One statement reads the locked membership, its project, the caller's held claim, whether any lease
    ran out and the caller's progress; a kind whose filter lets every open task through then takes its
    place with the statements of ``loop_sql``. The returned assignment carries the caller's count of
    submitted tasks as ``progress_done`` for the task page.
    """
    state = loop_sql.claim_state(project_id=project.pk, user_id=user.pk, now=now)
    if state is None:
        raise NotAMember(gettext_noop("You are not an annotator of this project."))
    membership = state.membership
    project = membership.project
    if project.status != Project.Status.ACTIVE:
        raise ProjectNotOpen(gettext_noop("This project is not open for annotation."))
    own = _own_open_claim(project, user.pk, state.own_id, now=now) if state.own_id is not None else None
    if state.has_expired:
        _expire_leases(project_id=project.pk, now=now)
    if own is not None:
        own.progress_done = state.done
        return own
    if state.lapsed_id is not None:
        lapsed = _lapsed_claim_renewed(
            project=project, membership=membership, assignment_id=state.lapsed_id, now=now
        )
        if lapsed is not None:
            lapsed.progress_done = state.done
            return lapsed
    # A real task is about to be claimed: the qualification gate first (no query once passed).
    step = qualification_claim(project=project, membership=membership, user_id=user.pk)
    if step.refusal:
        raise QualificationRefused(step.refusal)
    if step.task is not None:
        assignment = _assignment_new(
            project=project, task=step.task, membership=membership, user_id=user.pk, now=now, slot=None
        )
        Membership.objects.filter(pk=membership.pk).update(n_served=F("n_served") + 1)
        assignment.progress_done = state.done
        return assignment
    if project.gold_rate > 0 and is_gold_slot(project.seed, user.pk, membership.n_served, project.gold_rate):
        gold = _next_gold_task(project, user.pk)
        if gold is not None:
            assignment = _assignment_new(
                project=project, task=gold, membership=membership, user_id=user.pk, now=now, slot=None
            )
            Membership.objects.filter(pk=membership.pk).update(n_served=F("n_served") + 1)
            assignment.progress_done = state.done
            return assignment
    claim_filter = claim_filter_for(project.kind)
    ready, _related = claim_filter(user.pk)
    if not ready:
        taken = loop_sql.slot_take(
            membership=membership,
            user_id=user.pk,
            key_ranges=_key_bounds(membership.order_offset, membership.cursor_key),
        )
        if taken is None:
            return None
        slot, task = taken
        assignment = loop_sql.assignment_insert(
            _assignment_built(
                project=project, task=task, membership=membership, user_id=user.pk, now=now, slot=slot
            )
        )
        assignment.progress_done = state.done
        return assignment
    slot = _next_open_slot(membership, user.pk, claim_filter)
    if slot is None:
        return None
    assignment = _assignment_new(
        project=project, task=slot.task, membership=membership, user_id=user.pk, now=now, slot=slot
    )
    TaskSlot.objects.filter(pk=slot.pk).update(
        open_count=F("open_count") - 1, active_count=F("active_count") + 1
    )
    Membership.objects.filter(pk=membership.pk).update(
        cursor_key=getattr(slot, f"order_key_{membership.order_slot}"), n_served=F("n_served") + 1
    )
    assignment.progress_done = state.done
    return assignment


# --- submit, reopen, skip -------------------------------------------------------------------------------


def assignment_for_update(*, token: str, user: AbstractBaseUser) -> Assignment:
    """The caller's own assignment, locked; anybody else's raises ``Assignment.DoesNotExist`` (a 404), and
    one in a project the caller was removed from raises ``NotAMember`` (their held tasks went back to the
    pool when they were removed; nothing of theirs is taken or changed after that)."""
    assignment = loop_sql.assignment_locked(token=token, user_id=user.pk)
    if assignment is None:
        raise Assignment.DoesNotExist("No such task for you.")
    if not assignment.is_member:
        raise NotAMember(gettext_noop("You are no longer an annotator of this project."))
    return assignment


def answer_object(payload: object) -> Mapping:
    """The answer of a translation or question job: a JSON object, or ``AnnotationError``."""
    if not isinstance(payload, Mapping):
        raise AnnotationError(gettext_noop("The answer must be an object."))
    return payload


def mark_submitted(
    assignment: Assignment,
    *,
    now: datetime,
    seconds: float | None,
    annotations: Sequence[Annotation] = (),
) -> None:
    """Move a held (or expired) assignment to submitted and its place from active to submitted, storing
    its new ``annotations`` rows (if any) in the same statement.

    Call with the assignment locked (``assignment_for_update``). Raises ``AssignmentClosed`` when the
    project is closed, the task was skipped, or the lease ran out and the group's places are all taken.
    """
    if assignment.project.status == Project.Status.CLOSED:
        raise AssignmentClosed(gettext_noop("This project is closed."))
    if assignment.status == Assignment.Status.SKIPPED:
        raise AssignmentClosed(gettext_noop("You skipped this task."))
    was_expired = assignment.status == Assignment.Status.EXPIRED
    was_held = assignment.status == Assignment.Status.ASSIGNED
    if assignment.status == Assignment.Status.EXPIRED:
        # The work was done after the lease ran out: keep it if the group still has a place for it.
        if assignment.slot_id is not None:
            taken = TaskSlot.objects.filter(pk=assignment.slot_id, open_count__gt=0).update(
                open_count=F("open_count") - 1, submitted_count=F("submitted_count") + 1
            )
            if not taken:
                raise AssignmentClosed(
                    gettext_noop("Your time on this task ran out and others have completed it.")
                )
    elapsed = max(0.0, (now - assignment.started_at).total_seconds())
    assignment.status = Assignment.Status.SUBMITTED
    assignment.submitted_at = now
    assignment.seconds_on_task = min(seconds, elapsed) if seconds is not None and seconds >= 0 else elapsed
    # A held place moves from active to submitted in the same statement as the assignment's status; an
    # expired one took its place above.
    held_slot = None if was_expired else assignment.slot_id
    loop_sql.submitted_mark(
        assignment=assignment,
        slot_id=held_slot,
        now=now,
        seconds=assignment.seconds_on_task,
        annotations=annotations,
        held=was_held,
    )
    event_emit(
        name=TASK_SUBMITTED,
        project_id=assignment.project_id,
        data={
            "project": assignment.project_id,
            "task": assignment.task_id,
            "assignment": assignment.pk,
            "round": assignment.round,
        },
    )


def reopen(assignment: Assignment, *, now: datetime, by_annotator: bool = False) -> None:
    """Send a submitted assignment back to its annotator as a new round, holding the group's place for
    them (a reviewer's rejection, or a revised translation coming back to its reviewer).

    ``by_annotator``: the annotator reopened their own answer to change it (My work). It keeps the time of
    its last submission, which is what tells an edit from work sent back: an edit still counts as done in
    the annotator's progress (``annotation.selectors.base.done_count``), work sent back does not."""
    if assignment.status != Assignment.Status.SUBMITTED:
        raise AnnotationError(gettext_noop("Only submitted work can be sent back."))
    assignment.status = Assignment.Status.ASSIGNED
    assignment.round += 1
    assignment.started_at = now
    if not by_annotator:
        assignment.submitted_at = None
    assignment.lease_expires_at = now + max(REVIEW_LEASE, timedelta(minutes=assignment.project.lease_minutes))
    assignment.save(update_fields=["status", "round", "started_at", "submitted_at", "lease_expires_at"])
    if assignment.slot_id is not None:
        TaskSlot.objects.filter(pk=assignment.slot_id).update(
            submitted_count=F("submitted_count") - 1, active_count=F("active_count") + 1
        )


@transaction.atomic
def assignment_skip(*, token: str, user: AbstractBaseUser, reason: str = "") -> Assignment:
    """Give a task back with a reason; others get it, the caller never sees it again."""
    assignment = assignment_for_update(token=token, user=user)
    if assignment.status == Assignment.Status.SKIPPED:
        return assignment
    if assignment.status != Assignment.Status.ASSIGNED:
        raise AssignmentClosed(gettext_noop("Only a task you are working on can be skipped."))
    assignments_release(
        held=[(assignment.pk, assignment.slot_id)],
        status=Assignment.Status.SKIPPED,
        reason=reason.strip()[:500],
    )
    assignment.refresh_from_db()
    return assignment
