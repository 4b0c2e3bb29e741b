"""Reads of the new-project page: what a dataset holds, and one task of it as an annotator would see it
(responses labelled by position only: never a model name or a response id; the chosen criteria on their
designed scales, as the task page shows them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from statistics import mean
from typing import Any

from django.db.models import Count, Exists, Max, OuterRef, QuerySet

from annotation.domain.blinding import shown_labels
from annotation.models import Assignment, Project, Rubric, Task
from annotation.selectors.base import response_turns
from annotation.selectors.core import CriterionView, ShownResponse, rubrics_for
from datasets_app.models import Dataset

__all__ = [
    "DatasetSummary",
    "dataset_summary",
    "gold_task_list",
    "gold_task_view",
    "preview_criteria",
    "task_preview",
]


@dataclass(frozen=True)
class DatasetSummary:
    kind: str
    items: int
    responses_min: int | None = None
    responses_max: int | None = None
    responses_mean: float | None = None
    languages: list[tuple[str, int]] = field(default_factory=list)
    categories: list[tuple[str, int]] = field(default_factory=list)


def _facet(rows, name: str) -> list[tuple[str, int]]:
    return list(rows.values_list(name).annotate(n=Count("id")).order_by("-n", name))


def dataset_summary(*, dataset: Dataset) -> DatasetSummary:
    """Counts for the new-project page: items, responses per prompt, languages and categories."""
    if dataset.kind == Dataset.Kind.TRANSLATIONS:
        units = dataset.translation_units.order_by()
        return DatasetSummary(
            kind=dataset.kind, items=units.count(), languages=_facet(units, "target_language")
        )
    if dataset.kind == Dataset.Kind.QUESTIONS:
        questions = dataset.questions.order_by()
        return DatasetSummary(
            kind=dataset.kind,
            items=questions.count(),
            languages=_facet(questions, "language"),
            categories=_facet(questions, "category"),
        )
    prompts = dataset.prompts.order_by()
    per_prompt = list(prompts.annotate(n=Count("responses")).values_list("n", flat=True))
    return DatasetSummary(
        kind=dataset.kind,
        items=len(per_prompt),
        responses_min=min(per_prompt, default=None),
        responses_max=max(per_prompt, default=None),
        responses_mean=round(mean(per_prompt), 1) if per_prompt else None,
        languages=_facet(prompts, "language"),
        categories=_facet(prompts, "category"),
    )


def preview_criteria(*, criteria: Sequence[str], category: str) -> list[CriterionView]:
    """``criteria`` (those with a rubric) at their newest rubric version, worded for ``category``: what a
    project created now would show on its task page."""
    latest = dict(
        Rubric.objects.filter(criterion__in=list(criteria), category="")
        .values_list("criterion")
        .annotate(version=Max("version"))
        .order_by()
    )
    draft = Project(criteria=[c for c in criteria if c in latest], rubric_versions=latest)
    return rubrics_for(draft, category)


def task_preview(
    *,
    dataset: Dataset,
    kind: str,
    lang: str,
    criteria: Sequence[str] = (),
    best_pick: str = Project.BestPick.OPTIONAL,
    allow_all_bad: bool = False,
) -> dict[str, Any] | None:
    """The first item of ``dataset`` shaped as the annotator's screen of a ``kind`` project shows it: a
    likert project's ``criteria`` with their scales and its ``best_pick`` question (``off``, ``optional``
    or ``required``); best-of-N's pick, always required; "all bad" among the picks with ``allow_all_bad``."""
    if dataset.kind == Dataset.Kind.TRANSLATIONS:
        unit = dataset.translation_units.order_by("id").first()
        if unit is None:
            return None
        return {
            "source": unit.source_text,
            "translation": unit.translation_text,
            "languages": f"{unit.source_language} → {unit.target_language}",
            "register": unit.register,
        }
    if dataset.kind == Dataset.Kind.QUESTIONS:
        question = dataset.questions.order_by("id").first()
        if question is None:
            return None
        return {"question": question.text, "choices": sorted((question.choices or {}).items())}
    prompt = dataset.prompts.order_by("id").prefetch_related("responses").first()
    if prompt is None:
        return None
    responses = sorted(prompt.responses.all(), key=lambda r: r.pk)
    pairwise = kind == Project.Kind.PAIRWISE
    if pairwise:
        responses = responses[:2]
    labels = shown_labels(len(responses), "id" if lang.startswith("id") else "en", pairwise=pairwise)
    views = (
        preview_criteria(criteria=criteria, category=prompt.category) if kind == Project.Kind.LIKERT else []
    )
    aligned = []
    if pairwise and len(responses) == 2:
        replies = zip_longest(prompt.turns, responses[0].turns, responses[1].turns, fillvalue="")
        aligned = [
            {"number": n, "user": user, "a": a, "b": b, "judged": False}
            for n, (user, a, b) in enumerate(replies, start=1)
        ]
    return {
        "turns": list(prompt.turns),
        "aligned": aligned,
        "responses": [
            ShownResponse(number=n, label=label, turns=list(r.turns))
            for n, (label, r) in enumerate(zip(labels, responses, strict=False), start=1)
        ],
        "criteria": views,
        "best_pick": (
            best_pick
            if kind == Project.Kind.LIKERT
            else Project.BestPick.REQUIRED
            if kind == Project.Kind.BEST_OF_N
            else Project.BestPick.OFF
        ),
        "allow_all_bad": allow_all_bad and kind in (Project.Kind.LIKERT, Project.Kind.BEST_OF_N),
        "category": prompt.category,
        "language": prompt.language,
    }


def gold_task_list(*, project: Project) -> QuerySet[Task]:
    """The project's tasks in order, each with ``taken``: whether anybody was given it (such a task can no
    longer become gold)."""
    given = Assignment.objects.filter(task_id=OuterRef("pk"))
    return project.tasks.select_related("prompt").annotate(taken=Exists(given)).order_by("pk")


def gold_task_view(*, task: Task) -> dict[str, Any]:
    """One task as the manager marking it gold sees it: the prompt's turns and the responses' turns in
    canonical order, numbered from 1 (the numbers the gold answer uses), without model names."""
    turns = response_turns(task.response_ids)
    return {
        "task": task,
        "prompt_turns": list(task.prompt.turns) if task.prompt_id else [],
        "responses": [
            {
                "number": i + 1,
                "side": "AB"[i] if task.project.is_pairwise and i < 2 else "",
                "turns": turns.get(rid, []),
            }
            for i, rid in enumerate(task.response_ids)
        ],
    }
