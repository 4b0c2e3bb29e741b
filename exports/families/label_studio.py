"""A rating project as a Label Studio project (``label-studio``): ``tasks.json`` in Label Studio's JSON
export format, every current answer an annotation by a pseudonymous annotator, ``label_config.xml`` to
open them under, and a short card. Built by ``annotation.domain.tool_studies.label_studio_export``; what
it writes reads back through the Label Studio import (``manage.py import_study --tool label_studio``)."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from annotation.domain.tool_studies.label_studio_export import build_tasks, label_config
from annotation.models import RATING_KINDS, Project
from exports.domain.dataset_card import card_document, render_yaml
from exports.families import label_studio_selectors
from exports.families.base import Destination, Family, Step, kind_name
from exports.options import ExportInvalid, ExportOptions, answers_options_resolve

LABEL_STUDIO = "label-studio"


def offered(project: Project) -> bool:
    return project.kind in RATING_KINDS


def resolve(*, project: Project, options: ExportOptions) -> ExportOptions:
    errors: dict[str, str] = {}
    resolved = answers_options_resolve(project=project, options=options, errors=errors)
    if options.test_size:
        errors["split"] = "a Label Studio project is one list of tasks"
    if errors:
        raise ExportInvalid(errors)
    return resolved


def preview(*, project: Project, options: ExportOptions) -> dict[str, Any]:
    return {
        "format": options.kind,
        "rows": label_studio_selectors.task_count(project),
        "annotations": label_studio_selectors.answer_count(project),
    }


@dataclass
class LabelStudioBuild:
    tasks: list[dict]
    config: str
    n_annotations: int


def read(*, project: Project, options: ExportOptions, step: Step) -> label_studio_selectors.ProjectAnswers:
    step(5, "reading tasks and answers")
    return label_studio_selectors.project_answers(project)


def build(
    *, project: Project, options: ExportOptions, data: label_studio_selectors.ProjectAnswers, step: Step
) -> LabelStudioBuild:
    tasks = build_tasks(kind=project.kind, criteria=data.criteria, items=data.items, answers=data.answers)
    n_responses = max((len(i.responses) for i in data.items), default=1)
    config = label_config(
        kind=project.kind,
        criteria=data.criteria,
        n_responses=n_responses,
        best_pick=project.kind == Project.Kind.BEST_OF_N or project.best_pick != Project.BestPick.OFF,
    )
    return LabelStudioBuild(tasks=tasks, config=config, n_annotations=len(data.answers))


def write(
    *, destination: Destination, built: LabelStudioBuild, card: Callable[[], str], step: Step
) -> dict[str, Any]:
    folder = destination.folder
    staging = folder.parent / f".{folder.name}.partial-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    try:
        step(50, "writing tasks")
        (staging / "tasks.json").write_text(
            json.dumps(built.tasks, ensure_ascii=False, indent=1), encoding="utf-8"
        )
        (staging / "label_config.xml").write_text(built.config, encoding="utf-8")
        (staging / "README.md").write_text(card(), encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return {
        "format": LABEL_STUDIO,
        "rows": len(built.tasks),
        "annotations": built.n_annotations,
        "file": "tasks.json",
    }


def card(
    *, project: Project, options: ExportOptions, built: LabelStudioBuild, destination: Destination
) -> str:
    header = render_yaml(
        {"pretty_name": options.pretty_name, "license": options.license, "tags": ["annotations"]}
    )
    lines = [
        f"# {options.pretty_name}",
        "",
        f'The {kind_name(project)} project "{project.name}" as a Label Studio project: {len(built.tasks):,} '
        f"tasks with {built.n_annotations:,} annotations (every current answer; gold items left out), "
        "annotators under pseudonyms only.",
        "",
        "- `tasks.json`: Label Studio's JSON export format (1.x): import it into a Label Studio project.",
        "- `label_config.xml`: the labeling interface the tasks open under (Settings > Labeling Interface "
        "> Code).",
        "",
        "Each task's `data` holds `item_id`, `prompt` and `response_1`, `response_2`, ...; the model of each "
        "response is in the task's `meta.models`, not shown to annotators. Ratings are `rating` results "
        "(`<criterion>_<n>` rating `response_<n>`), categories `choices`, pairwise votes `pairwise` "
        "(`left` = A) with ties and both-bad as the `vote` choice, best picks the `best` choice.",
        "",
        "## License",
        "",
        f"`{options.license}`",
        "",
    ]
    return card_document(header, lines)


FAMILY = Family(
    name="label_studio",
    formats=(LABEL_STUDIO,),
    offered=offered,
    resolve=resolve,
    preview=preview,
    read=read,
    build=build,
    card=card,
    write=write,
)
