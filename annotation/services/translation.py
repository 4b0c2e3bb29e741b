"""Writes of the translation jobs: translating, reviewing (accept / fix / reject), flags, export.

The review loop: a translator submits round n of a unit (status ``to_review``); a reviewer who is not the
translator accepts it, fixes it (the edited text becomes the unit's text, the round keeps both), or
rejects it with error categories and a comment (status ``revise``). A rejection reopens the translator's
assignment as a new round; their next submission reopens the reviewer's, so the same two people carry a
unit to the end. Every round stays in ``TranslationRound``.

Flags (``datasets_app.domain.translation_flags``) are stored with the unit and recomputed whenever its
text changes; the length-ratio flag compares against the unit's language pair in the whole dataset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext_noop

from accounts.events import REVIEW_REJECTED, event_emit
from annotation.models import (
    Annotation,
    Assignment,
    FlagRecompute,
    Project,
    Task,
    TranslationError,
    TranslationRound,
)
from annotation.services.loop import (
    BATCH_SIZE,
    AnnotationError,
    AssignmentClosed,
    SubmissionInvalid,
    SubmitResult,
    answer_object,
    mark_submitted,
    reopen,
)
from datasets_app.domain.translation_flags import (
    DEFAULT_MIN_PAIR_UNITS,
    DEFAULT_REGISTER_MARKERS,
    FlagConfig,
    FlagContext,
    PairLengthStats,
    TranslationUnitInput,
    compute_flags,
    pair_key,
    pair_length_stats,
    pair_length_stats_by_pair,
)
from datasets_app.jobs import (
    JobCancelled,
    JobKind,
    job_cancel,
    job_check,
    job_finish,
    job_heartbeat,
    job_retry,
    job_send,
    job_take,
    new_task_id,
)
from datasets_app.models import TranslationUnit
from datasets_app.services import back_translation_of, back_translation_similarities, flag_as_dict

__all__ = [
    "FLAG_RECOMPUTE_JOB",
    "ReviewAnswer",
    "clean_review",
    "flag_context_for",
    "flag_recompute_cancel",
    "flag_recompute_queue",
    "flag_recompute_retry",
    "flag_recompute_run",
    "translation_claim_filter",
    "translation_review_claim_filter",
    "translation_review_submit",
    "translation_submit",
    "translation_tasks_create",
    "unit_flags",
]

RECOMPUTE_BATCH = 500
MAX_TEXT = 20_000


# --- set-up and claims ----------------------------------------------------------------------------------


def translation_tasks_create(*, project: Project) -> int:
    """One task per unit of the dataset, for translating and for reviewing alike (claims then wait for
    each unit's status); returns how many."""
    unit_ids = project.dataset.translation_units.order_by("id").values_list("id", flat=True)
    created = Task.objects.bulk_create(
        (Task(project=project, translation_unit_id=uid) for uid in unit_ids.iterator(BATCH_SIZE)),
        batch_size=BATCH_SIZE,
    )
    return len(created)


def translation_claim_filter(user_id: int) -> tuple[Q, tuple[str, ...]]:
    """A unit is translated while it waits for a first or a revised translation."""
    ready = [TranslationUnit.Status.TO_TRANSLATE, TranslationUnit.Status.REVISE]
    return Q(task__translation_unit__status__in=ready), ("task__translation_unit",)


def translation_review_claim_filter(user_id: int) -> tuple[Q, tuple[str, ...]]:
    """A unit is reviewed once submitted, never by its own translator."""
    return (
        Q(task__translation_unit__status=TranslationUnit.Status.TO_REVIEW)
        & ~Q(task__translation_unit__translator_id=user_id),
        ("task__translation_unit",),
    )


# --- flags ---------------------------------------------------------------------------------------------


def flag_context_for(project: Project | None) -> tuple[FlagConfig, Mapping[str, Any], int]:
    """The project's thresholds, register word lists and minimum units per pair (defaults without one)."""
    settings = dict(project.flag_settings or {}) if project is not None else {}
    markers = settings.pop("register_markers", None) or DEFAULT_REGISTER_MARKERS
    min_units = int(settings.pop("min_pair_units", DEFAULT_MIN_PAIR_UNITS))
    config = FlagConfig(**{k: v for k, v in settings.items() if k in FlagConfig.__dataclass_fields__})
    return config, {**DEFAULT_REGISTER_MARKERS, **markers}, min_units


def _unit_input(unit: TranslationUnit, text: str | None = None) -> TranslationUnitInput:
    return TranslationUnitInput(
        source=unit.source_text,
        translation=unit.translation_text if text is None else text,
        source_language=unit.source_language,
        target_language=unit.target_language,
        register=unit.register or None,
        back_translation=back_translation_of(unit.meta),
    )


def _pair_stats(unit: TranslationUnit, *, exclude_self: bool, min_units: int) -> PairLengthStats:
    others = TranslationUnit.objects.filter(
        dataset_id=unit.dataset_id,
        source_language=unit.source_language,
        target_language=unit.target_language,
        register=unit.register,
    ).exclude(translation_text="")
    if exclude_self:
        others = others.exclude(pk=unit.pk)
    return pair_length_stats(others.values_list("source_text", "translation_text"), min_units=min_units)


def unit_flags(
    unit: TranslationUnit, *, text: str | None = None, project: Project | None = None
) -> list[dict]:
    """Flags of ``unit`` with ``text`` as its translation (default: its current one), against the length
    statistics of the other units of its language pair and register in the dataset."""
    config, markers, min_units = flag_context_for(project)
    stats = _pair_stats(unit, exclude_self=True, min_units=min_units)
    item = _unit_input(unit, text)
    [similarity] = back_translation_similarities([item], config=config)
    context = FlagContext(
        pair_stats=stats, register_markers=markers, back_translation_similarity=similarity, config=config
    )
    return [flag_as_dict(f) for f in compute_flags(item, context=context)]


def _recompute_failure(run: FlagRecompute, message: str) -> list[str]:
    run.error = message[:2000]
    return ["error"]


def _recompute_reset(run: FlagRecompute) -> list[str]:
    run.done = run.n_flagged = 0
    run.error = ""
    return ["done", "n_flagged", "error"]


def _recompute_clean_up(run: FlagRecompute, status: str) -> None:
    """Nothing to remove: every batch stores flags that are right for the unit's current text."""


FLAG_RECOMPUTE_JOB = JobKind(
    model=FlagRecompute,
    noun="flag recomputation",
    task="annotation.translation_flags_recompute",
    time_limit=timedelta(minutes=35),
    record_failure=_recompute_failure,
    reset=_recompute_reset,
    clean_up=_recompute_clean_up,
)


@transaction.atomic
def flag_recompute_queue(*, project: Project, user: AbstractBaseUser | None = None) -> FlagRecompute:
    """Record a recomputation of the project's flags and hand it to a worker once committed."""
    if project.kind not in (Project.Kind.TRANSLATION, Project.Kind.TRANSLATION_REVIEW):
        raise AnnotationError(gettext_noop("Only translation projects have flags."))
    running = project.flag_recomputes.filter(
        status__in=[FlagRecompute.Status.QUEUED, FlagRecompute.Status.RUNNING]
    )
    if running.exists():
        raise AnnotationError(gettext_noop("A recomputation of this project's flags is already under way."))
    run = FlagRecompute.objects.create(
        project=project,
        total=project.dataset.translation_units.count(),
        created_by=user,
        task_id=new_task_id(),
    )
    job_send(kind=FLAG_RECOMPUTE_JOB, job_id=run.pk, task_id=run.task_id)
    return run


def flag_recompute_run(*, run: FlagRecompute, task_id: str | None = None) -> FlagRecompute:
    """Recompute the flags of every unit of the run's project, saving progress after each batch.

    Length statistics come from all units of each language pair first (one pass), then units are
    flagged in batches. Safe to run twice: a delivery with nothing to run leaves the run alone, and a
    redelivery after its worker died starts it again from the first unit. A cancel asked for while it
    runs stops it after the current batch.
    """
    taken = job_take(kind=FLAG_RECOMPUTE_JOB, job_id=run.pk, task_id=task_id)
    if taken is None:
        run.refresh_from_db()
        return run
    run = taken.job
    project = run.project
    try:
        with job_heartbeat(kind=FLAG_RECOMPUTE_JOB, job=run):
            config, markers, min_units = flag_context_for(project)
            units = project.dataset.translation_units.order_by("id")
            fields = (
                "id",
                "source_text",
                "translation_text",
                "source_language",
                "target_language",
                "register",
                "meta",
            )
            inputs: dict[int, TranslationUnitInput] = {}
            for row in units.values_list(*fields).iterator(RECOMPUTE_BATCH):
                inputs[row[0]] = TranslationUnitInput(
                    row[1], row[2], row[3], row[4], row[5] or None, back_translation_of(row[6])
                )
            stats = pair_length_stats_by_pair(inputs.values(), min_units=min_units)
            run.total = len(inputs)
            run.done = run.n_flagged = 0
            job_check(kind=FLAG_RECOMPUTE_JOB, job=run, total=run.total, done=0, n_flagged=0)
            ids = list(inputs)
            for start in range(0, len(ids), RECOMPUTE_BATCH):
                batch = []
                chunk = ids[start : start + RECOMPUTE_BATCH]
                similarities = back_translation_similarities([inputs[i] for i in chunk], config=config)
                for unit_id, similarity in zip(chunk, similarities, strict=True):
                    item = inputs[unit_id]
                    context = FlagContext(
                        pair_stats=stats.get(pair_key(item)),
                        register_markers=markers,
                        back_translation_similarity=similarity,
                        config=config,
                    )
                    flags = [flag_as_dict(f) for f in compute_flags(item, context=context)]
                    run.n_flagged += bool(flags)
                    batch.append(TranslationUnit(pk=unit_id, flags=flags))
                TranslationUnit.objects.bulk_update(batch, ["flags"])
                run.done += len(batch)
                job_check(kind=FLAG_RECOMPUTE_JOB, job=run, done=run.done, n_flagged=run.n_flagged)
    except JobCancelled:
        status, message = FlagRecompute.Status.CANCELLED, ""
    except Exception as exc:  # the run records what went wrong; the worker stays up
        status, message = FlagRecompute.Status.FAILED, f"{type(exc).__name__}: {exc}"
    else:
        status, message = FlagRecompute.Status.SUCCEEDED, ""
    return job_finish(
        kind=FLAG_RECOMPUTE_JOB,
        job=run,
        status=status,
        message=message,
        fields=["total", "done", "n_flagged"],
    )


def flag_recompute_cancel(*, run: FlagRecompute) -> FlagRecompute:
    """Cancel a queued recomputation at once, or stop a running one after its current batch."""
    return job_cancel(kind=FLAG_RECOMPUTE_JOB, job_id=run.pk)


def flag_recompute_retry(*, run: FlagRecompute) -> FlagRecompute:
    """Run a failed or cancelled recomputation again, unless another one of the project is under way."""
    others = run.project.flag_recomputes.exclude(pk=run.pk).filter(
        status__in=[FlagRecompute.Status.QUEUED, FlagRecompute.Status.RUNNING]
    )
    if others.exists():
        raise AnnotationError(gettext_noop("A recomputation of this project's flags is already under way."))
    return job_retry(kind=FLAG_RECOMPUTE_JOB, job_id=run.pk)


# --- translating ---------------------------------------------------------------------------------------


def _text(payload: Mapping[str, Any], name: str) -> str:
    value = payload.get(name, "")
    return value.strip() if isinstance(value, str) else ""


def _locked_unit(assignment: Assignment) -> TranslationUnit:
    return TranslationUnit.objects.select_for_update().get(pk=assignment.task.translation_unit_id)


def _latest_round(unit: TranslationUnit) -> TranslationRound | None:
    return TranslationRound.objects.filter(unit=unit).order_by("-round").first()


def translation_submit(
    *, assignment: Assignment, payload: Mapping[str, Any], seconds: float | None, now: datetime
) -> SubmitResult:
    """Store a translation (``{"translation": "..."}``) as the unit's next round and send it to review.

    Changing a submitted translation is an edit while nobody has reviewed it yet (and edits are allowed).
    A revised translation coming back after a rejection reopens the rejecting reviewer's assignment.
    """
    payload = answer_object(payload)
    text = _text(payload, "translation")
    if not text:
        raise SubmissionInvalid({"translation": [gettext_noop("Write the translation.")]})
    if len(text) > MAX_TEXT:
        raise SubmissionInvalid({"translation": [f"The translation is longer than {MAX_TEXT} characters."]})
    unit = _locked_unit(assignment)
    project = assignment.project
    if assignment.status == Assignment.Status.SUBMITTED:
        current = _latest_round(unit)
        if current is None or current.translation_assignment_id != assignment.pk:
            raise AssignmentClosed(gettext_noop("This translation can no longer be changed."))
        if current.translation_text == text:
            return SubmitResult(assignment, "unchanged")
        if unit.status != TranslationUnit.Status.TO_REVIEW or current.verdict or not project.allow_edits:
            raise AssignmentClosed(
                gettext_noop("This translation has been reviewed and can no longer be changed.")
            )
        flags = unit_flags(unit, text=text, project=project)
        current.translation_text, current.flags = text, flags
        current.save(update_fields=["translation_text", "flags"])
        unit.translation_text, unit.flags = text, flags
        unit.save(update_fields=["translation_text", "flags"])
        assignment.n_edits += 1
        assignment.save(update_fields=["n_edits"])
        return SubmitResult(assignment, "edited")

    if unit.status not in (TranslationUnit.Status.TO_TRANSLATE, TranslationUnit.Status.REVISE):
        raise AssignmentClosed(gettext_noop("This unit does not need a translation any more."))
    mark_submitted(assignment, now=now, seconds=seconds)
    previous = _latest_round(unit)
    flags = unit_flags(unit, text=text, project=project)
    TranslationRound.objects.create(
        unit=unit,
        round=(previous.round + 1) if previous else 1,
        translation_text=text,
        translator=assignment.annotator,
        translation_assignment=assignment,
        flags=flags,
        submitted_at=now,
    )
    unit.translation_text = text
    unit.translator = assignment.annotator
    unit.status = TranslationUnit.Status.TO_REVIEW
    unit.flags = flags
    unit.save(update_fields=["translation_text", "translator", "status", "flags"])
    if (
        previous is not None
        and previous.verdict == TranslationRound.Verdict.REJECT
        and previous.review_assignment_id
    ):
        reviewer_assignment = (
            Assignment.objects.select_for_update(of=("self",))
            .select_related("project")
            .get(pk=previous.review_assignment_id)
        )
        if reviewer_assignment.status == Assignment.Status.SUBMITTED:
            reopen(reviewer_assignment, now=now)
    return SubmitResult(assignment, "created")


# --- reviewing -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewAnswer:
    verdict: str
    error_categories: tuple[str, ...]
    comment: str
    fixed_text: str


def clean_review(payload: Mapping[str, Any], translation: str) -> ReviewAnswer:
    """Check a reviewer's answer: ``{"verdict": "accept" | "fix" | "reject", "fixed_text", "error_categories",
    "comment"}``. A fix needs an edited text; a rejection needs at least one category and a comment."""
    errors: dict[str, list[str]] = {}
    verdict = payload.get("verdict")
    if verdict not in TranslationRound.Verdict.values:
        errors["verdict"] = [gettext_noop("Choose accept, fix or reject.")]
    raw = payload.get("error_categories") or []
    categories = [raw] if isinstance(raw, str) else list(raw) if isinstance(raw, list | tuple) else None
    if categories is None or any(c not in TranslationError.values for c in categories):
        errors["error_categories"] = [gettext_noop("Unknown error category.")]
        categories = []
    comment = _text(payload, "comment")
    fixed = _text(payload, "fixed_text")
    if verdict == TranslationRound.Verdict.REJECT:
        if not categories:
            errors["error_categories"] = [gettext_noop("Choose at least one error category.")]
        if not comment:
            errors["comment"] = [gettext_noop("Say what the translator should change.")]
    if verdict == TranslationRound.Verdict.FIX:
        if not fixed:
            errors["fixed_text"] = [gettext_noop("Write the corrected translation.")]
        elif fixed == translation.strip():
            errors["fixed_text"] = [
                gettext_noop("The corrected text is the same as the translation; accept it instead.")
            ]
        elif len(fixed) > MAX_TEXT:
            errors["fixed_text"] = [f"The text is longer than {MAX_TEXT} characters."]
    if errors:
        raise SubmissionInvalid(errors)
    ordered = tuple(c for c in TranslationError.values if c in set(categories))
    return ReviewAnswer(
        str(verdict), ordered, comment, fixed if verdict == TranslationRound.Verdict.FIX else ""
    )


def _review_rows(assignment: Assignment, answer: ReviewAnswer) -> list[Annotation]:
    def row(criterion: str, **values: Any) -> Annotation:
        return Annotation(assignment=assignment, round=assignment.round, criterion=criterion, **values)

    rows = [row("verdict", choice=answer.verdict)]
    rows += [row(f"error.{code}", value_int=1) for code in answer.error_categories]
    if answer.fixed_text:
        rows.append(row("fixed_text", comment=answer.fixed_text))
    if answer.comment:
        rows.append(row("comment", comment=answer.comment))
    return rows


def translation_review_submit(
    *, assignment: Assignment, payload: Mapping[str, Any], seconds: float | None, now: datetime
) -> SubmitResult:
    """Record a reviewer's verdict on the unit's current round and move the unit on.

    accept: the unit is final. fix: the edited text becomes the unit's text (flags recomputed) and the
    unit is final. reject: the unit goes back to its translator, whose assignment reopens as a new round.
    A verdict takes effect at once, so it cannot be changed afterwards (the same answer again is a no-op).
    """
    payload = answer_object(payload)
    unit = _locked_unit(assignment)
    user_id = assignment.annotator_id
    current = _latest_round(unit)
    answer = clean_review(payload, current.translation_text if current else unit.translation_text)
    if assignment.status == Assignment.Status.SUBMITTED:
        if (
            current is not None
            and current.review_assignment_id == assignment.pk
            and (
                current.verdict,
                tuple(current.error_categories),
                current.comment,
                current.fixed_text,
            )
            == (answer.verdict, answer.error_categories, answer.comment, answer.fixed_text)
        ):
            return SubmitResult(assignment, "unchanged")
        raise AssignmentClosed(gettext_noop("Your verdict has been recorded and can no longer be changed."))
    if unit.status != TranslationUnit.Status.TO_REVIEW:
        raise AssignmentClosed(gettext_noop("This translation is not waiting for review any more."))
    if unit.translator_id == user_id or (current is not None and current.translator_id == user_id):
        raise AssignmentClosed(gettext_noop("You cannot review your own translation."))
    mark_submitted(assignment, now=now, seconds=seconds)
    if current is None:  # imported with its translation: the import was round 1
        current = TranslationRound.objects.create(
            unit=unit,
            round=1,
            translation_text=unit.translation_text,
            translator=unit.translator,
            translator_name=unit.translator_name,
            flags=unit.flags,
        )
    current.reviewer_id = user_id
    current.review_assignment = assignment
    current.verdict = answer.verdict
    current.error_categories = list(answer.error_categories)
    current.comment = answer.comment
    current.fixed_text = answer.fixed_text
    current.reviewed_at = now
    current.save()
    Annotation.objects.bulk_create(_review_rows(assignment, answer))
    if answer.verdict == TranslationRound.Verdict.REJECT:
        unit.status = TranslationUnit.Status.REVISE
        unit.save(update_fields=["status"])
        if current.translation_assignment_id:
            translator_assignment = (
                Assignment.objects.select_for_update(of=("self",))
                .select_related("project")
                .get(pk=current.translation_assignment_id)
            )
            if translator_assignment.status == Assignment.Status.SUBMITTED:
                reopen(translator_assignment, now=now)
        event_emit(
            name=REVIEW_REJECTED,
            project_id=assignment.project_id,
            data={
                "project": assignment.project_id,
                "task": assignment.task_id,
                "assignment": current.translation_assignment_id,
                "review_assignment": assignment.pk,
                "round": current.round,
            },
        )
        return SubmitResult(assignment, "created")
    if answer.verdict == TranslationRound.Verdict.FIX:
        unit.flags = unit_flags(unit, text=answer.fixed_text, project=assignment.project)
        unit.translation_text = answer.fixed_text
    unit.status = TranslationUnit.Status.ACCEPTED
    unit.save(update_fields=["status", "translation_text", "flags"])
    return SubmitResult(assignment, "created")
