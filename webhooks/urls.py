"""Webhook pages, mounted under ``/webhooks/`` (names in the ``webhooks`` namespace)."""

from django.urls import path

from webhooks import views

app_name = "webhooks"
urlpatterns = [
    path("", views.webhook_list, name="list"),
    path("<int:hook_id>/", views.webhook_detail, name="detail"),
    path("<int:hook_id>/rotate", views.webhook_rotate, name="rotate"),
    path("<int:hook_id>/active", views.webhook_active, name="active"),
    path("<int:hook_id>/delete", views.webhook_delete, name="delete"),
    path("deliveries/<int:delivery_id>/redeliver", views.delivery_redeliver, name="redeliver"),
]
