"""The session store of the site: Django's database sessions, read with one prepared statement.

Every logged-in page request reads its session before anything else (the annotator's htmx loop among
them); Django's store builds that read through the ORM each time, which cost more than the statement.
Writes, deletes and the clean-up stay Django's.
"""

from __future__ import annotations

from typing import Any

from django.contrib.sessions.backends import db
from django.db import connections, router
from django.utils import timezone

from accounts.sql import prepared_cursor


class SessionStore(db.SessionStore):
    def load(self) -> dict[str, Any]:
        """The session's data, or ``{}`` (and no key) when it does not exist or has expired, as Django's
        store answers."""
        if not self.session_key:
            self._session_key = None
            return {}
        alias = router.db_for_read(self.model)
        ops = connections[alias].ops
        table, data, key, expires = (
            ops.quote_name(name)
            for name in (self.model._meta.db_table, "session_data", "session_key", "expire_date")
        )
        with prepared_cursor(alias) as cursor:
            cursor.execute(
                f"SELECT {data} FROM {table} WHERE {key} = %s AND {expires} > %s",
                [self.session_key, ops.adapt_datetimefield_value(timezone.now())],
            )
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return {}
        return self.decode(row[0])
