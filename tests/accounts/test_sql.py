"""``accounts.sql.prepared_cursor``: statements prepared once per PostgreSQL connection, logged like any
other query, and the usual cursor elsewhere. The loop's own use of it: ``tests/annotation/api/test_submit_next.py``."""

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.sql import instance_loaded, prepared_cursor

pytestmark = pytest.mark.django_db

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's; SQLite has none to list"
)


def prepared_statements() -> list[tuple[str, str]]:
    """This connection's prepared statements (protocol-level ones, as psycopg makes them) with their
    parameter types."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT statement, parameter_types::text FROM pg_prepared_statements WHERE NOT from_sql"
        )
        return cursor.fetchall()


@postgresql_only
def test_a_statement_is_prepared_once_and_answers_with_every_value():
    before = len(prepared_statements())
    for n in range(4):
        with prepared_cursor() as cursor:
            cursor.execute("SELECT %s::int * 2, %s::text", [n, f"v{n}"])
            assert cursor.fetchone() == (2 * n, f"v{n}")
    texts = [statement for statement, _types in prepared_statements()]
    assert len(texts) == before + 1
    assert any("$1::int * 2" in text for text in texts)


def test_its_statements_are_in_the_query_log_with_their_values():
    with CaptureQueriesContext(connection) as queries:
        with prepared_cursor() as cursor:
            cursor.execute("SELECT %s || 'x'", ["marker-41"])
            assert cursor.fetchone() == ("marker-41x",)
    assert len(queries) == 1
    assert "'marker-41'" in queries.captured_queries[0]["sql"]


def test_a_failed_statement_is_the_usual_database_error_and_the_connection_goes_on():
    with pytest.raises(DatabaseError):
        with transaction.atomic():
            with prepared_cursor() as cursor:
                cursor.execute("SELECT %s FROM no_such_table", [1])
    with prepared_cursor() as cursor:
        cursor.execute("SELECT 1 / %s", [1])
        assert cursor.fetchone() == (1,)


def test_a_loaded_instance_is_what_from_db_gives(make_user):
    user = make_user("annotator")
    fields = [f.attname for f in type(user)._meta.concrete_fields]
    values = [getattr(user, f) for f in fields]
    loaded = instance_loaded(type(user), fields, values)
    expected = type(user).from_db("default", fields, values)
    assert [getattr(loaded, f) for f in fields] == [getattr(expected, f) for f in fields]
    assert not loaded._state.adding and loaded._state.db == "default" and loaded == user


@postgresql_only
def test_one_cursor_serves_the_connection_until_it_is_replaced():
    with prepared_cursor() as first:
        first.execute("SELECT %s::int", [1])
        assert first.fetchone() == (1,)
    with prepared_cursor() as second:
        assert second is first
        second.execute("SELECT %s::int + 1", [1])
        assert second.fetchone() == (2,)

    # A new connection (after a reconnect) gets a cursor of its own, which works.
    pg = connection.connection
    connection.connection = connection.get_new_connection(connection.get_connection_params())
    try:
        with prepared_cursor() as third:
            assert third is not first
            third.execute("SELECT %s::int + 2", [1])
            assert third.fetchone() == (3,)
    finally:
        connection.connection.close()
        connection.connection = pg


@postgresql_only
def test_the_query_log_switched_on_gets_a_logging_cursor():
    with prepared_cursor() as unlogged:
        pass
    connection.force_debug_cursor = True
    try:
        with CaptureQueriesContext(connection) as queries:
            with prepared_cursor() as logged:
                assert logged is not unlogged
                logged.execute("SELECT %s || 'y'", ["marker-42"])
                assert logged.fetchone() == ("marker-42y",)
    finally:
        connection.force_debug_cursor = False
    assert "'marker-42'" in queries.captured_queries[0]["sql"]
