"""Writes of the question jobs: concept pairs, authoring with its review rounds, answering, exclusions.

question_authoring: the manager uploads (category, concept) pairs; each becomes a task an author claims
and answers with a question that contains the concept (``datasets_app.domain.questions``). Reviewers
accept it or return it with a comment (``kinds.review_create`` calls ``authoring_reviewed``); a returned
question reopens the author's assignment as the next round. Accepted questions get a task in every
answering project over the same dataset.

mcq_answer: k annotators who are not the author answer each accepted question and may flag it as
ambiguous; once more than the project's ``max_ambiguous`` answers flag it, the question is excluded and
no longer handed out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import get_language, gettext_noop

from annotation.models import (
    Annotation,
    Assignment,
    ConceptPair,
    Membership,
    Project,
    QuestionErrorReview,
    QuestionRound,
    Review,
    Task,
    TaskSlot,
)
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
from datasets_app.domain.languages import is_known_language
from datasets_app.domain.questions import (
    CHOICE_LABELS,
    OPTIONS,
    QUESTION,
    ErrorCategory,
    TaxonomyInvalid,
    taxonomy_from_data,
    validate_question,
)
from datasets_app.models import Question
from datasets_app.readers import ReadProblem, UnreadableFile, detect_format, read_records

__all__ = [
    "AuthoredQuestion",
    "ImportedAnswer",
    "McqAnswer",
    "PairsInvalid",
    "ambiguity_apply",
    "authoring_claim_filter",
    "authoring_review_check",
    "authoring_reviewed",
    "authoring_submit",
    "authoring_tasks_create",
    "clean_authored",
    "clean_mcq",
    "concept_pairs_add",
    "concept_pairs_read",
    "mcq_answers_import",
    "mcq_claim_filter",
    "mcq_submit",
    "mcq_tasks_create",
    "mcq_tasks_sync",
    "error_taxonomy_set",
    "question_error_review_save",
]

MAX_PAIR_ERRORS = 50


class PairsInvalid(AnnotationError):
    """An upload of concept pairs with problems; ``errors`` holds (location, field, message)."""

    def __init__(self, errors: list[tuple[str, str, str]], total: int):
        self.errors = errors
        self.total = total
        first = errors[0] if errors else ("", "", "no pairs")
        more = f" (and {total - 1} more problem(s))" if total > 1 else ""
        super().__init__(f"{first[0]}: {first[1]}: {first[2]}{more}")


# --- set-up and claims ----------------------------------------------------------------------------------


def authoring_tasks_create(*, project: Project) -> int:
    """Authoring starts empty: its tasks come with the uploaded (category, concept) pairs."""
    return 0


def mcq_tasks_create(*, project: Project) -> int:
    """One answering task per accepted question of the dataset (more come as questions are accepted)."""
    question_ids = project.dataset.questions.filter(status=Question.Status.ACCEPTED).order_by("id")
    created = Task.objects.bulk_create(
        (Task(project=project, question_id=qid) for qid in question_ids.values_list("id", flat=True)),
        batch_size=BATCH_SIZE,
    )
    return len(created)


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
            added += tasks_add(
                project=project,
                tasks=[Task(project=project, question_id=qid) for qid in ids if qid not in have],
            )
    return added


def authoring_claim_filter(user_id: int) -> tuple[Q, tuple[str, ...]]:
    """Every open pair is claimable; the claim loads it."""
    return Q(), ("task__concept_pair",)


def mcq_claim_filter(user_id: int) -> tuple[Q, tuple[str, ...]]:
    """A question is answered once accepted, never by its author."""
    return (
        Q(task__question__status=Question.Status.ACCEPTED) & ~Q(task__question__creator_id=user_id),
        ("task__question",),
    )


# --- concept pairs -------------------------------------------------------------------------------------


def concept_pairs_read(
    path: Path, file_format: str | None = None
) -> list[tuple[str, Mapping[str, Any] | str]]:
    """The records of an uploaded CSV or JSONL file of pairs, with their line; unreadable lines carry the
    reader's message instead of a record."""
    try:
        fmt = file_format or detect_format(path)
        if fmt not in ("csv", "jsonl"):
            raise PairsInvalid([("", "file", "upload a CSV or JSONL file")], 1)
        return [
            (str(location), record.message if isinstance(record, ReadProblem) else record)
            for location, record in read_records(path, fmt)
        ]
    except UnreadableFile as exc:
        raise PairsInvalid([("", "file", str(exc))], 1) from None


