from django.urls import path, re_path

from evaluation import api

RUN = r"^evaluation/(?P<kind>generation|judge|benchmark)-runs/(?P<run_id>[0-9]+)"

urlpatterns = [
    path("evaluation/span-prefill/<int:project_id>", api.SpanPrefillApi.as_view(), name="api-span-prefill"),
    path("evaluation/endpoints/", api.EndpointListApi.as_view(), name="api-endpoint-list"),
    path("evaluation/endpoints/create", api.EndpointCreateApi.as_view(), name="api-endpoint-create"),
    path(
        "evaluation/endpoints/<int:endpoint_id>", api.EndpointDetailApi.as_view(), name="api-endpoint-detail"
    ),
    path(
        "evaluation/endpoints/<int:endpoint_id>/update",
        api.EndpointUpdateApi.as_view(),
        name="api-endpoint-update",
    ),
    path("evaluation/generation-runs/", api.GenerationRunListApi.as_view(), name="api-generation-run-list"),
    path(
        "evaluation/generation-runs/start",
        api.GenerationRunStartApi.as_view(),
        name="api-generation-run-start",
    ),
    path("evaluation/judge-runs/", api.JudgeRunListApi.as_view(), name="api-judge-run-list"),
    path("evaluation/judge-runs/start", api.JudgeRunStartApi.as_view(), name="api-judge-run-start"),
    path("evaluation/benchmark-runs/", api.BenchmarkRunListApi.as_view(), name="api-benchmark-run-list"),
    path(
        "evaluation/benchmark-runs/start", api.BenchmarkRunStartApi.as_view(), name="api-benchmark-run-start"
    ),
    re_path(RUN + r"$", api.RunDetailApi.as_view(), name="api-run-detail"),
    re_path(RUN + r"/cancel$", api.RunCancelApi.as_view(), name="api-run-cancel"),
    re_path(RUN + r"/retry$", api.RunRetryApi.as_view(), name="api-run-retry"),
    path(
        "evaluation/judge-runs/<int:run_id>/judgments",
        api.JudgmentListApi.as_view(),
        name="api-judgment-list",
    ),
    path(
        "evaluation/judge-runs/<int:run_id>/judgments.csv",
        api.JudgmentCsvApi.as_view(),
        name="api-judgment-csv",
    ),
    path(
        "evaluation/judge-runs/<int:run_id>/verdicts",
        api.PairVerdictListApi.as_view(),
        name="api-verdict-list",
    ),
    path(
        "evaluation/judge-runs/<int:run_id>/verdicts.csv",
        api.PairVerdictCsvApi.as_view(),
        name="api-verdict-csv",
    ),
    path(
        "evaluation/benchmark-runs/<int:run_id>/results",
        api.BenchmarkResultListApi.as_view(),
        name="api-benchmark-result-list",
    ),
    path(
        "evaluation/benchmark-runs/<int:run_id>/results.csv",
        api.BenchmarkResultCsvApi.as_view(),
        name="api-benchmark-result-csv",
    ),
]
