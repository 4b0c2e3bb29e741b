"""The statements every API request runs (the token read, the annotation loop): prepared statements, and
model instances made from their rows without ``Model.__init__``.

Django sends the ORM's queries with client-side binding and no prepared statements, so PostgreSQL parses
and plans every statement it receives; for the loop's few fixed statements that planning was a third of
PostgreSQL's time. :func:`prepared_cursor` gives a cursor of the same connection that binds parameters
on the server and prepares each statement once per connection, after which PostgreSQL reuses its plan.

Only statements whose text is fixed should go through it (one prepared statement per text per
connection), and a value a partial index's predicate names (``status = 'assigned'``) must be written into
the text, not sent as a parameter: a plan made for any parameter value cannot use such an index. On other
databases it is the usual cursor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.utils import CursorWrapper
from django.db.models import Model, signals
from django.db.models.base import ModelState

try:
    from django.db.backends.postgresql.base import CursorDebugWrapper, ServerBindingCursor
except ImportError:  # psycopg 2 only: no server-side binding, every database uses the usual cursor
    ServerBindingCursor = None


if ServerBindingCursor is not None:

    class _PreparingCursor(ServerBindingCursor):
        """psycopg's server-binding cursor, preparing every statement it runs."""

        def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None, **kwargs: Any):
            return super().execute(query, params, prepare=True, **kwargs)

        def close(self) -> None:
            """Kept open for the connection's next statement (see :func:`prepared_cursor`); it closes
            with its connection."""

    class _PreparedDebugWrapper(CursorDebugWrapper):
        """The query log's wrapper (``DEBUG``, tests): a prepared statement's execution leaves no query
        text on the cursor, so the log gets the statement with its values as a client-side cursor would
        have sent it."""

        def execute(self, sql: str, params: Any = None) -> Any:
            shown = sql if params is None else self.db.ops.compose_sql(sql, params)
            with self.debug_sql(shown, params):
                return CursorWrapper.execute(self, sql, params)


_ONLY_WHEN_ASKED = 2**31 - 1


def prepared_cursor(alias: str = DEFAULT_DB_ALIAS) -> CursorWrapper:
    """A cursor like ``connection.cursor()`` whose statements PostgreSQL prepares once per connection:
    the same health check, thread check, error wrapping and query log (tests count its queries)."""
    conn = connections[alias]
    if conn.vendor != "postgresql" or ServerBindingCursor is None:
        return conn.cursor()
    conn.close_if_health_check_failed()
    conn.ensure_connection()
    conn.validate_thread_sharing()
    pg = conn.connection
    logged = conn.queries_logged
    # One cursor per connection serves every statement (a psycopg cursor runs any number in turn, each
    # execute replacing the last one's rows): making one cost about as much as a statement's own Python.
    kept = getattr(conn, "_prepared_cursor", None)
    if kept is not None and kept[0] is pg and kept[1] is logged:
        return kept[2]
    if pg.prepare_threshold is None:
        # psycopg prepares nothing while the connection's threshold is None (Django's setting), whatever
        # the cursor asks. Django's own cursors bind on the client and never prepare, whatever the
        # threshold, so only cursors of this module prepare, and they always do.
        pg.prepare_threshold = _ONLY_WHEN_ASKED
    with conn.wrap_database_errors:
        raw = _PreparingCursor(pg)
    cursor = _PreparedDebugWrapper(raw, conn) if logged else conn.make_cursor(raw)
    conn._prepared_cursor = (pg, logged, cursor)
    return cursor


def init_watched(model: type[Model]) -> bool:
    """Whether a ``pre_init`` or ``post_init`` receiver expects ``Model.__init__`` to run for ``model``."""
    pre, post = signals.pre_init, signals.post_init
    return bool(pre.receivers or post.receivers) and (pre.has_listeners(model) or post.has_listeners(model))


def instance_loaded(
    model: type[Model], attnames: Sequence[str], values: Sequence[Any], *, alias: str = DEFAULT_DB_ALIAS
) -> Model:
    """``model.from_db``: an instance loaded from the database, the fields not in ``attnames`` deferred,
    made by filling its ``__dict__`` (``Model.__init__`` walks every field and cost more than the hot
    statements' own Python); through ``from_db`` whenever an init signal watches the model."""
    if init_watched(model):
        return model.from_db(alias, attnames, values)
    instance = model.__new__(model)
    instance.__dict__.update(zip(attnames, values, strict=True))
    state = instance._state = ModelState()
    state.adding, state.db = False, alias
    return instance


class UserColumns:
    """A user's columns and their role names as one part of a SELECT list (``u`` is the user table's
    alias; the statement's parameters start with the role names, ``ALL_ROLES``), and the user made back from
    that part of a row, their roles already set (``accounts.roles.user_roles``). Made once per database
    vendor by the statements that read a request's caller: the session's user and the API token's."""

    def __init__(self, user_model: type[Model], conn: Any) -> None:
        from django.contrib.auth.models import Group

        from accounts.roles import ALL_ROLES

        fields = list(user_model._meta.concrete_fields)
        quote = conn.ops.quote_name
        through = user_model.groups.through
        joined = "string_agg(g.name, ',')" if conn.vendor == "postgresql" else "group_concat(g.name, ',')"
        marks = ", ".join(["%s"] * len(ALL_ROLES))
        self.params = list(ALL_ROLES)
        self.select = (
            f"{', '.join('u.' + quote(f.column) for f in fields)},"
            f" (SELECT {joined} FROM {quote(through._meta.db_table)} ug"
            f"  JOIN {quote(Group._meta.db_table)} g ON g.id = ug.group_id"
            f"  WHERE ug.user_id = u.id AND g.name IN ({marks}))"
        )
        self.width = len(fields) + 1
        self.user_model = user_model
        self.attnames = [f.attname for f in fields]
        self.converters = []
        for i, field in enumerate(fields):
            col = field.get_col(user_model._meta.db_table)
            found = conn.ops.get_db_converters(col) + field.get_db_converters(conn)
            if found:
                self.converters.append((i, col, found))

    def user(self, part: Sequence[Any], conn: Any) -> Model:
        """The user of the ``width`` values of a row this select list produced."""
        from accounts.roles import roles_set

        values = list(part[:-1])
        for i, col, converters in self.converters:
            for convert in converters:
                values[i] = convert(values[i], col, conn)
        user = instance_loaded(self.user_model, self.attnames, values)
        roles_set(user, part[-1].split(",") if part[-1] else [])
        return user


_columns_by_vendor: dict[str, UserColumns] = {}


def user_columns(conn: Any) -> UserColumns:
    """The :class:`UserColumns` of the user model on ``conn``'s database vendor, made once per process."""
    columns = _columns_by_vendor.get(conn.vendor)
    if columns is None:
        from django.contrib.auth import get_user_model

        columns = _columns_by_vendor[conn.vendor] = UserColumns(get_user_model(), conn)
    return columns


def row_chunks(values_query: Any, chunk_rows: int) -> Any:
    """The rows of a ``values_list`` queryset as the database driver returns them, ``chunk_rows`` at a time,
    in the queryset's own order: no model instances and none of the ORM's per-row converters, for reads of
    a million rows (exports, agreement). Nothing when the queryset cannot match anything."""
    from django.core.exceptions import EmptyResultSet

    if chunk_rows < 1:
        raise ValueError("chunk_rows must be at least 1")
    try:
        sql, params = values_query.query.get_compiler(using=values_query.db).as_sql()
    except EmptyResultSet:
        return
    with connections[values_query.db].chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(chunk_rows):
            yield rows
