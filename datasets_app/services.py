"""Writes of datasets_app: imports."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import JSONField, Model, ProtectedError
from django.utils import timezone

from accounts.domain.echo import echoed
from accounts.events import IMPORT_FINISHED
from datasets_app.domain.column_mapping import (
    ColumnMapping,
    MappingInvalid,
    apply_mapping,
    mapping_from_dict,
    missing_columns,
)
from datasets_app.domain.import_records import (
    KINDS,
    CleanPrompt,
    CleanQuestion,
    CleanTranslationUnit,
    clean_record,
    detect_kind,
)
from datasets_app.domain.translation_flags import (
    BACK_TRANSLATION_EMBEDDING,
    FLAG_TITLES,
    Flag,
    FlagConfig,
    FlagContext,
    TranslationUnitInput,
    compute_flags,
    pair_key,
    pair_length_stats_by_pair,
)
from datasets_app.embeddings import embedding_similarities
from datasets_app.jobs import (
    JobCancelled,
    JobKind,
    job_cancel,
    job_check,
    job_finish,
    job_heartbeat,
    job_send,
    job_take,
    new_task_id,
)
from datasets_app.models import (
    Dataset,
    DatasetImport,
    ImportMapping,
    Prompt,
    Question,
    Response,
    TranslationUnit,
)
from datasets_app.readers import (
    HubSource,
    Location,
    ReadProblem,
    UnreadableFile,
    detect_format,
    read_hub,
    read_records,
)

logger = logging.getLogger(__name__)

MAX_REPORTED_ERRORS = 50
BATCH_SIZE = 1000


@dataclass(frozen=True)
class ImportProblem:
    location: str
    field: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"location": self.location, "field": self.field, "message": self.message}

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"{where}{self.field}: {self.message}" if self.field else f"{where}{self.message}"


class ImportFailed(Exception):
    """Raised with every problem found (up to a limit); nothing was written."""

    def __init__(self, errors: list[ImportProblem], total: int | None = None):
        self.errors = errors
        self.total = total if total is not None else len(errors)
        super().__init__(self.summary())

    def summary(self) -> str:
        first = str(self.errors[0]) if self.errors else "import failed"
        more = f" (and {self.total - 1} more problem(s))" if self.total > 1 else ""
        return first + more

    def as_dict(self) -> dict[str, Any]:
        return {
            "detail": self.summary(),
            "errors": [e.as_dict() for e in self.errors],
            "n_errors": self.total,
        }


@dataclass
class ImportResult:
    dataset: Dataset
    kind: str
    counts: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"dataset": self.dataset.name, "dataset_id": self.dataset.pk, "kind": self.kind, **self.counts}


def dataset_import(
    *,
    path: Path | None = None,
    hub: HubSource | None = None,
    name: str,
    file_format: str | None = None,
    kind: str | None = None,
    replace: bool = False,
    user=None,
    description: str = "",
    license: str = "",
    source: str = "",
    check: Callable[[], None] | None = None,
    mapping: ColumnMapping | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportResult:
    """Import a file into a new dataset in one transaction: on any problem nothing is written.

    Records are validated and inserted in batches while the file streams, so memory
    stays bounded; problems are collected (up to ``MAX_REPORTED_ERRORS``) and the
    whole transaction is rolled back at the end if there were any. Messages name the
    file as ``source`` (the name an uploaded file was sent under) when it is given. ``check`` is called
    before every batch is written; whatever it raises (a cancelled background import) rolls everything back.

    ``hub`` reads a Hugging Face Hub dataset instead of ``path`` (``datasets.load_dataset``). ``mapping``
    reads a file whose columns are not ours (``domain/column_mapping.py``); problems then name the file's
    columns. ``progress`` is called with the number of records read so far, every batch.
    """
    name = (name or "").strip()
    if not name:
        raise ImportFailed([ImportProblem("", "name", "is required")])
    if kind is not None and kind not in KINDS:
        raise ImportFailed([ImportProblem("", "kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")])
    try:
        if hub is not None:
            records = read_hub(hub, local_root=settings.IMPORT_HUB_LOCAL_ROOT)
            source = source or f"hf://datasets/{hub}"
        elif path is None:
            raise ImportFailed([ImportProblem("", "file", "is required")])
        else:
            shown_name = Path(source).name if source else None
            file_format = file_format or detect_format(path, name=shown_name)
            records = read_records(path, file_format, name=shown_name)
        if mapping is not None and not mapping.is_empty:
            records = _mapped(records, mapping, fixed_columns=hub is not None or file_format != "jsonl")
        with transaction.atomic():
            existing = Dataset.objects.filter(name=name).first()
            if existing is not None:
                if not replace:
                    raise ImportFailed(
                        [
                            ImportProblem(
                                "",
                                "name",
                                f"a dataset named {name!r} exists already; use --replace to replace it",
                            )
                        ]
                    )
                try:
                    existing.delete()
                except ProtectedError as exc:
                    users = sorted({f"{obj._meta.verbose_name} {obj}" for obj in exc.protected_objects})[:5]
                    raise ImportFailed(
                        [
                            ImportProblem(
                                "",
                                "name",
                                f"the dataset {name!r} is in use ({', '.join(users)}) and cannot be replaced; "
                                "import it under a new name",
                            )
                        ]
                    ) from None
            dataset = Dataset.objects.create(
                name=name,
                kind=kind or Dataset.Kind.PROMPTS,
                description=description,
                license=license,
                source=source or path.name,
                created_by=user,
            )
            writer = _Writer(
                dataset=dataset,
                kind=kind,
                check=check,
                mapping=mapping,
                progress=progress,
                # The JSONL reader's records come from untrusted_json.loads, which checked them already.
                checked=hub is None and file_format == "jsonl" and (mapping is None or mapping.is_empty),
            )
            writer.consume(records)
            writer.finish()
            return ImportResult(dataset=dataset, kind=writer.kind or "prompts", counts=writer.counts)
    except UnreadableFile as exc:
        raise ImportFailed([ImportProblem("", "file", str(exc))]) from None


def _mapped(
    records: Iterable[tuple[Location, dict | ReadProblem]], mapping: ColumnMapping, *, fixed_columns: bool
) -> Iterator[tuple[Location, dict | ReadProblem]]:
    """The records in our format. A CSV or dataset has one set of columns: a column the mapping reads but
    the file lacks is reported once, at the first record, and stops the import."""
    first = True
    for location, record in records:
        if isinstance(record, ReadProblem):
            yield location, record
            continue
        if first and fixed_columns:
            absent = missing_columns(mapping, record)
            if absent:
                raise ImportFailed(
                    [
                        ImportProblem(
                            str(location),
                            "mapping",
                            f"reads column(s) {echoed(absent, ordered=False)} that the file does not have "
                            f"(it has {echoed(record, ordered=False)})",
                        )
                    ]
                )
        first = False
        row = location.line if location.split in (None, "train") else f"{location.split}-{location.line}"
        yield location, apply_mapping(mapping, record, row_number=row)


class _Writer:
    def __init__(
        self,
        *,
        dataset: Dataset,
        kind: str | None,
        check: Callable[[], None] | None = None,
        mapping: ColumnMapping | None = None,
        progress: Callable[[int], None] | None = None,
        checked: bool = False,
    ):
        self.dataset = dataset
        self.checked = checked
        self.kind = kind
        self.check = check
        self.mapping = mapping
        self.progress = progress
        self.n_read = 0
        self.errors: list[ImportProblem] = []
        self.n_errors = 0
        self.seen_ids: dict[str, str] = {}
        self.batch: list[Any] = []
        self.counts: dict[str, int] = {}
        self.rows = rows_writer()

    def _error(self, location: Location | str, field_name: str, message: str) -> None:
        self.n_errors += 1
        if len(self.errors) < MAX_REPORTED_ERRORS:
            if self.mapping is not None and field_name:
                field_name = self.mapping.source_of(field_name)
            self.errors.append(ImportProblem(str(location), field_name, message))

    def consume(self, records: Iterable[tuple[Location, dict | ReadProblem]]) -> None:
        for location, record in records:
            self.n_read += 1
            if self.progress is not None and self.n_read % BATCH_SIZE == 0:
                self.progress(self.n_read)
            if isinstance(record, ReadProblem):
                self._error(location, record.field, record.message)
                continue
            if self.kind is None:
                self.kind = detect_kind(record)
                if self.kind is None:
                    raise ImportFailed(
                        [
                            ImportProblem(
                                str(location),
                                "",
                                "cannot tell the kind of data from the fields; expected prompt/turns, "
                                "source/target_language or question/choices (or pass --kind)",
                            )
                        ]
                    )
                if self.dataset.kind != self.kind:
                    self.dataset.kind = self.kind
                    self.dataset.save(update_fields=["kind"])
            cleaned, problems = clean_record(self.kind, record, checked=self.checked)
            for problem in problems:
                self._error(location, problem.field, problem.message)
            if cleaned is None:
                continue
            first = self.seen_ids.get(cleaned.external_id)
            if first is not None:
                self._error(location, "id", f"repeats id {cleaned.external_id!r} first seen at {first}")
                continue
            self.seen_ids[cleaned.external_id] = str(location)
            if self.n_errors == 0:
                self.batch.append(cleaned)
                if len(self.batch) >= BATCH_SIZE:
                    self._flush()
            else:
                self.batch.clear()  # nothing will be kept; stop spending memory and queries on it

    def finish(self) -> None:
        if self.n_errors == 0 and not self.seen_ids:
            self._error("", "file", "holds no records")
        if self.n_errors:
            raise ImportFailed(self.errors, self.n_errors)
        self._flush()
        if self.kind == "translations":
            translation_flags_store(dataset=self.dataset)

    def _count(self, key: str, n: int) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def _flush(self) -> None:
        if not self.batch:
            return
        if self.check is not None:
            self.check()
        if self.kind == "prompts":
            self._flush_prompts()
        elif self.kind == "translations":
            self._flush_translations()
        else:
            self._flush_questions()
        self.batch = []

    def _flush_prompts(self) -> None:
        items: list[CleanPrompt] = self.batch
        dataset_id = self.dataset.pk
        prompt_ids = self.rows.insert(
            Prompt,
            PROMPT_FIELDS,
            [
                (
                    dataset_id,
                    p.external_id,
                    p.category,
                    p.language,
                    p.register,
                    p.turns,
                    p.references,
                    p.meta,
                )
                for p in items
            ],
            returning_ids=True,
        )
        now = timezone.now()
        imported = Response.Origin.IMPORTED.value
        responses = [
            (prompt_id, model, turns, imported, {}, now)
            for prompt_id, clean in zip(prompt_ids, items, strict=True)
            for model, turns in clean.responses
        ]
        self.rows.insert(Response, RESPONSE_FIELDS, responses)
        self._count("prompts", len(prompt_ids))
        self._count("responses", len(responses))

    def _flush_translations(self) -> None:
        items: list[CleanTranslationUnit] = self.batch
        dataset_id = self.dataset.pk
        to_review = TranslationUnit.Status.TO_REVIEW.value
        to_translate = TranslationUnit.Status.TO_TRANSLATE.value
        self.rows.insert(
            TranslationUnit,
            TRANSLATION_UNIT_FIELDS,
            [
                (
                    dataset_id,
                    u.external_id,
                    u.source_text,
                    u.source_language,
                    u.target_language,
                    u.register,
                    u.translation_text,
                    u.translator_name,
                    to_review if u.translation_text else to_translate,
                    [],
                    u.meta,
                )
                for u in items
            ],
        )
        self._count("translation_units", len(items))

    def _flush_questions(self) -> None:
        items: list[CleanQuestion] = self.batch
        dataset_id = self.dataset.pk
        accepted = Question.Status.ACCEPTED.value
        self.rows.insert(
            Question,
            QUESTION_FIELDS,
            [
                (
                    dataset_id,
                    q.external_id,
                    q.concept,
                    q.category,
                    q.language,
                    q.text,
                    q.choices,
                    q.answer_key,
                    q.distractor,
                    q.creator_name,
                    q.origin,
                    accepted,
                    q.meta,
                )
                for q in items
            ],
        )
        self._count("questions", len(items))


# -- bulk writes of imported rows ------------------------------------------------------------------------

# The columns an import writes, by attribute name, in the order of the row tuples built by ``_Writer``.
# Every field without a database default is listed (COPY leaves out only the ids and nullable links).
PROMPT_FIELDS = (
    "dataset_id",
    "external_id",
    "category",
    "language",
    "register",
    "turns",
    "references",
    "meta",
)
RESPONSE_FIELDS = ("prompt_id", "model_name", "turns", "origin", "meta", "created_at")
TRANSLATION_UNIT_FIELDS = (
    "dataset_id",
    "external_id",
    "source_text",
    "source_language",
    "target_language",
    "register",
    "translation_text",
    "translator_name",
    "status",
    "flags",
    "meta",
)
QUESTION_FIELDS = (
    "dataset_id",
    "external_id",
    "concept",
    "category",
    "language",
    "text",
    "choices",
    "answer_key",
    "distractor",
    "creator_name",
    "origin",
    "status",
    "meta",
)


class BulkCreateRows:
    """Inserts rows with ``bulk_create`` (SQLite and any other database)."""

    def insert(
        self, model: type[Model], fields: Sequence[str], rows: list[tuple], *, returning_ids: bool = False
    ) -> list[int]:
        objs = model.objects.bulk_create(
            [model(**dict(zip(fields, row, strict=True))) for row in rows], batch_size=BATCH_SIZE
        )
        return [obj.pk for obj in objs] if returning_ids else []


class CopyRows:
    """Inserts rows with PostgreSQL's ``COPY ... FROM STDIN``: no statement to build and parse per row, no
    model instances. Ids that the caller needs (a prompt's, for its responses) are taken from the table's
    sequence beforehand, one query a batch; other rows get theirs from the column's default."""

    def __init__(self) -> None:
        self.sequences: dict[type[Model], str] = {}

    def _sequence(self, model: type[Model]) -> str:
        if model not in self.sequences:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_get_serial_sequence(%s, %s)", [model._meta.db_table, model._meta.pk.column]
                )
                self.sequences[model] = cursor.fetchone()[0]
        return self.sequences[model]

    def _reserve_ids(self, model: type[Model], n: int) -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT nextval(%s) FROM generate_series(1, %s)", [self._sequence(model), n])
            return sorted(row[0] for row in cursor.fetchall())

    def insert(
        self, model: type[Model], fields: Sequence[str], rows: list[tuple], *, returning_ids: bool = False
    ) -> list[int]:
        if not rows:
            return []
        opts = model._meta
        columns = [opts.get_field(name).column for name in fields]
        json_at = [i for i, name in enumerate(fields) if isinstance(opts.get_field(name), JSONField)]
        ids: list[int] = []
        if returning_ids:
            ids = self._reserve_ids(model, len(rows))
            columns.insert(0, opts.pk.column)
            json_at = [i + 1 for i in json_at]
        quote = connection.ops.quote_name
        sql = f"COPY {quote(opts.db_table)} ({', '.join(quote(c) for c in columns)}) FROM STDIN"
        dumps = json.dumps
        with connection.cursor() as cursor, cursor.copy(sql) as copy:
            for n, row in enumerate(rows):
                values = [ids[n], *row] if returning_ids else list(row)
                for i in json_at:
                    value = values[i]
                    # Most meta and references are empty: spare the encoder those.
                    values[i] = "{}" if value == {} else "[]" if value == [] else dumps(value)
                copy.write_row(values)
        return ids


