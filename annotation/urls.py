from django.urls import path

from annotation.job_controls import FLAG_RECOMPUTE_CONTROL, STUDY_IMPORT_CONTROL
from annotation.views import (
    annotator,
    flags,
    gold,
    mqm_import,
    projects,
    quality,
    questions,
    review,
    rubrics,
    spans,
    tool_imports,
)
from datasets_app.job_views import job_cancel_view, job_retry_view

app_name = "annotation"
urlpatterns = [
    path("projects/<int:project_id>/", annotator.project_start, name="start"),
    path("t/<str:token>/", annotator.task_page, name="task"),
    path("t/<str:token>/submit", annotator.task_submit, name="submit"),
    path("t/<str:token>/skip", annotator.task_skip, name="skip"),
    path("t/<str:token>/edit", annotator.my_work_edit, name="my_work_edit"),
    path("projects/<int:project_id>/mine/", annotator.my_work, name="my_work"),
    path("manage/", projects.manage_list, name="manage_list"),
    path("manage/new/", projects.manage_create, name="manage_create"),
    path("manage/import-mqm/", mqm_import.manage_mqm_import, name="manage_mqm_import"),
    path("manage/import/", tool_imports.study_import, name="study_import"),
    path("manage/import/<str:token>/", tool_imports.study_import_preview, name="study_import_preview"),
    path("manage/imports/<int:import_id>/", tool_imports.study_import_detail, name="study_import_detail"),
    path(
        "manage/imports/<int:import_id>/cancel",
        job_cancel_view,
        {"job": STUDY_IMPORT_CONTROL.name},
        name="study_import_cancel",
    ),
    path(
        "manage/imports/<int:import_id>/retry",
        job_retry_view,
        {"job": STUDY_IMPORT_CONTROL.name},
        name="study_import_retry",
    ),
    path("manage/rubrics/", rubrics.rubric_list, name="rubric_list"),
    path("manage/rubrics/new/", rubrics.rubric_create, name="rubric_create"),
    path("manage/rubrics/<slug:criterion>/", rubrics.rubric_edit, name="rubric_edit"),
    path("manage/<int:project_id>/", projects.manage_detail, name="manage_detail"),
    path("manage/<int:project_id>/status", projects.manage_status, name="manage_status"),
    path("manage/<int:project_id>/groups", projects.manage_group_add, name="manage_group_add"),
    path("manage/<int:project_id>/members", projects.manage_member_add, name="manage_member_add"),
    path(
        "manage/<int:project_id>/members/remove", projects.manage_member_remove, name="manage_member_remove"
    ),
    path("manage/<int:project_id>/reclaim", projects.manage_reclaim, name="manage_reclaim"),
    path("manage/<int:project_id>/quality", quality.manage_quality_settings, name="manage_quality_settings"),
    path("manage/<int:project_id>/gold", gold.manage_gold_import, name="manage_gold_import"),
    path("manage/<int:project_id>/gold/rate", gold.manage_gold_rate, name="manage_gold_rate"),
    path("manage/<int:project_id>/gold/tasks", gold.manage_gold_tasks, name="manage_gold_tasks"),
    path("manage/<int:project_id>/gold/tasks/<int:task_id>", gold.manage_gold_task, name="manage_gold_task"),
    path("manage/<int:project_id>/qualification", quality.manage_qualification, name="manage_qualification"),
    path("manage/<int:project_id>/quality.csv", quality.manage_quality_csv, name="manage_quality_csv"),
    path(
        "manage/<int:project_id>/flags/recompute", flags.manage_flags_recompute, name="manage_flags_recompute"
    ),
    path(
        "manage/<int:project_id>/flags/<int:run_id>/cancel",
        job_cancel_view,
        {"job": FLAG_RECOMPUTE_CONTROL.name},
        name="manage_flags_cancel",
    ),
    path(
        "manage/<int:project_id>/flags/<int:run_id>/retry",
        job_retry_view,
        {"job": FLAG_RECOMPUTE_CONTROL.name},
        name="manage_flags_retry",
    ),
    path("manage/<int:project_id>/flags/progress", flags.manage_flags_progress, name="manage_flags_progress"),
    path("manage/<int:project_id>/flags/settings", flags.manage_flag_settings, name="manage_flag_settings"),
    path("manage/<int:project_id>/taxonomy", questions.manage_error_taxonomy, name="manage_error_taxonomy"),
    path("manage/<int:project_id>/pairs", questions.manage_pairs_upload, name="manage_pairs_upload"),
    path(
        "manage/<int:project_id>/conflicts.csv", questions.manage_conflicts_csv, name="manage_conflicts_csv"
    ),
    path(
        "manage/<int:project_id>/taxonomy-labels.csv",
        questions.manage_taxonomy_labels_csv,
        name="manage_taxonomy_labels_csv",
    ),
    path("manage/<int:project_id>/scores/", spans.manage_span_scores, name="manage_span_scores"),
    path("manage/<int:project_id>/span-settings", spans.manage_span_settings, name="manage_span_settings"),
    path(
        "manage/<int:project_id>/attention-checks",
        spans.manage_attention_checks,
        name="manage_attention_checks",
    ),
    path("review/", review.review_list, name="review"),
    path("review/accept", review.review_accept_many, name="review_accept_many"),
    path("review/questions/<int:project_id>/", questions.review_llm_questions, name="review_llm"),
    path("review/<int:assignment_id>", review.review_submit, name="review_submit"),
]
