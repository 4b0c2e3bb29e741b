"""Export pages, mounted under ``/datasets/exports/`` (names in the ``exports`` namespace)."""

from django.urls import path

from exports import views

app_name = "exports"
urlpatterns = [
    path("", views.export_list, name="export_list"),
    path("new/<int:project_id>/", views.export_new, name="export_new"),
    path("new/<int:project_id>/preview", views.export_preview_view, name="export_preview"),
    path("<int:export_id>/", views.export_detail, name="export_detail"),
    path("<int:export_id>/download", views.export_download, name="export_download"),
    path("<int:export_id>/cancel", views.export_cancel_view, name="export_cancel"),
    path("<int:export_id>/retry", views.export_retry_view, name="export_retry"),
]
