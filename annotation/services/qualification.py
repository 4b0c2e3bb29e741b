"""The qualification gate: a project may require an annotator to pass a set of gold tasks before any real
task is served to them.

``qualification_claim`` is called by the claim loop at the one place where a real task is about to be
taken. It costs nothing when the project requires no qualification or the member has passed (a pass is
cached on ``Membership.qualification``); otherwise it serves the next gold task of the set, or scores the
set once it is complete (a refusal rolls back with the claim, so a failed set is scored again at each try:
a count and the member's n gold answers).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

from django.db import transaction
from django.utils.translation import gettext_noop

from accounts.refusals import Refused
from annotation.domain.gold import qualification_outcome, qualification_settings_from, score_gold
from annotation.models import Assignment, Membership, Project, Task, TaskSlot
from annotation.selectors.core import criterion_scales, gold_scores

__all__ = [
    "GoldRefused",
    "QualificationStep",
    "gold_answers_write",
    "gold_file_import",
    "project_gold_rate_set",
    "task_gold_mark",
    "project_qualification_set",
    "qualification_claim",
    "qualification_settings",
]

FAILED = gettext_noop(
    "You did not reach the pass mark of this project's qualification set, so no real tasks are served to "
    "you. Ask the project manager."
)
NOT_READY = gettext_noop("The qualification set is not ready yet. Ask the project manager.")
GOLD_CLOSED = gettext_noop("The project is closed: its gold items cannot change.")
GOLD_TAKEN = gettext_noop(
    "Task %(task)s has been given to annotators already; only a task nobody has claimed can become gold."
)


class GoldRefused(Refused, ValueError):
    """A gold change the project's state refuses (its text translated on pages, ``accounts.refusals``)."""


@dataclass(frozen=True)
class QualificationStep:
    """What the claim does next: serve ``task`` (a gold task of the set), refuse with ``refusal``, or
    (neither) go on to a real task."""

    task: Task | None = None
    refusal: str = ""


def qualification_settings(project: Project) -> tuple[int, float]:
    """(number of gold tasks in the set, pass mark as a share); (0, _) when none is required."""
    return qualification_settings_from(project.quality_settings)


def project_qualification_set(*, project: Project, n_tasks: int, pass_mark: float) -> Project:
    """Require ``n_tasks`` gold tasks with a mean score of at least ``pass_mark`` before real tasks
    (``n_tasks`` 0 removes the requirement). Raises ``ValueError`` naming the bad setting."""
    if n_tasks < 0:
        raise ValueError(f"qualification tasks: {n_tasks} is below 0.")
    if not 0 <= pass_mark <= 1:
        raise ValueError(f"pass mark: {pass_mark} is not between 0 and 1.")
    n_gold = project.tasks.filter(is_gold=True).count()
    if n_tasks > n_gold:
        raise ValueError(f"qualification tasks: {n_tasks} asked, but the project has {n_gold} gold task(s).")
    project.quality_settings = {
        **(project.quality_settings or {}),
        "qualification_n": n_tasks,
        "qualification_pass": pass_mark,
    }
    project.save(update_fields=["quality_settings"])
    return project


def _next_qualification_task(project: Project, user_id: int) -> Task | None:
    had = Assignment.objects.filter(project_id=project.pk, annotator_id=user_id, is_gold=True)
    return (
        Task.objects.filter(project_id=project.pk, is_gold=True)
        .exclude(pk__in=had.values("task_id"))
        .select_related("prompt")
        .order_by("id")
        .first()
    )


