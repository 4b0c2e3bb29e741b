"""The qualification gate: a project may require an annotator to pass a set of gold tasks before any real
task is served to them.

``qualification_claim`` is called by the claim loop at the one place where a real task is about to be
taken. It costs nothing when the project requires no qualification or the member has passed (a pass is
cached on ``Membership.qualification``); otherwise it serves the next gold task of the set, or scores the
set once it is complete (a refusal rolls back with the claim, so a failed set is scored again at each try:
a count and the member's n gold answers).
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import Assignment, Membership, Project, Task
from annotation.selectors.core import gold_scores

__all__ = ["QualificationStep", "project_qualification_set", "qualification_claim", "qualification_settings"]

FAILED = (
    "You did not reach the pass mark of this project's qualification set, so no real tasks are served to "
    "you. Ask the project manager."
)
NOT_READY = "The qualification set is not ready yet. Ask the project manager."


@dataclass(frozen=True)
class QualificationStep:
    """What the claim does next: serve ``task`` (a gold task of the set), refuse with ``refusal``, or
    (neither) go on to a real task."""

    task: Task | None = None
    refusal: str = ""


def qualification_settings(project: Project) -> tuple[int, float]:
    """(number of gold tasks in the set, pass mark as a share); (0, _) when none is required."""
    settings = project.quality_settings or {}
    return int(settings.get("qualification_n", 0) or 0), float(settings.get("qualification_pass", 0.8))


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
    passed = accuracy is not None and accuracy.mean_score >= pass_mark
    membership.qualification = "passed" if passed else "failed"
    Membership.objects.filter(pk=membership.pk).update(qualification=membership.qualification)
    return QualificationStep() if passed else QualificationStep(refusal=FAILED)
