"""Django's PostgreSQL backend with a health check that costs no round trip while nothing is wrong.

With ``CONN_HEALTH_CHECKS`` Django checks a persistent connection before the first query of every request
by sending ``SELECT 1`` and waiting for the answer: one round trip, and about as much work in the web
process and in PostgreSQL as one of the annotation loop's statements. A connection that sits idle between
requests receives nothing unless something happened to it: a server that shuts down, restarts or ends the
session (an administrator, ``idle_session_timeout``) sends an error and closes the socket, and a backend
that dies leaves the socket at end of file. So the check first asks the kernel, without waiting, whether
anything is waiting on the socket. When nothing is, the connection is as usable as ``SELECT 1`` would have
found it; when something is, or the connection is not idle, ``SELECT 1`` decides, as in Django's own check.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql.base import DatabaseWrapper as PostgresDatabaseWrapper

try:
    from psycopg import pq
except ImportError:  # psycopg 2: Django's own check
    pq = None


def _nothing_received(fileno: int) -> bool:
    poller = select.poll()
    poller.register(fileno, select.POLLIN | select.POLLPRI)
    return not poller.poll(0)


class DatabaseWrapper(PostgresDatabaseWrapper):
    def is_usable(self) -> bool:
        conn = self.connection
        if conn is None:
            return False
        if pq is not None and hasattr(select, "poll"):
            pgconn = conn.pgconn
            if (
                pgconn.status == pq.ConnStatus.OK
                and pgconn.transaction_status == pq.TransactionStatus.IDLE
                and _nothing_received(pgconn.socket)
            ):
                return True
        return super().is_usable()
