"""``config.postgresql``: the health check of a persistent connection asks the socket first and sends
``SELECT 1`` only when something arrived or the connection is not idle. The whole server restarting under
a running gunicorn: ``tests/integration/test_fault_postgres_restart.py``."""

from __future__ import annotations

import time

import pytest
from django.db import connection, connections
from django.db.backends.postgresql.base import DatabaseWrapper as DjangoPostgres

from config.postgresql.base import DatabaseWrapper

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the backend is PostgreSQL's"),
]


@pytest.fixture
def own_connection():
    """A second connection to the test database, in autocommit, outside the test's transaction."""
    conn = connections.create_connection("default")
    conn.ensure_connection()
    yield conn
    conn.close()


@pytest.fixture
def select_one(monkeypatch):
    """Counts Django's own check (``SELECT 1``) while still running it."""
    calls = []
    original = DjangoPostgres.is_usable

    def counted(self):
        calls.append(self)
        return original(self)

    monkeypatch.setattr(DjangoPostgres, "is_usable", counted)
    return calls


def _backend_pid(conn) -> int:
    return conn.connection.info.backend_pid


def _wait_until_received(conn, timeout: float = 5.0) -> None:
    """Until the server's message (or the end of the stream) is waiting on the connection's socket."""
    import select

    deadline = time.monotonic() + timeout
    poller = select.poll()
    poller.register(conn.connection.pgconn.socket, select.POLLIN | select.POLLPRI)
    while time.monotonic() < deadline:
        if poller.poll(50):
            return
    raise AssertionError("the server sent nothing within the timeout")


def test_the_settings_use_this_backend():
    assert isinstance(connections["default"], DatabaseWrapper)


def test_an_idle_healthy_connection_is_usable_without_a_statement(own_connection, select_one):
    with own_connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert own_connection.is_usable() is True
    assert select_one == []


def test_a_connection_the_server_ended_is_not_usable(own_connection, select_one):
    """An administrator (or ``idle_session_timeout``) ends the session: the server says so on the socket,
    the check sees it, and Django's reconnect follows."""
    pid = _backend_pid(own_connection)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        assert cursor.fetchone() == (True,)
    _wait_until_received(own_connection)
    assert own_connection.is_usable() is False
    assert select_one == [own_connection]

    # What the start of the next request does (``CONN_HEALTH_CHECKS``): the check fails, the connection
    # closes, and the next query opens a new one.
    assert own_connection.health_check_enabled
    own_connection.health_check_done = False
    own_connection.close_if_health_check_failed()
    assert own_connection.connection is None
    with own_connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid


def test_a_message_that_is_not_an_error_falls_back_to_select_one(own_connection, select_one):
    """A notification waits on the socket of a connection that is fine: ``SELECT 1`` decides, and says
    it is usable."""
    with own_connection.cursor() as cursor:
        cursor.execute("LISTEN timbang_backend_check")
    notifier = connections.create_connection("default")
    try:
        with notifier.cursor() as cursor:
            cursor.execute("NOTIFY timbang_backend_check")
    finally:
        notifier.close()
    _wait_until_received(own_connection)
    assert own_connection.is_usable() is True
    assert select_one == [own_connection]


def test_a_connection_inside_a_transaction_is_checked_with_select_one(select_one):
    """The test's own connection, once its transaction has begun on the server: not idle, so Django's
    check runs."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert connection.is_usable() is True
    assert select_one == [connections["default"]]


def test_a_closed_connection_is_not_usable(own_connection):
    own_connection.close()
    assert own_connection.is_usable() is False
