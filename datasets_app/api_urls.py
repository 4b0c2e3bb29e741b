from django.urls import path

from datasets_app import api

urlpatterns = [
    path("datasets/", api.DatasetListApi.as_view(), name="api-dataset-list"),
    path("datasets/import", api.DatasetImportApi.as_view(), name="api-dataset-import"),
    path("datasets/import-mappings/", api.ImportMappingListApi.as_view(), name="api-import-mapping-list"),
    path(
        "datasets/imports/<int:import_id>",
        api.DatasetImportDetailApi.as_view(),
        name="api-dataset-import-detail",
    ),
    path(
        "datasets/imports/<int:import_id>/cancel",
        api.DatasetImportCancelApi.as_view(),
        name="api-dataset-import-cancel",
    ),
]
