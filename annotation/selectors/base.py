"""Reads every kind of task page shares, below the per-kind selectors."""

import json
from collections.abc import Sequence

from django.db import connection

from annotation.models import Assignment
from datasets_app.models import Response

__all__ = ["done_count", "response_turns"]


def done_count(*, project_id: int, user_id: int) -> int:
    return Assignment.objects.filter(
        project_id=project_id, annotator_id=user_id, status=Assignment.Status.SUBMITTED, is_gold=False
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
