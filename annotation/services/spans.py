"""Writes of the error-span jobs (``translation_mqm``, ``translation_esa``): their tasks, suggested spans,
and the annotators' answers.

One task per translated unit; k annotators per task and group, as in the rating jobs. An answer is the
spans marked (``ErrorSpan`` rows of the assignment's round) with one ``Annotation`` row: criterion ``mqm``
or ``esa``, ``choice`` ``no_error`` or ``errors``, ``value_int`` the number of spans (MQM) or the 0-100
score (ESA). Suggested spans (from the unit's flags at set-up, or an LLM judge later) are stored per task;
each answer records what became of every suggestion.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext_noop

from annotation.domain.attention_checks import Injection, checks_choose
from annotation.domain.span_marking import (
    ESA,
    MQM,
    REMOVED,
    MarkedSpan,
    SpanAnswer,
    SpanAnswerInvalid,
    SuggestedSpan,
    read_span_answer,
    spans_from_flags,
)
from annotation.domain.span_settings import SpanConfig, span_config
from annotation.models import (
    Annotation,
    Assignment,
    AttentionCheck,
    ErrorSpan,
    Project,
    SpanSuggestion,
    Task,
)
from annotation.selectors.spans import shown_target, task_with_text
from annotation.services.loop import (
    BATCH_SIZE,
    AnnotationError,
    AssignmentClosed,
    SubmissionInvalid,
    SubmitResult,
    answer_object,
    mark_submitted,
    tasks_add,
)

__all__ = [
    "attention_checks_add",
    "project_span_config",
    "span_claim_filter",
    "span_submit",
    "span_suggestions_replace",
    "span_tasks_create",
    "suggested_spans_of",
]


def project_span_config(project: Project) -> SpanConfig:
    """The project's category tree, severities and weights (the MQM core typology and WMT 2021 weights
    unless the project sets its own)."""
    return span_config(project.span_settings or {}, protocol=_protocol(project))


def _protocol(project: Project) -> str:
    return ESA if project.kind == Project.Kind.TRANSLATION_ESA else MQM


# --- set-up and claims ----------------------------------------------------------------------------------


def span_tasks_create(*, project: Project) -> int:
    """One task per translated unit of the dataset, each with the spans its flags suggest; returns how many."""
    config = project_span_config(project)
    units = project.dataset.translation_units.exclude(translation_text="").order_by("id")
    created = 0
    rows = units.values_list("id", "translation_text", "flags")
    batch: list[tuple[int, str, list]] = []
    for row in rows.iterator(BATCH_SIZE):
        batch.append(row)
        if len(batch) >= BATCH_SIZE:
            created += _tasks_with_suggestions(project, config, batch)
            batch = []
    if batch:
        created += _tasks_with_suggestions(project, config, batch)
    if config.checks.on:
        made = _checks_planned(project, config, count=None)
        tasks = Task.objects.bulk_create(
            [Task(project=project, translation_unit_id=uid) for uid, _, _ in made]
        )
        _checks_store(config, tasks, made)
        created += len(tasks)
    return created


def _checks_planned(
    project: Project, config: SpanConfig, *, count: int | None
) -> list[tuple[int, Injection, list]]:
    """Units without a check yet, chosen and injected (``domain.attention_checks.checks_choose``)."""
    checked = set(
        AttentionCheck.objects.filter(task__project=project).values_list(
            "task__translation_unit_id", flat=True
        )
    )
    units = project.dataset.translation_units.exclude(translation_text="").order_by("id")
    rows = {
        uid: (target, source, flags)
        for uid, target, source, flags in units.values_list("id", "translation_text", "source_text", "flags")
        if uid not in checked
    }
    chosen = checks_choose(
        ((uid, target, source) for uid, (target, source, _) in rows.items()),
        share=config.checks.share,
        kinds=config.checks.kinds,
        seed=f"{project.seed}:{len(checked)}",
        count=count,
    )
    return [(uid, made, rows[uid][2] or []) for uid, made in chosen]


def _checks_store(
    config: SpanConfig, tasks: Sequence[Task], made: Sequence[tuple[int, Injection, list]]
) -> None:
    checks, suggestions = [], []
    for task, (_, injection, flags) in zip(tasks, made, strict=True):
        checks.append(
            AttentionCheck(
                task=task,
                kind=injection.kind,
                target_text=injection.text,
                start=injection.start,
                end=injection.end,
                category=injection.category,
                severity=injection.severity,
                original=injection.original[:200],
                inserted=injection.inserted[:200],
                note=injection.note[:300],
            )
        )
        for span in spans_from_flags(
            target=injection.text,
            flags=flags,
            categories=config.flag_categories,
            minor=config.minor,
            major=config.major,
        ):
            suggestions.append(_suggestion_row(task.pk, SpanSuggestion.Source.FLAGS, span))
    AttentionCheck.objects.bulk_create(checks, batch_size=BATCH_SIZE)
    SpanSuggestion.objects.bulk_create(suggestions, batch_size=BATCH_SIZE)


@transaction.atomic
def attention_checks_add(*, project: Project) -> int:
    """Give the project the attention checks its setting asks for and it lacks: up to ``share`` of its
    units (counted over the units with a translation), each a new task with k places per group. Returns how
    many were added (0 when the setting is off or the share is reached, or no unit has a place left)."""
    project = Project.objects.select_for_update().get(pk=project.pk)
    if project.status == Project.Status.CLOSED:
        raise AnnotationError(gettext_noop("A closed project gets no new attention checks."))
    config = project_span_config(project)
    if not config.checks.on:
        return 0
    n_units = project.dataset.translation_units.exclude(translation_text="").count()
    have = AttentionCheck.objects.filter(task__project=project).count()
    wanted = int(config.checks.share * n_units + 0.5) - have
    if wanted <= 0:
        return 0
    made = _checks_planned(project, config, count=wanted)
    if not made:
        return 0
    tasks = [Task(project=project, translation_unit_id=uid) for uid, _, _ in made]
    tasks_add(project=project, tasks=tasks)
    _checks_store(config, tasks, made)
    return len(tasks)


def _tasks_with_suggestions(project: Project, config: SpanConfig, rows: list[tuple[int, str, list]]) -> int:
    tasks = Task.objects.bulk_create([Task(project=project, translation_unit_id=uid) for uid, _, _ in rows])
    suggestions = []
    for task, (_, text, flags) in zip(tasks, rows, strict=True):
        for span in spans_from_flags(
            target=text,
            flags=flags or [],
            categories=config.flag_categories,
            minor=config.minor,
            major=config.major,
        ):
            suggestions.append(_suggestion_row(task.pk, SpanSuggestion.Source.FLAGS, span))
    SpanSuggestion.objects.bulk_create(suggestions, batch_size=BATCH_SIZE)
    return len(tasks)


def _suggestion_row(task_id: int, source: str, span: SuggestedSpan) -> SpanSuggestion:
    return SpanSuggestion(
        task_id=task_id,
        source=source,
        side=span.side,
        start=span.start,
        end=span.end,
        category=span.category,
        severity=span.severity,
        note=span.note[:300],
    )


def span_claim_filter(user_id: int) -> tuple[Q, tuple[str, ...]]:
    """Every task of an error-span project is open to every member (k per group)."""
    return Q(), ("task__translation_unit",)


def suggested_spans_of(task_id: int) -> list[SuggestedSpan]:
    """The task's stored suggestions as plain values."""
    return [
        SuggestedSpan(s.side, s.start, s.end, s.category, s.severity, s.note, s.pk)
        for s in SpanSuggestion.objects.filter(task_id=task_id).order_by("side", "start", "end", "id")
    ]


