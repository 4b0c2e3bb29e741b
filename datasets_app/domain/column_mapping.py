"""Column mappings: read files whose columns are not ours (DESIGN.md §8) as our import records.

A mapping names, for each of our prompt fields, the column of the file it comes from (or a constant, for a
file that has no such column, e.g. every row in Indonesian), and the response columns, each with the column
holding its model's name or a fixed model name. AlpacaEval-style files, for example::

    instruction, output_1, generator_1, output_2, generator_2

map with ``prompt <- instruction`` and two responses ``output_1`` (model from ``generator_1``) and
``output_2`` (model from ``generator_2``). The mapping is plain data (:meth:`ColumnMapping.as_dict`), saved
with an import and by name, so the same mapping is used again from the page, the API and the command line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from accounts.domain.echo import clipped, echoed

# The prompt fields a mapping may fill, in the order the page shows them.
PROMPT_FIELDS = ("id", "prompt", "category", "language", "register", "references")
# Fields that may take a constant instead of a column.
CONSTANT_FIELDS = ("category", "language", "register")
# A mapping's id may come from the row number when the file has no id column.
ROW_NUMBER = "#row"
MAX_RESPONSES = 10

# Column names our format uses for a prompt record; a file holding these needs no mapping.
OUR_PROMPT_COLUMNS = frozenset({"id", "category", "language", "prompt", "turns"})

_PROMPT_GUESSES = ("prompt", "instruction", "question", "input", "query", "text")
_ID_GUESSES = ("id", "prompt_id", "question_id", "idx", "uid")
_CATEGORY_GUESSES = ("category", "dataset", "task", "topic", "domain")
_LANGUAGE_GUESSES = ("language", "lang")
_REFERENCE_GUESSES = ("reference", "references", "reference_answer", "answer", "gold")


class MappingInvalid(ValueError):
    """The mapping itself is malformed; ``problems`` are (field, message) pairs."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("; ".join(f"{f}: {m}" if f else m for f, m in problems))


@dataclass(frozen=True)
class ResponseColumn:
    text: str
    model_column: str = ""
    model_name: str = ""

    def as_dict(self) -> dict[str, str]:
        out = {"text": self.text}
        if self.model_column:
            out["model_column"] = self.model_column
        if self.model_name:
            out["model_name"] = self.model_name
        return out


@dataclass(frozen=True)
class ColumnMapping:
    # our field -> the file's column (ROW_NUMBER for the id: the row's number)
    columns: dict[str, str] = field(default_factory=dict)
    # our field -> a value used for every row (only CONSTANT_FIELDS)
    constants: dict[str, str] = field(default_factory=dict)
    responses: tuple[ResponseColumn, ...] = ()
    # Keep the file's other columns in the prompt's meta.
    keep_other_columns: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {
            "columns": dict(self.columns),
            "constants": dict(self.constants),
            "responses": [r.as_dict() for r in self.responses],
            "keep_other_columns": self.keep_other_columns,
        }

    @property
    def is_empty(self) -> bool:
        return not self.columns and not self.constants and not self.responses

    def used_columns(self) -> set[str]:
        used = {c for c in self.columns.values() if c != ROW_NUMBER}
        for r in self.responses:
            used.add(r.text)
            if r.model_column:
                used.add(r.model_column)
        return used

    def source_of(self, our_field: str) -> str:
        """How a problem found in ``our_field`` of a mapped record is named for the user: after the file's
        column it came from (``instruction (prompt)``), or unchanged."""
        head, sep, rest = our_field.partition(".")
        base = head.split("[", 1)[0]
        if base == "responses" and "[" in head:
            try:
                index = int(head.split("[", 1)[1].rstrip("]"))
            except ValueError:
                return our_field
            if 0 <= index < len(self.responses):
                response = self.responses[index]
                column = response.model_column if rest == "model" and response.model_column else response.text
                return f"{column} ({our_field})"
            return our_field
        column = self.columns.get(base)
        if column and column != ROW_NUMBER and column != base:
            return f"{column} ({our_field})"
        return our_field


