"""The statements of the annotation loop's hot path, written as SQL.

Every ``next`` and every submit runs these, so each is one statement sent as text the ORM does not
have to build: most of the cost of a loop query was Django compiling it, not the database running it.
Rows come back as model instances (``_Row``) built with the model's own converters, so the services
above treat them like ORM rows; they, and the answer rows a submit stores (``new_instances``), are made
without ``Model.__init__``, whose walk over every field cost more than the statements' own Python.

Each statement goes through ``accounts.sql.prepared_cursor``: PostgreSQL parses and plans it once per
connection, not once per request. Values a partial index names are written into the text (see there).

PostgreSQL claims a place with one statement (a CTE that picks the first open slot of the caller's
order with ``FOR UPDATE SKIP LOCKED``, moves its counters and the caller's cursor) and inserts the
assignment with a second. SQLite runs the same steps one statement each; its IMMEDIATE transactions
serialise writers, so no row lock is needed there.
"""

from __future__ import annotations

import enum
import functools
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Field, Model
from django.db.models.base import ModelState

from accounts.sql import init_watched, instance_loaded, prepared_cursor
from annotation.models import Annotation, Assignment, Membership, Project, Task, TaskSlot
from datasets_app.models import Prompt, Response

__all__ = [
    "ClaimState",
    "assignment_insert",
    "assignment_locked",
    "claim_state",
    "claim_state_ahead",
    "new_instances",
    "slot_take",
    "submitted_mark",
]


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


_IMMUTABLE = (type(None), bool, int, float, str)


@dataclass(frozen=True)
class _Defaults:
    fixed: dict[str, Any]  # attribute name: the default every instance shares (an immutable value)
    fresh: tuple[Field, ...]  # fields whose default is called for every instance (a new token, a list)


_defaults: dict[type[Model], _Defaults | None] = {}


def new_instances(
    model: type[Model], rows: Sequence[dict[str, Any]], *, related: Sequence[dict[str, Model]] = ()
) -> list[Model]:
    """``[model(**values) for values in rows]`` (``values`` by attribute name, the other fields at their
    defaults), built without ``Model.__init__``: the immutable defaults are copied and a callable default
    (a new token) is called for each instance. ``related``, one dict per row, are related objects already at
    hand by field name (``{"project": project}``): cached on the instance as ``Model.__init__`` would and
    their ids taken from them (``values`` naming the same field's id as well is refused)."""
    defaults = _defaults.get(model, False)
    if defaults is False:
        template = vars(model()).copy()
        del template["_state"]
        fresh = tuple(f for f in model._meta.concrete_fields if f.has_default() and callable(f.default))
        for field in fresh:
            del template[field.attname]
        immutable = all(type(v) in _IMMUTABLE or isinstance(v, enum.Enum) for v in template.values())
        defaults = _defaults[model] = _Defaults(template, fresh) if immutable else None
    if defaults is None or init_watched(model):
        made = [model(**values) for values in rows]
        for instance, objects, values in zip(made, related, rows, strict=False):
            for name, obj in objects.items():
                _not_given_twice(model, name, values)
                setattr(instance, name, obj)
        return made
    made = []
    for i, values in enumerate(rows):
        instance = model.__new__(model)
        attrs = instance.__dict__
        attrs.update(defaults.fixed)
        for field in defaults.fresh:
            if field.attname not in values:
                attrs[field.attname] = field.get_default()
        state = instance._state = ModelState()
        if i < len(related):
            for name, obj in related[i].items():
                field = _not_given_twice(model, name, values)
                attrs[field.attname] = None if obj is None else obj.pk
                state.fields_cache[field.cache_name] = obj
        attrs.update(values)
        made.append(instance)
    return made


def _not_given_twice(model: type[Model], name: str, values: dict[str, Any]) -> Any:
    field = model._meta.get_field(name)
    if field.attname in values:
        raise ValueError(f"{model.__name__}: {name} given both as an object and as {field.attname}")
    return field


