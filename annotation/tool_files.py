"""Reading another tool's study from disk: a Label Studio JSON export file, an Argilla dataset folder
(``.argilla/settings.json`` beside ``data/*.parquet`` or ``*.jsonl``, or a ``save_to_disk`` folder) and a
Potato ``annotation_output`` folder. Decodes the files and hands plain values to
``annotation.domain.tool_studies``; a file that cannot be decoded is reported like any other problem."""

from __future__ import annotations

import json
from pathlib import Path

from annotation.domain.tool_studies import argilla, label_studio, potato
from annotation.domain.tool_studies.label_studio import FieldMapping
from annotation.domain.tool_studies.study import Problem, Study, StudyInvalid
from datasets_app.domain import untrusted_json
from datasets_app.uploads import UploadRejected, ZipLimits, unpack_zip


def _invalid(file: str, record: str, field: str, message: str) -> StudyInvalid:
    return StudyInvalid([Problem(file, record, field, message)])


def _json(path: Path, shown: str) -> object:
    """The decoded file; a NUL character (which no database column stores) or nesting deeper than an
    import allows is a problem of the file, at its place in the value."""
    try:
        return untrusted_json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise _invalid(shown, "", "", "Not UTF-8 text.") from None
    except json.JSONDecodeError as exc:
        raise _invalid(shown, f"line {exc.lineno}", "", f"Not valid JSON: {exc.msg}.") from None
    except untrusted_json.UnsafeJson as exc:
        raise _invalid(shown, "", exc.problem.path, exc.problem.message + ".") from None


