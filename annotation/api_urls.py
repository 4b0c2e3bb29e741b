from django.urls import path

from annotation import api
from annotation.job_controls import FLAG_RECOMPUTE_CONTROL, STUDY_IMPORT_CONTROL
from datasets_app.job_api import JobCancelApi, JobDetailApi, JobRetryApi

FLAGS = {"job": FLAG_RECOMPUTE_CONTROL.name}
STUDY_IMPORT = {"job": STUDY_IMPORT_CONTROL.name}

urlpatterns = [
    # The annotation loop's two routes first: every request of the loop is matched against the patterns
    # above its own in turn.
    path("tasks/<str:token>/annotations", api.AnnotationCreateApi.as_view(), name="api-annotation-create"),
    path("projects/<int:project_id>/next", api.NextTaskApi.as_view(), name="api-next-task"),
    path("projects/", api.ProjectListApi.as_view(), name="api-project-list"),
    path("projects/create", api.ProjectCreateApi.as_view(), name="api-project-create"),
    path("projects/<int:project_id>", api.ProjectDetailApi.as_view(), name="api-project-detail"),
    path("projects/<int:project_id>/update", api.ProjectUpdateApi.as_view(), name="api-project-update"),
    path("projects/<int:project_id>/delete", api.ProjectDeleteApi.as_view(), name="api-project-delete"),
    path("projects/<int:project_id>/status", api.ProjectStatusApi.as_view(), name="api-project-status"),
    path("projects/<int:project_id>/progress", api.ProjectProgressApi.as_view(), name="api-project-progress"),
    path("projects/<int:project_id>/quality", api.ProjectQualityApi.as_view(), name="api-project-quality"),
    path("projects/<int:project_id>/members", api.MemberListApi.as_view(), name="api-member-list"),
    path("projects/<int:project_id>/members/add", api.MemberAddApi.as_view(), name="api-member-add"),
    path("projects/<int:project_id>/members/remove", api.MemberRemoveApi.as_view(), name="api-member-remove"),
    path("projects/<int:project_id>/pairs", api.ConceptPairsAddApi.as_view(), name="api-concept-pairs-add"),
    path("projects/import-mqm", api.MqmImportApi.as_view(), name="api-mqm-import"),
    path("projects/<int:project_id>/answers/report", api.McqReportApi.as_view(), name="api-mcq-report"),
    path(
        "projects/<int:project_id>/translation/report",
        api.TranslationReportApi.as_view(),
        name="api-translation-report",
    ),
    path("projects/<int:project_id>/spans/scores", api.SpanScoresApi.as_view(), name="api-span-scores"),
    path(
        "projects/<int:project_id>/attention-checks",
        api.AttentionChecksApi.as_view(),
        name="api-attention-checks",
    ),
    path(
        "projects/<int:project_id>/flags/recompute",
        api.FlagRecomputeStartApi.as_view(),
        name="api-flag-recompute-start",
    ),
    path("flag-recomputes/<int:run_id>", JobDetailApi.as_view(), FLAGS, name="api-flag-recompute-detail"),
    path(
        "flag-recomputes/<int:run_id>/cancel", JobCancelApi.as_view(), FLAGS, name="api-flag-recompute-cancel"
    ),
    path("flag-recomputes/<int:run_id>/retry", JobRetryApi.as_view(), FLAGS, name="api-flag-recompute-retry"),
    path("tasks/<str:token>/skip", api.TaskSkipApi.as_view(), name="api-task-skip"),
    path("studies/import", api.ToolStudyImportApi.as_view(), name="api-study-import"),
    path(
        "studies/imports/<int:import_id>",
        JobDetailApi.as_view(),
        STUDY_IMPORT,
        name="api-study-import-detail",
    ),
    path(
        "studies/imports/<int:import_id>/cancel",
        JobCancelApi.as_view(),
        STUDY_IMPORT,
        name="api-study-import-cancel",
    ),
    path(
        "studies/imports/<int:import_id>/retry",
        JobRetryApi.as_view(),
        STUDY_IMPORT,
        name="api-study-import-retry",
    ),
    path("projects/<int:project_id>/rubric", api.ProjectRubricApi.as_view(), name="api-project-rubric"),
    path("reviews/", api.ReviewQueueApi.as_view(), name="api-review-queue"),
    path("reviews/create", api.ReviewCreateApi.as_view(), name="api-review-create"),
]
