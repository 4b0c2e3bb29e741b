"""Reads of a Label Studio export: a rating project's items, criteria and current answers as plain values
for ``annotation.domain.tool_studies.label_studio_export``, annotators under pseudonyms."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.domain.rubrics import scale_from_json
from annotation.domain.tool_studies.label_studio_export import ExportAnswer, ExportItem
from annotation.models import Annotation, Project, Rubric, Task
from datasets_app.models import Response
from exports.selectors import annotator_pseudonym


@dataclass(frozen=True)
class ProjectAnswers:
    criteria: dict[str, dict]
    items: list[ExportItem]
    answers: list[ExportAnswer]


def task_count(project: Project) -> int:
    return Task.objects.filter(project=project, is_gold=False).count()


def answer_count(project: Project) -> int:
    """Annotations the export writes: one per submitted, non-gold assignment with a current answer."""
    return (
        Annotation.objects.counted()
        .filter(assignment__project=project)
        .values("assignment_id")
        .distinct()
        .count()
    )


def _item_id(task: Task) -> str:
    """The prompt's id; a pairwise task of one of several pairs of a prompt (or turns) gets a suffix."""
    base = task.prompt.external_id
    if task.response_a_id is None:
        return base
    suffix = f"{task.response_a_id}-{task.response_b_id}" + (
        f"-t{task.turn + 1}" if task.turn is not None else ""
    )
    return f"{base}#{suffix}"


def project_answers(project: Project) -> ProjectAnswers:
    criteria = {}
    for criterion in project.criteria or []:
        row = (
            Rubric.objects.filter(
                criterion=criterion, category="", version=project.rubric_versions.get(criterion, 1)
            )
            .values_list("scale", flat=True)
            .first()
        )
        criteria[criterion] = scale_from_json(row).as_json()
    tasks = list(Task.objects.filter(project=project, is_gold=False).select_related("prompt").order_by("id"))
    response_ids = {rid for t in tasks for rid in t.response_ids}
    responses = {
        r.pk: r for r in Response.objects.filter(pk__in=response_ids).only("id", "model_name", "turns")
    }
    items = []
    position: dict[int, dict[int, int]] = {}
    item_of: dict[int, str] = {}
    for task in tasks:
        item_id = _item_id(task)
        item_of[task.pk] = item_id
        ids = task.response_ids
        position[task.pk] = {rid: n for n, rid in enumerate(ids)}
        texts = []
        for rid in ids:
            r = responses[rid]
            turns = r.turns or [""]
            text = (
                turns[task.turn] if task.turn is not None and task.turn < len(turns) else "\n\n".join(turns)
            )
            texts.append((r.model_name, text))
        prompt_turns = task.prompt.turns or [""]
        prompt = (
            prompt_turns[task.turn]
            if task.turn is not None and task.turn < len(prompt_turns)
            else "\n\n".join(prompt_turns)
        )
        items.append(ExportItem(item_id, prompt, tuple(texts)))
    rows = (
        Annotation.objects.counted()
        .filter(assignment__project=project)
        .order_by("assignment_id", "id")
        .values_list(
            "assignment_id",
            "assignment__task_id",
            "assignment__annotator_id",
            "criterion",
            "response_id",
            "value_int",
            "choice",
            "comment",
        )
    )
    by_assignment: dict[int, dict] = {}
    for assignment_id, task_id, user_id, criterion, response_id, value_int, choice, comment in rows:
        if task_id not in item_of:
            continue
        entry = by_assignment.setdefault(
            assignment_id,
            {"task": task_id, "user": user_id, "ratings": {}, "vote": None, "best": None, "comment": ""},
        )
        if criterion == "comment":
            entry["comment"] = comment
        elif criterion == "vote":
            entry["vote"] = choice
        elif criterion == "best":
            entry["best"] = "all_bad" if choice == "all_bad" else position[task_id].get(response_id)
        elif response_id is not None:
            entry["ratings"][(position[task_id][response_id], criterion)] = choice if choice else value_int
    pseudonyms: dict[int, str] = {}
    answers = []
    for entry in by_assignment.values():
        user = entry["user"]
        if user not in pseudonyms:
            pseudonyms[user] = annotator_pseudonym(project=project, user_id=user)
        answers.append(
            ExportAnswer(
                item_of[entry["task"]],
                pseudonyms[user],
                entry["ratings"],
                entry["vote"],
                entry["best"],
                entry["comment"],
            )
        )
    return ProjectAnswers(criteria=criteria, items=items, answers=answers)
