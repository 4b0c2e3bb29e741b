"""Celery tasks of the arena: an answer id in, one service. Sent to the queue of the side's endpoint
(``default`` or ``gpu.<slug>``), so the worker that serves that model streams it."""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from arena.services import STREAM_TASK, battle_answer_stream


@shared_task(
    name=STREAM_TASK,
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=3,
    soft_time_limit=15 * 60,
    time_limit=16 * 60,
)
def battle_answer_stream_task(answer_id: int) -> str:
    return battle_answer_stream(answer_id=answer_id)
