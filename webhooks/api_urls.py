"""Webhook API, mounted under ``/api/v1/webhooks/``."""

from django.urls import path

from webhooks import api

urlpatterns = [
    path("", api.WebhookListApi.as_view(), name="api-webhook-list"),
    path("create", api.WebhookCreateApi.as_view(), name="api-webhook-create"),
    path("<int:hook_id>", api.WebhookDetailApi.as_view(), name="api-webhook-detail"),
    path("<int:hook_id>/update", api.WebhookUpdateApi.as_view(), name="api-webhook-update"),
    path("<int:hook_id>/delete", api.WebhookDeleteApi.as_view(), name="api-webhook-delete"),
    path("<int:hook_id>/rotate-secret", api.WebhookRotateApi.as_view(), name="api-webhook-rotate"),
    path("<int:hook_id>/deliveries", api.WebhookDeliveryListApi.as_view(), name="api-webhook-deliveries"),
    path(
        "deliveries/<int:delivery_id>/redeliver",
        api.WebhookRedeliverApi.as_view(),
        name="api-webhook-redeliver",
    ),
]
