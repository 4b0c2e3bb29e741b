"""The session store of the site: Django's database sessions, read together with the session's user.

Every logged-in page request reads its session, then its user and their roles, before anything else (the
annotator's htmx loop among them). The sessions live in ``accounts.Session``, which keeps the logged-in
user's id as a column beside Django's signed data, so one prepared statement reads the session, the user
and their roles; the user waits for ``accounts.backends.ThrottledModelBackend.get_user`` (through
:func:`user_read_with_session`), which Django's ``auth.get_user`` calls next with the id from the session's
data, and which checks the password hash and the active flag as always. Writes, deletes and the clean-up
stay Django's.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.sessions.backends import db
from django.core.exceptions import ValidationError
from django.core.signals import request_finished
from django.db import connections, router
from django.utils import timezone

from accounts.sql import UserColumns, prepared_cursor, user_columns

# (user id, user) read with the session of the current request, until the authentication backend takes it.
_read_with_session: ContextVar[tuple[Any, AbstractBaseUser | None] | None] = ContextVar(
    "read_with_session", default=None
)
_statements: dict[str, str] = {}


def _user_pk(value: object) -> Any:
    """The user id a session's data names, as the user table stores it, or None."""
    if value is None:
        return None
    try:
        return get_user_model()._meta.pk.to_python(value)
    except ValidationError:
        return None


def user_read_with_session(user_id: object) -> tuple[bool, AbstractBaseUser | None]:
    """``(True, user)`` when this request's session was read with the user ``user_id`` (``None`` when the
    session's user no longer exists), else ``(False, None)``; taken once."""
    found = _read_with_session.get()
    if found is None:
        return False, None
    _read_with_session.set(None)
    if found[0] is None or found[0] != _user_pk(user_id):
        return False, None
    return True, found[1]


def _forget(**kwargs: object) -> None:
    _read_with_session.set(None)


request_finished.connect(_forget, dispatch_uid="accounts.sessions.forget")


class SessionStore(db.SessionStore):
    @classmethod
    def get_model_class(cls):
        from accounts.models import Session

        return Session

    def create_model_instance(self, data: dict[str, Any]):
        session = super().create_model_instance(data)
        session.user_id = _user_pk(data.get(SESSION_KEY))
        return session

    def load(self) -> dict[str, Any]:
        """The session's data, or ``{}`` (and no key) when it does not exist or has expired, as Django's
        store answers; the session's user and their roles are read by the same statement."""
        _read_with_session.set(None)
        if not self.session_key:
            self._session_key = None
            return {}
        alias = router.db_for_read(self.model)
        conn = connections[alias]
        columns = user_columns(conn)
        sql = _statements.get(conn.vendor)
        if sql is None:
            sql = _statements[conn.vendor] = self._statement(conn, columns)
        with prepared_cursor(alias) as cursor:
            cursor.execute(
                sql, [*columns.params, self.session_key, conn.ops.adapt_datetimefield_value(timezone.now())]
            )
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return {}
        data = self.decode(row[0])
        user_id = row[1]
        if user_id is not None:
            user = columns.user(row[2:], conn) if row[2] is not None else None
            _read_with_session.set((user_id, user))
        return data

    def _statement(self, conn: Any, columns: UserColumns) -> str:
        quote = conn.ops.quote_name
        model = self.model
        user_model = get_user_model()
        table = quote(model._meta.db_table)
        user_column = quote(model._meta.get_field("user").column)
        return (
            f"SELECT s.{quote('session_data')}, s.{user_column}, {columns.select}"
            f" FROM {table} s LEFT JOIN {quote(user_model._meta.db_table)} u"
            f" ON u.{quote(user_model._meta.pk.column)} = s.{user_column}"
            f" WHERE s.{quote('session_key')} = %s AND s.{quote('expire_date')} > %s"
        )
