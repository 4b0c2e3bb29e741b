"""What the one-split corpus families (the parallel corpus, the question set) share: their rows streamed
page by page into one train split, tallied on the way, and the card written from the rows that went out;
the parts of their cards that read alike."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pyarrow as pa

from annotation.models import Project
from exports.domain.dataset_card import render_yaml, size_category
from exports.families.base import Destination, Step
from exports.options import ExportOptions
from exports.writers import write_hf_folder


@dataclass
class CorpusBuild:
    """The pages to write, their schema, the rows written per key (filled while writing), what the read
    counted beforehand, and the figures the card reports (filled by the card; stored as the counts)."""

    chunks: Iterator[pd.DataFrame]
    schema: pa.Schema
    tally: dict[tuple, int]
    counts: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)


def corpus_build(
    chunks: Iterable[pd.DataFrame],
    *,
    schema: pa.Schema,
    keys: tuple[str, ...],
    counts: dict[str, Any] | None = None,
) -> CorpusBuild:
    tally: dict[tuple, int] = {}
    return CorpusBuild(chunks=tallied(chunks, keys, tally), schema=schema, tally=tally, counts=counts or {})


def tallied(chunks, keys: tuple[str, ...], tally: dict[tuple, int]):
    """Pass ``chunks`` through, counting rows per ``keys`` value into ``tally``."""
    for chunk in chunks:
        if len(chunk):
            for key, n in chunk.groupby(list(keys), dropna=False, sort=False).size().items():
                key = key if isinstance(key, tuple) else (key,)
                tally[key] = tally.get(key, 0) + int(n)
        yield chunk


def write(
    *, destination: Destination, built: CorpusBuild, card: Callable[[], str], step: Step
) -> dict[str, Any]:
    """Stream the rows into a one-split dataset folder, then write the card from the rows written."""
    step(10, "writing parquet files")
    write_hf_folder(destination.folder, {"train": built.chunks}, "", schema=built.schema, overwrite=True)
    step(85, "writing the dataset card")
    (destination.folder / "README.md").write_text(card(), encoding="utf-8")
    return built.summary


def corpus_header(
    options: ExportOptions, *, languages: list[str], rows: int, extra: Mapping[str, Any]
) -> str:
    return render_yaml(
        {
            "pretty_name": options.pretty_name,
            "license": options.license,
            "language": languages,
            "multilinguality": "multilingual" if len(languages) > 1 else "monolingual",
            "size_categories": [size_category(rows)],
            **extra,
            "configs": [
                {"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"}]}
            ],
        }
    )


def reviewed_tags(done: Mapping[str, int]) -> list[str]:
    """``human-reviewed`` only when people gave some of the accepting verdicts."""
    by_people = done["rows"] - done["simulated_rows"] - done["unrecorded_rows"]
    return ["human-reviewed"] if by_people else []


def simulated_tags(work: Mapping[str, Mapping[str, int]]) -> list[str]:
    """``simulated-annotators`` whenever simulated annotators did some of the work."""
    return ["simulated-annotators"] if any(c["simulated_rows"] for c in work.values()) else []


def were(n: int) -> str:
    return f"{n:,} was" if n == 1 else f"{n:,} were"


UNRECORDED_NOTE = (
    "*Person not recorded*: imported with a name only (or by no one named), or done by an account since "
    "deleted."
)


def parameters_lines(project: Project, options: ExportOptions, keys: tuple[str, ...]) -> list[str]:
    data = options.as_dict()
    values = {"format": options.kind, "project_id": project.pk, "dataset_id": project.dataset_id}
    values.update({key: data[key] for key in keys})
    return [f"- `{key}`: `{value}`" for key, value in values.items()]


def made_and_licensed_lines(project: Project, options: ExportOptions, keys: tuple[str, ...]) -> list[str]:
    """A corpus card's last two sections: the export's parameters (``keys`` beside the format and ids),
    and the licence."""
    return [
        "## How it was made",
        "",
        *parameters_lines(project, options, keys),
        "",
        "## License",
        "",
        f"`{options.license}`",
        "",
    ]
