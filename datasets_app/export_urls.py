"""Export pages, mounted under ``/datasets/exports/`` (names in the ``datasets`` namespace)."""

from django.urls import path

from datasets_app import export_views

urlpatterns = [
    path("", export_views.export_list, name="export_list"),
    path("new/<int:project_id>/", export_views.export_new, name="export_new"),
    path("new/<int:project_id>/preview", export_views.export_preview_view, name="export_preview"),
    path("<int:export_id>/", export_views.export_detail, name="export_detail"),
    path("<int:export_id>/download", export_views.export_download, name="export_download"),
    path("<int:export_id>/cancel", export_views.export_cancel_view, name="export_cancel"),
    path("<int:export_id>/retry", export_views.export_retry_view, name="export_retry"),
]
