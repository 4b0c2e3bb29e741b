from django.urls import path

from datasets_app import api
from datasets_app.job_api import JobCancelApi, JobDetailApi, JobRetryApi
from datasets_app.job_controls import IMPORT_CONTROL

IMPORT = {"job": IMPORT_CONTROL.name}

urlpatterns = [
    path("datasets/", api.DatasetListApi.as_view(), name="api-dataset-list"),
    path("datasets/import", api.DatasetImportApi.as_view(), name="api-dataset-import"),
    path("datasets/import-mappings/", api.ImportMappingListApi.as_view(), name="api-import-mapping-list"),
    path(
        "datasets/imports/<int:import_id>", JobDetailApi.as_view(), IMPORT, name="api-dataset-import-detail"
    ),
    path(
        "datasets/imports/<int:import_id>/cancel",
        JobCancelApi.as_view(),
        IMPORT,
        name="api-dataset-import-cancel",
    ),
    # Every controlled kind of background job by its name (import, export, flag-recompute, study-import):
    # the same operations as the kinds' own routes above and in their apps.
    path("jobs/<str:job>/<int:job_id>", JobDetailApi.as_view(), name="api-job-detail"),
    path("jobs/<str:job>/<int:job_id>/cancel", JobCancelApi.as_view(), name="api-job-cancel"),
    path("jobs/<str:job>/<int:job_id>/retry", JobRetryApi.as_view(), name="api-job-retry"),
]