def rows_writer() -> BulkCreateRows | CopyRows:
    """How an import writes its rows: COPY on PostgreSQL, ``bulk_create`` elsewhere (the same rows)."""
    return CopyRows() if connection.vendor == "postgresql" else BulkCreateRows()


def back_translation_of(meta: Mapping[str, Any] | None) -> str | None:
    """The unit's back-translation (``meta["back_translation"]``: imported, or written by a back-translation
    run), or ``None``."""
    value = (meta or {}).get("back_translation")
    return value if isinstance(value, str) and value.strip() else None


def back_translation_similarities(
    items: Sequence[TranslationUnitInput], *, config: FlagConfig
) -> list[float | None]:
    """For each unit, the similarity of its back-translation to its source by the config's measure when it
    has to come from outside the flags: the embedding cosine (one batch for all of ``items``). ``None`` for a
    unit without a back-translation or without a translation (it gets only the ``empty`` flag), and for
    every unit under chrF++, which the flags compute themselves."""
    if config.back_translation_measure != BACK_TRANSLATION_EMBEDDING:
        return [None] * len(items)
    wanted = [
        i
        for i, item in enumerate(items)
        if item.back_translation and item.back_translation.strip() and item.translation.strip()
    ]
    found = embedding_similarities([(items[i].source, items[i].back_translation or "") for i in wanted])
    similarities: list[float | None] = [None] * len(items)
    for i, similarity in zip(wanted, found, strict=True):
        similarities[i] = similarity
    return similarities


