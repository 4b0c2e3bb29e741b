"""Export API under ``/api/v1/exports/``: preview counts, create (runs in a worker), status, download.

One view per operation with explicit input and output serializers; researchers and project managers
only; mounted by ``exports/api_urls.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db import transaction
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import HasRole
from accounts.roles import DATA_ROLES
from annotation.models import Project
from exports import selectors
from exports.domain.dataset_card import PROVENANCES
from exports.domain.preference_pairs import ORDERINGS, STRATEGIES
from exports.families import formats
from exports.models import Export
from exports.options import ExportInvalid, ExportOptions, parse_split, parse_weights
from exports.services import (
    export_create,
    export_download_name,
    export_preview,
)


class ExportInputSerializer(serializers.Serializer):
    project = serializers.IntegerField()
    format = serializers.ChoiceField(
        choices=formats(),
        required=False,
        allow_null=True,
        help_text="Default: the project's first format (hf; parallel-corpus; question-set).",
    )
    strategy = serializers.ChoiceField(choices=STRATEGIES, required=False, allow_null=True)
    weights = serializers.DictField(child=serializers.FloatField(), required=False, allow_null=True)
    ordering = serializers.ChoiceField(choices=ORDERINGS, default="weighted")
    min_margin = serializers.FloatField(default=0.0, min_value=0)
    min_annotators = serializers.IntegerField(default=1, min_value=1)
    min_agreement = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=1)
    categories = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False)
    languages = serializers.ListField(child=serializers.CharField(), required=False)
    registers = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False)
    turn = serializers.IntegerField(required=False, allow_null=True, min_value=0, help_text="0-based.")
    reliability_weights = serializers.BooleanField(
        default=False,
        help_text="Pairwise majority: weight each vote by its annotator's Dawid-Skene reliability; the "
        "weights are written to the dataset card.",
    )
    split = serializers.CharField(default="none", help_text='Test share, "test=0.1"; "none" for no split.')
    seed = serializers.IntegerField(required=False, allow_null=True, min_value=0)
    provenance = serializers.ChoiceField(
        choices=PROVENANCES,
        default="",
        allow_blank=True,
        help_text="Who gave the answers, for the dataset card (default unstated: the card says who the "
        "annotators were was not stated); simulated annotators are detected and declared whatever is sent.",
    )
    license = serializers.CharField(default="", allow_blank=True)
    pretty_name = serializers.CharField(default="", allow_blank=True)
    push_to_hub = serializers.CharField(default="", allow_blank=True, help_text="owner/name")
    private = serializers.BooleanField(default=True)
    max_ambiguous = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        help_text="Question sets: most ambiguous flags a kept question may have (default: the project's).",
    )

    def validate_weights(self, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is not None:
            try:
                parse_weights(",".join(f"{k}={v}" for k, v in value.items()))
            except ExportInvalid as exc:
                raise serializers.ValidationError(exc.errors["weights"]) from None
        return value or None

    def validate_split(self, value: str) -> float:
        try:
            return parse_split(value)
        except ExportInvalid as exc:
            raise serializers.ValidationError(exc.errors["split"]) from None

    def options(self) -> ExportOptions:
        data = self.validated_data
        return ExportOptions(
            kind=data.get("format") or "",
            strategy=data.get("strategy"),
            weights=data.get("weights"),
            ordering=data["ordering"],
            min_margin=data["min_margin"],
            min_annotators=data["min_annotators"],
            min_agreement=data.get("min_agreement"),
            categories=data.get("categories") or None,
            languages=data.get("languages") or None,
            registers=data.get("registers") or None,
            turn=data.get("turn"),
            reliability_weights=data["reliability_weights"],
            test_size=data["split"],
            seed=data.get("seed"),
            provenance=data["provenance"],
            license=data["license"],
            pretty_name=data["pretty_name"],
            max_ambiguous=data.get("max_ambiguous"),
        )


class ExportSerializer(serializers.ModelSerializer):
    format = serializers.CharField(source="kind")
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = Export
        fields = [
            "id",
            "project",
            "format",
            "strategy",
            "options",
            "filters",
            "counts",
            "status",
            "progress",
            "stage",
            "error",
            "attempts",
            "cancel_requested",
            "hub_repo_id",
            "hub_private",
            "hub_revision",
            "hub_url",
            "download_url",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_download_url(self, record: Export) -> str | None:
        if record.status != Export.Status.SUCCEEDED or not record.zip_path:
            return None
        return reverse("api-export-download", args=[record.pk])


class ExportErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = serializers.DictField(child=serializers.CharField())


def _invalid(exc: ExportInvalid) -> Response:
    return Response({"detail": str(exc), "errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST)


def _project(project_id: int) -> Project:
    return get_object_or_404(Project.objects.select_related("dataset"), pk=project_id)


class ExportPreviewApi(APIView):
    permission_classes = [HasRole(*DATA_ROLES)]

    @extend_schema(
        request=ExportInputSerializer,
        responses={
            200: OpenApiResponse(description="Counts per strategy step and split."),
            400: ExportErrorSerializer,
        },
        summary="Counts an export would give, without writing anything",
    )
    def post(self, request):
        serializer = ExportInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        project = _project(serializer.validated_data["project"])
        try:
            return Response(export_preview(project=project, options=serializer.options()))
        except ExportInvalid as exc:
            return _invalid(exc)


class ExportCreateApi(APIView):
    permission_classes = [HasRole(*DATA_ROLES)]

    @extend_schema(
        request=ExportInputSerializer,
        responses={202: ExportSerializer, 400: ExportErrorSerializer},
        summary="Start an export (runs in a worker; poll its status)",
    )
    def post(self, request):
        serializer = ExportInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data: dict[str, Any] = serializer.validated_data
        project = _project(data["project"])
        try:
            with transaction.atomic():
                record = export_create(
                    project=project,
                    options=serializer.options(),
                    user=request.user,
                    hub_repo_id=data["push_to_hub"],
                    hub_private=data["private"],
                )
        except ExportInvalid as exc:
            return _invalid(exc)
        record.refresh_from_db()
        return Response(ExportSerializer(record).data, status=status.HTTP_202_ACCEPTED)


class ExportListApi(ListAPIView):
    permission_classes = [HasRole(*DATA_ROLES)]
    serializer_class = ExportSerializer

    @extend_schema(parameters=[OpenApiParameter("project", int, description="Only this project's exports.")])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        project_id = self.request.query_params.get("project")
        exports = selectors.export_list()
        if project_id:
            if not project_id.isdigit():
                raise Http404
            exports = exports.filter(project_id=int(project_id))
        return exports


class ExportDownloadApi(APIView):
    permission_classes = [HasRole(*DATA_ROLES)]

    @extend_schema(
        responses={
            (200, "application/zip"): OpenApiResponse(description="The export folder as a zip archive."),
            404: OpenApiResponse(description="No such export, or it has no file (yet)."),
        }
    )
    def get(self, request, export_id: int):
        record = get_object_or_404(Export.objects.select_related("project"), pk=export_id)
        zip_path = Path(record.zip_path) if record.zip_path else None
        if record.status != Export.Status.SUCCEEDED or zip_path is None or not zip_path.is_file():
            raise Http404("this export has no file to download")
        return FileResponse(zip_path.open("rb"), as_attachment=True, filename=export_download_name(record))
