"""Export API, mounted under ``/api/v1/exports/``."""

from django.urls import path

from exports import api

urlpatterns = [
    path("", api.ExportListApi.as_view(), name="api-export-list"),
    path("preview", api.ExportPreviewApi.as_view(), name="api-export-preview"),
    path("create", api.ExportCreateApi.as_view(), name="api-export-create"),
    path("<int:export_id>", api.ExportDetailApi.as_view(), name="api-export-detail"),
    path("<int:export_id>/download", api.ExportDownloadApi.as_view(), name="api-export-download"),
    path("<int:export_id>/cancel", api.ExportCancelApi.as_view(), name="api-export-cancel"),
    path("<int:export_id>/retry", api.ExportRetryApi.as_view(), name="api-export-retry"),
]
