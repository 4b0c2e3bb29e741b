"""Agreement reports over the REST API: the whole report, one section, or one table as CSV.

While a report is computed on a worker the answer is ``202`` with its progress; ask again until ``200``.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import HasRole
from accounts.roles import PROJECT_MANAGER, RESEARCHER
from analytics import services
from analytics.domain.agreement import LEVELS
from analytics.domain.leaderboard import ARENA_STYLE_FEATURES, TIES, LeaderboardError, leaderboard_options
from analytics.downloads import csv_response
from annotation.models import Project
from datasets_app.jobs import JobRefused

PROJECT = OpenApiParameter("project_id", int, OpenApiParameter.PATH)
SECTION = OpenApiParameter("section", str, OpenApiParameter.PATH, enum=list(services.SECTIONS))
LEVEL = OpenApiParameter(
    "level",
    str,
    enum=list(LEVELS),
    description="Level of measurement of Likert ratings (default ordinal); picks and votes are nominal.",
)
TABLE = OpenApiParameter("table", str, description="Table of the section (default: its first).")


class SectionSerializer(serializers.Serializer):
    tables = serializers.DictField(
        child=serializers.ListField(child=serializers.DictField()),
        help_text="Named tables, each a list of flat rows (the same rows as the CSV).",
    )
    note = serializers.CharField(allow_null=True, help_text="Why the section is empty or partial.")
    summary = serializers.DictField(required=False, help_text="Headline figures (best-of-N, pairwise).")


class ReportSerializer(serializers.Serializer):
    format = serializers.IntegerField()
    project = serializers.IntegerField()
    project_name = serializers.CharField()
    kind = serializers.CharField()
    level = serializers.ChoiceField(choices=LEVELS)
    data_version = serializers.CharField(help_text="Fingerprint of the data the report was computed on.")
    computed_at = serializers.DateTimeField()
    n_values = serializers.IntegerField()
    n_coders = serializers.IntegerField()
    sections = serializers.DictField(
        child=SectionSerializer(), help_text="Keys: " + ", ".join(services.SECTIONS) + "."
    )


class PendingSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["queued", "running", "failed", "cancelled"])
    progress = serializers.IntegerField(help_text="Percent done.")
    stage = serializers.CharField()
    error = serializers.CharField()
    data_version = serializers.CharField()


PENDING = OpenApiResponse(PendingSerializer, description="Being computed in the background; ask again.")
NOT_FOUND = OpenApiResponse(description="No such project, section or table.")


def _state(request, project_id: int):
    project = get_object_or_404(Project, pk=project_id, kind__in=services.DASHBOARD_KINDS)
    level = request.query_params.get("level") or services.DEFAULT_LEVEL
    if level not in LEVELS:
        return None, Response(
            {"detail": f"level must be one of {', '.join(LEVELS)}"}, status=status.HTTP_400_BAD_REQUEST
        )
    state = services.report_state(project=project, level=level)
    if state.ready:
        return state, None
    body = {
        "status": state.status,
        "progress": state.progress,
        "stage": state.stage,
        "error": state.error,
        "data_version": state.version,
    }
    return None, Response(body, status=status.HTTP_202_ACCEPTED)


class AgreementReportApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER, RESEARCHER)]

    @extend_schema(
        operation_id="project_agreement_report",
        parameters=[PROJECT, LEVEL],
        responses={200: ReportSerializer, 202: PENDING, 404: NOT_FOUND},
        summary="Agreement report of a project (every dashboard section)",
    )
    def get(self, request, project_id: int):
        state, pending = _state(request, project_id)
        return pending or Response(state.report)


class AgreementSectionApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER, RESEARCHER)]

    @extend_schema(
        operation_id="project_agreement_section",
        parameters=[PROJECT, SECTION, LEVEL],
        responses={200: SectionSerializer, 202: PENDING, 404: NOT_FOUND},
        summary="One section of a project's agreement report",
    )
    def get(self, request, project_id: int, section: str):
        if section not in services.SECTIONS:
            return Response({"detail": "No such section."}, status=status.HTTP_404_NOT_FOUND)
        state, pending = _state(request, project_id)
        if pending:
            return pending
        if section not in state.report["sections"]:
            return Response({"detail": "This project's report has no such section."}, status=404)
        return Response(state.report["sections"][section])


class AgreementCsvApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER, RESEARCHER)]

    @extend_schema(
        operation_id="project_agreement_csv",
        parameters=[PROJECT, SECTION, LEVEL, TABLE],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The table as CSV."),
            202: PENDING,
            404: NOT_FOUND,
        },
        summary="One table of a report section as CSV",
    )
    def get(self, request, project_id: int, section: str):
        if section not in services.SECTIONS:
            return Response({"detail": "No such section."}, status=status.HTTP_404_NOT_FOUND)
        state, pending = _state(request, project_id)
        if pending:
            return pending
        try:
            table, rows = services.section_table(state.report, section, request.query_params.get("table"))
        except KeyError:
            return Response({"detail": "No such table."}, status=status.HTTP_404_NOT_FOUND)
        return csv_response(rows, f"project-{project_id}-{section}-{table}.csv")


def _level_of(request) -> str | None:
    level = request.query_params.get("level") or services.DEFAULT_LEVEL
    return level if level in LEVELS else None


class AgreementReportCancelApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER, RESEARCHER)]

    @extend_schema(
        operation_id="project_agreement_cancel",
        request=None,
        parameters=[PROJECT, LEVEL],
        responses={
            200: PendingSerializer,
            404: NOT_FOUND,
            409: OpenApiResponse(description="Nothing to cancel."),
        },
        summary="Cancel the background computation of a project's agreement report",
    )
    def post(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id, kind__in=services.DASHBOARD_KINDS)
        level = _level_of(request)
        if level is None:
            return Response({"detail": f"level must be one of {', '.join(LEVELS)}"}, status=400)
        try:
            services.report_cancel(project=project, level=level)
        except JobRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        state = services.report_state(project=project, level=level, start=False)
        body = {
            "status": state.status,
            "progress": state.progress,
            "stage": state.stage,
            "error": state.error,
            "data_version": state.version,
        }
        return Response(body)


class AgreementReportRetryApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER, RESEARCHER)]

    @extend_schema(
        operation_id="project_agreement_retry",
        request=None,
        parameters=[PROJECT, LEVEL],
        responses={200: ReportSerializer, 202: PENDING, 404: NOT_FOUND},
        summary="Compute a failed or cancelled agreement report again",
    )
    def post(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id, kind__in=services.DASHBOARD_KINDS)
        level = _level_of(request)
        if level is None:
            return Response({"detail": f"level must be one of {', '.join(LEVELS)}"}, status=400)
        services.report_retry(project=project, level=level)
        state, pending = _state(request, project_id)
        return pending or Response(state.report)


class JudgeLabApi(APIView):
    """The judge lab of a project as JSON: the figures of ``manage.py judge_lab`` over the project's human
    preferences and its pairwise judge runs."""

    permission_classes = [HasRole(PROJECT_MANAGER, RESEARCHER)]

    @extend_schema(
        operation_id="project_judge_lab",
        parameters=[
            PROJECT,
            OpenApiParameter(
                "baseline", str, description="Model the length-controlled win rates are against."
            ),
            OpenApiParameter(
                "ppi_share",
                float,
                enum=list(services.LAB_PPI_SHARES),
                description="Use the human votes of only this share of items for the prediction-powered "
                "estimates (seeded by the project); default every vote.",
            ),
        ],
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT, description="judges, judge_choice, length_controlled, ppi, notes"
            ),
            400: OpenApiResponse(description="Unknown baseline model or share."),
            404: NOT_FOUND,
        },
        summary="Judge lab: bias, calibration, length-controlled and prediction-powered win rates",
    )
    def get(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id, kind__in=services.DASHBOARD_KINDS)
        share_text = request.query_params.get("ppi_share") or ""
        try:
            share = float(share_text) if share_text else None
            report = services.judge_lab_report(
                project=project, baseline=request.query_params.get("baseline") or None, ppi_human_share=share
            )
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(report)


class ArenaLeaderboardApi(APIView):
    """The arena's leaderboard as JSON: the same object as ``manage.py leaderboard --json``."""

    permission_classes = [HasRole(PROJECT_MANAGER, RESEARCHER)]

    @extend_schema(
        operation_id="arena_leaderboard",
        parameters=[
            PROJECT,
            OpenApiParameter("ties", str, enum=list(TIES), description="half (default) or davidson"),
            OpenApiParameter(
                "style",
                str,
                many=True,
                description="style features to control for: " + ", ".join(ARENA_STYLE_FEATURES),
            ),
            OpenApiParameter("bootstrap", int, description="bootstrap draws (default 1000, at most 2000)"),
            OpenApiParameter("seed", int, description="seed of the bootstrap (default 0)"),
        ],
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="models (rating, ci95, rank_range, tier, battles, ...), style, davidson_nu, "
                "pair_matrix, vote_drop, breakdowns (language, register, category), n_battles, n_used",
            ),
            400: OpenApiResponse(description="An option is not valid."),
            404: NOT_FOUND,
            409: OpenApiResponse(description="The battles cannot give a leaderboard yet (the reason)."),
        },
        summary="Leaderboard of an arena project",
    )
    def get(self, request, project_id: int):
        project = get_object_or_404(Project, pk=project_id, kind=Project.Kind.ARENA)
        try:
            options = leaderboard_options(
                request.query_params.get("ties"),
                request.query_params.getlist("style"),
                request.query_params.get("bootstrap"),
                request.query_params.get("seed"),
            )
        except LeaderboardError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        try:
            board = services.arena_leaderboard(project=project, options=options)
        except LeaderboardError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(board.to_dict())
