"""Writes of the rating jobs: likert, best-of-N and pairwise.

Set-up: likert and best-of-N get one task per prompt with all its responses; pairwise gets one task per
chosen model pair (all pairs, or ``pairs_per_prompt`` sampled per prompt) and, in ``per_turn`` mode, per
turn. Submissions come in shown positions and are stored mapped to canonical responses through the
assignment's permutation (``annotation.domain.submission``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q
from django.utils.translation import gettext_noop

from accounts.domain.echo import echoed
from annotation.domain import rubrics as default_rubrics
from annotation.domain.pairs import all_pairs, pair_units, sample_pairs
from annotation.domain.submission import (
    ALL_BAD,
    KINDS,
    AnnotationValue,
    SubmissionRules,
    annotation_values,
    clean_submission,
)
from annotation.models import Annotation, Assignment, Project, Task
from annotation.selectors.core import criterion_scales
from annotation.services import loop_sql
from annotation.services.loop import (
    BATCH_SIZE,
    AssignmentClosed,
    ProjectInvalid,
    SubmissionInvalid,
    SubmitResult,
    mark_submitted,
)
from annotation.services.projects import rubric_defaults_ensure
from datasets_app.models import Dataset, Response

__all__ = [
    "rating_claim_filter",
    "rating_project_new",
    "rating_project_validate",
    "rating_submit",
    "rating_tasks_create",
    "submission_rules",
]


# --- set-up ---------------------------------------------------------------------------------------------


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


def _validate_project(
    data: Mapping[str, object], dataset: Dataset, rubric_versions: Mapping[str, int]
) -> None:
    errors: dict[str, str] = {}
    kind = data["kind"]
    if kind not in KINDS:
        errors["kind"] = f"Unknown kind; expected one of {', '.join(KINDS)}."
    if dataset.kind != Dataset.Kind.PROMPTS:
        errors["dataset"] = gettext_noop("Rating jobs need a dataset of prompts and responses.")
    criteria = list(data["criteria"])  # type: ignore[call-overload]
    if kind == Project.Kind.LIKERT and not criteria:
        errors["criteria"] = gettext_noop("A likert project needs at least one criterion.")
    unknown = [c for c in criteria if c not in rubric_versions]
    if unknown:
        errors["criteria"] = f"No rubric for {echoed(unknown, ordered=False)}."
    if len(set(criteria)) != len(criteria):
        errors["criteria"] = gettext_noop("Criteria repeat.")
    if not 1 <= int(data["overlap"]) <= 50:  # type: ignore[call-overload]
        errors["overlap"] = gettext_noop("Overlap must be between 1 and 50.")
    if not 1 <= int(data["lease_minutes"]) <= 7 * 24 * 60:  # type: ignore[call-overload]
        errors["lease_minutes"] = gettext_noop("The lease must be between 1 minute and 7 days.")
    if not 0 <= float(data["gold_rate"]) <= 1:  # type: ignore[arg-type]
        errors["gold_rate"] = gettext_noop("The gold rate is a fraction between 0 and 1.")
    if data["best_pick"] not in Project.BestPick.values:
        errors["best_pick"] = gettext_noop("Expected off, optional or required.")
    if data["pair_mode"] not in Project.PairMode.values:
        errors["pair_mode"] = gettext_noop("Expected all or sample.")
    if data["turn_mode"] not in Project.TurnMode.values:
        errors["turn_mode"] = gettext_noop("Expected overall or per_turn.")
    if int(data["pairs_per_prompt"]) < 1:  # type: ignore[call-overload]
        errors["pairs_per_prompt"] = gettext_noop("Sample at least one pair per prompt.")
    if errors:
        raise ProjectInvalid(errors)


def rating_project_new(
    *,
    dataset: Dataset | None,
    name: str,
    kind: str,
    criteria: Sequence[str] | None,
    best_pick: str,
    allow_all_bad: bool,
    overlap: int,
    seed: int,
    lease_minutes: int,
    allow_edits: bool,
    instructions_id: str,
    instructions_en: str,
    description: str,
    pair_mode: str,
    pairs_per_prompt: int,
    turn_mode: str,
    gold_rate: float,
    groups: Sequence[str],
    created_by: AbstractBaseUser | None,
) -> Project:
    """A saved draft rating project, checked (an unknown kind is reported here), without tasks or groups
    yet. Call inside a transaction (``kinds.project_create``)."""
    if dataset is None:
        raise ProjectInvalid({"dataset": gettext_noop("Choose a dataset.")})
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
        raise ProjectInvalid({"groups": gettext_noop("A project needs at least one annotator group.")})
    return Project.objects.create(
        dataset=dataset,
        name=name,
        description=description,
        seed=seed,
        allow_edits=allow_edits,
        instructions_id=instructions_id,
        instructions_en=instructions_en,
        rubric_versions={c: versions[c] for c in criteria},
        created_by=created_by,
        **fields,
    )


def rating_project_validate(project: Project) -> None:
    """Raise ``ProjectInvalid`` when changed settings no longer fit the rating project."""
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


def rating_tasks_create(*, project: Project) -> int:
    """The tasks of a new rating project (slots come with its groups); returns how many."""
    pairwise = project.kind == Project.Kind.PAIRWISE
    tasks = [
        Task(
            project=project,
            prompt_id=spec.prompt_id,
            response_ids=spec.response_ids,
            response_a_id=spec.response_ids[0] if pairwise else None,
            response_b_id=spec.response_ids[1] if pairwise else None,
            turn=spec.turn,
        )
        for spec in _task_specs(project)
    ]
    Task.objects.bulk_create(tasks, batch_size=BATCH_SIZE)
    return len(tasks)


def rating_claim_filter(user_id: int) -> tuple[Q, tuple[str, ...]]:
    """Every open rating task is claimable; the claim loads its prompt."""
    return Q(), ("task__prompt",)


# --- submit ---------------------------------------------------------------------------------------------


def submission_rules(project: Project, task: Task) -> SubmissionRules:
    return SubmissionRules(
        kind=project.kind,  # type: ignore[arg-type]
        n_responses=len(task.response_ids),
        criteria=tuple(project.criteria) if project.kind == Project.Kind.LIKERT else (),
        best_pick=project.best_pick if project.kind == Project.Kind.LIKERT else "off",  # type: ignore[arg-type]
        allow_all_bad=project.allow_all_bad,
        scales=criterion_scales(project) if project.kind == Project.Kind.LIKERT else {},
    )


def _rows(assignment: Assignment, values: Sequence[AnnotationValue], comment: str) -> list[Annotation]:
    task, project = assignment.task, assignment.project
    response_ids = task.response_ids
    rows: list[dict] = []
    for value in values:
        row = {
            "assignment_id": assignment.pk,
            "round": assignment.round,
            "criterion": value.criterion,
            "rubric_version": project.rubric_versions.get(value.criterion),
        }
        if value.criterion == "vote":
            row["turn"] = task.turn if value.turn is None else value.turn
            row["choice"] = str(value.value)
            row["response_id"] = {"A": response_ids[0], "B": response_ids[1]}.get(str(value.value))
        elif value.criterion == "best":
            if value.value == ALL_BAD:
                row["choice"] = ALL_BAD
            else:
                row["response_id"] = response_ids[int(value.value)]
        else:
            row["response_id"] = response_ids[int(value.target)]  # type: ignore[arg-type]
            if isinstance(value.value, str):  # a category of a categorical criterion
                row["choice"] = value.value
            else:
                row["value_int"] = int(value.value)
        rows.append(row)
    if comment:
        rows.append(
            {
                "assignment_id": assignment.pk,
                "round": assignment.round,
                "criterion": "comment",
                "comment": comment,
            }
        )
    return loop_sql.new_instances(Annotation, rows)


def _signature(rows: Iterable[Annotation]) -> set[tuple]:
    return {(r.response_id, r.turn, r.criterion, r.value_int, r.choice, r.comment) for r in rows}


def _edit_allowed(assignment: Assignment, now: datetime) -> bool:
    project = assignment.project
    if project.allow_edits and project.status in (Project.Status.ACTIVE, Project.Status.PAUSED):
        return True
    return assignment.lease_expires_at is not None and now < assignment.lease_expires_at


def rating_submit(
    *, assignment: Assignment, payload: object, seconds: float | None, now: datetime
) -> SubmitResult:
    """Store a rating answer given in shown positions, mapped to canonical responses (the assignment is
    locked by ``kinds.assignment_submit``).

    Posting the same answer again changes nothing; a different answer to a submitted task is an edit,
    allowed while the project allows edits or the lease still runs.
    """
    result = clean_submission(
        payload, submission_rules(assignment.project, assignment.task), assignment.permutation
    )
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
            raise AssignmentClosed(gettext_noop("This answer can no longer be changed."))
        current.delete()
        Annotation.objects.bulk_create(rows)
        assignment.n_edits += 1
        assignment.save(update_fields=["n_edits"])
        return SubmitResult(assignment, "edited")

    mark_submitted(assignment, now=now, seconds=seconds, annotations=rows)
    return SubmitResult(assignment, "created")