def mapping_from_dict(data: Any) -> ColumnMapping:
    """Read a mapping from plain data (JSON); raises :class:`MappingInvalid` naming every problem."""
    problems: list[tuple[str, str]] = []
    if not isinstance(data, dict):
        raise MappingInvalid([("", f"a mapping must be an object, got {type(data).__name__}")])
    unknown = [key for key in data if key not in ("columns", "constants", "responses", "keep_other_columns")]
    if unknown:
        problems.append(
            ("", f"unknown keys {echoed(unknown)}; use columns, constants, responses, keep_other_columns")
        )
    columns = data.get("columns") or {}
    constants = data.get("constants") or {}
    responses_raw = data.get("responses") or []
    if not isinstance(columns, dict):
        problems.append(("columns", "must be an object of field: column"))
        columns = {}
    if not isinstance(constants, dict):
        problems.append(("constants", "must be an object of field: value"))
        constants = {}
    if not isinstance(responses_raw, list):
        problems.append(("responses", "must be a list of {text, model_column | model_name}"))
        responses_raw = []
    clean_columns: dict[str, str] = {}
    for key, column in columns.items():
        if key not in PROMPT_FIELDS:
            problems.append(
                (f"columns.{clipped(key)}", f"is not a field of ours; use one of {', '.join(PROMPT_FIELDS)}")
            )
        elif not isinstance(column, str) or not column.strip():
            problems.append((f"columns.{key}", "must name a column"))
        elif column == ROW_NUMBER and key != "id":
            problems.append((f"columns.{key}", "only the id may come from the row number"))
        else:
            clean_columns[key] = column.strip()
    clean_constants: dict[str, str] = {}
    for key, value in constants.items():
        if key not in CONSTANT_FIELDS:
            problems.append(
                (
                    f"constants.{clipped(key)}",
                    f"cannot be a constant; use one of {', '.join(CONSTANT_FIELDS)}",
                )
            )
        elif not isinstance(value, str) or not value.strip():
            problems.append((f"constants.{key}", "must be non-empty text"))
        elif key in clean_columns:
            problems.append((f"constants.{key}", "is mapped from a column already"))
        else:
            clean_constants[key] = value.strip()
    clean_responses: list[ResponseColumn] = []
    if len(responses_raw) > MAX_RESPONSES:
        problems.append(("responses", f"at most {MAX_RESPONSES} response columns"))
    names: set[str] = set()
    for i, item in enumerate(responses_raw[:MAX_RESPONSES]):
        where = f"responses[{i}]"
        if not isinstance(item, dict):
            problems.append((where, "must be an object with text and model_column or model_name"))
            continue
        text = item.get("text")
        model_column = item.get("model_column") or ""
        model_name = item.get("model_name") or ""
        if not isinstance(text, str) or not text.strip():
            problems.append((f"{where}.text", "must name the column holding the response"))
            continue
        if not isinstance(model_column, str) or not isinstance(model_name, str):
            problems.append((where, "model_column and model_name must be text"))
            continue
        if bool(model_column.strip()) == bool(model_name.strip()):
            problems.append((where, "give either model_column (a column holding the model) or model_name"))
            continue
        if model_name.strip():
            if model_name.strip() in names:
                problems.append((f"{where}.model_name", f"repeats model {model_name.strip()!r}"))
                continue
            names.add(model_name.strip())
        clean_responses.append(ResponseColumn(text.strip(), model_column.strip(), model_name.strip()))
    keep = data.get("keep_other_columns", True)
    if not isinstance(keep, bool):
        problems.append(("keep_other_columns", "must be true or false"))
    if not problems and "prompt" not in clean_columns:
        problems.append(("columns.prompt", "is required: the column holding the prompt"))
    if problems:
        raise MappingInvalid(problems)
    return ColumnMapping(clean_columns, clean_constants, tuple(clean_responses), bool(keep))


def missing_columns(mapping: ColumnMapping, columns: Iterable[str]) -> list[str]:
    """The columns the mapping reads that the file does not have, sorted."""
    return sorted(mapping.used_columns() - set(columns))


def needs_mapping(columns: Iterable[str]) -> bool:
    """Whether a file with these columns (prompts) must be mapped: it lacks a prompt column of ours."""
    present = set(columns)
    if present & {"question", "choices", "source", "target_language"}:
        return False  # questions or translation units: read as they are
    return not ({"prompt", "turns"} & present and {"id", "category", "language"} <= present)


def suggest_mapping(columns: Sequence[str]) -> ColumnMapping:
    """A first guess from the column names, for the page to show before the user adjusts it.

    ``output_1``/``output_2`` (and ``output``, ``response_a``, ...) become responses; a column named like
    ``generator_1``/``model_1`` next to one of them gives its model, otherwise the column's own name does.
    """
    lowered = {c.lower(): c for c in columns}

    def first(guesses: Iterable[str]) -> str:
        return next((lowered[g] for g in guesses if g in lowered), "")

    mapped: dict[str, str] = {}
    for key, guesses in (
        ("prompt", _PROMPT_GUESSES),
        ("category", _CATEGORY_GUESSES),
        ("language", _LANGUAGE_GUESSES),
        ("references", _REFERENCE_GUESSES),
    ):
        column = first(guesses)
        if column and column not in mapped.values():
            mapped[key] = column
    mapped["id"] = first(_ID_GUESSES) or ROW_NUMBER
    constants = {}
    if "language" not in mapped:
        constants["language"] = "ind"
    if "category" not in mapped:
        constants["category"] = "general"
    responses: list[ResponseColumn] = []
    used = set(mapped.values())
    for column in columns:
        low = column.lower()
        stem, _, suffix = low.rpartition("_")
        is_output = low in ("output", "response", "completion", "answer_model") or (
            stem in ("output", "response", "completion", "answer") and suffix
        )
        if not is_output or column in used:
            continue
        model_column = ""
        for model_stem in ("generator", "model", "model_name"):
            candidate = f"{model_stem}_{suffix}" if stem else model_stem
            if candidate in lowered:
                model_column = lowered[candidate]
                break
        responses.append(
            ResponseColumn(column, model_column=model_column, model_name="" if model_column else column)
        )
        if len(responses) == MAX_RESPONSES:
            break
    return ColumnMapping(mapped, constants, tuple(responses))


def apply_mapping(mapping: ColumnMapping, record: dict[str, Any], *, row_number: int) -> dict[str, Any]:
    """The record in our import format. Missing or empty cells stay missing, so the usual checks of the
    import (``import_records``) report them; a response whose text cell is empty is left out (a model that
    did not answer that prompt)."""
    out: dict[str, Any] = {}
    for key, column in mapping.columns.items():
        out[key] = row_number if column == ROW_NUMBER else record.get(column)
    for key, value in mapping.constants.items():
        out[key] = value
    responses = []
    for response in mapping.responses:
        text = record.get(response.text)
        if text is None or (isinstance(text, str) and not text.strip()):
            continue
        model = record.get(response.model_column) if response.model_column else response.model_name
        responses.append({"model": model, "text": text})
    if responses:
        out["responses"] = responses
    if mapping.keep_other_columns:
        used = mapping.used_columns()
        meta = {k: v for k, v in record.items() if k not in used and v is not None}
        if meta:
            out["meta"] = meta
    return out