class _Row:
    """Build instances of ``model`` from the columns ``fields`` of a raw row, converted as the ORM would."""

    def __init__(self, model: type[Model], fields: Sequence[str] | None = None):
        concrete = [f for f in model._meta.concrete_fields if fields is None or f.attname in fields]
        self.model = model
        self.attnames = [f.attname for f in concrete]
        self.columns = [f.column for f in concrete]
        self.converters: list[tuple[int, list[Any], Any]] = []
        for i, field in enumerate(concrete):
            col = field.get_col(model._meta.db_table)
            found = connection.ops.get_db_converters(col) + field.get_db_converters(connection)
            if found:
                self.converters.append((i, found, col))

    def select(self, alias: str) -> str:
        return ", ".join(f"{alias}.{_q(c)}" for c in self.columns)

    def build(self, values: Sequence[Any]) -> Any:
        values = list(values)
        # The connection itself, not the per-thread proxy: converters read its attributes often.
        conn = connections[DEFAULT_DB_ALIAS]
        for i, converters, col in self.converters:
            for convert in converters:
                values[i] = convert(values[i], col, conn)
        return instance_loaded(self.model, self.attnames, values)


_rows: dict[tuple[str, str], _Row] = {}


def _row(model: type[Model], name: str, fields: Sequence[str] | None = None) -> _Row:
    key = (connection.vendor, name)
    row = _rows.get(key)
    if row is None:
        row = _rows[key] = _Row(model, fields)
    return row


def _literal(value: str) -> str:
    """A choice's value as an SQL string literal (the values are ours: letters and underscores)."""
    if not value.replace("_", "").isalnum():
        raise ValueError(f"not a plain choice value: {value!r}")
    return f"'{value}'"


def _table(model: type[Model]) -> str:
    return _q(model._meta.db_table)


# The loop's statements as text, built once per process and database vendor: the text depends only on the
# vendor and on the key (never on a value, which always travels as a parameter).
_statements: dict[tuple[Any, ...], str] = {}


def _statement(key: tuple[Any, ...], build: Any) -> str:
    full = (connection.vendor, *key)
    sql = _statements.get(full)
    if sql is None:
        sql = _statements[full] = build()
    return sql


_TASK_FIELDS = ("id", "project_id", "prompt_id", "response_ids", "turn", "is_gold")
_PROMPT_FIELDS = ("id", "category", "language", "turns")
_MEMBERSHIP_FIELDS = (
    "id",
    "project_id",
    "group_id",
    "user_id",
    "order_slot",
    "order_offset",
    "cursor_key",
    "n_served",
    "qualification",
)


# --- claim ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimState:
    """What a claim needs to know before it takes a place, read in one statement with the membership
    locked: the membership and its project, the caller's held assignment (if any), whether the project
    has leases to reclaim, the caller's count of submitted real tasks (their progress), and the first of
    the caller's expired claims whose task still has an open place in the caller's group (``lapsed_id``:
    the caller gets that task again before a new one)."""

    membership: Membership
    own_id: int | None
    has_expired: bool
    done: int
    lapsed_id: int | None = None


def _claim_state_select(*, besides: bool) -> str:
    """The claim state's ``SELECT``. Its parameters: ``now``, the project and the user; with ``besides``,
    an assignment id to leave out of the held and the expired leases before ``now`` and twice after it
    (the second time out of the reopened work counted as done)."""
    membership_row = _row(Membership, "membership", _MEMBERSHIP_FIELDS)
    project_row = _row(Project, "project")
    assignments = _table(Assignment)
    lock = " FOR UPDATE OF m" if connection.features.has_select_for_update_of else ""
    other = " AND a.id <> %s" if besides else ""
    # The statuses are written into the text: the partial indexes of open leases and of submitted
    # tasks name them, and a prepared statement's plan can use them only so.
    assigned = _literal(Assignment.Status.ASSIGNED)
    submitted = _literal(Assignment.Status.SUBMITTED)
    expired = _literal(Assignment.Status.EXPIRED)
    return (
        f"SELECT {membership_row.select('m')}, {project_row.select('p')},"
        f" (SELECT a.id FROM {assignments} a WHERE a.project_id = m.project_id AND a.annotator_id = m.user_id"
        f"   AND a.status = {assigned}{other} ORDER BY a.id LIMIT 1),"
        f" EXISTS (SELECT 1 FROM {assignments} a WHERE a.project_id = m.project_id AND a.status = {assigned}"
        f"   AND a.lease_expires_at < %s{other}),"
        f" (SELECT COUNT(*) FROM {assignments} a WHERE a.project_id = m.project_id AND a.annotator_id = m.user_id"
        f"   AND a.status = {submitted} AND NOT a.is_gold)"
        # Submitted work reopened by its annotator to change it still counts (``done_count``).
        f" + (SELECT COUNT(*) FROM {assignments} a WHERE a.project_id = m.project_id"
        f"   AND a.annotator_id = m.user_id AND a.status = {assigned} AND a.submitted_at IS NOT NULL"
        f"   AND NOT a.is_gold{other}),"
        f" (SELECT a.id FROM {assignments} a JOIN {_table(TaskSlot)} ts ON ts.id = a.slot_id"
        f"   WHERE a.project_id = m.project_id AND a.annotator_id = m.user_id AND a.status = {expired}"
        f"   AND ts.group_id = m.group_id AND ts.open_count > 0 ORDER BY a.id LIMIT 1)"
        f" FROM {_table(Membership)} m JOIN {_table(Project)} p ON p.id = m.project_id"
        f" WHERE m.project_id = %s AND m.user_id = %s{lock}"
    )


