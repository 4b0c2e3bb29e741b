from django.urls import path

from datasets_app import views

app_name = "datasets"
urlpatterns = [
    path("", views.dataset_list, name="list"),
    path("import/upload/", views.import_upload, name="import_upload"),
    path("import/hub/", views.import_hub, name="import_hub"),
    path("import/preview/<str:token>/", views.import_preview, name="import_preview"),
    path("imports/<int:import_id>/", views.import_detail, name="import_detail"),
    path("<int:dataset_id>/", views.dataset_detail, name="detail"),
    path("<int:dataset_id>/prompts/<int:prompt_id>/", views.prompt_detail, name="prompt"),
]
