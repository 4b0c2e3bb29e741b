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
