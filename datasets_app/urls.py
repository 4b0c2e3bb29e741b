from django.urls import path

from datasets_app import views

app_name = "datasets"
urlpatterns = [
    path("", views.dataset_list, name="list"),
    path("<int:dataset_id>/", views.dataset_detail, name="detail"),
    path("<int:dataset_id>/prompts/<int:prompt_id>/", views.prompt_detail, name="prompt"),
]