def translation_flags_store(*, dataset: Dataset) -> int:
    """Compute and store the automatic flags of every translated unit of ``dataset`` with the default
    settings; returns how many units got at least one flag.

    The length-ratio flag compares each unit with its language pair and register over the whole
    dataset, so all units are read first (texts only), then flagged and written in batches.
    """
    fields = (
        "id",
        "source_text",
        "translation_text",
        "source_language",
        "target_language",
        "register",
        "meta",
    )
    inputs = {
        row[0]: TranslationUnitInput(
            row[1], row[2], row[3], row[4], row[5] or None, back_translation_of(row[6])
        )
        for row in TranslationUnit.objects.filter(dataset=dataset)
        .exclude(translation_text="")
        .values_list(*fields)
        .iterator(BATCH_SIZE)
    }
    stats = pair_length_stats_by_pair(inputs.values())
    config = FlagConfig()
    flagged = 0
    ids = list(inputs)
    for start in range(0, len(ids), BATCH_SIZE):
        chunk = ids[start : start + BATCH_SIZE]
        similarities = back_translation_similarities([inputs[i] for i in chunk], config=config)
        batch: list[TranslationUnit] = []
        for unit_id, similarity in zip(chunk, similarities, strict=True):
            item = inputs[unit_id]
            context = FlagContext(
                pair_stats=stats.get(pair_key(item)), back_translation_similarity=similarity, config=config
            )
            flags = compute_flags(item, context=context)
            if flags:
                flagged += 1
                batch.append(TranslationUnit(pk=unit_id, flags=[flag_as_dict(f) for f in flags]))
        TranslationUnit.objects.bulk_update(batch, ["flags"])
    return flagged


