from django.urls import path, re_path

from analytics import api

SECTION = r"(?P<section>[a-z_]+)"

urlpatterns = [
    path(
        "arena/projects/<int:project_id>/leaderboard",
        api.ArenaLeaderboardApi.as_view(),
        name="api-arena-leaderboard",
    ),
    path("projects/<int:project_id>/agreement", api.AgreementReportApi.as_view(), name="api-agreement"),
    path("projects/<int:project_id>/judge-lab", api.JudgeLabApi.as_view(), name="api-judge-lab"),
    path(
        "projects/<int:project_id>/agreement/cancel",
        api.AgreementReportCancelApi.as_view(),
        name="api-agreement-cancel",
    ),
    path(
        "projects/<int:project_id>/agreement/retry",
        api.AgreementReportRetryApi.as_view(),
        name="api-agreement-retry",
    ),
    re_path(
        r"^projects/(?P<project_id>[0-9]+)/agreement/" + SECTION + r"\.csv$",
        api.AgreementCsvApi.as_view(),
        name="api-agreement-csv",
    ),
    re_path(
        r"^projects/(?P<project_id>[0-9]+)/agreement/" + SECTION + r"$",
        api.AgreementSectionApi.as_view(),
        name="api-agreement-section",
    ),
]
