"""Export files: Hugging Face dataset folders, TRL pair layouts, raw annotation dumps, zip archives.

No Django here: the export service hands in DataFrames, Arrow tables or iterators of chunks read from the
database, and every writer streams them chunk by chunk, so memory stays bounded by one chunk plus
whatever the caller already holds.

A dataset folder looks like what ``datasets`` and the Hub expect::

    folder/README.md                           the dataset card (YAML header + text)
    folder/data/<split>-00000-of-00001.parquet one file per split

and loads offline with ``datasets.load_dataset(str(folder))``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from datasets_app.domain.csv_cells import frame_to_csv

DEFAULT_BATCH_ROWS = 50_000
SPLIT_NAME_RE = re.compile(r"\w+(\.\w+)*")
ROLE_LABELS = {"system": "System", "user": "User", "assistant": "Assistant"}
LONG_FORMATS = ("parquet", "csv", "jsonl")
# Zip entries get a fixed timestamp so that the same folder always gives the same archive bytes.
ZIP_TIMESTAMP = (1980, 1, 1, 0, 0, 0)

Chunk = pd.DataFrame | pa.RecordBatch | pa.Table
TableSource = pd.DataFrame | pa.Table | Iterable[Chunk]


def split_file_name(split: str) -> str:
    return f"{split}-00000-of-00001.parquet"


def infer_schema(frame: pd.DataFrame, *, sample_rows: int = 1_000) -> pa.Schema:
    """Arrow schema for a DataFrame chunk, decided once so every later chunk is written the same way.

    Object columns (messages, ids that may be missing) are typed from their first non-null values; a
    column with no value at all becomes ``string`` rather than Arrow's ``null`` type, which ``datasets``
    cannot cast later chunks into. Large strings become plain strings (chunks stay far below 2 GiB).
    """
    fields = []
    for name in frame.columns:
        column = frame[name]
        if column.dtype == object:
            sample = column.dropna().iloc[:sample_rows].tolist()
            try:
                arrow_type = pa.array(sample).type if sample else pa.string()
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise ValueError(
                    f"column {name!r} mixes value types that Arrow cannot store together"
                ) from exc
        else:
            arrow_type = pa.Schema.from_pandas(frame[[name]].iloc[:0], preserve_index=False).field(name).type
        fields.append(pa.field(str(name), _plain_strings(arrow_type)))
    return pa.schema(fields)


def _plain_strings(arrow_type: pa.DataType) -> pa.DataType:
    if arrow_type == pa.null():
        return pa.string()
    if arrow_type == pa.large_string():
        return pa.string()
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return pa.list_(_plain_strings(arrow_type.value_type))
    if pa.types.is_struct(arrow_type):
        return pa.struct([pa.field(f.name, _plain_strings(f.type)) for f in arrow_type])
    return arrow_type


def iter_record_batches(
    source: TableSource, *, schema: pa.Schema | None = None, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """Yield record batches of at most ``batch_rows`` rows, all with one schema.

    The schema is ``schema`` when given, else the first chunk's (with null types as strings and large
    strings as plain strings, see ``infer_schema``); every chunk is cast to it.
    """
    if isinstance(source, (pd.DataFrame, pa.Table, pa.RecordBatch)):
        source = [source]
    for chunk in source:
        for piece in _slices(chunk, batch_rows):
            if isinstance(piece, pd.DataFrame):
                if schema is None:
                    schema = infer_schema(piece)
                table = pa.Table.from_pandas(piece, schema=schema, preserve_index=False)
            else:
                table = piece if isinstance(piece, pa.Table) else pa.Table.from_batches([piece])
                if schema is None:
                    schema = pa.schema([pa.field(f.name, _plain_strings(f.type)) for f in table.schema])
                if not table.schema.equals(schema, check_metadata=False):
                    table = table.select(schema.names).cast(schema)
            if table.num_rows == 0:
                yield pa.record_batch([pa.array([], type=f.type) for f in schema], schema=schema)
            else:
                yield from table.combine_chunks().to_batches()


def _slices(chunk: Chunk, batch_rows: int) -> Iterator[Chunk]:
    if batch_rows < 1:
        raise ValueError("batch_rows must be at least 1")
    n_rows = chunk.num_rows if isinstance(chunk, (pa.Table, pa.RecordBatch)) else len(chunk)
    if n_rows == 0:
        yield chunk
        return
    for start in range(0, n_rows, batch_rows):
        if isinstance(chunk, pd.DataFrame):
            yield chunk.iloc[start : start + batch_rows]
        else:
            yield chunk.slice(start, batch_rows)


def write_parquet(
    path: str | os.PathLike[str],
    source: TableSource,
    *,
    schema: pa.Schema | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
) -> int:
    """Stream ``source`` into one parquet file (one row group per batch); returns the number of rows."""
    writer: pq.ParquetWriter | None = None
    rows = 0
    try:
        for batch in iter_record_batches(source, schema=schema, batch_rows=batch_rows):
            if writer is None:
                writer = pq.ParquetWriter(str(path), batch.schema)
            if batch.num_rows:
                writer.write_batch(batch)
                rows += batch.num_rows
        if writer is None:
            if schema is None:
                raise ValueError("cannot write an empty source without a schema")
            writer = pq.ParquetWriter(str(path), schema)
    finally:
        if writer is not None:
            writer.close()
    return rows


def write_hf_folder(
    folder: str | os.PathLike[str],
    splits: Mapping[str, TableSource],
    card_text: str,
    *,
    schema: pa.Schema | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    overwrite: bool = False,
) -> dict[str, int]:
    """Write a dataset folder (``README.md`` + ``data/<split>-00000-of-00001.parquet``); rows per split.

    Every split must have rows (``datasets`` cannot load an empty one) and all splits get the schema of
    the first (given or inferred). The folder is built beside its destination and moved into place at the
    end, so a failed export leaves no half-written dataset behind.
    """
    folder = Path(folder)
    if not splits:
        raise ValueError("at least one split is needed")
    for split in splits:
        if not SPLIT_NAME_RE.fullmatch(split):
            raise ValueError(f"split name {split!r} must be letters, digits and underscores (dots between)")
    if folder.exists() and not overwrite:
        raise FileExistsError(f"{folder} exists; pass overwrite=True to replace it")
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.parent / f".{folder.name}.partial-{uuid.uuid4().hex[:8]}"
    rows: dict[str, int] = {}
    try:
        (staging / "data").mkdir(parents=True)
        for split, source in splits.items():
            target = staging / "data" / split_file_name(split)
            rows[split] = write_parquet(target, source, schema=schema, batch_rows=batch_rows)
            if rows[split] == 0:
                raise ValueError(f"split {split!r} has no rows; datasets cannot load an empty split")
            if schema is None:
                # Later splits must match the first one, or load_dataset refuses to combine them.
                schema = pq.read_schema(target).remove_metadata()
        (staging / "README.md").write_text(card_text, encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return rows


def render_transcript(messages: Iterable[Mapping[str, Any]]) -> str:
    """``Role: content`` blocks separated by blank lines (System / User / Assistant)."""
    return "\n\n".join(f"{_label(m['role'])}: {m['content']}" for m in messages)


def _label(role: str) -> str:
    return ROLE_LABELS.get(role, str(role).capitalize())


def _prompt_text(prompt: Sequence[Mapping[str, Any]]) -> str:
    return render_transcript(prompt) + "\n\nAssistant:"


def _continuation_text(messages: Sequence[Mapping[str, Any]]) -> str:
    messages = list(messages)
    if not messages:
        return ""
    head = " " + str(messages[0]["content"])
    rest = render_transcript(messages[1:])
    return head + ("\n\n" + rest if rest else "")


def to_trl_strings(pairs: pd.DataFrame, *, keep_columns: Sequence[str] = ()) -> pd.DataFrame:
    """TRL's standard (plain text) preference layout: ``prompt``, ``chosen``, ``rejected`` as strings.

    The prompt is the transcript up to the first user turn followed by ``"\\n\\nAssistant:"``; chosen and
    rejected continue it (a space, the first answer, then ``User:`` / ``Assistant:`` blocks for later turns),
    so ``prompt + chosen`` is the whole conversation as ``render_transcript`` writes it.
    """
    out = pd.DataFrame(
        {
            "prompt": [_prompt_text(p) for p in pairs["prompt"]],
            "chosen": [_continuation_text(c) for c in pairs["chosen"]],
            "rejected": [_continuation_text(r) for r in pairs["rejected"]],
        }
    )
    for column in keep_columns:
        out[column] = pairs[column].to_numpy()
    return out


def to_trl_messages(pairs: pd.DataFrame, *, keep_columns: Sequence[str] = ()) -> pd.DataFrame:
    """TRL's conversational preference layout: ``prompt`` as messages, ``chosen`` / ``rejected`` as the
    continuation messages (the convention of ``exports.domain.preference_pairs``)."""
    return pairs[["prompt", "chosen", "rejected", *keep_columns]].reset_index(drop=True)


def write_long_format(
    path: str | os.PathLike[str],
    chunks: Iterable[pd.DataFrame | pa.RecordBatch | pa.Table],
    *,
    fmt: Literal["parquet", "csv", "jsonl"],
) -> int:
    """Stream raw long-format annotation rows (one chunk at a time) into parquet, CSV or JSON Lines.

    CSV cells holding lists or mappings (error categories, shown order) are written as JSON text; JSON Lines
    keeps them nested. Timestamps are ISO 8601 in both text formats. CSV text cells that a spreadsheet would
    run as a formula get a leading ``'`` (``datasets_app.domain.csv_cells``); parquet and JSON Lines keep the
    raw text. Returns the number of rows.
    """
    if fmt not in LONG_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(LONG_FORMATS)}")
    if fmt == "parquet":
        return write_parquet(path, chunks)
    rows = 0
    first = True
    with open(path, "w", encoding="utf-8", newline="") as handle:
        for chunk in chunks:
            frame = chunk if isinstance(chunk, pd.DataFrame) else chunk.to_pandas()
            if fmt == "csv":
                frame_to_csv(
                    _nested_as_json(frame),
                    handle,
                    header=first,
                    index=False,
                    date_format="%Y-%m-%dT%H:%M:%S.%f%z",
                )
            elif len(frame):
                text = frame.to_json(orient="records", lines=True, date_format="iso", force_ascii=False)
                handle.write(text if text.endswith("\n") else text + "\n")
            rows += len(frame)
            first = False
    return rows


def _nested_as_json(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for name in out.columns:
        if out[name].dtype == object:
            out[name] = [
                json.dumps(_plain(v), ensure_ascii=False)
                if isinstance(v, (list, tuple, dict, np.ndarray))
                else v
                for v in out[name]
            ]
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value


def zip_folder(folder: str | os.PathLike[str], zip_path: str | os.PathLike[str] | None = None) -> Path:
    """Zip a folder's files (paths relative to it, sorted, fixed timestamps) for download; returns the path.

    The archive defaults to ``<folder>.zip`` beside the folder.
    """
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise NotADirectoryError(folder)
    target = Path(zip_path).resolve() if zip_path is not None else folder.with_name(folder.name + ".zip")
    if target.is_relative_to(folder):
        raise ValueError("the archive cannot be written inside the folder it archives")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), date_time=ZIP_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            large = path.stat().st_size >= zipfile.ZIP64_LIMIT
            with path.open("rb") as source, archive.open(info, "w", force_zip64=large) as sink:
                shutil.copyfileobj(source, sink, length=1 << 20)
    return target