def flag_as_dict(flag: Flag) -> dict[str, Any]:
    """A flag as stored on a unit: title and message in English and Indonesian, and what triggered it."""
    title_en, title_id = FLAG_TITLES.get(flag.code, (flag.code, flag.code))
    return {
        "code": flag.code,
        "severity": str(flag.severity),
        "title_en": title_en,
        "title_id": title_id,
        "message_en": flag.message_en,
        "message_id": flag.message_id,
        "details": json.loads(json.dumps(dict(flag.details), default=str)),
    }


# -- background imports -------------------------------------------------------------------------------


def _import_failure(record: DatasetImport, message: str) -> list[str]:
    record.errors = [ImportProblem("", "", message).as_dict()]
    record.counts = {"n_errors": 1}
    return ["errors", "counts"]


def _import_reset(record: DatasetImport) -> list[str]:
    record.errors = []
    record.counts = {}
    record.dataset = None
    return ["errors", "counts", "dataset"]


def _import_clean_up(record: DatasetImport, status: str) -> None:
    # The import is one transaction, so a dead attempt left nothing in the database; the upload is kept
    # while the import may still run and removed once it ended, whatever the outcome.
    if status in (
        DatasetImport.Status.SUCCEEDED,
        DatasetImport.Status.FAILED,
        DatasetImport.Status.CANCELLED,
    ):
        if record.upload_path:
            discard_upload(Path(record.upload_path))


