"""Reads of datasets_app."""

import json
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Count, QuerySet

from datasets_app.models import Dataset, DatasetImport, Prompt
from datasets_app.readers import ReadProblem, UnreadableFile, detect_format, read_records


def dataset_list() -> QuerySet[Dataset]:
    return (
        Dataset.objects.select_related("created_by")
        .annotate(
            n_prompts=Count("prompts", distinct=True),
            n_units=Count("translation_units", distinct=True),
            n_questions=Count("questions", distinct=True),
        )
        .order_by("-created_at", "-id")
    )


def prompt_list(
    *, dataset: Dataset, category: str = "", language: str = "", search: str = ""
) -> QuerySet[Prompt]:
    qs = dataset.prompts.annotate(n_responses=Count("responses")).order_by("id")
    if category:
        qs = qs.filter(category=category)
    if language:
        qs = qs.filter(language=language)
    if search:
        qs = qs.filter(external_id__icontains=search)
    return qs


def dataset_facets(*, dataset: Dataset) -> dict[str, list[tuple[str, int]]]:
    """Categories and languages present, with counts, for the filter controls."""
    prompts = dataset.prompts.order_by()
    return {
        "categories": list(prompts.values_list("category").annotate(n=Count("id")).order_by("category")),
        "languages": list(prompts.values_list("language").annotate(n=Count("id")).order_by("language")),
    }


def prompt_detail(*, dataset: Dataset, prompt_id: int) -> Prompt:
    return dataset.prompts.prefetch_related("responses").get(pk=prompt_id)


@dataclass(frozen=True)
class ImportPreview:
    columns: list[str]
    rows: list[list[str | None]]
    problems: list[str]


def import_preview(*, path: Path, file_format: str, name: str, limit: int = 5) -> ImportPreview:
    """The first ``limit`` records of a stored upload, as the file has them (before any mapping), and the
    lines among them that cannot be read. Raises ``UnreadableFile`` when the file cannot be read at all."""
    seen: dict[str, None] = {}  # the columns in the order met (a dict: one lookup per key, not a scan)
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    most = settings.IMPORT_PREVIEW_MAX_COLUMNS
    records = read_records(path, file_format or detect_format(path, name=name), name=name)
    for location, record in islice(records, limit):
        if isinstance(record, ReadProblem):
            problems.append(f"{location}: {record.field + ': ' if record.field else ''}{record.message}")
            continue
        seen.update(dict.fromkeys(record))
        if len(seen) > most:
            raise UnreadableFile(
                f"{name}: {location}: more than {most} columns, too many to preview and map in the browser; "
                "import it with the API or the import_dataset command"
            )
        rows.append(record)
    columns = list(seen)
    return ImportPreview(columns, [[_preview_cell(row.get(c)) for c in columns] for row in rows], problems)


def _preview_cell(value: Any) -> str | None:
    """A cell as the file has it: text as is, anything else (lists, objects, numbers, true/false, null
    inside them) as compact JSON, the way a JSONL file writes it; an absent field stays ``None``."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def import_list(*, limit: int = 10) -> QuerySet[DatasetImport]:
    return DatasetImport.objects.select_related("dataset").order_by("-created_at", "-id")[:limit]
