"""The site's events, emitted by the apps that cause them and heard by the apps that tell other systems.

This is the bottom layer, so every app may emit: annotation (a submitted task, a rejected review, a project
whose every place is filled), evaluation (a finished run), exports and datasets_app (a finished export or
import). Listeners connect to :data:`event_emitted` from their ``AppConfig.ready`` (``webhooks`` does) and
are called in the emitter's transaction: a listener that records something records it atomically with
the change that caused the event, and queues its own work with ``transaction.on_commit``.
"""

from __future__ import annotations

from typing import Any

from django.dispatch import Signal

TASK_SUBMITTED = "task.submitted"
PROJECT_COMPLETED = "project.completed"
REVIEW_REJECTED = "review.rejected"
RUN_FINISHED = "run.finished"
EXPORT_FINISHED = "export.finished"
IMPORT_FINISHED = "import.finished"

EVENT_NAMES: tuple[str, ...] = (
    TASK_SUBMITTED,
    PROJECT_COMPLETED,
    REVIEW_REJECTED,
    RUN_FINISHED,
    EXPORT_FINISHED,
    IMPORT_FINISHED,
)

# Sent with ``name`` (one of EVENT_NAMES), ``project_id`` (None for a site-wide event such as an import)
# and ``data`` (a JSON-serialisable dict of ids and statuses, never texts or model names).
event_emitted = Signal()


def event_emit(*, name: str, project_id: int | None, data: dict[str, Any]) -> None:
    """Tell the listeners that ``name`` happened (in the caller's transaction)."""
    if name not in EVENT_NAMES:
        raise ValueError(f"unknown event {name!r}; known: {', '.join(EVENT_NAMES)}")
    event_emitted.send(sender=name, name=name, project_id=project_id, data=data)
