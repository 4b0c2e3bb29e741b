from django.urls import path

from evaluation import views

app_name = "evaluation"
urlpatterns = [
    path("", views.run_list, name="runs"),
    path("endpoints/", views.endpoint_list, name="endpoints"),
    path("endpoints/new/", views.endpoint_create, name="endpoint-create"),
    path("endpoints/<int:endpoint_id>/edit/", views.endpoint_edit, name="endpoint-edit"),
    path("aspects/", views.aspect_list, name="aspects"),
    path("aspects/<str:category>/", views.aspect_edit, name="aspect-edit"),
    path("prompt-templates/", views.prompt_templates, name="prompt-templates"),
    path("runs/new/", views.run_start, name="run-start"),
    path("span-prefill/<int:project_id>/", views.span_prefill, name="span-prefill"),
    path("runs/<str:kind>/<int:run_id>/", views.run_detail, name="run"),
    path("runs/<str:kind>/<int:run_id>/cancel", views.run_cancel, name="run-cancel"),
    path("runs/<str:kind>/<int:run_id>/retry", views.run_retry, name="run-retry"),
]