@transaction.atomic
def span_suggestions_replace(*, task: Task, source: str, spans: Iterable[SuggestedSpan]) -> int:
    """Store ``spans`` as the task's suggestions from ``source`` in place of earlier ones from it (a judge
    run again replaces its own suggestions; answers keep theirs). Spans outside the texts or with a category
    the project does not have are left out. Returns how many were stored."""
    unit = task.translation_unit
    config = project_span_config(task.project)
    lengths = {"target": len(shown_target(task)), "source": len(unit.source_text)}
    kept: dict[tuple, SpanSuggestion] = {}
    for span in spans:
        if span.side not in lengths or not 0 <= span.start < span.end <= lengths[span.side]:
            continue
        if span.category not in config.codes or span.severity not in config.severities:
            continue
        kept.setdefault(
            (span.side, span.start, span.end, span.category), _suggestion_row(task.pk, source, span)
        )
    SpanSuggestion.objects.filter(task=task, source=source, outcomes__isnull=True).delete()
    existing = set(
        SpanSuggestion.objects.filter(task=task, source=source).values_list(
            "side", "start", "end", "category"
        )
    )
    rows = [row for key, row in kept.items() if key not in existing]
    SpanSuggestion.objects.bulk_create(rows)
    return len(rows)


# --- answers --------------------------------------------------------------------------------------------


