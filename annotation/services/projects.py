"""Project set-up that every job kind shares: rubrics, the settings of translation and question jobs,
status changes, groups, members and gold items.

Creating a project and changing its settings depend on its kind, so ``project_create`` and
``project_update`` live in ``annotation.services.kinds`` and call the pieces here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext_noop

from accounts.domain.echo import clipped
from annotation.domain import rubrics as default_rubrics
from annotation.domain.blinding import annotator_order_slot
from annotation.domain.gold import score_gold
from annotation.domain.span_settings import SpanSettingsInvalid, span_config
from annotation.models import (
    ORDER_SLOTS,
    SPAN_KINDS,
    AnnotatorGroup,
    Assignment,
    ErrorSpan,
    Membership,
    Project,
    Rubric,
    Task,
    TaskSlot,
)
from annotation.selectors.core import rubrics_changed
from annotation.services.loop import (
    BATCH_SIZE,
    AnnotationError,
    ProjectInvalid,
    assignments_release,
    slots_create,
)
from annotation.services.qualification import GOLD_CLOSED, GoldRefused, gold_answers_write
from datasets_app.domain.translation_flags import BACK_TRANSLATION_MEASURES, FlagConfig
from datasets_app.models import Dataset

__all__ = [
    "SINGLE_OWNER_KINDS",
    "annotator_group_create",
    "job_project_new",
    "job_project_validate",
    "project_activate",
    "project_close",
    "project_delete",
    "project_member_add",
    "project_member_remove",
    "project_pause",
    "project_settings_apply",
    "project_status_set",
    "rubric_defaults_ensure",
    "task_gold_set",
]

# Jobs where one person owns an item at a time: k is one.
SINGLE_OWNER_KINDS = (
    Project.Kind.TRANSLATION,
    Project.Kind.TRANSLATION_REVIEW,
    Project.Kind.QUESTION_AUTHORING,
)
_FLOAT_SETTINGS = {name for name, f in FlagConfig.__dataclass_fields__.items() if f.type in ("float", float)}
_INT_SETTINGS = {"identical_min_words", "min_pair_units"}
# Similarities: at most 1.
_SIMILARITY_SETTINGS = {
    "back_translation_threshold": "chrF++",
    "back_translation_embedding_threshold": "sentence-embedding",
}


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


# --- settings of translation and question jobs ----------------------------------------------------------


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
        elif name == "back_translation_measure":
            if not isinstance(value, str) or value not in BACK_TRANSLATION_MEASURES:
                known = " or ".join(repr(m) for m in BACK_TRANSLATION_MEASURES)
                errors["flag_settings"] = (
                    f"back_translation_measure must be {known}, not {clipped(repr(value))}."
                )
        elif name in _SIMILARITY_SETTINGS:
            if (
                not isinstance(value, int | float)
                or isinstance(value, bool)
                or not math.isfinite(value)
                or not 0 < value <= 1
            ):
                errors["flag_settings"] = (
                    f"{name} is a {_SIMILARITY_SETTINGS[name]} similarity: a number above 0 and at most 1, "
                    f"not {clipped(repr(value))}."
                )
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
    """Raise ``ProjectInvalid`` when the settings do not fit the translation or question job."""
    errors: dict[str, str] = {}
    kind = project.kind
    wanted = (
        Dataset.Kind.TRANSLATIONS
        if kind in (Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW, *SPAN_KINDS)
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
    if project.span_settings:
        if kind not in SPAN_KINDS:
            errors["span_settings"] = "Only error-span projects (MQM, ESA) have span settings."
        else:
            try:
                config = span_config(project.span_settings, protocol=kind)
            except SpanSettingsInvalid as exc:
                errors["span_settings"] = str(exc)
            else:
                used = set()
                if project.pk:
                    used = set(
                        ErrorSpan.objects.filter(assignment__project_id=project.pk)
                        .exclude(category="")
                        .values_list("category", flat=True)
                        .distinct()
                    )
                missing = sorted(used - config.codes)
                if missing:
                    errors["span_settings"] = (
                        f"Marked spans use categories the new tree leaves out: {', '.join(missing[:5])}."
                    )
    if errors:
        raise ProjectInvalid(errors)


def job_project_new(
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
    """A saved draft translation or question project, checked, without tasks or groups yet.

    Authoring without a dataset gets a new one for the questions its authors write. Call inside a
    transaction (``kinds.job_project_create``).
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
        span_settings=dict(span_settings or {}),
    )
    job_project_validate(project)
    project.save()
    return project


# --- settings, status ----------------------------------------------------------------------------------

_EDITABLE = {
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
    "span_settings",
}


def project_settings_apply(*, project: Project, changes: Mapping[str, object]) -> Project:
    """Set changed settings on ``project`` (unsaved; the kind's check comes next, in
    ``kinds.project_update``). Overlap changes only while the project is a draft, and moves every place
    with it. Call inside a transaction."""
    unknown = set(changes) - _EDITABLE
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
    return project


@transaction.atomic
def project_delete(*, project: Project) -> None:
    if Assignment.objects.filter(project=project).exists():
        raise AnnotationError(gettext_noop("A project with annotations cannot be deleted; close it instead."))
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
        raise AnnotationError(gettext_noop("Add at least one annotator before activating the project."))
    project.status = target
    project.save(update_fields=["status"])
    return project


def project_activate(*, project: Project) -> Project:
    return project_status_set(project=project, action="activate")


def project_pause(*, project: Project) -> Project:
    return project_status_set(project=project, action="pause")


def project_close(*, project: Project) -> Project:
    return project_status_set(project=project, action="close")


# --- groups, members, gold ----------------------------------------------------------------------------


@transaction.atomic
def annotator_group_create(*, project: Project, name: str) -> AnnotatorGroup:
    """A group gets its own k places on every task (gold tasks have none: they never count toward k)."""
    name = name.strip()
    if not name:
        raise ProjectInvalid({"name": "A group needs a name."})
    if AnnotatorGroup.objects.filter(project=project, name=name).exists():
        raise ProjectInvalid({"name": f"The project already has a group {name!r}."})
    group = AnnotatorGroup.objects.create(project=project, name=name)
    # project_id is read too: tasks of a related manager are given their project, which would otherwise
    # load each task's deferred project_id with a query of its own.
    tasks = project.tasks.filter(is_gold=False).only("id", "project_id").iterator(BATCH_SIZE)
    slots_create(group=group, tasks=tasks)
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
    assignments_release(held=held, status=Assignment.Status.EXPIRED)
    membership.delete()
    return True


@transaction.atomic
def task_gold_set(*, task: Task, answer: object) -> Task:
    """Make a task a gold item with ``answer`` in canonical indexes (see
    ``annotation.domain.gold.score_gold``); it leaves the k pool and is served at the gold rate. As on the
    gold page (``task_gold_mark``): not in a closed project, and in an active or paused one only a task
    nobody has claimed."""
    project = task.project
    if project.status == Project.Status.CLOSED:
        raise AnnotationError(GOLD_CLOSED)
    score_gold(project.kind, answer, answer)  # raises on a malformed answer
    try:
        gold_answers_write(project=project, chosen=[(task, answer)])
    except GoldRefused as exc:
        raise AnnotationError(exc.message, **exc.params) from exc
    return task