@transaction.atomic
def concept_pairs_add(
    *, project: Project, records: Iterable[tuple[str, Mapping[str, Any] | str]], language: str = "ind"
) -> dict[str, int]:
    """Add (category, concept[, language]) pairs to an authoring project, each with its task.

    The whole upload is checked first: any problem (with its line and field) rejects it and nothing is
    written. Pairs the project already has, or that repeat within the upload, are skipped and counted.
    """
    if project.kind != Project.Kind.QUESTION_AUTHORING:
        raise AnnotationError(gettext_noop("Concept pairs belong to question authoring projects."))
    errors: list[tuple[str, str, str]] = []
    total = 0

    def problem(location: str, field: str, message: str) -> None:
        nonlocal total
        total += 1
        if len(errors) < MAX_PAIR_ERRORS:
            errors.append((location, field, message))

    existing = set(ConceptPair.objects.filter(project=project).values_list("category", "concept", "language"))
    new: list[ConceptPair] = []
    seen: set[tuple[str, str, str]] = set()
    skipped = 0
    for location, record in records:
        if isinstance(record, str):
            problem(location, "", record)
            continue
        category = str(record.get("category") or "").strip()
        concept = str(record.get("concept") or "").strip()
        lang = str(record.get("language") or language).strip().lower()
        if not category:
            problem(location, "category", "is required")
        elif len(category) > 100:
            problem(location, "category", "is longer than 100 characters")
        if not concept:
            problem(location, "concept", "is required")
        elif len(concept) > 200:
            problem(location, "concept", "is longer than 200 characters")
        if not is_known_language(lang):
            problem(location, "language", f"unknown language code {lang!r}")
        key = (category, concept, lang)
        if key in existing or key in seen:
            skipped += 1
            continue
        seen.add(key)
        new.append(ConceptPair(project=project, category=category, concept=concept, language=lang))
    if total == 0 and not new and not skipped:
        problem("", "file", "holds no pairs")
    if total:
        raise PairsInvalid(errors, total)
    created = ConceptPair.objects.bulk_create(new)
    tasks_add(project=project, tasks=[Task(project=project, concept_pair=pair) for pair in created])
    return {"added": len(created), "skipped": skipped}


# --- authoring -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuthoredQuestion:
    text: str
    choices: dict[str, str]
    answer: str
    distractor: str
    concept_override: bool
    override_comment: str


def _ui_language() -> str:
    return "id" if (get_language() or "en").startswith("id") else "en"


def clean_authored(payload: Mapping[str, Any], concept: str) -> AuthoredQuestion:
    """``{"question", "choices": {"A".."E"}, "answer", "distractor", "concept_override", "override_comment"}``
    checked by ``validate_question``, concept included."""
    raw_choices = payload.get("choices")
    choices = (
        {str(k).strip().upper(): str(v or "").strip() for k, v in raw_choices.items()}
        if isinstance(raw_choices, Mapping)
        else {}
    )
    text = str(payload.get("question") or "").strip()
    answer = str(payload.get("answer") or "").strip().upper()
    distractor = str(payload.get("distractor") or "").strip().upper()
    override = payload.get("concept_override") in (True, "true", "on", "1", 1)
    comment = str(payload.get("override_comment") or "").strip()
    result = validate_question(
        text,
        choices,
        answer,
        distractor,
        concept=concept,
        concept_override=override,
        override_comment=comment,
    )
    if not result.ok:
        raise SubmissionInvalid(result.by_field(_ui_language()))
    overridden = bool(result.concept and result.concept.overridden)
    return AuthoredQuestion(
        text,
        {k: choices[k] for k in CHOICE_LABELS},
        answer,
        distractor,
        overridden,
        comment if overridden else "",
    )