def _claim_state_built(row: Sequence[Any] | None, *, done_besides: int = 0) -> ClaimState | None:
    if row is None:
        return None
    membership_row = _row(Membership, "membership", _MEMBERSHIP_FIELDS)
    project_row = _row(Project, "project")
    n_m, n_p = len(membership_row.columns), len(project_row.columns)
    membership = membership_row.build(row[:n_m])
    membership.project = project_row.build(row[n_m : n_m + n_p])
    own_id, has_expired, done, lapsed_id = row[n_m + n_p :]
    return ClaimState(
        membership=membership,
        own_id=own_id,
        has_expired=bool(has_expired),
        done=int(done) + done_besides,
        lapsed_id=lapsed_id,
    )


class _Ahead(threading.local):
    """A claim state asked for ahead (``claim_state_ahead``) and, once the submit statement read it, the
    state itself."""

    key: tuple[int, int, datetime] | None = None
    read = False
    state: ClaimState | None = None


_ahead = _Ahead()


@contextmanager
def claim_state_ahead(*, project_id: int, user_id: int, now: datetime) -> Iterator[None]:
    """Within the block, on PostgreSQL, the statement that submits the caller's held assignment in the
    project also reads the claim state, as ``claim_state`` would just after it, and the block's
    ``claim_state`` call for the same project, user and time takes that instead of a statement of its own.

    For a submit whose last write is that statement, followed at once by the claim (a submit with the
    next task): nothing the claim state reads changes between the two.
    """
    _ahead.key, _ahead.read, _ahead.state = (project_id, user_id, now), False, None
    try:
        yield
    finally:
        _ahead.key, _ahead.read, _ahead.state = None, False, None


def claim_state(*, project_id: int, user_id: int, now: datetime) -> ClaimState | None:
    if _ahead.read and _ahead.key == (project_id, user_id, now):
        state = _ahead.state
        _ahead.key, _ahead.read, _ahead.state = None, False, None
        return state
    sql = _statement(("claim-state",), lambda: _claim_state_select(besides=False))
    with prepared_cursor() as cursor:
        cursor.execute(sql, [now, project_id, user_id])
        row = cursor.fetchone()
    return _claim_state_built(row)


def _range_sql(field: str, bounds: Sequence[tuple[str, int]]) -> tuple[str, list[int]]:
    ops = {"gte": ">=", "lt": "<", "gt": ">", "lte": "<="}
    return " AND ".join(f"ts.{field} {ops[op]} %s" for op, _ in bounds), [v for _, v in bounds]


def _response_turns_sql() -> str:
    """A column with ``[[id, turns], ...]`` of the responses of task ``t``, as JSON text."""
    responses = _table(Response)
    if connection.vendor == "postgresql":
        return (
            f"(SELECT json_agg(json_build_array(r.id, r.turns))::text FROM {responses} r"
            " WHERE r.id IN (SELECT jsonb_array_elements_text(t.response_ids)::bigint))"
        )
    return (
        f"(SELECT json_group_array(json_array(r.id, json(r.turns))) FROM {responses} r"
        " WHERE r.id IN (SELECT value FROM json_each(t.response_ids)))"
    )


