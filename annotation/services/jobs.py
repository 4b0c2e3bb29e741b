"""Project set-up and submission dispatch of the translation and question jobs.

``core.project_create`` and ``core.assignment_submit`` hand these kinds over here. Tasks of a job point
at the item they are about (a translation unit, a concept pair, a question); items that become ready
later (uploaded concept pairs, newly accepted questions) get their task and slots when they arrive.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.models import Assignment, Project, Task
from annotation.services.core import (
    BATCH_SIZE,
    AnnotationError,
    ProjectInvalid,
    SubmitResult,
    _slots_create,
    annotator_group_create,
)
from datasets_app.domain.translation_flags import FlagConfig
from datasets_app.models import Dataset, Question

# Jobs where one person owns an item at a time: k is one.
SINGLE_OWNER_KINDS = (
    Project.Kind.TRANSLATION,
    Project.Kind.TRANSLATION_REVIEW,
    Project.Kind.QUESTION_AUTHORING,
)
_FLOAT_SETTINGS = {name for name, f in FlagConfig.__dataclass_fields__.items() if f.type in ("float", float)}
_INT_SETTINGS = {"identical_min_words", "min_pair_units"}


def _validate_flag_settings(settings: Mapping[str, object]) -> dict[str, str]:
    errors: dict[str, str] = {}
    for name, value in settings.items():
        if name == "register_markers":
            ok = isinstance(value, Mapping) and all(
                isinstance(code, str)
                and isinstance(words, list | tuple)
                and all(isinstance(w, str) for w in words)
                for code, words in value.items()
            )
            if not ok:
                errors["flag_settings"] = "register_markers maps a register code to a list of words."
        elif name in _FLOAT_SETTINGS:
            if (
                not isinstance(value, int | float)
                or isinstance(value, bool)
                or not math.isfinite(value)
                or value <= 0
            ):
                errors["flag_settings"] = f"{name} must be a positive number."
        elif name in _INT_SETTINGS:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                errors["flag_settings"] = f"{name} must be a positive whole number."
        else:
            errors["flag_settings"] = f"Unknown flag setting {name!r}."
    return errors


def job_project_validate(project: Project) -> None:
    """Raise ``ProjectInvalid`` when the settings do not fit the job."""
    errors: dict[str, str] = {}
    kind = project.kind
    wanted = (
        Dataset.Kind.TRANSLATIONS
        if kind in (Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW)
        else Dataset.Kind.QUESTIONS
    )
    if project.dataset.kind != wanted:
        errors["dataset"] = f"A {kind} project needs a dataset of {wanted}."
    if kind in SINGLE_OWNER_KINDS and project.overlap != 1:
        errors["overlap"] = "One person works on each item at a time here: the overlap must be 1."
    if not 1 <= project.overlap <= 50:
        errors["overlap"] = "Overlap must be between 1 and 50."
    if not 1 <= project.lease_minutes <= 7 * 24 * 60:
        errors["lease_minutes"] = "The lease must be between 1 minute and 7 days."
    if project.gold_rate:
        errors["gold_rate"] = "Gold items exist only in rating jobs."
    errors.update(_validate_flag_settings(project.flag_settings or {}))
    if errors:
        raise ProjectInvalid(errors)


def _tasks_add(project: Project, tasks: Sequence[Task]) -> int:
    """Store new tasks of a running project and give every group its k places on them."""
    if not tasks:
        return 0
    created = Task.objects.bulk_create(tasks, batch_size=BATCH_SIZE)
    for group in project.groups.all():
        _slots_create(group=group, tasks=created)
    Project.objects.filter(pk=project.pk).update(
        n_tasks=Task.objects.filter(project=project, is_gold=False).count()
    )
    project.refresh_from_db(fields=["n_tasks"])
    return len(created)


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
) -> Project:
    """A draft translation, translation review, question authoring or answering project.

    Translation jobs get one task per unit of the dataset (claims then wait for each unit's status).
    Answering gets one task per accepted question, and more as questions are accepted. Authoring starts
    empty: its tasks come with the uploaded (category, concept) pairs; without a dataset, one is created
    for the questions the authors write.
    """
    if dataset is None:
        if kind != Project.Kind.QUESTION_AUTHORING:
            raise ProjectInvalid({"dataset": "Choose a dataset."})
        dataset_name = f"{name} (questions)"
        if Dataset.objects.filter(name=dataset_name).exists():
            raise ProjectInvalid({"name": f"A dataset named {dataset_name!r} exists already."})
        dataset = Dataset.objects.create(
            name=dataset_name, kind=Dataset.Kind.QUESTIONS, created_by=created_by
        )
    if not groups:
        raise ProjectInvalid({"groups": "A project needs at least one annotator group."})
    if max_ambiguous < 0:
        raise ProjectInvalid({"max_ambiguous": "The number of ambiguous flags cannot be negative."})
    project = Project(
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
        created_by=created_by,
        max_ambiguous=max_ambiguous,
        flag_settings=flag_settings,
    )
    job_project_validate(project)
    project.save()
    if kind in (Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW):
        unit_ids = dataset.translation_units.order_by("id").values_list("id", flat=True)
        Task.objects.bulk_create(
            (Task(project=project, translation_unit_id=uid) for uid in unit_ids.iterator(BATCH_SIZE)),
            batch_size=BATCH_SIZE,
        )
    elif kind == Project.Kind.MCQ_ANSWER:
        question_ids = dataset.questions.filter(status=Question.Status.ACCEPTED).order_by("id")
        Task.objects.bulk_create(
            (Task(project=project, question_id=qid) for qid in question_ids.values_list("id", flat=True)),
            batch_size=BATCH_SIZE,
        )
    project.n_tasks = project.tasks.count()
    project.save(update_fields=["n_tasks"])
    for group_name in dict.fromkeys(groups):
        annotator_group_create(project=project, name=group_name)
    return project


def mcq_tasks_sync(*, questions: Iterable[Question]) -> int:
    """Give newly accepted questions a task in every open answering project over their dataset."""
    by_dataset: dict[int, list[int]] = {}
    for question in questions:
        by_dataset.setdefault(question.dataset_id, []).append(question.pk)
    added = 0
    for dataset_id, ids in by_dataset.items():
        projects = Project.objects.filter(
            dataset_id=dataset_id,
            kind=Project.Kind.MCQ_ANSWER,
            status__in=[Project.Status.DRAFT, Project.Status.ACTIVE, Project.Status.PAUSED],
        )
        for project in projects:
            have = set(
                Task.objects.filter(project=project, question_id__in=ids).values_list(
                    "question_id", flat=True
                )
            )
            added += _tasks_add(
                project, [Task(project=project, question_id=qid) for qid in ids if qid not in have]
            )
    return added


def job_submit(
    *, assignment: Assignment, payload: object, seconds: float | None, now: datetime
) -> SubmitResult:
    """Route a locked assignment's answer to its job."""
    from annotation.services import questions, translation

    kind = assignment.project.kind
    if not isinstance(payload, Mapping):
        raise AnnotationError("The answer must be an object.")
    if kind == Project.Kind.TRANSLATION:
        return translation.translation_submit(
            assignment=assignment, payload=payload, seconds=seconds, now=now
        )
    if kind == Project.Kind.TRANSLATION_REVIEW:
        return translation.translation_review_submit(
            assignment=assignment, payload=payload, seconds=seconds, now=now
        )
    if kind == Project.Kind.QUESTION_AUTHORING:
        return questions.authoring_submit(assignment=assignment, payload=payload, seconds=seconds, now=now)
    return questions.mcq_submit(assignment=assignment, payload=payload, seconds=seconds, now=now)
