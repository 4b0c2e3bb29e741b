from django.urls import path

from annotation import views

app_name = "annotation"
urlpatterns = [
    path("projects/<int:project_id>/", views.project_start, name="start"),
    path("t/<str:token>/", views.task_page, name="task"),
    path("t/<str:token>/submit", views.task_submit, name="submit"),
    path("t/<str:token>/skip", views.task_skip, name="skip"),
    path("t/<str:token>/edit", views.my_work_edit, name="my_work_edit"),
    path("projects/<int:project_id>/mine/", views.my_work, name="my_work"),
    path("manage/", views.manage_list, name="manage_list"),
    path("manage/new/", views.manage_create, name="manage_create"),
    path("manage/rubrics/", views.rubric_list, name="rubric_list"),
    path("manage/rubrics/new/", views.rubric_create, name="rubric_create"),
    path("manage/rubrics/<slug:criterion>/", views.rubric_edit, name="rubric_edit"),
    path("manage/<int:project_id>/", views.manage_detail, name="manage_detail"),
    path("manage/<int:project_id>/status", views.manage_status, name="manage_status"),
    path("manage/<int:project_id>/groups", views.manage_group_add, name="manage_group_add"),
    path("manage/<int:project_id>/members", views.manage_member_add, name="manage_member_add"),
    path("manage/<int:project_id>/members/remove", views.manage_member_remove, name="manage_member_remove"),
    path("manage/<int:project_id>/reclaim", views.manage_reclaim, name="manage_reclaim"),
    path("manage/<int:project_id>/quality", views.manage_quality_settings, name="manage_quality_settings"),
    path("manage/<int:project_id>/gold", views.manage_gold_import, name="manage_gold_import"),
    path("manage/<int:project_id>/gold/rate", views.manage_gold_rate, name="manage_gold_rate"),
    path("manage/<int:project_id>/gold/tasks", views.manage_gold_tasks, name="manage_gold_tasks"),
    path("manage/<int:project_id>/gold/tasks/<int:task_id>", views.manage_gold_task, name="manage_gold_task"),
    path("manage/<int:project_id>/qualification", views.manage_qualification, name="manage_qualification"),
    path("manage/<int:project_id>/quality.csv", views.manage_quality_csv, name="manage_quality_csv"),
    path(
        "manage/<int:project_id>/flags/recompute", views.manage_flags_recompute, name="manage_flags_recompute"
    ),
    path(
        "manage/<int:project_id>/flags/<int:run_id>/cancel",
        views.manage_flags_cancel,
        name="manage_flags_cancel",
    ),
    path(
        "manage/<int:project_id>/flags/<int:run_id>/retry",
        views.manage_flags_retry,
        name="manage_flags_retry",
    ),
    path("manage/<int:project_id>/flags/progress", views.manage_flags_progress, name="manage_flags_progress"),
    path("manage/<int:project_id>/flags/settings", views.manage_flag_settings, name="manage_flag_settings"),
    path("manage/<int:project_id>/taxonomy", views.manage_error_taxonomy, name="manage_error_taxonomy"),
    path("manage/<int:project_id>/pairs", views.manage_pairs_upload, name="manage_pairs_upload"),
    path("manage/<int:project_id>/conflicts.csv", views.manage_conflicts_csv, name="manage_conflicts_csv"),
    path("review/", views.review_list, name="review"),
    path("review/accept", views.review_accept_many, name="review_accept_many"),
    path("review/questions/<int:project_id>/", views.review_llm_questions, name="review_llm"),
    path("review/<int:assignment_id>", views.review_submit, name="review_submit"),
]