def _slot_take_statements(order_slot: int, ops: tuple[str, ...]) -> tuple[str, str, str]:
    """The claim's statements for the caller's order key ``order_slot`` and a key range with the bound
    operators ``ops``: PostgreSQL's one CTE (the other two are empty), or SQLite's pick and two updates."""

    def build() -> str:
        field = _q(f"order_key_{order_slot}")
        task_row, prompt_row = _row(Task, "task", _TASK_FIELDS), _row(Prompt, "prompt", _PROMPT_FIELDS)
        slots, assignments = _table(TaskSlot), _table(Assignment)
        where, _ = _range_sql(field, [(op, 0) for op in ops])
        postgres = connection.vendor == "postgresql"
        # On PostgreSQL, OFFSET 0 keeps the test a look-up of (task, caller) in the unique index for each
        # candidate place: as an anti-join, a prepared statement's plan reads all the caller's assignments
        # in every project at every claim, which grows with the caller's history.
        fence = " OFFSET 0" if postgres else ""
        pick = (
            f"SELECT ts.id, ts.task_id, ts.{field} AS k FROM {slots} ts"
            f" WHERE ts.group_id = %s AND ts.open_count > 0 AND {where}"
            f" AND NOT EXISTS (SELECT 1 FROM {assignments} a"
            f"   WHERE a.task_id = ts.task_id AND a.annotator_id = %s{fence})"
            f" ORDER BY ts.{field}, ts.task_id LIMIT 1"
        )
        loaded = (
            f" SELECT s.id, s.k, {_response_turns_sql()}, {task_row.select('t')}, {prompt_row.select('p')} FROM s"
            f" JOIN {_table(Task)} t ON t.id = s.task_id LEFT JOIN {_table(Prompt)} p ON p.id = t.prompt_id"
        )
        if postgres:
            return (
                f"WITH s AS ({pick} FOR UPDATE OF ts SKIP LOCKED),"
                f" moved AS (UPDATE {slots} SET open_count = open_count - 1, active_count = active_count + 1"
                "   WHERE id IN (SELECT id FROM s)),"
                f" cursor_moved AS (UPDATE {_table(Membership)} SET cursor_key = (SELECT k FROM s),"
                "   n_served = n_served + 1 WHERE id = %s AND EXISTS (SELECT 1 FROM s))" + loaded
            )
        return f"WITH s AS ({pick})" + loaded

    take = _statement(("slot-take", order_slot, ops), build)
    move_slot = _statement(
        ("slot-move",),
        lambda: (
            f"UPDATE {_table(TaskSlot)} SET open_count = open_count - 1, active_count = active_count + 1"
            " WHERE id = %s"
        ),
    )
    move_cursor = _statement(
        ("cursor-move",),
        lambda: f"UPDATE {_table(Membership)} SET cursor_key = %s, n_served = n_served + 1 WHERE id = %s",
    )
    return take, move_slot, move_cursor


def slot_take(
    *, membership: Membership, user_id: int, key_ranges: Sequence[Sequence[tuple[str, int]]]
) -> tuple[TaskSlot, Task] | None:
    """Take the first open place of the caller's group in the caller's order (the ``key_ranges`` in turn,
    each a list of ``(operator, value)`` bounds on the caller's order key), skipping tasks the caller ever
    had; move the place from open to active and the caller's cursor to it. Returns the slot and its task
    with the prompt loaded, or ``None`` when the group needs nothing more from the caller."""
    task_row, prompt_row = _row(Task, "task", _TASK_FIELDS), _row(Prompt, "prompt", _PROMPT_FIELDS)
    postgres = connection.vendor == "postgresql"
    for bounds in key_ranges:
        ops = tuple(op for op, _ in bounds)
        take, move_slot, move_cursor = _slot_take_statements(membership.order_slot, ops)
        pick_params = [membership.group_id, *(v for _, v in bounds), user_id]
        with prepared_cursor() as cursor:
            if postgres:
                cursor.execute(take, [*pick_params, membership.pk])
                row = cursor.fetchone()
            else:
                cursor.execute(take, pick_params)
                row = cursor.fetchone()
                if row is not None:
                    cursor.execute(move_slot, [row[0]])
                    cursor.execute(move_cursor, [row[1], membership.pk])
        if row is not None:
            n_t = len(task_row.columns)
            task = task_row.build(row[3 : 3 + n_t])
            task.prompt = prompt_row.build(row[3 + n_t :]) if task.prompt_id is not None else None
            # The page's response texts came with the claim (``selectors.task_view`` reads them here).
            task.loaded_response_turns = {pk: turns for pk, turns in json.loads(row[2] or "[]")}
            (slot,) = new_instances(
                TaskSlot,
                [
                    {
                        "id": row[0],
                        "task_id": task.pk,
                        "group_id": membership.group_id,
                        f"order_key_{membership.order_slot}": row[1],
                    }
                ],
            )
            membership.cursor_key = row[1]
            membership.n_served += 1
            return slot, task
    return None


