"""The export families, by name: each one a module beside this one that ends with its ``FAMILY``
(``exports.families.base.Family``). A new family is a new module and one line here.

The order is the order in which a project's formats are offered: its first format is its default.
"""

from __future__ import annotations

from annotation.models import Project
from exports.families import (
    arena,
    error_spans,
    label_studio,
    parallel_corpus,
    preferences,
    question_set,
    raw,
)
from exports.families.base import Family

FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        arena.FAMILY,  # offered for arenas only, where it comes first: their default format
        preferences.FAMILY,
        raw.FAMILY,
        parallel_corpus.FAMILY,
        question_set.FAMILY,
        error_spans.FAMILY,
        label_studio.FAMILY,
    )
}


def formats() -> tuple[str, ...]:
    """Every format (``Export.kind``) a registered family writes."""
    return tuple(kind for family in FAMILIES.values() for kind in family.formats)


def family_for(kind: str) -> Family:
    """The family that writes the format ``kind``; ``KeyError`` when none does."""
    for family in FAMILIES.values():
        if kind in family.formats:
            return family
    raise KeyError(kind)


def kinds_for(project: Project) -> tuple[str, ...]:
    """The formats a project offers, its default first: pairs and raw annotations of a rating project, the
    parallel corpus of a translation project, the question set of a question project, the error spans of
    an MQM or ESA project."""
    return tuple(kind for family in FAMILIES.values() if family.offered(project) for kind in family.formats)