def _answer(assignment: Assignment, payload: Mapping[str, Any]) -> tuple[SpanAnswer, list[SuggestedSpan]]:
    project = assignment.project
    task = task_with_text(assignment.task_id)
    unit = task.translation_unit
    config = project_span_config(project)
    suggestions = suggested_spans_of(assignment.task_id)
    try:
        answer = read_span_answer(
            payload,
            protocol=_protocol(project),
            target=shown_target(task),
            source=unit.source_text,
            categories=config.codes,
            severities=config.severities,
            suggestions=suggestions,
        )
    except SpanAnswerInvalid as exc:
        raise SubmissionInvalid(exc.errors) from None
    return answer, suggestions


def _rows(
    assignment: Assignment, answer: SpanAnswer, suggestions: Sequence[SuggestedSpan]
) -> tuple[list[ErrorSpan], Annotation]:
    by_id = {s.id: s for s in suggestions}
    spans = [
        ErrorSpan(
            assignment=assignment,
            round=assignment.round,
            side=s.side,
            start=s.start,
            end=s.end,
            category=s.category,
            severity=s.severity,
            origin=ErrorSpan.Origin.SUGGESTED if s.suggestion is not None else ErrorSpan.Origin.MANUAL,
            suggestion_id=s.suggestion,
            outcome=answer.outcomes.get(s.suggestion, "") if s.suggestion is not None else "",
            comment=s.comment,
        )
        for s in answer.spans
    ]
    for suggestion_id, outcome in answer.outcomes.items():
        if outcome == REMOVED:
            gone = by_id[suggestion_id]
            spans.append(
                ErrorSpan(
                    assignment=assignment,
                    round=assignment.round,
                    side=gone.side,
                    start=gone.start,
                    end=gone.end,
                    category=gone.category,
                    severity=gone.severity,
                    origin=ErrorSpan.Origin.SUGGESTED,
                    suggestion_id=suggestion_id,
                    outcome=ErrorSpan.Outcome.REMOVED,
                )
            )
    row = Annotation(
        assignment=assignment,
        round=assignment.round,
        criterion=answer.protocol,
        choice="no_error" if answer.no_error else "errors",
        value_int=answer.score if answer.protocol == ESA else len(answer.spans),
    )
    return spans, row


def _signature(spans: Iterable[ErrorSpan], row: Annotation | None) -> tuple:
    marked = sorted(
        (s.side, s.start, s.end, s.category, s.severity, s.suggestion_id or 0, s.outcome, s.comment)
        for s in spans
    )
    return (tuple(marked), row and (row.criterion, row.choice, row.value_int))


def span_submit(
    *, assignment: Assignment, payload: Mapping[str, Any], seconds: float | None, now: datetime
) -> SubmitResult:
    """Store the spans (or "no error") of an error-span task, and ESA's score.

    The same answer again changes nothing; another answer to a submitted task replaces the round's spans
    while the project allows edits.
    """
    answer, suggestions = _answer(assignment, answer_object(payload))
    spans, row = _rows(assignment, answer, suggestions)
    if assignment.status == Assignment.Status.SUBMITTED:
        current_spans = ErrorSpan.objects.filter(assignment=assignment, round=assignment.round)
        current_row = assignment.annotations.filter(round=assignment.round).first()
        if _signature(current_spans, current_row) == _signature(spans, row):
            return SubmitResult(assignment, "unchanged")
        project = assignment.project
        if not (project.allow_edits and project.status in (Project.Status.ACTIVE, Project.Status.PAUSED)):
            raise AssignmentClosed(gettext_noop("This answer can no longer be changed."))
        current_spans.delete()
        assignment.annotations.filter(round=assignment.round).delete()
        ErrorSpan.objects.bulk_create(spans)
        row.save()
        assignment.n_edits += 1
        assignment.save(update_fields=["n_edits"])
        return SubmitResult(assignment, "edited")
    mark_submitted(assignment, now=now, seconds=seconds, annotations=[row])
    ErrorSpan.objects.bulk_create(spans)
    return SubmitResult(assignment, "created")


def marked_spans(spans: Iterable[ErrorSpan]) -> list[MarkedSpan]:
    """Stored spans that count (removed suggestions left out) as plain values."""
    return [
        MarkedSpan(s.side, s.start, s.end, s.category, s.severity, s.suggestion_id, s.comment)
        for s in spans
        if s.outcome != ErrorSpan.Outcome.REMOVED
    ]