def _same(round_: QuestionRound, q: AuthoredQuestion) -> bool:
    return (
        round_.text,
        round_.choices,
        round_.answer_key,
        round_.distractor,
        round_.concept_override,
        round_.override_comment,
    ) == (q.text, q.choices, q.answer, q.distractor, q.concept_override, q.override_comment)


def _apply(question: Question, q: AuthoredQuestion) -> None:
    question.text = q.text
    question.choices = q.choices
    question.answer_key = q.answer
    question.distractor = q.distractor
    question.meta = {
        **(question.meta or {}),
        "concept_override": q.concept_override,
        "override_comment": q.override_comment,
    }


def authoring_submit(
    *, assignment: Assignment, payload: Mapping[str, Any], seconds: float | None, now: datetime
) -> SubmitResult:
    """Store the author's question for the task's concept pair as the round under review.

    Until a reviewer has looked at it, the author may change it (an edit, while edits are allowed).
    """
    payload = answer_object(payload)
    task = assignment.task
    pair = task.concept_pair
    authored = clean_authored(payload, pair.concept)
    question = (
        Question.objects.select_for_update().filter(pk=task.question_id).first() if task.question_id else None
    )
    if assignment.status == Assignment.Status.SUBMITTED:
        current = QuestionRound.objects.filter(question=question, round=assignment.round).first()
        if question is None or current is None:
            raise AssignmentClosed(gettext_noop("This question can no longer be changed."))
        if _same(current, authored):
            return SubmitResult(assignment, "unchanged")
        if current.verdict or not assignment.project.allow_edits:
            raise AssignmentClosed(
                gettext_noop("This question has been reviewed and can no longer be changed.")
            )
        _apply(question, authored)
        question.save(update_fields=["text", "choices", "answer_key", "distractor", "meta"])
        for name, value in (
            ("text", authored.text),
            ("choices", authored.choices),
            ("answer_key", authored.answer),
            ("distractor", authored.distractor),
            ("concept_override", authored.concept_override),
            ("override_comment", authored.override_comment),
        ):
            setattr(current, name, value)
        current.save()
        assignment.n_edits += 1
        assignment.save(update_fields=["n_edits"])
        return SubmitResult(assignment, "edited")

    mark_submitted(assignment, now=now, seconds=seconds)
    if question is None:
        question = Question(
            dataset_id=assignment.project.dataset_id,
            external_id=f"qa{assignment.project_id}-{pair.pk}",
            concept=pair.concept,
            category=pair.category,
            language=pair.language,
            creator=assignment.annotator,
            creator_name=assignment.annotator.get_username(),
            origin=Question.Origin.HUMAN,
        )
    _apply(question, authored)
    question.status = Question.Status.IN_REVIEW
    question.save()
    if task.question_id != question.pk:
        task.question = question
        task.save(update_fields=["question"])
    QuestionRound.objects.create(
        question=question,
        round=assignment.round,
        assignment=assignment,
        author=assignment.annotator,
        text=authored.text,
        choices=authored.choices,
        answer_key=authored.answer,
        distractor=authored.distractor,
        concept_override=authored.concept_override,
        override_comment=authored.override_comment,
        submitted_at=now,
    )
    return SubmitResult(assignment, "created")


def authoring_review_check(assignment: Assignment) -> None:
    """A round of a question is reviewed once (checked inside ``review_create``, the assignment locked)."""
    if Review.objects.filter(assignment=assignment, round=assignment.round, annotation__isnull=True).exists():
        raise AnnotationError(gettext_noop("This round has been reviewed already."))


def authoring_reviewed(*, assignment: Assignment, review: Review, now: datetime) -> Question:
    """Record a reviewer's verdict on the round under review (called inside ``review_create``)."""
    question = Question.objects.select_for_update().get(pk=assignment.task.question_id)
    current = QuestionRound.objects.get(question=question, round=assignment.round)
    accepted = review.verdict == Review.Verdict.ACCEPT
    current.reviewer_id = review.reviewer_id
    current.verdict = QuestionRound.Verdict.ACCEPT if accepted else QuestionRound.Verdict.RETURN
    current.comment = review.comment
    current.reviewed_at = now
    current.save(update_fields=["reviewer", "verdict", "comment", "reviewed_at"])
    question.status = Question.Status.ACCEPTED if accepted else Question.Status.RETURNED
    question.save(update_fields=["status"])
    if accepted:
        mcq_tasks_sync(questions=[question])
    return question