def assignment_insert(assignment: Assignment) -> Assignment:
    """Store a new assignment built in memory (token, permutation and times set) and give it its id."""
    conn = connections[DEFAULT_DB_ALIAS]
    fields = _ASSIGNMENT_INSERT_FIELDS or _assignment_insert_fields()
    values = [f.get_db_prep_save(getattr(assignment, f.attname), conn) for f in fields]

    def build() -> str:
        columns = ", ".join(_q(f.column) for f in fields)
        marks = ", ".join(["%s"] * len(fields))
        return f"INSERT INTO {_table(Assignment)} ({columns}) VALUES ({marks}) RETURNING id"

    with prepared_cursor() as cursor:
        cursor.execute(_statement(("assignment-insert",), build), values)
        assignment.pk = cursor.fetchone()[0]
    assignment._state.adding = False
    assignment._state.db = DEFAULT_DB_ALIAS
    return assignment


_ASSIGNMENT_INSERT_FIELDS: list[Any] = []


def _assignment_insert_fields() -> list[Any]:
    _ASSIGNMENT_INSERT_FIELDS.extend(f for f in Assignment._meta.concrete_fields if not f.primary_key)
    return _ASSIGNMENT_INSERT_FIELDS


# --- submit ---------------------------------------------------------------------------------------------


def assignment_locked(*, token: str, user_id: int) -> Assignment | None:
    """The caller's assignment ``token`` with its task and project, locked; ``None`` when it is not theirs.
    The assignment's ``is_member`` says whether the caller is still a member of its project."""
    a_row, t_row, p_row = _row(Assignment, "assignment"), _row(Task, "task-full"), _row(Project, "project")

    def build() -> str:
        lock = " FOR UPDATE OF a" if connection.features.has_select_for_update_of else ""
        return (
            f"SELECT {a_row.select('a')}, {t_row.select('t')}, {p_row.select('p')},"
            f" EXISTS (SELECT 1 FROM {_table(Membership)} m"
            f"   WHERE m.project_id = a.project_id AND m.user_id = a.annotator_id)"
            f" FROM {_table(Assignment)} a JOIN {_table(Task)} t ON t.id = a.task_id"
            f" JOIN {_table(Project)} p ON p.id = a.project_id WHERE a.token = %s AND a.annotator_id = %s{lock}"
        )

    with prepared_cursor() as cursor:
        cursor.execute(_statement(("assignment-locked",), build), [token, user_id])
        row = cursor.fetchone()
    if row is None:
        return None
    n_a, n_t = len(a_row.columns), len(t_row.columns)
    assignment = a_row.build(row[:n_a])
    assignment.task = t_row.build(row[n_a : n_a + n_t])
    assignment.project = p_row.build(row[n_a + n_t : -1])
    assignment.is_member = bool(row[-1])
    return assignment


