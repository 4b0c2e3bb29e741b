"""Writes of the rubric designer: a criterion's labels, question, scale and level texts, versioned.

A rubric is the rows of one criterion at one version: the general row (category "") and any rows with
their own wording for a category. Saving a criterion that a started project (active, paused or closed)
rates at its newest version writes a new version, so the answers already given keep the texts and the
scale they were given under; otherwise the newest version is rewritten in place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from django.db import transaction
from django.utils.translation import gettext_noop

from annotation.domain import rubrics as domain
from annotation.models import Project, Rubric
from annotation.selectors.core import rubrics_changed
from annotation.services.loop import AnnotationError

__all__ = ["RubricInvalid", "rubric_save"]

_CRITERION = re.compile(r"^[a-z][a-z_]{0,39}$")
# Answers, votes and comments share the criterion column: a rubric may not take their names.
_RESERVED = {"best", "vote", "comment", "choice", "ambiguous", "answer", "verdict"}


class RubricInvalid(AnnotationError):
    """A rubric that cannot be saved; ``errors`` maps each field to its message. Nothing was written."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


def _texts(value: object, field: str, errors: dict[str, str], required: bool) -> dict[str, str]:
    value = value if isinstance(value, Mapping) else {}
    out = {lang: str(value.get(lang) or "").strip() for lang in domain.LANGS}
    for lang, text in out.items():
        if required and not text:
            errors[f"{field}.{lang}"] = f"Give the {field} in {'Indonesian' if lang == 'id' else 'English'}."
    return out


def _started_projects(criterion: str, version: int) -> list[str]:
    started = Project.objects.filter(kind=Project.Kind.LIKERT).exclude(status=Project.Status.DRAFT)
    return [
        p.name
        for p in started.only("name", "criteria", "rubric_versions")
        if criterion in (p.criteria or []) and (p.rubric_versions or {}).get(criterion, 1) == version
    ]


@transaction.atomic
def rubric_save(
    *,
    criterion: str,
    label: Mapping[str, str],
    question: Mapping[str, str] | None,
    scale: Mapping[str, object],
    levels: Mapping[str, Mapping[str, str]],
    overrides: Mapping[str, Mapping[str, Mapping[str, str]]] | None = None,
    new: bool = False,
) -> tuple[str, int, bool]:
    """Create (``new=True``) or edit a criterion's rubric; returns (criterion, version, new version?).

    ``overrides`` maps a category to its own level texts (same scale). Every problem is reported at once
    with the field it belongs to, and nothing is written.
    """
    errors: dict[str, str] = {}
    criterion = (criterion or "").strip()
    if not _CRITERION.match(criterion):
        errors["criterion"] = gettext_noop("Use 1 to 40 lower-case letters or '_', starting with a letter.")
    elif criterion in _RESERVED:
        errors["criterion"] = f"{criterion!r} is a reserved name."
    latest = Rubric.objects.filter(criterion=criterion).order_by("-version").values_list("version", flat=True)
    current = latest.first()
    if new and current is not None:
        errors["criterion"] = f"A criterion {criterion!r} exists already; edit it instead."
    if not new and current is None and "criterion" not in errors:
        errors["criterion"] = f"There is no criterion {criterion!r}."
    labels = _texts(label, "label", errors, required=True)
    questions = _texts(question, "question", errors, required=False)
    parsed_scale = domain.DEFAULT_SCALE
    try:
        parsed_scale = domain.scale_from_json(dict(scale))
    except domain.ScaleInvalid as exc:
        errors.update({f"scale.{k}" if not k.startswith("scale") else k: v for k, v in exc.errors.items()})
    rows: dict[str, dict[str, dict[str, str]]] = {}
    for category, texts in {"": levels, **dict(overrides or {})}.items():
        slug = (domain.normalize_category(category) or "") if category else ""
        if category and not slug:
            errors["overrides"] = f"Category {category!r} has no usable name."
            continue
        try:
            rows[slug] = domain.check_levels(dict(texts), parsed_scale)
        except domain.ScaleInvalid as exc:
            prefix = f"overrides.{slug}." if slug else ""
            errors.update({prefix + k: v for k, v in exc.errors.items()})
    if errors:
        raise RubricInvalid(errors)

    version = current or 1
    new_version = current is not None and bool(_started_projects(criterion, current))
    if new_version:
        version = current + 1
    else:
        Rubric.objects.filter(criterion=criterion, version=version).delete()
    Rubric.objects.bulk_create(
        Rubric(
            criterion=criterion,
            category=slug,
            version=version,
            label=labels,
            question={k: v for k, v in questions.items() if v},
            levels=texts,
            scale=parsed_scale.as_json(),
        )
        for slug, texts in rows.items()
    )
    rubrics_changed()  # bulk writes send no signals
    return criterion, version, new_version