# --- answering -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class McqAnswer:
    choice: str
    ambiguous: bool
    comment: str


# The refusal of a choice that is not one of the question's options, by its number of options.
_PICK_ONE_OF = {
    2: gettext_noop("Pick one of the options A and B."),
    3: gettext_noop("Pick one of the options A to C."),
    4: gettext_noop("Pick one of the options A to D."),
    5: gettext_noop("Pick one of the options A to E."),
}


def clean_mcq(payload: Mapping[str, Any], labels: Sequence[str] = CHOICE_LABELS) -> McqAnswer:
    """``{"choice": one of labels, "ambiguous": bool, "comment": "..."}``; flagging ambiguity needs a
    comment. ``labels``: the question's options (a prefix of A-E)."""
    errors: dict[str, list[str]] = {}
    choice = str(payload.get("choice") or "").strip().upper()
    if choice not in labels:
        errors["choice"] = [_PICK_ONE_OF[len(labels)]]
    ambiguous = payload.get("ambiguous") in (True, "true", "on", "1", 1)
    comment = str(payload.get("comment") or "").strip()
    if ambiguous and not comment:
        errors["comment"] = [gettext_noop("Say what makes the question ambiguous.")]
    if errors:
        raise SubmissionInvalid(errors)
    return McqAnswer(choice, ambiguous, comment)


def _mcq_rows(assignment: Assignment, answer: McqAnswer, key: str) -> list[Annotation]:
    """Long-format rows: ``choice`` (the letter; ``value_int`` 1 when it matches the key, 0 otherwise),
    ``ambiguous`` (with the comment) when flagged, else ``comment`` when one was written."""
    rows = [
        Annotation(
            assignment=assignment,
            round=assignment.round,
            criterion="choice",
            choice=answer.choice,
            value_int=None if not answer.choice else int(answer.choice == key),
        )
    ]
    if answer.ambiguous:
        rows.append(
            Annotation(
                assignment=assignment,
                round=assignment.round,
                criterion="ambiguous",
                value_int=1,
                comment=answer.comment,
            )
        )
    elif answer.comment:
        rows.append(
            Annotation(
                assignment=assignment, round=assignment.round, criterion="comment", comment=answer.comment
            )
        )
    return rows


def _signature(rows: Iterable[Annotation]) -> set[tuple]:
    return {(r.criterion, r.choice, r.value_int, r.comment) for r in rows}


def ambiguity_apply(*, project: Project, question_ids: Iterable[int]) -> list[int]:
    """Exclude questions flagged ambiguous in more than ``project.max_ambiguous`` submitted answers, and
    bring back questions this project excluded whose flags fell back (an answer edited). Returns the ids
    excluded now."""
    ids = list(question_ids)
    flagged = Counter(
        Annotation.objects.current()
        .filter(
            assignment__project=project,
            assignment__task__question_id__in=ids,
            criterion="ambiguous",
            value_int=1,
        )
        .values_list("assignment__task__question_id", flat=True)
    )
    excluded = []
    for question in Question.objects.select_for_update().filter(pk__in=ids):
        n = flagged.get(question.pk, 0)
        if n > project.max_ambiguous and question.status == Question.Status.ACCEPTED:
            question.status = Question.Status.EXCLUDED
            question.meta = {**(question.meta or {}), "excluded_by": {"project": project.pk, "ambiguous": n}}
            question.save(update_fields=["status", "meta"])
            excluded.append(question.pk)
        elif (
            n <= project.max_ambiguous
            and question.status == Question.Status.EXCLUDED
            and (question.meta or {}).get("excluded_by", {}).get("project") == project.pk
        ):
            question.status = Question.Status.ACCEPTED
            question.meta = {k: v for k, v in question.meta.items() if k != "excluded_by"}
            question.save(update_fields=["status", "meta"])
    return excluded


