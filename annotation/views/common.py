"""What the pages of annotation share: the language pages are shown in, the scale cards of a task and
the new-project preview, and the lookups of the project a manager page is about."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404
from django.utils.translation import get_language

from annotation import selectors
from annotation.models import Project

# The kinds that have gold tasks: the rating kinds.
GOLD_KINDS = (Project.Kind.LIKERT, Project.Kind.BEST_OF_N, Project.Kind.PAIRWISE)


def current_lang() -> str:
    return "id" if (get_language() or "en").startswith("id") else "en"


def _scale_choices(criterion: selectors.CriterionView, lang: str) -> list[dict[str, Any]]:
    """One radio per value of the criterion's scale: its key, what it shows, its level text as a hint."""
    texts = dict(criterion.levels.get(lang, []))
    return [
        {
            "value": str(value),
            "key": key,
            "shown": criterion.scale.label(value, lang),
            "text": texts.get(value, ""),
        }
        for key, value in criterion.scale.keys()
    ]


def response_rows(
    responses: list[selectors.ShownResponse],
    criteria: list[selectors.CriterionView],
    ratings: dict[str, Any],
    errors: dict | None = None,
) -> list[dict[str, Any]]:
    """Each shown response with one scale per criterion (the task page's cards, and the preview's).

    A row's ``scales_key`` names everything its scales show but the response's number (the criteria's
    texts, the given values and the errors): the card renders the scales once per key (``{% memo %}``).
    """
    lang = current_lang()
    choices = {criterion.key: _scale_choices(criterion, lang) for criterion in criteria}
    rows = []
    for response in responses:
        given = ratings.get(str(response.number)) or {}
        cells = [
            {
                "criterion": criterion,
                "name": f"r-{response.number}-{criterion.key}",
                "selected": str(given.get(criterion.key, "")),
                "choices": choices[criterion.key],
                "scale_kind": criterion.scale.kind,
                "error": (errors or {}).get(f"ratings.{response.number}.{criterion.key}"),
            }
            for criterion in criteria
        ]
        scales_key = tuple(
            (cell["criterion"].content_key, cell["selected"], tuple(cell["error"] or ())) for cell in cells
        )
        rows.append({"response": response, "cells": cells, "scales_key": scales_key})
    return rows


def manager_project(project_id: int) -> Project:
    return get_object_or_404(Project.objects.select_related("dataset"), pk=project_id)


def form_errors_as_messages(request: HttpRequest, form) -> None:
    """Each field's errors as one message, named by the field's (translated) label."""
    for name, errors in form.errors.items():
        label = form.fields[name].label if name in form.fields else name
        messages.error(request, f"{label}: {' '.join(errors)}")


def job_project(project_id: int, *kinds: str) -> Project:
    project = manager_project(project_id)
    if project.kind not in kinds:
        raise Http404
    return project
