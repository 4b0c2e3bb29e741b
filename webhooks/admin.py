from django.contrib import admin

from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "url", "active", "created_at"]
    list_filter = ["active"]
    raw_id_fields = ["project", "created_by"]
    exclude = ["secret", "previous_secret"]


class WebhookAttemptInline(admin.TabularInline):
    model = WebhookAttempt
    extra = 0
    readonly_fields = ["number", "at", "status_code", "error", "duration_ms", "response_excerpt"]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ["id", "endpoint", "event", "status", "attempts", "last_status_code", "created_at"]
    list_filter = ["status", "event"]
    raw_id_fields = ["endpoint", "redelivery_of"]
    readonly_fields = ["payload", "message_id"]
    inlines = [WebhookAttemptInline]


@admin.register(WebhookAttempt)
class WebhookAttemptAdmin(admin.ModelAdmin):
    list_display = ["id", "delivery", "number", "status_code", "at"]
    raw_id_fields = ["delivery"]