IMPORT_JOB = JobKind(
    model=DatasetImport,
    noun="import",
    task="datasets_app.dataset_import_run",
    time_limit=timedelta(seconds=3 * 3600 + 60),
    record_failure=_import_failure,
    reset=_import_reset,
    clean_up=_import_clean_up,
    event=IMPORT_FINISHED,
)


def dataset_import_queue(
    *,
    upload_path: Path | None = None,
    hub: HubSource | None = None,
    name: str,
    file_format: str = "",
    kind: str | None,
    replace: bool,
    user,
    original_filename: str = "",
    mapping: ColumnMapping | None = None,
    description: str = "",
    license: str = "",
) -> DatasetImport:
    """Record an import (of an uploaded file, or of a Hub dataset the worker reads) with the mapping it is
    read with and the new dataset's description and licence, and hand it to a worker once the row is
    committed."""
    if (upload_path is None) == (hub is None):
        raise ValueError("give either upload_path or hub")
    record = DatasetImport.objects.create(
        name=name,
        kind=kind or "",
        file_format="hf" if hub is not None else file_format,
        replace=replace,
        upload_path=str(upload_path) if upload_path is not None else "",
        original_filename=original_filename,
        mapping=mapping.as_dict() if mapping is not None and not mapping.is_empty else {},
        description=description,
        license=license,
        hub=hub.as_dict() if hub is not None else {},
        created_by=user,
        task_id=new_task_id(),
    )
    job_send(kind=IMPORT_JOB, job_id=record.pk, task_id=record.task_id)
    return record


