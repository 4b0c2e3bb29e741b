"""The final parallel corpus of a translation project (``parallel-corpus``): the accepted translation of
each unit, streamed page by page into a one-split Hugging Face folder whose card is written from the rows
that went out."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd
import pyarrow as pa

from annotation.models import Project
from exports import selectors
from exports.domain.dataset_card import card_document, work_lines
from exports.families import parallel_corpus_selectors
from exports.families.base import Destination, Family, Step, kind_name
from exports.families.corpus import (
    UNRECORDED_NOTE,
    CorpusBuild,
    corpus_build,
    corpus_header,
    made_and_licensed_lines,
    reviewed_tags,
    simulated_tags,
    were,
    write,
)
from exports.options import PARALLEL_CORPUS, ExportFailed, ExportOptions, corpus_options_resolve

PARALLEL_CORPUS_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("source", pa.string()),
        ("target", pa.string()),
        ("source_language", pa.string()),
        ("target_language", pa.string()),
        ("register", pa.string()),
        ("translator", pa.string()),
        ("n_rounds", pa.int64()),
        ("fixed_by_reviewer", pa.bool_()),
        ("flags", pa.list_(pa.string())),
    ]
)
# What the card counts by: the rows actually written are tallied on their way to the parquet file.
PARALLEL_CORPUS_KEYS = ("source_language", "target_language", "register")


def offered(project: Project) -> bool:
    return project.kind in selectors.TRANSLATION_KINDS


def resolve(*, project: Project, options: ExportOptions) -> ExportOptions:
    return corpus_options_resolve(project=project, options=options)


def preview(*, project: Project, options: ExportOptions) -> dict[str, Any]:
    """What the export writes, from aggregate queries."""
    groups = parallel_corpus_selectors.parallel_corpus_counts(project)
    summary = _summary(options, {(s, t, r): n for s, t, r, n in groups})
    return {**summary, "work": parallel_corpus_selectors.parallel_corpus_work(project)}


def read(*, project: Project, options: ExportOptions, step: Step) -> Iterator[pd.DataFrame]:
    if not parallel_corpus_selectors.corpus_units(project).exists():
        raise ExportFailed("no translation of this project has been accepted yet; nothing was written")
    return parallel_corpus_selectors.parallel_corpus_chunks(project)


def build(
    *, project: Project, options: ExportOptions, data: Iterator[pd.DataFrame], step: Step
) -> CorpusBuild:
    return corpus_build(data, schema=PARALLEL_CORPUS_SCHEMA, keys=PARALLEL_CORPUS_KEYS)


def card(*, project: Project, options: ExportOptions, built: CorpusBuild, destination: Destination) -> str:
    built.summary.update(_summary(options, built.tally))
    built.summary["work"] = parallel_corpus_selectors.parallel_corpus_work(project)
    return _card_text(project, options, built.summary)


def _summary(options: ExportOptions, groups: Mapping[tuple[str, str, str], int]) -> dict:
    pairs: dict[str, int] = {}
    for (source, target, _), n in sorted(groups.items()):
        pairs[f"{source}-{target}"] = pairs.get(f"{source}-{target}", 0) + n
    return {
        "format": options.kind,
        "rows": sum(groups.values()),
        "language_pairs": pairs,
        "groups": [
            {"source_language": s, "target_language": t, "register": r, "rows": n}
            for (s, t, r), n in sorted(groups.items())
        ],
    }


PARALLEL_CORPUS_COLUMN_TEXT = {
    "id": "The unit's id in the imported dataset.",
    "source": "The source text.",
    "target": "The accepted translation (the reviewer's correction when they fixed it).",
    "source_language / target_language": "ISO 639-3 codes.",
    "register": "The register asked for (empty when the language has none).",
    "translator": "Pseudonym of the translator, stable within this project (a keyed hash, not reversible).",
    "n_rounds": "Review rounds the unit went through (0: imported as already accepted).",
    "fixed_by_reviewer": "Whether the final text is the reviewer's correction.",
    "flags": "Codes of the automatic checks that still flag the final text (length, numbers, register...).",
}


def _card_text(project: Project, options: ExportOptions, summary: Mapping[str, Any]) -> str:
    groups = summary["groups"]
    languages = sorted({g["source_language"] for g in groups} | {g["target_language"] for g in groups})
    work = summary["work"]
    header = corpus_header(
        options,
        languages=languages,
        rows=summary["rows"],
        extra={
            "task_categories": ["translation"],
            "tags": [
                "parallel-corpus",
                *reviewed_tags(work["accepting_verdicts"]),
                *simulated_tags(work),
            ],
        },
    )
    unreviewed = summary["rows"] - work["accepting_verdicts"]["rows"]
    by_target: dict[str, int] = {}
    for g in groups:
        by_target[g["target_language"]] = by_target.get(g["target_language"], 0) + g["rows"]
    lines = [
        f"# {options.pretty_name}",
        "",
        f'The final parallel corpus of the {kind_name(project)} project "{project.name}" over '
        f'the dataset "{project.dataset.name}", exported by Timbang: {summary["rows"]:,} source texts with '
        "their accepted translation. A reviewer checked each translation written in Timbang and accepted it "
        "as it was or corrected it; a rejected translation went back to its translator with the reviewer's "
        "error categories until it was accepted. Units still being translated or reviewed are not included. "
        "Translators appear under pseudonyms only.",
        "",
        "## Who did the work",
        "",
        *work_lines(
            [
                ("translations (units)", work["translations"]),
                ("review verdicts (every round)", work["review_verdicts"]),
                ("accepting verdicts (units)", work["accepting_verdicts"]),
            ]
        ),
        *(
            [
                f"Of the {summary['rows']:,} units, {were(unreviewed)} imported as already accepted and not "
                "reviewed in Timbang.",
                "",
            ]
            if unreviewed
            else []
        ),
        UNRECORDED_NOTE,
        "",
        "## Columns",
        "",
        "| column | meaning |",
        "|---|---|",
        *[f"| {column} | {text} |" for column, text in PARALLEL_CORPUS_COLUMN_TEXT.items()],
        "",
        "## Counts",
        "",
        "Per language pair and register:",
        "",
        "| source | target | register | rows |",
        "|---|---|---|---:|",
        *[
            f"| {g['source_language']} | {g['target_language']} | {g['register'] or '-'} | {g['rows']:,} |"
            for g in groups
        ],
        "",
        "Per target language:",
        "",
        "| language | rows |",
        "|---|---:|",
        *[f"| {language} | {n:,} |" for language, n in sorted(by_target.items())],
        "",
        *made_and_licensed_lines(project, options, ()),
    ]
    return card_document(header, lines)


FAMILY = Family(
    name="parallel_corpus",
    formats=(PARALLEL_CORPUS,),
    offered=offered,
    resolve=resolve,
    preview=preview,
    read=read,
    build=build,
    card=card,
    write=write,
)
