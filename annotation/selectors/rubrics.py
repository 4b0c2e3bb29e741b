"""Reads of the rubric designer: every criterion at its newest version, and one criterion's rows."""

from __future__ import annotations

from dataclasses import dataclass, field

from annotation.domain import rubrics as domain
from annotation.models import Project, Rubric

__all__ = ["RubricSummary", "rubric_choices", "rubric_detail", "rubric_summaries"]


@dataclass(frozen=True)
class RubricSummary:
    criterion: str
    version: int
    label: dict[str, str]
    question: dict[str, str]
    scale: domain.Scale
    levels: dict[str, dict[str, str]]
    overrides: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    projects: tuple[str, ...] = ()  # names of likert projects rating this criterion, any version


def _newest_rows() -> dict[str, list[Rubric]]:
    rows: dict[str, list[Rubric]] = {}
    newest: dict[str, int] = {}
    for rubric in Rubric.objects.order_by("criterion", "-version", "category"):
        version = newest.setdefault(rubric.criterion, rubric.version)
        if rubric.version == version:
            rows.setdefault(rubric.criterion, []).append(rubric)
    return rows


def _summary(rows: list[Rubric], projects: tuple[str, ...]) -> RubricSummary:
    general = next((r for r in rows if not r.category), rows[0])
    return RubricSummary(
        criterion=general.criterion,
        version=general.version,
        label=dict(general.label),
        question=dict(general.question or {}),
        scale=domain.scale_from_json(general.scale),
        levels={lang: dict(general.levels.get(lang, {})) for lang in domain.LANGS},
        overrides={r.category: dict(r.levels) for r in rows if r.category},
        projects=projects,
    )


def _projects_by_criterion() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, criteria in Project.objects.filter(kind=Project.Kind.LIKERT).values_list("name", "criteria"):
        for criterion in criteria or []:
            found.setdefault(criterion, []).append(name)
    return found


def rubric_summaries() -> list[RubricSummary]:
    """Every criterion at its newest version, in name order, with the projects that rate it."""
    projects = _projects_by_criterion()
    return [
        _summary(rows, tuple(projects.get(criterion, ())))
        for criterion, rows in sorted(_newest_rows().items())
    ]


def rubric_detail(criterion: str) -> RubricSummary | None:
    rows = list(Rubric.objects.filter(criterion=criterion).order_by("-version", "category"))
    if not rows:
        return None
    newest = [r for r in rows if r.version == rows[0].version]
    return _summary(newest, tuple(_projects_by_criterion().get(criterion, ())))


def rubric_choices(lang: str) -> list[tuple[str, str]]:
    """(criterion, "Label (scale)") of every criterion, for a project's criteria picker."""
    out = []
    for criterion, rows in sorted(_newest_rows().items()):
        general = next((r for r in rows if not r.category), rows[0])
        scale = domain.scale_from_json(general.scale)
        shown = (
            " / ".join(scale.label(v, lang) for v in scale.values)
            if scale.categories
            else f"1-{scale.points}"
        )
        out.append((criterion, f"{general.label.get(lang) or criterion} ({shown})"))
    return out
