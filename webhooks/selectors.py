"""Reads of webhooks: endpoints with their projects, and an endpoint's recent deliveries with their attempts."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


def webhook_list(*, project_id: int | None = None) -> QuerySet[WebhookEndpoint]:
    hooks = WebhookEndpoint.objects.select_related("project")
    if project_id is not None:
        hooks = hooks.filter(project_id=project_id)
    return hooks


def delivery_log(*, hook: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
    """The endpoint's deliveries, newest first, each with its attempts in order."""
    return hook.deliveries.prefetch_related(
        Prefetch("attempt_log", queryset=WebhookAttempt.objects.order_by("number"))
    ).order_by("-created_at", "-pk")
