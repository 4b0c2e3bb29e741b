"""Celery tasks of webhooks: a delivery id in, re-fetch, return early unless it is pending, one attempt;
a failed attempt with attempts left is sent again after the service's delay (exponential, with jitter,
longer when the receiver sent Retry-After). Acknowledged late: a worker killed mid-request leaves the
delivery pending and the broker hands the task to another."""

from celery import shared_task

from webhooks.models import WebhookDelivery
from webhooks.services import deliveries_requeue_stale, delivery_attempt


@shared_task(
    bind=True,
    name="webhooks.delivery_send",
    queue="default",
    soft_time_limit=60,
    time_limit=90,
    max_retries=None,
)
def delivery_send_task(self, delivery_id: int) -> str | None:
    delivery = WebhookDelivery.objects.select_related("endpoint").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != WebhookDelivery.Status.PENDING:
        return None
    outcome = delivery_attempt(delivery=delivery)
    if outcome.retry_in is not None:
        # The next attempt is a new message for later; this one ends (and is acknowledged) now.
        self.apply_async((delivery_id,), countdown=outcome.retry_in)
    return outcome.delivery.status


@shared_task(
    name="webhooks.deliveries_requeue_stale", ignore_result=True, soft_time_limit=120, time_limit=180
)
def deliveries_requeue_stale_task() -> int:
    """Periodic (beat): send again the pending deliveries whose task is gone."""
    return len(deliveries_requeue_stale())