def _jsonl(path: Path, shown: str) -> list[tuple[int, object]]:
    lines = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise _invalid(shown, "", "", "Not UTF-8 text.") from None
    problems = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            lines.append((n, untrusted_json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append(Problem(shown, f"line {n}", "", f"Not valid JSON: {exc.msg}."))
        except untrusted_json.UnsafeJson as exc:
            problems.append(Problem(shown, f"line {n}", exc.problem.path, exc.problem.message + "."))
    if problems:
        raise StudyInvalid(problems)
    return lines


def _folder(path: Path) -> Path:
    """The folder itself, or the one folder inside it (a zip of ``name/``)."""
    children = [p for p in path.iterdir() if not p.name.startswith(("__MACOSX",))]
    if len(children) == 1 and children[0].is_dir() and not children[0].name.startswith("."):
        return children[0]
    return path


def read_label_studio(path: Path, *, mapping: FieldMapping | None = None, shown: str = "") -> Study:
    shown = shown or path.name
    if path.is_dir():
        files = sorted(path.rglob("*.json"))
        if len(files) != 1:
            raise _invalid(shown, "", "", "Expected one Label Studio JSON export file.")
        path = files[0]
    return label_studio.parse(_json(path, shown), file=shown, mapping=mapping)


def argilla_records(path: Path, shown: str) -> tuple[list[dict], dict | None]:
    """The records (plain dicts) and the settings (``None`` when absent) of an Argilla dataset folder."""
    folder = _folder(path) if path.is_dir() else path
    if not folder.is_dir():
        raise _invalid(shown, "", "", "Expected an Argilla dataset folder (zipped).")
    settings_file = next(iter(sorted(folder.rglob("settings.json"))), None)
    settings = _json(settings_file, f"{shown}/.argilla/settings.json") if settings_file else None
    if settings is not None and not isinstance(settings, dict):
        raise _invalid(shown, "settings.json", "", "Expected an object.")
    parquet = sorted(folder.rglob("*.parquet"))
    jsonl = sorted(p for p in folder.rglob("*.jsonl"))
    arrow = sorted(folder.rglob("*.arrow"))
    records: list[dict] = []
    if parquet or arrow:
        import pyarrow as pa
        import pyarrow.parquet as pq

        for file in parquet:
            records.extend(pq.read_table(file).to_pylist())
        for file in arrow:
            with pa.memory_map(str(file)) as source:
                try:
                    table = pa.ipc.open_stream(source).read_all()
                except pa.ArrowInvalid:
                    table = pa.ipc.open_file(source).read_all()
            records.extend(table.to_pylist())
    elif jsonl:
        for file in jsonl:
            for n, line in _jsonl(file, f"{shown}/{file.relative_to(folder)}"):
                if not isinstance(line, dict):
                    raise _invalid(
                        f"{shown}/{file.relative_to(folder)}", f"line {n}", "", "Expected an object."
                    )
                records.append(line)
    else:
        raise _invalid(shown, "", "", "No records found (data/*.parquet, *.jsonl or a saved dataset).")
    return records, settings


def read_argilla(path: Path, *, mapping: FieldMapping | None = None, shown: str = "") -> Study:
    shown = shown or path.name
    records, settings = argilla_records(path, shown)
    return argilla.parse(records, settings=settings, file=shown, mapping=mapping)


def read_potato(path: Path, *, mapping: FieldMapping | None = None, shown: str = "") -> Study:
    shown = shown or path.name
    if not path.is_dir():
        raise _invalid(shown, "", "", "Expected Potato's annotation_output folder (zipped).")
    files = sorted(path.rglob(potato.FILE_NAME))
    if not files:
        raise _invalid(shown, "", "", f"No {potato.FILE_NAME} in any annotator's folder.")
    lines = {}
    problems: list[Problem] = []
    for file in files:
        try:
            lines[file.parent.name] = _jsonl(file, f"{shown}/{file.parent.name}/{file.name}")
        except StudyInvalid as exc:
            problems.extend(exc.problems)
    if problems:
        raise StudyInvalid(problems)
    return potato.parse(lines, folder=shown, mapping=mapping)


READERS = {"label_studio": read_label_studio, "argilla": read_argilla, "potato": read_potato}


def read_study(tool: str, path: Path, *, mapping: FieldMapping | None = None, shown: str = "") -> Study:
    """The study in ``path`` as ``tool`` wrote it (``StudyInvalid`` with every problem found)."""
    if tool not in READERS:
        raise _invalid(
            shown or path.name, "", "tool", f"Unknown tool {tool!r}; expected one of {', '.join(READERS)}."
        )
    return READERS[tool](path, mapping=mapping, shown=shown)


def study_path(path: Path) -> Path:
    """``path`` itself, or the folder a ``.zip`` of it unpacks to (under the upload caps on size, entries
    and ratio); a zip that cannot be unpacked is a problem of that file."""
    if path.is_file() and path.suffix.lower() == ".zip":
        try:
            return unpack_zip(path, name=path.name, limits=ZipLimits.from_settings())
        except UploadRejected as exc:
            raise _invalid(path.name, "", "", str(exc)) from None
    return path


_POTATO_OWN_KEYS = {"label_annotations", "span_annotations", "behavioral_data", "id", "instance_id"}


def field_choices(tool: str, path: Path) -> tuple[list[str], FieldMapping]:
    """The data keys a mapping can choose from, and the first guess of the mapping (for the preview form).
    Empty when the file cannot be read that far (its problems are reported by ``read_study``)."""
    try:
        if tool == "label_studio":
            file = path if path.is_file() else next(iter(sorted(path.rglob("*.json"))), None)
            tasks = _json(file, path.name) if file else []
            if not isinstance(tasks, list):
                return [], FieldMapping()
            first = next(
                (t["data"] for t in tasks if isinstance(t, dict) and isinstance(t.get("data"), dict)), {}
            )
            return list(first), label_studio.suggest_mapping(tasks)
        if tool == "argilla":
            records, settings = argilla_records(path, path.name)
            keys = [k for k in (records[0] if records else {}) if "." not in k and not k.startswith("_")]
            return keys, argilla.suggest_mapping(records, settings)
        if tool == "potato":
            file = next(iter(sorted(path.rglob(potato.FILE_NAME))), None)
            lines = _jsonl(file, path.name) if file else []
            first = lines[0][1] if lines and isinstance(lines[0][1], dict) else {}
            return [k for k in first if k not in _POTATO_OWN_KEYS], FieldMapping()
    except (StudyInvalid, OSError):
        pass
    return [], FieldMapping()