def qualification_claim(*, project: Project, membership: Membership, user_id: int) -> QualificationStep:
    """While the member qualifies: the next gold task of the set; once the set is done, its score decides
    (recorded on the membership); a member below the pass mark is refused every real task."""
    n_required, pass_mark = qualification_settings(project)
    if n_required == 0 or membership.qualification == "passed":
        return QualificationStep()
    if membership.qualification == "failed":
        return QualificationStep(refusal=FAILED)
    done = Assignment.objects.filter(
        project_id=project.pk, annotator_id=user_id, is_gold=True, status=Assignment.Status.SUBMITTED
    ).count()
    if done < n_required:
        task = _next_qualification_task(project, user_id)
        return QualificationStep(task=task) if task is not None else QualificationStep(refusal=NOT_READY)
    accuracy = gold_scores(project=project, annotator_id=user_id).get(membership.user.get_username())
    outcome = qualification_outcome(
        n_required=n_required,
        pass_mark=pass_mark,
        n_done=done,
        mean_score=accuracy.mean_score if accuracy is not None else None,
    )
    passed = outcome == "passed"
    membership.qualification = "passed" if passed else "failed"
    Membership.objects.filter(pk=membership.pk).update(qualification=membership.qualification)
    return QualificationStep() if passed else QualificationStep(refusal=FAILED)


_VOTES = ("A", "B", "tie", "both_bad")


def _gold_answer_problem(kind: str, n_responses: int, answer: object) -> str:
    """What is wrong with a gold answer of this kind for a task of ``n_responses`` responses ('' if fine)."""
    if kind == Project.Kind.BEST_OF_N:
        ok = answer == "all_bad" or (isinstance(answer, int) and 0 <= answer < n_responses)
        return "" if ok else f'a response index 0..{n_responses - 1} or "all_bad"'
    if kind == Project.Kind.PAIRWISE:
        votes = answer.values() if isinstance(answer, dict) else [answer]
        return "" if votes and all(v in _VOTES for v in votes) else "a vote A, B, tie or both_bad"
    if kind == Project.Kind.LIKERT:
        ok = (
            isinstance(answer, dict)
            and answer
            and all(
                str(k).isdigit() and int(k) < n_responses and isinstance(v, dict) for k, v in answer.items()
            )
        )
        return "" if ok else "a mapping of response index to {criterion: value}"
    return "gold items exist only in rating jobs"


@transaction.atomic
def project_gold_rate_set(*, project: Project, rate: float) -> Project:
    """Set the share of gold items in each annotator's stream, in a rating project that is not closed.

    The claim reads the rate each time it serves a task, so the new rate applies to the tasks handed out
    from now on; assignments already made (gold or not) stay as they are. Raises ``GoldRefused`` (a
    closed project) or ``ValueError`` (a rate outside 0..1), writing nothing."""
    if project.kind not in (Project.Kind.LIKERT, Project.Kind.BEST_OF_N, Project.Kind.PAIRWISE):
        raise GoldRefused(gettext_noop("Gold items exist only in rating jobs."))
    project = Project.objects.select_for_update().get(pk=project.pk)
    if project.status == Project.Status.CLOSED:
        raise GoldRefused(GOLD_CLOSED)
    if not 0 <= rate <= 1:
        raise GoldRefused(gettext_noop("The gold rate is a fraction between 0 and 1."))
    project.gold_rate = rate
    project.save(update_fields=["gold_rate"])
    return project


@transaction.atomic
def gold_file_import(*, project: Project, text: str) -> int:
    """Mark tasks of a draft project as gold from a CSV file with the columns ``task`` (the task number
    shown on the project page) and ``answer`` (JSON in canonical indexes: ``0`` for best-of-N,
    ``"A"`` for pairwise, ``{"0": {"relevance": 4}}`` for likert). Every bad line is named
    (``ValueError``) and nothing is written."""
    if project.status == Project.Status.CLOSED:
        raise GoldRefused(GOLD_CLOSED)
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or {"task", "answer"} - set(reader.fieldnames):
        raise ValueError(gettext_noop("The gold file needs the columns task and answer."))
    tasks = {t.pk: t for t in project.tasks.filter(is_gold=False)}
    errors: list[str] = []
    chosen: list[tuple[Task, object]] = []
    for line, row in enumerate(reader, start=2):
        raw_task, raw_answer = (row.get("task") or "").strip(), (row.get("answer") or "").strip()
        task = tasks.get(int(raw_task)) if raw_task.isdigit() else None
        if task is None:
            errors.append(f"line {line}, task: {raw_task!r} is not a task of this project.")
            continue
        try:
            answer = json.loads(raw_answer)
            problem = _gold_answer_problem(project.kind, len(task.response_ids), answer)
            if not problem:
                score_gold(project.kind, answer, answer)
        except (ValueError, TypeError, KeyError) as exc:
            problem = str(exc)
        if problem:
            errors.append(f"line {line}, answer: {raw_answer!r} is not a {project.kind} answer ({problem}).")
            continue
        chosen.append((task, answer))
    if errors:
        raise ValueError(" ".join(errors[:20]))
    if not chosen:
        raise ValueError(gettext_noop("The gold file has no lines."))
    gold_answers_write(project=project, chosen=chosen)
    return len(chosen)