def mcq_submit(
    *, assignment: Assignment, payload: Mapping[str, Any], seconds: float | None, now: datetime
) -> SubmitResult:
    """Store an answer to a question, scored against its key, and apply the ambiguity rule."""
    question = assignment.task.question
    answer = clean_mcq(
        answer_object(payload), [label for label in CHOICE_LABELS if label in question.choices]
    )
    if question.creator_id is not None and question.creator_id == assignment.annotator_id:
        raise AssignmentClosed(gettext_noop("Nobody answers their own question."))
    project = assignment.project
    rows = _mcq_rows(assignment, answer, question.answer_key.upper())
    if assignment.status == Assignment.Status.SUBMITTED:
        current = assignment.annotations.filter(round=assignment.round)
        if _signature(current) == _signature(rows):
            return SubmitResult(assignment, "unchanged")
        if not (project.allow_edits and project.status in (Project.Status.ACTIVE, Project.Status.PAUSED)):
            raise AssignmentClosed(gettext_noop("This answer can no longer be changed."))
        current.delete()
        Annotation.objects.bulk_create(rows)
        assignment.n_edits += 1
        assignment.save(update_fields=["n_edits"])
        ambiguity_apply(project=project, question_ids=[question.pk])
        return SubmitResult(assignment, "edited")
    if question.status != Question.Status.ACCEPTED:
        raise AssignmentClosed(gettext_noop("This question is no longer being answered."))
    mark_submitted(assignment, now=now, seconds=seconds)
    Annotation.objects.bulk_create(rows)
    if answer.ambiguous:
        ambiguity_apply(project=project, question_ids=[question.pk])
    return SubmitResult(assignment, "created")


# --- imports of finished studies -------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportedAnswer:
    question: Question
    answerer: AbstractBaseUser
    choice: str
    ambiguous: bool
    comment: str = ""


@transaction.atomic
def mcq_answers_import(
    *, project: Project, answers: Iterable[ImportedAnswer], now: datetime | None = None
) -> int:
    """Record answers given outside Timbang (an earlier study) as submitted assignments of ``project``.

    Each answer takes one of its group's k places on the question's task, as a claim and submit would;
    the author's own answers and a (k+1)-th answer in a group are refused. Blank choices are kept, unscored.
    """
    if project.kind != Project.Kind.MCQ_ANSWER:
        raise AnnotationError(gettext_noop("Answers belong to multiple-choice answering projects."))
    now = now or timezone.now()
    tasks = {t.question_id: t for t in Task.objects.filter(project=project).select_related("question")}
    groups = dict(Membership.objects.filter(project=project).values_list("user_id", "group_id"))
    slots = {(s.task_id, s.group_id): s for s in TaskSlot.objects.filter(project=project)}
    taken: Counter[int] = Counter()
    assignments: list[Assignment] = []
    pending: list[tuple[int, McqAnswer, str]] = []
    for item in answers:
        task = tasks.get(item.question.pk)
        if task is None:
            raise AnnotationError(f"Question {item.question.external_id} has no task in this project.")
        user_id = item.answerer.pk
        if task.question.creator_id == user_id:
            raise AnnotationError(f"{item.answerer.get_username()} wrote {item.question.external_id}.")
        if user_id not in groups:
            raise AnnotationError(f"{item.answerer.get_username()} is not a member of the project.")
        slot = slots[(task.pk, groups[user_id])]
        taken[slot.pk] += 1
        if taken[slot.pk] > slot.open_count:
            raise AnnotationError(f"{item.question.external_id} has more answers than k = {project.overlap}.")
        assignments.append(
            Assignment(
                project=project,
                task=task,
                slot=slot,
                group_id=groups[user_id],
                annotator_id=user_id,
                status=Assignment.Status.SUBMITTED,
                permutation=[],
                started_at=now,
                submitted_at=now,
            )
        )
        pending.append(
            (
                len(assignments) - 1,
                McqAnswer(item.choice.strip().upper(), item.ambiguous, item.comment),
                task.question.answer_key,
            )
        )
    Assignment.objects.bulk_create(assignments, batch_size=2000)
    rows = [
        row for index, answer, key in pending for row in _mcq_rows(assignments[index], answer, key.upper())
    ]
    Annotation.objects.bulk_create(rows, batch_size=2000)
    for slot_id in sorted(taken):
        n = taken[slot_id]
        TaskSlot.objects.filter(pk=slot_id).update(
            open_count=F("open_count") - n, submitted_count=F("submitted_count") + n
        )
    ambiguity_apply(project=project, question_ids=list(tasks))
    return len(assignments)


