"""Streaming readers for import files: JSONL, CSV and Hugging Face dataset folders.

Each reader yields ``(location, record)`` where ``record`` is a dict, or
``(location, ReadProblem)`` when the line itself cannot be read. Nothing is held
in memory beyond one record (and one line of at most ``MAX_LINE_BYTES``).

Messages name the file by ``name``, the name the user knows it by (an upload is
stored under a random name), or by the path's own name when none is given.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datasets_app.domain.untrusted_json import NUL, UnsafeJson, loads

FORMATS = ("jsonl", "csv", "hf")
MAX_LINE_BYTES = 16 * 1024 * 1024
SKIP_CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Location:
    line: int
    split: str | None = None

    def __str__(self) -> str:
        return f"{self.split} row {self.line}" if self.split else f"line {self.line}"


@dataclass(frozen=True)
class ReadProblem:
    message: str
    field: str = ""


class UnreadableFile(Exception):
    """The file as a whole cannot be read (missing, wrong format, bad header)."""


def detect_format(path: Path, *, name: str | None = None) -> str:
    if path.is_dir():
        return "hf"
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix in (".csv", ".tsv"):
        return "csv"
    raise UnreadableFile(
        f"{name or path.name}: cannot tell the format from the extension; pass --format jsonl|csv|hf"
    )


def read_records(
    path: Path, file_format: str, *, name: str | None = None
) -> Iterator[tuple[Location, dict[str, Any] | ReadProblem]]:
    if file_format not in FORMATS:
        raise UnreadableFile(f"unknown format {file_format!r}; use one of {', '.join(FORMATS)}")
    if not path.exists():
        raise UnreadableFile(f"{name or path}: no such file or folder")
    name = name or path.name
    if file_format == "hf":
        if not path.is_dir():
            raise UnreadableFile(f"{name}: the hf format needs a dataset folder")
        return _read_hf(path, name)
    if path.is_dir():
        raise UnreadableFile(f"{name}: is a folder; the {file_format} format needs a file")
    return _read_jsonl(path) if file_format == "jsonl" else _read_csv(path, name)


def _read_jsonl(path: Path) -> Iterator[tuple[Location, dict[str, Any] | ReadProblem]]:
    with path.open("rb") as handle:
        line_no = 0
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            line_no += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                # Skip the rest of an over-long line in small pieces, without holding it.
                raw = b""
                while chunk := handle.readline(SKIP_CHUNK_BYTES):
                    if chunk.endswith(b"\n"):
                        break
                yield (
                    Location(line_no),
                    ReadProblem(f"line is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB"),
                )
                continue
            if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            text = raw.strip()
            if not text:
                continue
            if b"\x00" in text:
                column = raw.index(b"\x00") + 1
                yield Location(line_no), ReadProblem(f"holds a NUL byte at column {column}")
                continue
            try:
                value = loads(text)
            except UnicodeDecodeError:
                yield Location(line_no), ReadProblem("is not valid UTF-8")
                continue
            except json.JSONDecodeError as exc:
                yield Location(line_no), ReadProblem(f"is not valid JSON ({exc.msg} at column {exc.colno})")
                continue
            except UnsafeJson as exc:
                yield Location(line_no), ReadProblem(exc.problem.message, exc.problem.path)
                continue
            if not isinstance(value, dict):
                yield Location(line_no), ReadProblem(f"must be a JSON object, got {type(value).__name__}")
                continue
            yield Location(line_no), value


def _read_csv(path: Path, name: str) -> Iterator[tuple[Location, dict[str, Any] | ReadProblem]]:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    csv.field_size_limit(MAX_LINE_BYTES)
    with path.open("r", encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        try:
            header = next(reader)
        except StopIteration:
            raise UnreadableFile(f"{name}: the file is empty") from None
        except (csv.Error, UnicodeDecodeError) as exc:
            raise UnreadableFile(f"{name}: line 1: cannot read the header ({exc})") from None
        header = [h.strip() for h in header]
        if len(set(header)) != len(header) or "" in header:
            raise UnreadableFile(f"{name}: line 1: column names must be unique and non-empty")
        if any(NUL in h for h in header):
            raise UnreadableFile(f"{name}: line 1: a column name holds a NUL byte")
        while True:
            start = reader.line_num + 1
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield Location(start), ReadProblem(f"is not valid CSV ({exc})")
                continue
            except UnicodeDecodeError:
                yield Location(start), ReadProblem("is not valid UTF-8")
                return
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                yield (
                    Location(start),
                    ReadProblem(f"has {len(row)} cells but the header has {len(header)} columns"),
                )
                continue
            with_nul = next((column for column, cell in zip(header, row, strict=True) if NUL in cell), None)
            if with_nul is not None:
                yield Location(start), ReadProblem("holds a NUL byte", with_nul)
                continue
            yield (
                Location(start),
                {k: (v if v.strip() != "" else None) for k, v in zip(header, row, strict=True)},
            )


def _read_hf(path: Path, name: str) -> Iterator[tuple[Location, dict[str, Any] | ReadProblem]]:
    # A local folder: the library reads it without reaching the Hub. (The process is not put offline: the
    # same worker reads Hub datasets, read_hub.)
    import datasets

    def unreadable(exc: Exception, where: str = "") -> UnreadableFile:
        # The library's messages name the folder it was given: the stored upload's random path.
        detail = str(exc).replace(str(path.resolve()), name).replace(str(path), name)
        return UnreadableFile(f"{name}: {where}not a readable Hugging Face dataset folder ({detail})")

    try:
        if (path / "dataset_dict.json").exists() or (path / "state.json").exists():
            loaded = datasets.load_from_disk(str(path))
        else:
            loaded = datasets.load_dataset(str(path), streaming=True)
    except Exception as exc:  # the library raises many types for unreadable folders
        raise unreadable(exc) from None
    splits = loaded.items() if hasattr(loaded, "items") else [("train", loaded)]
    for split_name, split in splits:
        rows = iter(split)
        i = 0
        while True:
            try:
                row = next(rows)
            except StopIteration:
                break
            except Exception as exc:  # a damaged data file shows only once its rows are read
                raise unreadable(exc, f"{split_name} row {i + 1}: ") from None
            i += 1
            yield Location(i, split_name), dict(row)


@dataclass(frozen=True)
class HubSource:
    """A dataset on the Hugging Face Hub: its id, and optionally its config, split and revision."""

    dataset: str
    config: str = ""
    split: str = ""
    revision: str = ""

    def as_dict(self) -> dict[str, str]:
        return {
            "dataset": self.dataset,
            "config": self.config,
            "split": self.split,
            "revision": self.revision,
        }

    def __str__(self) -> str:
        parts = [self.dataset] + [
            f"{k}={v}"
            for k, v in (("config", self.config), ("split", self.split), ("revision", self.revision))
            if v
        ]
        return " ".join(parts)


def hub_path(dataset_id: str, *, local_root: str = "") -> str:
    """What ``datasets.load_dataset`` is given for ``dataset_id``: the id itself (the Hub), or, when
    ``local_root`` names a folder (an offline mirror: ``<root>/<owner>/<name>``), the mirrored folder."""
    if not local_root:
        return dataset_id
    parts = [p for p in dataset_id.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise UnreadableFile(f"{dataset_id}: not a dataset id")
    return str(Path(local_root, *parts))


def read_hub(
    source: HubSource, *, local_root: str = ""
) -> Iterator[tuple[Location, dict[str, Any] | ReadProblem]]:
    """Stream the rows of a Hub dataset with ``datasets.load_dataset`` (every split unless one is named)."""
    import datasets

    shown = str(source)
    try:
        loaded = datasets.load_dataset(
            hub_path(source.dataset, local_root=local_root),
            name=source.config or None,
            split=source.split or None,
            revision=source.revision or None,
            streaming=True,
        )
    except Exception as exc:  # the library raises many types: unknown id, config or split, no network
        raise UnreadableFile(
            f"{shown}: cannot be read from the Hugging Face Hub ({type(exc).__name__}: {exc})"
        ) from None
    splits = loaded.items() if hasattr(loaded, "items") else [(source.split or "train", loaded)]
    return _rows(splits, shown)


def _rows(splits, shown: str) -> Iterator[tuple[Location, dict[str, Any] | ReadProblem]]:
    for split_name, split in splits:
        rows = iter(split)
        i = 0
        while True:
            try:
                row = next(rows)
            except StopIteration:
                break
            except Exception as exc:  # a damaged data file shows only once its rows are read
                raise UnreadableFile(f"{shown}: {split_name} row {i + 1}: cannot be read ({exc})") from None
            i += 1
            yield Location(i, split_name), dict(row)