def dataset_import_run(*, record: DatasetImport, task_id: str | None = None) -> DatasetImport:
    """Run a queued import (or restart one whose earlier delivery died); the outcome is stored on the row.

    Safe to run twice: a delivery that has nothing to run returns the row as it is. A cancel asked for
    while it runs stops it before its next batch; nothing is kept, and the upload is removed.
    """
    taken = job_take(kind=IMPORT_JOB, job_id=record.pk, task_id=task_id)
    if taken is None:
        record.refresh_from_db()
        return record
    record = taken.job
    hub = HubSource(**record.hub) if record.hub else None
    path = Path(record.upload_path) if hub is None else None
    total = None if path is None else count_records(path, record.file_format)
    import_progress_store(import_id=record.pk, done=0, total=total)

    def progress(done: int) -> None:
        import_progress_store(import_id=record.pk, done=done, total=total)

    try:
        with job_heartbeat(kind=IMPORT_JOB, job=record):
            result = dataset_import(
                path=path,
                hub=hub,
                mapping=mapping_from_dict(record.mapping) if record.mapping else None,
                progress=progress,
                name=record.name,
                file_format=record.file_format,
                kind=record.kind or None,
                replace=record.replace,
                user=record.created_by,
                description=record.description,
                license=record.license,
                source=record.original_filename,
                check=lambda: job_check(kind=IMPORT_JOB, job=record),
            )
    except JobCancelled:
        return job_finish(kind=IMPORT_JOB, job=record, status=DatasetImport.Status.CANCELLED)
    except ImportFailed as exc:
        record.errors = exc.as_dict()["errors"]
        record.counts = {"n_errors": exc.total}
        return job_finish(
            kind=IMPORT_JOB, job=record, status=DatasetImport.Status.FAILED, fields=["errors", "counts"]
        )
    except Exception as exc:  # the row must say what went wrong, whatever it was; the worker stays up
        logger.exception("import %s failed", record.pk)
        message = f"the import stopped on an unexpected error: {type(exc).__name__}: {exc}"[:2000]
        return job_finish(kind=IMPORT_JOB, job=record, status=DatasetImport.Status.FAILED, message=message)
    record.dataset = result.dataset
    record.counts = result.counts
    record.kind = result.kind
    return job_finish(
        kind=IMPORT_JOB,
        job=record,
        status=DatasetImport.Status.SUCCEEDED,
        fields=["dataset", "counts", "kind"],
    )


