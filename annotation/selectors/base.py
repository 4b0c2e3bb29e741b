"""Reads every kind of task page shares, below the per-kind selectors."""

import json
from collections.abc import Sequence

from django.db import connection
from django.db.models import Q

from annotation.models import Assignment
from datasets_app.models import Response

__all__ = ["DONE", "SENT_BACK", "done_count", "sent_back_count", "response_turns"]

# An annotator's progress counts their submitted real tasks, and those they reopened themselves to change
# (an edit keeps the time of its last submission); work a reviewer sent back counts as sent back instead.
DONE = Q(status=Assignment.Status.SUBMITTED) | Q(
    status=Assignment.Status.ASSIGNED, submitted_at__isnull=False
)
SENT_BACK = Q(status=Assignment.Status.ASSIGNED, round__gt=1, submitted_at__isnull=True)


def done_count(*, project_id: int, user_id: int) -> int:
    return Assignment.objects.filter(DONE, project_id=project_id, annotator_id=user_id, is_gold=False).count()


def sent_back_count(*, project_id: int, user_id: int) -> int:
    """The caller's real tasks a reviewer sent back, waiting for their revision."""
    return Assignment.objects.filter(
        SENT_BACK, project_id=project_id, annotator_id=user_id, is_gold=False
    ).count()


def response_turns(response_ids: Sequence[int]) -> dict[int, list[str]]:
    """The turns of each of ``response_ids``, by id.

    Every task page reads these, so the statement is written out rather than built by the ORM.
    """
    if not response_ids:
        return {}
    marks = ", ".join(["%s"] * len(response_ids))
    table = connection.ops.quote_name(Response._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, turns FROM {table} WHERE id IN ({marks})", list(response_ids))
        rows = cursor.fetchall()
    return {pk: json.loads(turns) if isinstance(turns, str) else turns for pk, turns in rows}
