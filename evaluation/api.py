"""REST operations of evaluation, one view per operation: endpoints, runs (start, inspect, cancel), results."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import HasRole
from accounts.roles import DATA_ROLES
from annotation.models import SPAN_KINDS, Project
from datasets_app.domain.csv_cells import SafeDictWriter
from datasets_app.models import Dataset
from evaluation import selectors, services
from evaluation.domain.judge_parsing import plain_score
from evaluation.models import BenchmarkRun, GenerationRun, JudgeRun, JudgeTemplate, ModelEndpoint
from evaluation.serializers import (
    BENCHMARK_RESULT_FIELDS,
    JUDGMENT_FIELDS,
    PAIR_VERDICT_FIELDS,
    BenchmarkResultSerializer,
    BenchmarkRunInputSerializer,
    BenchmarkRunSerializer,
    CancelResultSerializer,
    EndpointInputSerializer,
    EndpointSerializer,
    EndpointUpdateSerializer,
    GenerationRunInputSerializer,
    GenerationRunSerializer,
    JudgeRunInputSerializer,
    JudgeRunSerializer,
    JudgmentSerializer,
    PairVerdictSerializer,
    RetryResultSerializer,
)
from evaluation.services import RunConfigError
from evaluation.services.span_prefill import span_judgment_counts, span_prefill_queue

PERMISSIONS = [HasRole(*DATA_ROLES)]


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_response(rows: Iterable[dict], fields: Sequence[str], filename: str) -> StreamingHttpResponse:
    """A streamed CSV download (bounded memory for large runs); text cells are neutralised (``csv_cells``)."""
    writer = SafeDictWriter(_Echo(), fieldnames=list(fields), extrasaction="ignore")

    def lines():
        yield writer.writeheader()
        for row in rows:
            yield writer.writerow(row)

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _bad_request(exc: Exception) -> Response:
    if isinstance(exc, ValidationError):
        return Response(
            exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}, status=400
        )
    return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)


# ---- endpoints -------------------------------------------------------------------------------------------


class EndpointListApi(ListAPIView):
    permission_classes = PERMISSIONS
    serializer_class = EndpointSerializer

    def get_queryset(self):
        return selectors.endpoint_list()


class EndpointCreateApi(APIView):
    permission_classes = PERMISSIONS

    @extend_schema(
        request=EndpointInputSerializer,
        responses={201: EndpointSerializer},
        summary="Register a model endpoint",
    )
    def post(self, request):
        serializer = EndpointInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            endpoint = services.endpoint_create(user=request.user, **serializer.validated_data)
        except ValidationError as exc:
            return _bad_request(exc)
        return Response(EndpointSerializer(endpoint).data, status=status.HTTP_201_CREATED)


class EndpointDetailApi(APIView):
    permission_classes = PERMISSIONS

    @extend_schema(responses={200: EndpointSerializer})
    def get(self, request, endpoint_id: int):
        return Response(EndpointSerializer(get_object_or_404(ModelEndpoint, pk=endpoint_id)).data)


class EndpointUpdateApi(APIView):
    permission_classes = PERMISSIONS

    @extend_schema(
        request=EndpointUpdateSerializer, responses={200: EndpointSerializer}, summary="Change an endpoint"
    )
    def patch(self, request, endpoint_id: int):
        endpoint = get_object_or_404(ModelEndpoint, pk=endpoint_id)
        serializer = EndpointUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            endpoint = services.endpoint_update(endpoint=endpoint, **serializer.validated_data)
        except ValidationError as exc:
            return _bad_request(exc)
        return Response(EndpointSerializer(endpoint).data)


# ---- runs ------------------------------------------------------------------------------------------------


def _endpoint(slug: str) -> ModelEndpoint:
    return get_object_or_404(ModelEndpoint, slug=slug)


class GenerationRunListApi(ListAPIView):
    permission_classes = PERMISSIONS
    serializer_class = GenerationRunSerializer

    def get_queryset(self):
        return GenerationRun.objects.select_related("dataset").prefetch_related("endpoints")


class GenerationRunStartApi(APIView):
    permission_classes = PERMISSIONS

    @extend_schema(
        request=GenerationRunInputSerializer,
        responses={201: GenerationRunSerializer},
        summary="Start a generation run",
    )
    def post(self, request):
        serializer = GenerationRunInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        dataset = get_object_or_404(Dataset, pk=data["dataset"])
        endpoints = [_endpoint(slug) for slug in data["endpoints"]]
        try:
            with transaction.atomic():
                run = services.generation_run_start(
                    dataset=dataset,
                    endpoints=endpoints,
                    n_per_prompt=data["n_per_prompt"],
                    options=data["options"],
                    name=data["name"],
                    user=request.user,
                )
        except RunConfigError as exc:
            return _bad_request(exc)
        return Response(GenerationRunSerializer(run).data, status=status.HTTP_201_CREATED)


class JudgeRunListApi(ListAPIView):
    permission_classes = PERMISSIONS
    serializer_class = JudgeRunSerializer

    def get_queryset(self):
        return JudgeRun.objects.select_related("endpoint", "template")


class JudgeRunStartApi(APIView):
    permission_classes = PERMISSIONS

    @extend_schema(
        request=JudgeRunInputSerializer, responses={201: JudgeRunSerializer}, summary="Start a judge run"
    )
    def post(self, request):
        serializer = JudgeRunInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        dataset = get_object_or_404(Dataset, pk=data["dataset"]) if data.get("dataset") else None
        project = (
            get_object_or_404(Project, pk=data["annotation_project"])
            if data.get("annotation_project")
            else None
        )
        template = get_object_or_404(JudgeTemplate, pk=data["template"]) if data.get("template") else None
        try:
            with transaction.atomic():
                run = services.judge_run_start(
                    judge_kind=data["judge_kind"],
                    endpoint=_endpoint(data["endpoint"]),
                    dataset=dataset,
                    annotation_project=project,
                    template=template,
                    order_mode=data["order_mode"],
                    pairwise_family=data.get("pairwise_family"),
                    options=data["options"],
                    name=data["name"],
                    user=request.user,
                )
        except RunConfigError as exc:
            return _bad_request(exc)
        return Response(JudgeRunSerializer(run).data, status=status.HTTP_201_CREATED)


class BenchmarkRunListApi(ListAPIView):
    permission_classes = PERMISSIONS
    serializer_class = BenchmarkRunSerializer

    def get_queryset(self):
        return BenchmarkRun.objects.select_related("endpoint", "judge_endpoint")


class BenchmarkRunStartApi(APIView):
    permission_classes = PERMISSIONS

    @extend_schema(
        request=BenchmarkRunInputSerializer,
        responses={201: BenchmarkRunSerializer},
        summary="Start a benchmark run",
    )
    def post(self, request):
        serializer = BenchmarkRunInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        judge = _endpoint(data["judge_endpoint"]) if data.get("judge_endpoint") else None
        try:
            with transaction.atomic():
                run = services.benchmark_run_start(
                    task=data["task"],
                    endpoint=_endpoint(data["endpoint"]),
                    dataset=get_object_or_404(Dataset, pk=data["dataset"]),
                    judge_endpoint=judge,
                    mode=data.get("mode") or None,
                    options=data["options"],
                    name=data["name"],
                    user=request.user,
                )
        except RunConfigError as exc:
            return _bad_request(exc)
        return Response(BenchmarkRunSerializer(run).data, status=status.HTTP_201_CREATED)


RUN_TYPES = {
    "generation": (GenerationRun, GenerationRunSerializer),
    "judge": (JudgeRun, JudgeRunSerializer),
    "benchmark": (BenchmarkRun, BenchmarkRunSerializer),
}


class RunDetailApi(APIView):
    """Status and progress of a run (``kind`` is generation, judge or benchmark)."""

    permission_classes = PERMISSIONS

    @extend_schema(
        responses={
            200: OpenApiResponse(
                description="The run, with progress counts; a benchmark run with its tables (``by_language``: "
                "a column per language and ``avg``, the mean over languages) and ``comparison`` (the same "
                "table over the succeeded runs of its dataset scored the same way)."
            )
        }
    )
    def get(self, request, kind: str, run_id: int):
        model, serializer = RUN_TYPES[kind]
        run = selectors.run_live_progress(get_object_or_404(model, pk=run_id))
        data = serializer(run).data
        data["errors"] = selectors.run_chunk_errors(run=run)
        # The queues of its pending parts that no running worker consumes (reported every few seconds).
        data["queues_without_worker"] = services.run_queues_without_worker(run)
        if kind == "judge":
            data["summary"] = selectors.judge_run_summary(run=run)
        elif kind == "benchmark":
            data["tables"] = selectors.benchmark_tables(run=run)
            # The per-language table of the runs scored like this one (null when none is).
            data["comparison"] = selectors.benchmark_comparison(run=run)
        return Response(data)


class RunCancelApi(APIView):
    permission_classes = PERMISSIONS

    @extend_schema(
        request=None, responses={200: CancelResultSerializer}, summary="Cancel a queued or running run"
    )
    def post(self, request, kind: str, run_id: int):
        model, _ = RUN_TYPES[kind]
        run = get_object_or_404(model, pk=run_id)
        cancelled = services.run_cancel(run=run)
        return Response({"cancelled": cancelled, "status": run.status})


class RunRetryApi(APIView):
    permission_classes = PERMISSIONS

    @extend_schema(
        request=None,
        responses={200: RetryResultSerializer},
        summary="Queue again the items of an ended run that have no result (failed, or left by a cancel)",
    )
    def post(self, request, kind: str, run_id: int):
        model, _ = RUN_TYPES[kind]
        run = get_object_or_404(model, pk=run_id)
        try:
            queued = services.run_retry_not_done(run=run)
        except RunConfigError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        run.refresh_from_db()
        return Response({"queued": queued, "status": run.status})


# ---- results ---------------------------------------------------------------------------------------------


class JudgmentListApi(ListAPIView):
    permission_classes = PERMISSIONS
    serializer_class = JudgmentSerializer

    def get_queryset(self):
        return selectors.judgment_list(run=get_object_or_404(JudgeRun, pk=self.kwargs["run_id"]))


class JudgmentCsvApi(APIView):
    permission_classes = PERMISSIONS

    @extend_schema(responses={(200, "text/csv"): OpenApiResponse(description="Every judgment of the run.")})
    def get(self, request, run_id: int):
        run = get_object_or_404(JudgeRun, pk=run_id)
        rows = selectors.judgment_list(run=run).values(*_db_fields(JUDGMENT_FIELDS)).iterator()
        return csv_response(
            _plain_scores(_renamed(rows)), JUDGMENT_FIELDS, f"judge-run-{run.pk}-judgments.csv"
        )


class PairVerdictListApi(ListAPIView):
    permission_classes = PERMISSIONS
    serializer_class = PairVerdictSerializer

    def get_queryset(self):
        return selectors.pair_verdict_list(run=get_object_or_404(JudgeRun, pk=self.kwargs["run_id"]))


class PairVerdictCsvApi(APIView):
    permission_classes = PERMISSIONS

    @extend_schema(responses={(200, "text/csv"): OpenApiResponse(description="Combined verdict per target.")})
    def get(self, request, run_id: int):
        run = get_object_or_404(JudgeRun, pk=run_id)
        rows = selectors.pair_verdict_list(run=run).values(*_db_fields(PAIR_VERDICT_FIELDS)).iterator()
        return csv_response(_renamed(rows), PAIR_VERDICT_FIELDS, f"judge-run-{run.pk}-verdicts.csv")


class BenchmarkResultListApi(ListAPIView):
    permission_classes = PERMISSIONS
    serializer_class = BenchmarkResultSerializer

    def get_queryset(self):
        return selectors.benchmark_result_list(run=get_object_or_404(BenchmarkRun, pk=self.kwargs["run_id"]))


class BenchmarkResultCsvApi(APIView):
    permission_classes = PERMISSIONS

    @extend_schema(responses={(200, "text/csv"): OpenApiResponse(description="Every result of the run.")})
    def get(self, request, run_id: int):
        run = get_object_or_404(BenchmarkRun, pk=run_id)
        rows = (
            selectors.benchmark_result_list(run=run)
            .values(*_db_fields(BENCHMARK_RESULT_FIELDS), "raw")
            .iterator()
        )
        return csv_response(
            _with_raw(_renamed(rows)), BENCHMARK_RESULT_CSV_FIELDS, f"benchmark-run-{run.pk}-results.csv"
        )


# The CSV's columns: the result's fields, then what the model wrote and the rule that read it.
BENCHMARK_RESULT_CSV_FIELDS = [*BENCHMARK_RESULT_FIELDS, "raw_output", "rule"]


def _plain_scores(rows: Iterable[dict]) -> Iterable[dict]:
    """Each judgment row with its score written as the API gives it: 7 for a whole score, 7.5 otherwise."""
    for row in rows:
        yield {**row, "score": plain_score(row["score"])}


def _with_raw(rows: Iterable[dict]) -> Iterable[dict]:
    """Each row with ``raw_output`` (the model's text; the options' log-probabilities as JSON in log-probability
    and cloze modes) and ``rule`` (the extraction, match or cloze rule that produced the prediction)."""
    for row in rows:
        raw = row.pop("raw", None) or {}
        output = raw.get("output")
        if output is None and "logprobs" in raw:
            output = json.dumps(raw["logprobs"])
        yield {**row, "raw_output": output or "", "rule": raw.get("rule", "")}


_FK_FIELDS = {"prompt", "response_a", "response_b", "question", "unit"}


def _db_fields(fields: Sequence[str]) -> list[str]:
    return [f"{name}_id" if name in _FK_FIELDS else name for name in fields]


def _renamed(rows: Iterable[dict]) -> Iterable[dict]:
    for row in rows:
        yield {
            key.removesuffix("_id") if key.removesuffix("_id") in _FK_FIELDS else key: value
            for key, value in row.items()
        }


class SpanPrefillApi(APIView):
    """Pre-fill an MQM or ESA project's error spans with a model (queued on the endpoint's queue), and the
    parse statuses of the replies so far."""

    permission_classes = [HasRole(*DATA_ROLES)]

    @extend_schema(summary="Parse statuses of the span judge's replies per endpoint", responses={200: dict})
    def get(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id, kind__in=SPAN_KINDS)
        rows = span_judgment_counts(project)
        return Response(
            {
                "counts": [
                    {
                        "endpoint": r["endpoint__slug"],
                        "parse_status": r["parse_status"],
                        "tasks": r["n"],
                        "spans": r["spans"] or 0,
                    }
                    for r in rows
                ]
            }
        )

    @extend_schema(
        summary="Queue the span pre-fill: {'endpoint': slug, 'language': 'en'|'id'}",
        request=dict,
        responses={202: dict, 400: dict},
    )
    def post(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id, kind__in=SPAN_KINDS)
        data = request.data if isinstance(request.data, dict) else {}
        endpoint = ModelEndpoint.objects.filter(slug=str(data.get("endpoint", ""))).first()
        lang = data.get("language", "en")
        errors = {}
        if endpoint is None:
            errors["endpoint"] = ["No model endpoint with this slug."]
        if lang not in ("en", "id"):
            errors["language"] = ["The prompt's language is 'en' or 'id'."]
        if errors:
            return Response(errors, status=status.HTTP_400_BAD_REQUEST)
        span_prefill_queue(project=project, endpoint=endpoint, lang=lang)
        return Response(
            {"queued": True, "endpoint": endpoint.slug, "tasks": project.n_tasks},
            status=status.HTTP_202_ACCEPTED,
        )