def submitted_mark(
    *,
    assignment: Assignment,
    slot_id: int | None,
    now: datetime,
    seconds: float,
    annotations: Sequence[Annotation] = (),
    held: bool = False,
) -> None:
    """Move a held (``held``) or expired assignment to submitted and its place from active to submitted,
    and store its new ``annotations``, without reading any row back (PostgreSQL: one statement, which also
    reads the claim state when it was asked for ahead)."""
    set_assignment = _statement(
        ("assignment-submitted",),
        lambda: (
            f"UPDATE {_table(Assignment)} SET status = %s, submitted_at = %s, seconds_on_task = %s"
            " WHERE id = %s"
        ),
    )
    move_slot = _statement(
        ("slot-submitted",),
        lambda: (
            f"UPDATE {_table(TaskSlot)} SET active_count = active_count - 1,"
            " submitted_count = submitted_count + 1 WHERE id = %s"
        ),
    )
    params: list[Any] = [Assignment.Status.SUBMITTED, now, seconds, assignment.pk]
    with prepared_cursor() as cursor:
        if connection.vendor == "postgresql":
            # The answer rows travel as one JSON parameter: the statement's text stays the same whatever
            # their number (the driver parses it once), and nothing is converted field by field here.
            has_slot = slot_id is not None
            ahead = (
                held
                and _ahead.key is not None
                and _ahead.key[:2] == (assignment.project_id, assignment.annotator_id)
                and not _ahead.read
            )
            sql = _statement(
                ("submitted-mark", has_slot, bool(annotations), ahead),
                lambda: _submitted_mark_sql(has_slot, bool(annotations), ahead),
            )
            if has_slot:
                params.append(slot_id)
            if annotations:
                params.append(_annotations_json(annotations, now=now))
            if not ahead:
                cursor.execute(sql, params)
                return
            project_id, user_id, at = _ahead.key
            # The statement's snapshot is from before its own writes: the submitted assignment still
            # counts as held there, so it is left out of the leases and added to the caller's progress.
            cursor.execute(
                sql, [*params, assignment.pk, at, assignment.pk, assignment.pk, project_id, user_id]
            )
            row = cursor.fetchone()
            _ahead.state = _claim_state_built(row, done_besides=0 if assignment.is_gold else 1)
            _ahead.read = True
            return
        cursor.execute(set_assignment, params)
        if slot_id is not None:
            cursor.execute(move_slot, [slot_id])
        if annotations:
            insert, insert_params = _annotations_insert_sql(annotations, now=now)
            cursor.execute(insert, insert_params)


def _submitted_mark_sql(has_slot: bool, with_rows: bool, claim_state: bool = False) -> str:
    """PostgreSQL's submit as one statement: the assignment's status, its place's counters when
    ``has_slot``, the answer rows (one JSON parameter, a list of objects named after the columns) when
    ``with_rows``, and the claim state (``_claim_state_select``, leaving the assignment out) when
    ``claim_state``."""
    steps = [
        f"a AS (UPDATE {_table(Assignment)} SET status = %s, submitted_at = %s, seconds_on_task = %s"
        " WHERE id = %s RETURNING id)"
    ]
    if has_slot:
        steps.append(
            f"s AS (UPDATE {_table(TaskSlot)} SET active_count = active_count - 1,"
            " submitted_count = submitted_count + 1 WHERE id = %s RETURNING id)"
        )
    columns = ", ".join(_q(f.column) for f in _annotation_fields())
    table = _table(Annotation)
    insert = (
        f"INSERT INTO {table} ({columns})"
        f" SELECT {columns} FROM json_populate_recordset(NULL::{table}, %s::json)"
    )
    if claim_state:
        if with_rows:
            steps.append(f"r AS ({insert})")
        return f"WITH {', '.join(steps)} {_claim_state_select(besides=True)}"
    if not with_rows:
        return f"WITH {', '.join(steps)} SELECT 1"
    return f"WITH {', '.join(steps)} {insert}"


@functools.cache
def _annotation_fields() -> list[Any]:
    return [f for f in Annotation._meta.concrete_fields if not f.primary_key]


def _annotations_json(rows: Sequence[Annotation], *, now: datetime) -> str:
    # Every column of an answer row is a number, a string or NULL; the creation time is ``now``.
    created = now.isoformat()
    names = [(f.column, f.attname) for f in _annotation_fields()]
    out = []
    for row in rows:
        row.created_at = now
        values = {column: getattr(row, attname) for column, attname in names}
        values["created_at"] = created
        out.append(values)
    return json.dumps(out)


def _annotations_insert_sql(rows: Sequence[Annotation], *, now: datetime) -> tuple[str, list[Any]]:
    conn = connections[DEFAULT_DB_ALIAS]
    fields = _annotation_fields()
    columns = ", ".join(_q(f.column) for f in fields)
    marks = "(" + ", ".join(["%s"] * len(fields)) + ")"
    values: list[Any] = []
    for row in rows:
        row.created_at = now
        values.extend(f.get_db_prep_save(getattr(row, f.attname), conn) for f in fields)
    return f"INSERT INTO {_table(Annotation)} ({columns}) VALUES {', '.join([marks] * len(rows))}", values