def dataset_import_cancel(*, record: DatasetImport) -> DatasetImport:
    """Cancel a queued import at once, or stop a running one before its next batch (nothing is kept)."""
    return job_cancel(kind=IMPORT_JOB, job_id=record.pk)


def discard_upload(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


# -- progress and saved mappings -------------------------------------------------------------------------

PROGRESS_TTL_SECONDS = 6 * 3600


def _progress_key(import_id: int) -> str:
    return f"datasets_app:import-progress:{import_id}"


def import_progress_store(*, import_id: int, done: int, total: int | None) -> None:
    """Where a running import stands. Kept in the cache, not on the row: the import is one long transaction,
    and the row's own updates would show only once it ends."""
    cache.set(_progress_key(import_id), {"done": done, "total": total}, PROGRESS_TTL_SECONDS)


def import_progress_get(*, import_id: int) -> dict[str, int | None] | None:
    return cache.get(_progress_key(import_id))


def count_records(path: Path, file_format: str) -> int | None:
    """The number of lines of a JSONL or CSV file (less the header), read in chunks; None for a folder."""
    if file_format not in ("jsonl", "csv") or not path.is_file():
        return None
    lines = 0
    last = b"\n"
    with path.open("rb") as handle:
        while chunk := handle.read(1024 * 1024):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    if last != b"\n":
        lines += 1
    return max(lines - (1 if file_format == "csv" else 0), 0)


def import_mapping_save(*, name: str, mapping: ColumnMapping, user=None) -> ImportMapping:
    """Save ``mapping`` under ``name`` (replacing the mapping saved under that name)."""
    name = name.strip()
    if not name:
        raise ImportFailed([ImportProblem("", "save_mapping_as", "must not be empty")])
    saved, _ = ImportMapping.objects.update_or_create(
        name=name[:100], defaults={"mapping": mapping.as_dict(), "created_by": user}
    )
    return saved


def import_mapping_resolve(
    *, mapping: Any = None, mapping_name: str = "", from_import: int | None = None
) -> ColumnMapping | None:
    """The mapping to read a file with: given as plain data, saved under a name, or the one an earlier
    import was read with. Raises ``ImportFailed`` naming what is wrong."""
    given = [x for x in (mapping, mapping_name, from_import) if x not in (None, "", {})]
    if len(given) > 1:
        raise ImportFailed(
            [ImportProblem("", "mapping", "give one of mapping, mapping_name or mapping_from_import")]
        )
    if mapping_name:
        saved = ImportMapping.objects.filter(name=mapping_name).first()
        if saved is None:
            raise ImportFailed(
                [ImportProblem("", "mapping_name", f"no saved mapping is named {mapping_name!r}")]
            )
        mapping = saved.mapping
    elif from_import is not None:
        earlier = DatasetImport.objects.filter(pk=from_import).first()
        if earlier is None:
            raise ImportFailed([ImportProblem("", "mapping_from_import", f"no import {from_import}")])
        if not earlier.mapping:
            raise ImportFailed(
                [ImportProblem("", "mapping_from_import", f"import {from_import} was read without a mapping")]
            )
        mapping = earlier.mapping
    if mapping in (None, "", {}):
        return None
    try:
        return mapping_from_dict(mapping)
    except MappingInvalid as exc:
        raise ImportFailed(
            [ImportProblem("", f"mapping.{f}" if f else "mapping", m) for f, m in exc.problems]
        ) from None
