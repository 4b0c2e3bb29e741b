"""Raw annotations of a rating project: every current answer in long format, one row per value
(``raw-parquet``, ``raw-csv``, ``raw-jsonl``), annotators under pseudonyms, with a short card."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd

from annotation.models import RATING_KINDS, Project
from exports.domain.dataset_card import CSV_CELLS_NOTE, card_document, render_yaml
from exports.families import raw_selectors
from exports.families.base import Destination, Family, Step, kind_name
from exports.options import RAW_FORMATS, ExportInvalid, ExportOptions, answers_options_resolve
from exports.writers import write_long_format


def offered(project: Project) -> bool:
    return project.kind in RATING_KINDS


def resolve(*, project: Project, options: ExportOptions) -> ExportOptions:
    """The card's options (seed, licence, name, provenance); pair options do not apply."""
    errors: dict[str, str] = {}
    resolved = answers_options_resolve(project=project, options=options, errors=errors)
    if errors:
        raise ExportInvalid(errors)
    return resolved


def preview(*, project: Project, options: ExportOptions) -> dict[str, Any]:
    return {"format": options.kind, "rows": raw_selectors.annotation_count(project)}


@dataclass
class RawBuild:
    """The file to write (``annotations.<format>``), its pages of rows, and the rows written."""

    kind: str
    fmt: str
    file: str
    chunks: Iterator[pd.DataFrame]
    rows: int = 0


def read(*, project: Project, options: ExportOptions, step: Step) -> Iterator[pd.DataFrame]:
    """The annotation rows, page by page as the file is written."""
    return raw_selectors.raw_annotation_chunks(project)


def build(*, project: Project, options: ExportOptions, data: Iterator[pd.DataFrame], step: Step) -> RawBuild:
    fmt = RAW_FORMATS[options.kind]
    return RawBuild(kind=options.kind, fmt=fmt, file=f"annotations.{fmt}", chunks=data)


def write(
    *, destination: Destination, built: RawBuild, card: Callable[[], str], step: Step
) -> dict[str, Any]:
    """The file and the card, written beside the folder and then put in its place."""
    folder = destination.folder
    staging = folder.parent / f".{folder.name}.partial-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    try:
        step(10, "writing annotations")
        built.rows = write_long_format(staging / built.file, built.chunks, fmt=built.fmt)  # type: ignore[arg-type]
        (staging / "README.md").write_text(card(), encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return {"format": built.kind, "rows": built.rows, "file": built.file}


RAW_COLUMN_TEXT = {
    "annotator": "Pseudonymous annotator id, stable within this project (a keyed hash, not reversible).",
    "group": "The annotator group the answer counts toward.",
    "is_gold": "Whether the task was a gold (control) item.",
    "round": "Answer round (goes up when a reviewer sent the task back).",
    "criterion": "What the row holds: a rated criterion, `best` (best-of-N pick), `vote` or `comment`.",
    "response_id / model_name": "The rated or picked response (for a vote: the winner; empty for a tie).",
    "shown_position": "Where that response stood on the annotator's screen (1-based).",
    "shown_order": "Response ids in the order the annotator saw them.",
    "value / choice": "The 1-5 rating; the pick (`all_bad`) or the vote (`A`, `B`, `tie`, `both_bad`).",
    "rubric_version": "Version of the rubric the rating was given under.",
    "started_at / submitted_at / seconds_on_task": "When the task was claimed and submitted; time on the page.",
}


def card(*, project: Project, options: ExportOptions, built: RawBuild, destination: Destination) -> str:
    name, rows = built.file, built.rows
    header = render_yaml(
        {
            "pretty_name": options.pretty_name,
            "license": options.license,
            "tags": ["human-feedback", "annotations"],
            "configs": [{"config_name": "default", "data_files": [{"split": "train", "path": name}]}],
        }
    )
    lines = [
        f"# {options.pretty_name}",
        "",
        f'Raw annotations of the {kind_name(project)} project "{project.name}", one row per '
        f"value in long format ({rows:,} rows): the current answer of every submitted task, gold items "
        "flagged. Annotators appear under pseudonyms only.",
        "",
        "| column | meaning |",
        "|---|---|",
        *[f"| {column} | {text} |" for column, text in RAW_COLUMN_TEXT.items()],
        "",
        CSV_CELLS_NOTE,
        "",
        "## License",
        "",
        f"`{options.license}`",
        "",
    ]
    return card_document(header, lines)


FAMILY = Family(
    name="raw",
    formats=tuple(RAW_FORMATS),
    offered=offered,
    resolve=resolve,
    preview=preview,
    read=read,
    build=build,
    card=card,
    write=write,
)