@transaction.atomic
def gold_answers_write(*, project: Project, chosen: list[tuple[Task, object]]) -> None:
    """The tasks become gold with their answers; they leave the k pool (slots dropped, ``n_tasks``).

    In an active or paused project a task that anybody has claimed stays a real task (its answers count
    toward k and would be lost to agreement), which raises ``GoldRefused`` naming it, writing nothing. The
    task's places are locked first, so a claim running beside this either committed before (and is seen
    here) or skips them. A gold task's answer may change at any time: scores are read against it."""
    fresh = [t.pk for t, _ in chosen if not t.is_gold]
    if fresh and project.status != Project.Status.DRAFT:
        list(TaskSlot.objects.select_for_update().filter(task_id__in=fresh).values_list("id", flat=True))
        taken = (
            Assignment.objects.filter(task_id__in=fresh).order_by("task_id").values_list("task_id", flat=True)
        )
        first = taken.first()
        if first is not None:
            raise GoldRefused(GOLD_TAKEN, task=first)
    for task, answer in chosen:
        task.is_gold, task.gold_answer = True, answer
    Task.objects.bulk_update([t for t, _ in chosen], ["is_gold", "gold_answer"])
    TaskSlot.objects.filter(task__in=[t for t, _ in chosen]).delete()
    project.n_tasks = project.tasks.filter(is_gold=False).count()
    project.save(update_fields=["n_tasks"])


def _likert_scale_problem(project: Project, n_responses: int, answer: dict) -> str:
    """A likert gold answer gives every response a value on every criterion, on that criterion's scale."""
    scales = criterion_scales(project)
    for index in range(n_responses):
        values = answer.get(str(index), answer.get(index))  # type: ignore[call-overload]
        for criterion in project.criteria:
            allowed = scales[criterion].values if criterion in scales else tuple(range(1, 6))
            value = (values or {}).get(criterion)
            if value is None:
                return f"response {index + 1}, {criterion}: missing"
            if value not in allowed:
                return (
                    f"response {index + 1}, {criterion}: {value!r} is not on its scale "
                    f"({', '.join(str(v) for v in allowed)})"
                )
    return ""


@transaction.atomic
def task_gold_mark(*, task: Task, answer: object) -> Task:
    """Mark one task of a draft project as gold with the expected ``answer`` (canonical indexes, as in
    ``gold_file_import``); a likert answer must rate every response on every criterion of the project on
    that criterion's scale. A bad answer raises ``ValueError`` naming what is wrong and writes nothing."""
    project = task.project
    if project.status == Project.Status.CLOSED:
        raise GoldRefused(GOLD_CLOSED)
    n_responses = len(task.response_ids)
    problem = _gold_answer_problem(project.kind, n_responses, answer)
    if not problem and project.kind == Project.Kind.LIKERT:
        problem = _likert_scale_problem(project, n_responses, answer)  # type: ignore[arg-type]
    if problem:
        raise ValueError(f"task {task.pk}, answer: {answer!r} is not a {project.kind} answer ({problem}).")
    score_gold(project.kind, answer, answer)  # raises on an answer the scorer cannot read
    gold_answers_write(project=project, chosen=[(task, answer)])
    return task
