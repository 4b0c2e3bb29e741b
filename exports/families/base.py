"""What every export family provides: the same steps, called in the same order by ``exports.services``.

A family is a ``Family`` of plain functions, registered by name in ``exports.families.FAMILIES``:

- ``offered(project)``: whether a project can be exported this way;
- ``resolve(project=, options=)``: the options checked against the project, its defaults filled in
  (raises ``ExportInvalid``);
- ``preview(project=, options=)``: the counts an export would give, without writing anything;
- ``read(project=, options=, step=)``: what the export reads (frames, or chunks read lazily);
- ``build(project=, options=, data=, step=)``: the rows to write and the figures the card reports;
- ``card(project=, options=, built=, destination=)``: the dataset card (README.md);
- ``write(destination=, built=, card=, step=)``: the files, with the card, in the destination folder;
  returns the counts stored on the ``Export`` row. ``card`` is called by ``write`` when the rows are
  written, so a family that streams its rows can describe the rows that went out.

``step(percent, stage)`` reports progress (and stops a cancelled export).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.utils import translation

from annotation.models import Project
from exports.options import ExportOptions

Step = Callable[[int, str], None]


@dataclass(frozen=True)
class Destination:
    """Where an export goes: its folder and, when it is pushed, the Hub repository."""

    folder: Path
    hub_repo_id: str = ""


@dataclass(frozen=True)
class Family:
    name: str
    # The ``kind`` values (formats) the family writes, the default first.
    formats: tuple[str, ...]
    offered: Callable[[Project], bool]
    resolve: Callable[..., ExportOptions]
    preview: Callable[..., dict[str, Any]]
    read: Callable[..., Any]
    build: Callable[..., Any]
    card: Callable[..., str]
    write: Callable[..., dict[str, Any]]


def kind_name(project: Project) -> str:
    """The project's kind as the (English) cards name it, whatever language is active in the worker."""
    with translation.override("en"):
        return str(project.get_kind_display()).lower()
