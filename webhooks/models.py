"""Webhooks: endpoints that managers register per project, the deliveries of events to them and each attempt."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class WebhookEndpoint(models.Model):
    """A URL that receives signed events: of one project, or of the whole site (``project`` empty: every
    project's events and the site's own, such as finished imports)."""

    project = models.ForeignKey(
        "annotation.Project", null=True, blank=True, on_delete=models.CASCADE, related_name="webhooks"
    )
    url = models.URLField(max_length=500)
    events = models.JSONField(default=list, help_text=_("Event names (accounts.events.EVENT_NAMES)."))
    description = models.CharField(max_length=200, blank=True)
    # The signing secret (whsec_...). Needed in clear to sign, like a password a receiver also holds.
    secret = models.CharField(max_length=120)
    # After a rotation the old secret still signs (besides the new one) until this time.
    previous_secret = models.CharField(max_length=120, blank=True)
    previous_secret_until = models.DateTimeField(null=True, blank=True)
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"webhook {self.pk} → {self.url}"


class WebhookDelivery(models.Model):
    """One event sent to one endpoint, with as many attempts as it took. A manual redelivery is a new
    delivery of the same message (same ``message_id``, so a receiver that keeps ids can drop repeats)."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        SUCCEEDED = "succeeded", _("Delivered")
        FAILED = "failed", _("Failed")

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40)
    message_id = models.CharField(max_length=60, db_index=True)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    redelivery_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="redeliveries"
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["endpoint", "-created_at"], name="webhook_delivery_endpoint")]

    def __str__(self) -> str:
        return f"{self.event} {self.message_id} ({self.status})"


class WebhookAttempt(models.Model):
    """One HTTP request of a delivery: its answer's status code, or the error that stopped it."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveSmallIntegerField()
    at = models.DateTimeField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    response_excerpt = models.TextField(blank=True)

    class Meta:
        ordering = ["number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="uniq_webhook_attempt_number")
        ]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}: {self.status_code or self.error}"
