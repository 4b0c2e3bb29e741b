"""Export API, mounted under ``/api/v1/exports/``.

The API's module imports pandas, pyarrow and the Hub client: it is imported on the first request to one of
its operations or when the API schema is built (``accounts.lazy_views``), not with the URL configuration.
"""

from django.urls import path

from accounts.lazy_views import lazy_api
from datasets_app.job_api import JobCancelApi, JobDetailApi, JobRetryApi
from exports.job_controls import EXPORT_CONTROL

JOB = {"job": EXPORT_CONTROL.name}

urlpatterns = [
    path("", lazy_api("exports.api.ExportListApi"), name="api-export-list"),
    path("preview", lazy_api("exports.api.ExportPreviewApi"), name="api-export-preview"),
    path("create", lazy_api("exports.api.ExportCreateApi"), name="api-export-create"),
    path("<int:export_id>", JobDetailApi.as_view(), JOB, name="api-export-detail"),
    path("<int:export_id>/download", lazy_api("exports.api.ExportDownloadApi"), name="api-export-download"),
    path("<int:export_id>/cancel", JobCancelApi.as_view(), JOB, name="api-export-cancel"),
    path("<int:export_id>/retry", JobRetryApi.as_view(), JOB, name="api-export-retry"),
]
