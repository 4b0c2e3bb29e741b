"""Reads of the new-project page: what a dataset holds, and one task of it as an annotator would see it
(responses labelled by position only: never a model name or a response id)."""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from django.db.models import Count

from annotation.domain import rubrics as default_rubrics
from annotation.models import Task
from annotation.selectors.base import response_turns
from datasets_app.models import Dataset

__all__ = ["DatasetSummary", "dataset_summary", "gold_task_view", "task_preview"]


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


def task_preview(*, dataset: Dataset, kind: str, lang: str) -> dict[str, Any] | None:
    """The first item of ``dataset`` shaped as the annotator's screen of a ``kind`` project shows it."""
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
    if kind == "pairwise":
        responses = responses[:2]
        labels = ["A", "B"]
    else:
        labels = [str(i) for i in range(1, len(responses) + 1)]
    criteria = (
        [default_rubrics.CRITERION_LABELS[c].get(lang, c) for c in default_rubrics.CRITERIA]
        if kind == "likert"
        else []
    )
    return {
        "turns": list(prompt.turns),
        "responses": [
            {"label": label, "turns": list(r.turns)} for label, r in zip(labels, responses, strict=False)
        ],
        "criteria": criteria,
        "category": prompt.category,
        "language": prompt.language,
    }


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
