"""Writes of annotation: projects, groups, members, the claim/submit/skip loop, lease reclaim, reviews.

The translation and question jobs (``annotation.services.translation``, ``annotation.services.questions``)
share this claim/submit loop: ``project_create``, ``assignment_submit`` and ``review_create`` hand their
kinds over to those modules, and ``_job_claim_filter`` keeps each job's claims to the items ready for it.

Lock order, the same in every write, so concurrent requests never wait on each other in a circle:
membership row (claim only) -> assignment rows -> task slot rows (in id order). Claims take slot rows
with ``SKIP LOCKED`` so annotators racing for work pass each other instead of queueing; on SQLite the
IMMEDIATE transaction mode serialises writers and the same code is correct without row locks.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from annotation.domain import rubrics as default_rubrics
from annotation.domain.blinding import annotator_order_slot, response_permutation, task_shuffle_keys
from annotation.domain.gold import is_gold_slot, score_gold
from annotation.domain.pairs import all_pairs, pair_units, sample_pairs
from annotation.domain.submission import (
    ALL_BAD,
    KINDS,
    AnnotationValue,
    SubmissionRules,
    annotation_values,
    clean_submission,
)
from annotation.models import (
    JOB_KINDS,
    ORDER_SLOTS,
    Annotation,
    AnnotatorGroup,
    Assignment,
    Membership,
    Project,
    Review,
    Rubric,
    Task,
    TaskSlot,
)
from annotation.selectors.core import rubrics_changed
from datasets_app.models import Dataset, Response

BATCH_SIZE = 2000
# A task sent back by a reviewer waits this long for its annotator before it returns to the pool.
REVIEW_LEASE = timedelta(days=3)


class AnnotationError(Exception):
    """A request the annotation rules refuse; the message is safe to show to the user."""


class ProjectInvalid(AnnotationError):
    def __init__(self, errors: Mapping[str, str]):
        self.errors = dict(errors)
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.errors.items()))


class NotAMember(AnnotationError):
    pass


class ProjectNotOpen(AnnotationError):
    pass


class AssignmentClosed(AnnotationError):
    """The assignment can no longer take this answer (expired and filled, skipped, or edits closed)."""


class SubmissionInvalid(AnnotationError):
    def __init__(self, errors: dict[str, list[str]]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))


# --- rubrics -----------------------------------------------------------------------------------------


def rubric_defaults_ensure() -> dict[str, int]:
    """Create version-1 rubric rows from ``annotation.domain.rubrics`` for criteria that have none.

    Returns the newest version of every criterion. Safe to call again; edited rubrics are new versions
    and are never overwritten.
    """
    present = set(Rubric.objects.values_list("criterion", flat=True).distinct())
    rows = []
    for criterion, entry in default_rubrics.RUBRICS.items():
        if criterion in present:
            continue
        label = default_rubrics.CRITERION_LABELS.get(criterion, {"id": criterion, "en": criterion})
        question = default_rubrics.CRITERION_QUESTIONS.get(criterion, {})
        for category, texts in [("", entry["default"]), *entry["overrides"].items()]:
            levels = {
                lang: {str(v): text for v, text in texts[lang].items()} for lang in default_rubrics.LANGS
            }
            rows.append(
                Rubric(
                    criterion=criterion,
                    category=category,
                    version=default_rubrics.RUBRIC_VERSION,
                    label=label,
                    question=question,
                    levels=levels,
                )
            )
    if rows:
        Rubric.objects.bulk_create(rows)
        rubrics_changed()  # bulk_create sends no post_save
    latest: dict[str, int] = {}
    for criterion, version in Rubric.objects.values_list("criterion", "version"):
        latest[criterion] = max(version, latest.get(criterion, 0))
    return latest


# --- projects, groups, members --------------------------------------------------------------------------


@dataclass(frozen=True)
class _TaskSpec:
    prompt_id: int
    response_ids: list[int]
    turn: int | None = None


def _task_specs(project: Project) -> list[_TaskSpec]:
    by_prompt: dict[int, list[tuple[int, str]]] = {}
    rows = (
        Response.objects.filter(prompt__dataset_id=project.dataset_id)
        .order_by("prompt_id", "id")
        .values_list("prompt_id", "id", "model_name")
    )
    for prompt_id, response_id, model_name in rows:
        by_prompt.setdefault(prompt_id, []).append((response_id, model_name))
    turns = dict(project.dataset.prompts.values_list("id", "turns"))
    specs: list[_TaskSpec] = []
    minimum = 1 if project.kind == Project.Kind.LIKERT else 2
    for prompt_id in sorted(by_prompt):
        responses = by_prompt[prompt_id]
        if len(responses) < minimum:
            continue
        if project.kind != Project.Kind.PAIRWISE:
            specs.append(_TaskSpec(prompt_id, [rid for rid, _ in responses]))
            continue
        # One response per model: the first (oldest) wins when a model answered twice.
        by_model: dict[str, int] = {}
        for response_id, model_name in responses:
            by_model.setdefault(model_name, response_id)
        if project.pair_mode == Project.PairMode.ALL:
            pairs = all_pairs(by_model)
        else:
            n_available = len(by_model) * (len(by_model) - 1) // 2
            pairs = sample_pairs(
                by_model, min(project.pairs_per_prompt, n_available), project.seed, prompt_id
            )
        n_turns = max(1, len(turns.get(prompt_id) or []))
        for unit in pair_units(pairs, n_turns, project.turn_mode):
            first, second = unit.pair
            specs.append(_TaskSpec(prompt_id, [by_model[first], by_model[second]], unit.turn))
    return specs


def _slots_create(*, group: AnnotatorGroup, tasks: Iterable[Task]) -> int:
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


def _validate_project(
    data: Mapping[str, object], dataset: Dataset, rubric_versions: Mapping[str, int]
) -> None:
    errors: dict[str, str] = {}
    kind = data["kind"]
    if kind not in KINDS:
        errors["kind"] = f"Unknown kind; expected one of {', '.join(KINDS)}."
    if dataset.kind != Dataset.Kind.PROMPTS:
        errors["dataset"] = "Rating jobs need a dataset of prompts and responses."
    criteria = list(data["criteria"])  # type: ignore[call-overload]
    if kind == Project.Kind.LIKERT and not criteria:
        errors["criteria"] = "A likert project needs at least one criterion."
    unknown = [c for c in criteria if c not in rubric_versions]
    if unknown:
        errors["criteria"] = f"No rubric for {', '.join(unknown)}."
    if len(set(criteria)) != len(criteria):
        errors["criteria"] = "Criteria repeat."
    if not 1 <= int(data["overlap"]) <= 50:  # type: ignore[call-overload]
        errors["overlap"] = "Overlap must be between 1 and 50."
    if not 1 <= int(data["lease_minutes"]) <= 7 * 24 * 60:  # type: ignore[call-overload]
        errors["lease_minutes"] = "The lease must be between 1 minute and 7 days."
    if not 0 <= float(data["gold_rate"]) <= 1:  # type: ignore[arg-type]
        errors["gold_rate"] = "The gold rate is a fraction between 0 and 1."
    if data["best_pick"] not in Project.BestPick.values:
        errors["best_pick"] = "Expected off, optional or required."
    if data["pair_mode"] not in Project.PairMode.values:
        errors["pair_mode"] = "Expected all or sample."
    if data["turn_mode"] not in Project.TurnMode.values:
        errors["turn_mode"] = "Expected overall or per_turn."
    if int(data["pairs_per_prompt"]) < 1:  # type: ignore[call-overload]
        errors["pairs_per_prompt"] = "Sample at least one pair per prompt."
    if errors:
        raise ProjectInvalid(errors)


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
) -> Project:
    """A draft project over ``dataset`` with its tasks and groups (members are added afterwards).

    Likert and best-of-N: one task per prompt with all its responses. Pairwise: one task per chosen model
    pair (all pairs, or ``pairs_per_prompt`` sampled per prompt) and, in ``per_turn`` mode, per turn.
    Translation, question authoring and answering projects: see ``annotation.services.jobs``.
    """
    if kind in JOB_KINDS:
        from annotation.services.jobs import job_project_create

        return job_project_create(
            dataset=dataset,
            name=name,
            kind=kind,
            overlap=overlap,
            seed=secrets.randbelow(2**31) if seed is None else seed,
            lease_minutes=lease_minutes,
            allow_edits=allow_edits,
            instructions_id=instructions_id,
            instructions_en=instructions_en,
            description=description,
            groups=groups,
            created_by=created_by,
            max_ambiguous=max_ambiguous,
            flag_settings=dict(flag_settings or {}),
        )
    if dataset is None:
        raise ProjectInvalid({"dataset": "Choose a dataset."})
    if criteria is None:
        criteria = list(default_rubrics.CRITERIA) if kind == Project.Kind.LIKERT else []
    versions = rubric_defaults_ensure()
    fields = {
        "kind": kind,
        "criteria": list(criteria),
        "best_pick": best_pick if kind == Project.Kind.LIKERT else Project.BestPick.OFF,
        "allow_all_bad": allow_all_bad,
        "overlap": overlap,
        "lease_minutes": lease_minutes,
        "gold_rate": gold_rate,
        "pair_mode": pair_mode,
        "pairs_per_prompt": pairs_per_prompt,
        "turn_mode": turn_mode,
    }
    _validate_project(fields, dataset, versions)
    if not groups:
        raise ProjectInvalid({"groups": "A project needs at least one annotator group."})
    project = Project.objects.create(
        dataset=dataset,
        name=name,
        description=description,
        seed=secrets.randbelow(2**31) if seed is None else seed,
        allow_edits=allow_edits,
        instructions_id=instructions_id,
        instructions_en=instructions_en,
        rubric_versions={c: versions[c] for c in criteria},
        created_by=created_by,
        **fields,
    )
    specs = _task_specs(project)
    tasks = [
        Task(
            project=project,
            prompt_id=spec.prompt_id,
            response_ids=spec.response_ids,
            response_a_id=spec.response_ids[0] if kind == Project.Kind.PAIRWISE else None,
            response_b_id=spec.response_ids[1] if kind == Project.Kind.PAIRWISE else None,
            turn=spec.turn,
        )
        for spec in specs
    ]
    Task.objects.bulk_create(tasks, batch_size=BATCH_SIZE)
    project.n_tasks = len(tasks)
    project.save(update_fields=["n_tasks"])
    for group_name in dict.fromkeys(groups):
        annotator_group_create(project=project, name=group_name)
    return project


@transaction.atomic
def project_update(*, project: Project, **changes: object) -> Project:
    """Change settings that do not reshape the tasks; overlap only while the project is a draft."""
    editable = {
        "name",
        "description",
        "instructions_id",
        "instructions_en",
        "lease_minutes",
        "allow_edits",
        "gold_rate",
        "best_pick",
        "allow_all_bad",
        "overlap",
        "max_ambiguous",
        "flag_settings",
    }
    unknown = set(changes) - editable
    if unknown:
        raise ProjectInvalid({name: "Cannot be changed after creation." for name in sorted(unknown)})
    project.refresh_from_db(fields=["status"])
    if "overlap" in changes and changes["overlap"] != project.overlap:
        if project.status != Project.Status.DRAFT:
            raise ProjectInvalid({"overlap": "Overlap can only change while the project is a draft."})
        TaskSlot.objects.filter(project_id=project.pk).update(
            capacity=changes["overlap"], open_count=changes["overlap"]
        )
    for name, value in changes.items():
        setattr(project, name, value)
    if project.kind in JOB_KINDS:
        from annotation.services.jobs import job_project_validate

        job_project_validate(project)
        project.save()
        return project
    data = {
        "kind": project.kind,
        "criteria": project.criteria,
        "overlap": project.overlap,
        "lease_minutes": project.lease_minutes,
        "gold_rate": project.gold_rate,
        "best_pick": project.best_pick,
        "pair_mode": project.pair_mode,
        "pairs_per_prompt": project.pairs_per_prompt,
        "turn_mode": project.turn_mode,
    }
    _validate_project(data, project.dataset, project.rubric_versions)
    project.save()
    return project


@transaction.atomic
def project_delete(*, project: Project) -> None:
    if Assignment.objects.filter(project=project).exists():
        raise AnnotationError("A project with annotations cannot be deleted; close it instead.")
    project.delete()


_TRANSITIONS = {
    "activate": ({Project.Status.DRAFT, Project.Status.PAUSED}, Project.Status.ACTIVE),
    "pause": ({Project.Status.ACTIVE}, Project.Status.PAUSED),
    "close": ({Project.Status.DRAFT, Project.Status.ACTIVE, Project.Status.PAUSED}, Project.Status.CLOSED),
}


@transaction.atomic
def project_status_set(*, project: Project, action: str) -> Project:
    """``activate`` (from draft or paused), ``pause`` or ``close``."""
    if action not in _TRANSITIONS:
        raise AnnotationError(f"Unknown action {action!r}; expected activate, pause or close.")
    allowed_from, target = _TRANSITIONS[action]
    project = Project.objects.select_for_update().get(pk=project.pk)
    if project.status not in allowed_from:
        raise AnnotationError(f"A {project.status} project cannot {action}.")
    if target == Project.Status.ACTIVE and not Membership.objects.filter(project=project).exists():
        raise AnnotationError("Add at least one annotator before activating the project.")
    project.status = target
    project.save(update_fields=["status"])
    return project


def project_activate(*, project: Project) -> Project:
    return project_status_set(project=project, action="activate")


def project_pause(*, project: Project) -> Project:
    return project_status_set(project=project, action="pause")


def project_close(*, project: Project) -> Project:
    return project_status_set(project=project, action="close")


@transaction.atomic
def annotator_group_create(*, project: Project, name: str) -> AnnotatorGroup:
    """A group gets its own k places on every task (gold tasks have none: they never count toward k)."""
    name = name.strip()
    if not name:
        raise ProjectInvalid({"name": "A group needs a name."})
    if AnnotatorGroup.objects.filter(project=project, name=name).exists():
        raise ProjectInvalid({"name": f"The project already has a group {name!r}."})
    group = AnnotatorGroup.objects.create(project=project, name=name)
    _slots_create(group=group, tasks=project.tasks.filter(is_gold=False).only("id").iterator(BATCH_SIZE))
    return group


@transaction.atomic
def project_member_add(*, project: Project, user: AbstractBaseUser, group: AnnotatorGroup) -> Membership:
    """Add ``user`` to ``group``; an annotator belongs to one group per project (moving is refused
    once they have work, since their submissions count toward their first group's k)."""
    if group.project_id != project.pk:
        raise ProjectInvalid({"group": "The group belongs to another project."})
    membership = Membership.objects.select_for_update().filter(project=project, user=user).first()
    if membership is not None:
        if membership.group_id == group.pk:
            return membership
        if Assignment.objects.filter(project=project, annotator=user).exists():
            raise ProjectInvalid({"user": "Already annotating in another group of this project."})
        membership.group = group
        membership.save(update_fields=["group"])
        return membership
    where = annotator_order_slot(project.seed, user.pk, ORDER_SLOTS)
    return Membership.objects.create(
        project=project, group=group, user=user, order_slot=where.slot, order_offset=where.offset
    )


@transaction.atomic
def project_member_remove(*, project: Project, user: AbstractBaseUser) -> bool:
    """Remove an annotator; their open claims go back to the pool, their submissions stay."""
    membership = Membership.objects.select_for_update().filter(project=project, user=user).first()
    if membership is None:
        return False
    held = list(
        Assignment.objects.select_for_update()
        .filter(project=project, annotator=user, status=Assignment.Status.ASSIGNED)
        .values_list("id", "slot_id")
    )
    _release(held, status=Assignment.Status.EXPIRED)
    membership.delete()
    return True


@transaction.atomic
def task_gold_set(*, task: Task, answer: object) -> Task:
    """Make a draft project's task a gold item with ``answer`` in canonical indexes (see
    ``annotation.domain.gold.score_gold``); it leaves the k pool and is served at the gold rate."""
    project = task.project
    if project.status != Project.Status.DRAFT:
        raise AnnotationError("Gold items are chosen while the project is a draft.")
    score_gold(project.kind, answer, answer)  # raises on a malformed answer
    task.is_gold = True
    task.gold_answer = answer
    task.save(update_fields=["is_gold", "gold_answer"])
    TaskSlot.objects.filter(task=task).delete()
    project.n_tasks = project.tasks.filter(is_gold=False).count()
    project.save(update_fields=["n_tasks"])
    return task


# --- the annotation loop -------------------------------------------------------------------------------


def _release(held: Sequence[tuple[int, int | None]], *, status: str, reason: str = "") -> int:
    """Turn held assignments into ``status`` and give their places back to the pool."""
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
    return _release(held, status=Assignment.Status.EXPIRED)


@transaction.atomic
def leases_reclaim(*, project: Project | None = None, now: datetime | None = None) -> int:
    """Expire every unsubmitted claim whose lease has passed; their places return to the pool."""
    return _expire_leases(project_id=project.pk if project else None, now=now or timezone.now())


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


def _job_claim_filter(kind: str, user_id: int) -> tuple[Q, tuple[str, ...]]:
    """What makes a task claimable in a translation or question job, and what the claim loads with it.

    A unit is translated while it waits for a (first or revised) translation and reviewed once submitted,
    never by its own translator; a question is answered once accepted, never by its author.
    """
    from datasets_app.models import Question, TranslationUnit

    if kind == Project.Kind.TRANSLATION:
        ready = [TranslationUnit.Status.TO_TRANSLATE, TranslationUnit.Status.REVISE]
        return Q(task__translation_unit__status__in=ready), ("task__translation_unit",)
    if kind == Project.Kind.TRANSLATION_REVIEW:
        return (
            Q(task__translation_unit__status=TranslationUnit.Status.TO_REVIEW)
            & ~Q(task__translation_unit__translator_id=user_id),
            ("task__translation_unit",),
        )
    if kind == Project.Kind.MCQ_ANSWER:
        return (
            Q(task__question__status=Question.Status.ACCEPTED) & ~Q(task__question__creator_id=user_id),
            ("task__question",),
        )
    if kind == Project.Kind.QUESTION_AUTHORING:
        return Q(), ("task__concept_pair",)
    return Q(), ("task__prompt",)


def _next_open_slot(membership: Membership, user_id: int) -> TaskSlot | None:
    field = f"order_key_{membership.order_slot}"
    had = Assignment.objects.filter(task_id=OuterRef("task_id"), annotator_id=user_id)
    ready, related = _job_claim_filter(membership.project.kind, user_id)
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


def _assignment_new(
    *,
    project: Project,
    task: Task,
    membership: Membership,
    user_id: int,
    now: datetime,
    slot: TaskSlot | None,
) -> Assignment:
    return Assignment.objects.create(
        project=project,
        task=task,
        slot=slot,
        group_id=membership.group_id,
        annotator_id=user_id,
        is_gold=task.is_gold,
        permutation=response_permutation(project.seed, task.pk, user_id, len(task.response_ids))
        if task.response_ids
        else [],
        lease_expires_at=now + timedelta(minutes=project.lease_minutes),
        started_at=now,
    )


def _own_open_claim(project: Project, user_id: int) -> Assignment | None:
    """The caller's held assignment in ``project``, if any, with what the task page needs.

    Most claims find none, so a one-column probe comes first and the full row (with task and prompt)
    is read only when there is one to resume.
    """
    held = Assignment.objects.filter(
        project_id=project.pk, annotator_id=user_id, status=Assignment.Status.ASSIGNED
    ).order_by("id")
    first_id = held.values_list("id", flat=True).first()
    if first_id is None:
        return None
    own = held.select_related("task__prompt").filter(id=first_id).first()
    if own is not None:
        own.project = project
    return own


@transaction.atomic
def assignment_claim(
    *, project: Project, user: AbstractBaseUser, now: datetime | None = None
) -> Assignment | None:
    """The caller's next task in ``project``, or ``None`` when their group needs nothing more from them.

    Resumes the caller's own open claim first; otherwise reclaims the project's expired leases and takes
    the first open place of the caller's group in the caller's shuffled order, skipping tasks the caller
    ever had (submitted, skipped or expired). At the project's gold rate a gold item comes instead.
    """
    now = now or timezone.now()
    try:
        # get() rather than first(): (project, user) is unique, and first() would order by the model's
        # default ordering, a join-heavy ORDER BY that costs more to compile than the rest of the query.
        membership = (
            Membership.objects.select_for_update(of=("self",))
            .select_related("project")
            .get(project_id=project.pk, user_id=user.pk)
        )
    except Membership.DoesNotExist:
        raise NotAMember("You are not an annotator of this project.") from None
    project = membership.project
    if project.status != Project.Status.ACTIVE:
        raise ProjectNotOpen("This project is not open for annotation.")
    _expire_leases(project_id=project.pk, now=now)
    own = _own_open_claim(project, user.pk)
    if own is not None:
        return own
    if project.gold_rate > 0 and is_gold_slot(project.seed, user.pk, membership.n_served, project.gold_rate):
        gold = _next_gold_task(project, user.pk)
        if gold is not None:
            assignment = _assignment_new(
                project=project, task=gold, membership=membership, user_id=user.pk, now=now, slot=None
            )
            Membership.objects.filter(pk=membership.pk).update(n_served=F("n_served") + 1)
            return assignment
    slot = _next_open_slot(membership, user.pk)
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
    return assignment


def submission_rules(project: Project, task: Task) -> SubmissionRules:
    return SubmissionRules(
        kind=project.kind,  # type: ignore[arg-type]
        n_responses=len(task.response_ids),
        criteria=tuple(project.criteria) if project.kind == Project.Kind.LIKERT else (),
        best_pick=project.best_pick if project.kind == Project.Kind.LIKERT else "off",  # type: ignore[arg-type]
        allow_all_bad=project.allow_all_bad,
    )


def _rows(assignment: Assignment, values: Sequence[AnnotationValue], comment: str) -> list[Annotation]:
    task, project = assignment.task, assignment.project
    response_ids = task.response_ids
    rows = []
    for value in values:
        row = Annotation(
            assignment=assignment,
            round=assignment.round,
            criterion=value.criterion,
            rubric_version=project.rubric_versions.get(value.criterion),
        )
        if value.criterion == "vote":
            row.turn = task.turn if value.turn is None else value.turn
            row.choice = str(value.value)
            row.response_id = {"A": response_ids[0], "B": response_ids[1]}.get(str(value.value))
        elif value.criterion == "best":
            if value.value == ALL_BAD:
                row.choice = ALL_BAD
            else:
                row.response_id = response_ids[int(value.value)]
        else:
            row.response_id = response_ids[int(value.target)]  # type: ignore[arg-type]
            row.value_int = int(value.value)
        rows.append(row)
    if comment:
        rows.append(
            Annotation(assignment=assignment, round=assignment.round, criterion="comment", comment=comment)
        )
    return rows


def _signature(rows: Iterable[Annotation]) -> set[tuple]:
    return {(r.response_id, r.turn, r.criterion, r.value_int, r.choice, r.comment) for r in rows}


@dataclass(frozen=True)
class SubmitResult:
    assignment: Assignment
    outcome: str  # "created", "unchanged" or "edited"


def _edit_allowed(assignment: Assignment, now: datetime) -> bool:
    project = assignment.project
    if project.allow_edits and project.status in (Project.Status.ACTIVE, Project.Status.PAUSED):
        return True
    return assignment.lease_expires_at is not None and now < assignment.lease_expires_at


def assignment_for_update(*, token: str, user: AbstractBaseUser) -> Assignment:
    """The caller's own assignment, locked; anybody else's raises ``Assignment.DoesNotExist`` (a 404)."""
    return (
        Assignment.objects.select_for_update(of=("self",))
        .select_related("task", "project")
        .get(token=token, annotator_id=user.pk)
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
    """Store an answer given in shown positions, mapped to canonical responses.

    Posting the same answer again changes nothing; a different answer to a submitted task is an edit,
    allowed while the project allows edits or the lease still runs. ``seconds`` is the time the page was
    in view as measured by the browser; it is capped by the time since the claim.
    """
    now = now or timezone.now()
    assignment = assignment_for_update(token=token, user=user)
    project = assignment.project
    if project.kind in JOB_KINDS:
        from annotation.services.jobs import job_submit

        return job_submit(assignment=assignment, payload=payload, seconds=seconds, now=now)
    result = clean_submission(payload, submission_rules(project, assignment.task), assignment.permutation)
    if not result.ok or result.answer is None:
        raise SubmissionInvalid(result.errors_by_field())
    answer = result.answer
    comment = getattr(answer, "comment", "") or getattr(answer, "rationale", "")
    rows = _rows(assignment, annotation_values(answer), comment)

    if assignment.status == Assignment.Status.SUBMITTED:
        current = assignment.annotations.filter(round=assignment.round)
        if _signature(current) == _signature(rows):
            return SubmitResult(assignment, "unchanged")
        if not _edit_allowed(assignment, now):
            raise AssignmentClosed("This answer can no longer be changed.")
        current.delete()
        Annotation.objects.bulk_create(rows)
        assignment.n_edits += 1
        assignment.save(update_fields=["n_edits"])
        return SubmitResult(assignment, "edited")

    mark_submitted(assignment, now=now, seconds=seconds)
    Annotation.objects.bulk_create(rows)
    return SubmitResult(assignment, "created")


def mark_submitted(assignment: Assignment, *, now: datetime, seconds: float | None) -> None:
    """Move a held (or expired) assignment to submitted and its place from active to submitted.

    Call with the assignment locked (``assignment_for_update``). Raises ``AssignmentClosed`` when the
    project is closed, the task was skipped, or the lease ran out and the group's places are all taken.
    """
    if assignment.project.status == Project.Status.CLOSED:
        raise AssignmentClosed("This project is closed.")
    if assignment.status == Assignment.Status.SKIPPED:
        raise AssignmentClosed("You skipped this task.")
    if assignment.status == Assignment.Status.EXPIRED:
        # The work was done after the lease ran out: keep it if the group still has a place for it.
        if assignment.slot_id is not None:
            taken = TaskSlot.objects.filter(pk=assignment.slot_id, open_count__gt=0).update(
                open_count=F("open_count") - 1, submitted_count=F("submitted_count") + 1
            )
            if not taken:
                raise AssignmentClosed("Your time on this task ran out and others have completed it.")
    elif assignment.slot_id is not None:
        TaskSlot.objects.filter(pk=assignment.slot_id).update(
            active_count=F("active_count") - 1, submitted_count=F("submitted_count") + 1
        )
    elapsed = max(0.0, (now - assignment.started_at).total_seconds())
    assignment.status = Assignment.Status.SUBMITTED
    assignment.submitted_at = now
    assignment.seconds_on_task = min(seconds, elapsed) if seconds is not None and seconds >= 0 else elapsed
    assignment.save(update_fields=["status", "submitted_at", "seconds_on_task"])


def reopen(assignment: Assignment, *, now: datetime) -> None:
    """Send a submitted assignment back to its annotator as a new round, holding the group's place for
    them (a reviewer's rejection, or a revised translation coming back to its reviewer)."""
    if assignment.status != Assignment.Status.SUBMITTED:
        raise AnnotationError("Only submitted work can be sent back.")
    assignment.status = Assignment.Status.ASSIGNED
    assignment.round += 1
    assignment.started_at = now
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
        raise AssignmentClosed("Only a task you are working on can be skipped.")
    _release(
        [(assignment.pk, assignment.slot_id)], status=Assignment.Status.SKIPPED, reason=reason.strip()[:500]
    )
    assignment.refresh_from_db()
    return assignment


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
    if verdict not in Review.Verdict.values:
        raise AnnotationError("The verdict is accept or reject.")
    assignment = (
        Assignment.objects.select_for_update(of=("self",)).select_related("project").get(pk=assignment.pk)
    )
    if assignment.annotator_id == reviewer.pk:
        raise AnnotationError("Nobody reviews their own work.")
    if assignment.status != Assignment.Status.SUBMITTED:
        raise AnnotationError("Only submitted work can be reviewed.")
    if annotation is not None and annotation.assignment_id != assignment.pk:
        raise AnnotationError("The annotation belongs to another assignment.")
    if verdict == Review.Verdict.REJECT and not comment.strip():
        raise AnnotationError("Say what to fix when you reject.")
    kind = assignment.project.kind
    if kind in (Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW, Project.Kind.MCQ_ANSWER):
        raise AnnotationError(
            "Translations are reviewed in a translation review project; answers are not reviewed."
        )
    if (
        kind == Project.Kind.QUESTION_AUTHORING
        and Review.objects.filter(
            assignment=assignment, round=assignment.round, annotation__isnull=True
        ).exists()
    ):
        raise AnnotationError("This round has been reviewed already.")
    review = Review.objects.create(
        assignment=assignment,
        annotation=annotation,
        reviewer=reviewer,
        verdict=verdict,
        comment=comment.strip(),
        round=assignment.round,
    )
    if kind == Project.Kind.QUESTION_AUTHORING:
        from annotation.services.questions import authoring_reviewed

        authoring_reviewed(assignment=assignment, review=review, now=now)
    if verdict == Review.Verdict.REJECT:
        reopen(assignment, now=now)
    return review