# --- error taxonomy of (LLM-written) questions --------------------------------------------------------


def _checked_codes(codes: Iterable[str], taxonomy: tuple[ErrorCategory, ...], scope: str) -> list[str]:
    """The codes in taxonomy order; an unknown code, or one that does not apply to ``scope``, is refused."""
    wanted = list(dict.fromkeys(codes))
    allowed = [c.code for c in taxonomy if scope in c.applies_to]
    wrong = [c for c in wanted if c not in allowed]
    if wrong:
        message = (
            gettext_noop("Not an error category of the question in this project: %(codes)s.")
            if scope == QUESTION
            else gettext_noop("Not an error category of the options in this project: %(codes)s.")
        )
        raise AnnotationError(message, codes=", ".join(wrong))
    return [c for c in allowed if c in wanted]


@transaction.atomic
def question_error_review_save(
    *,
    project: Project,
    question: Question,
    reviewer: AbstractBaseUser,
    errors: Iterable[str],
    option_errors: Iterable[str] = (),
    primary_error: str = "",
    comment: str = "",
) -> QuestionErrorReview:
    """Tag a question of the project with categories of the project's error taxonomy: ``errors`` of the
    question itself and ``option_errors`` of its options, kept apart (none: the reviewer found no error).
    ``primary_error`` is the main one of the categories ticked, the question's one label in the error shares:
    required when more than one category is ticked, the only one when one is.
    Saving again replaces the reviewer's earlier tags."""
    if question.dataset_id != project.dataset_id:
        raise AnnotationError(gettext_noop("The question belongs to another dataset."))
    if question.creator_id is not None and question.creator_id == reviewer.pk:
        raise AnnotationError(gettext_noop("Nobody reviews their own question."))
    taxonomy = taxonomy_from_data(project.error_taxonomy)
    question_codes = _checked_codes(errors, taxonomy, QUESTION)
    option_codes = _checked_codes(option_errors, taxonomy, OPTIONS)
    ticked = [c.code for c in taxonomy if c.code in question_codes or c.code in option_codes]
    primary = primary_error.strip()
    if primary and primary not in ticked:
        raise AnnotationError(
            gettext_noop("The main error must be one of the errors ticked (got %(code)s)."), code=primary
        )
    if not primary and len(ticked) > 1:
        raise AnnotationError(gettext_noop("Several errors are ticked: choose the main one."))
    review, _ = QuestionErrorReview.objects.update_or_create(
        project=project,
        question=question,
        reviewer=reviewer,
        defaults={
            "errors": question_codes,
            "option_errors": option_codes,
            "primary_error": primary or (ticked[0] if ticked else ""),
            "comment": comment.strip(),
        },
    )
    return review


@transaction.atomic
def error_taxonomy_set(*, project: Project, categories: Iterable[ErrorCategory]) -> Project:
    """Replace the project's error taxonomy. A category that reviews of this project already use cannot be
    dropped, nor taken away from the part (question or options) it was used for."""
    categories = tuple(categories)
    try:
        taxonomy_from_data([c.as_dict() for c in categories])  # the same checks as a stored taxonomy
    except TaxonomyInvalid as exc:
        raise AnnotationError(str(exc)) from exc
    scopes = {c.code: c.applies_to for c in categories}
    used_question: set[str] = set()
    used_options: set[str] = set()
    for errors, option_errors in QuestionErrorReview.objects.filter(project=project).values_list(
        "errors", "option_errors"
    ):
        used_question.update(errors)
        used_options.update(option_errors)
    lost = sorted(
        {c for c in used_question if QUESTION not in scopes.get(c, ())}
        | {c for c in used_options if OPTIONS not in scopes.get(c, ())}
    )
    if lost:
        raise AnnotationError(
            gettext_noop("Reviews of this project use these categories; keep them: %(codes)s."),
            codes=", ".join(lost),
        )
    project.error_taxonomy = [c.as_dict() for c in categories]
    project.save(update_fields=["error_taxonomy"])
    return project
