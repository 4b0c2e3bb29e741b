"""Reads every kind of task page shares, below the per-kind selectors."""

from annotation.models import Assignment

__all__ = ["done_count"]


def done_count(*, project_id: int, user_id: int) -> int:
    return Assignment.objects.filter(
        project_id=project_id, annotator_id=user_id, status=Assignment.Status.SUBMITTED, is_gold=False
    ).count()
