"""Export pages, mounted under ``/datasets/exports/`` (names in the ``exports`` namespace).

The pages' module imports pandas and pyarrow: it is imported on the first request to one of them
(``accounts.lazy_views``), not with the URL configuration.
"""

from django.urls import path

from accounts.lazy_views import lazy_view
from datasets_app.job_views import job_cancel_view, job_retry_view
from exports.job_controls import EXPORT_CONTROL

JOB = {"job": EXPORT_CONTROL.name}

app_name = "exports"
urlpatterns = [
    path("", lazy_view("exports.views.export_list"), name="export_list"),
    path("new/<int:project_id>/", lazy_view("exports.views.export_new"), name="export_new"),
    path(
        "new/<int:project_id>/preview", lazy_view("exports.views.export_preview_view"), name="export_preview"
    ),
    path("<int:export_id>/", lazy_view("exports.views.export_detail"), name="export_detail"),
    path("<int:export_id>/download", lazy_view("exports.views.export_download"), name="export_download"),
    path("<int:export_id>/cancel", job_cancel_view, JOB, name="export_cancel"),
    path("<int:export_id>/retry", job_retry_view, JOB, name="export_retry"),
]
