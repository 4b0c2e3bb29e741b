from django.urls import path

from datasets_app import views
from datasets_app.job_controls import IMPORT_CONTROL
from datasets_app.job_views import job_cancel_view

app_name = "datasets"
urlpatterns = [
    path("", views.dataset_list, name="list"),
    path("import/upload/", views.import_upload, name="import_upload"),
    path("import/hub/", views.import_hub, name="import_hub"),
    path("import/preview/<str:token>/", views.import_preview, name="import_preview"),
    path("imports/<int:import_id>/", views.import_detail, name="import_detail"),
    path(
        "imports/<int:import_id>/cancel", job_cancel_view, {"job": IMPORT_CONTROL.name}, name="import_cancel"
    ),
    path("<int:dataset_id>/", views.dataset_detail, name="detail"),
    path("<int:dataset_id>/prompts/<int:prompt_id>/", views.prompt_detail, name="prompt"),
]
