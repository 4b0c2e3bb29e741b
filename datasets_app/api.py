"""REST operations of datasets_app, one view per operation."""

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import ListAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import HasRole
from accounts.roles import DATA_ROLES
from datasets_app import selectors
from datasets_app.jobs import JobRefused
from datasets_app.models import DatasetImport
from datasets_app.serializers import (
    DatasetImportInputSerializer,
    DatasetImportSerializer,
    DatasetSerializer,
    ImportErrorSerializer,
    ImportResultSerializer,
)
from datasets_app.services import (
    ImportFailed,
    dataset_import,
    dataset_import_cancel,
    dataset_import_queue,
    discard_upload,
)
from datasets_app.uploads import UploadRejected, store_upload


class DatasetImportApi(APIView):
    permission_classes = [HasRole(*DATA_ROLES)]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request=DatasetImportInputSerializer,
        responses={
            201: ImportResultSerializer,
            202: DatasetImportSerializer,
            400: ImportErrorSerializer,
        },
        summary="Import a dataset file (prompts, translation units or questions)",
    )
    def post(self, request):
        serializer = DatasetImportInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            path, file_format = store_upload(data["file"], file_format=data.get("format"))
        except UploadRejected as exc:
            return Response(
                {"detail": str(exc), "errors": [], "n_errors": 1}, status=status.HTTP_400_BAD_REQUEST
            )
        if data["background"]:
            with transaction.atomic():
                record = dataset_import_queue(
                    upload_path=path,
                    name=data["name"],
                    file_format=file_format or "",
                    kind=data.get("kind"),
                    replace=data["replace"],
                    user=request.user,
                    original_filename=data["file"].name,
                )
            return Response(DatasetImportSerializer(record).data, status=status.HTTP_202_ACCEPTED)
        try:
            result = dataset_import(
                path=path,
                name=data["name"],
                file_format=file_format or None,
                kind=data.get("kind"),
                replace=data["replace"],
                user=request.user,
                description=data["description"],
                license=data["license"],
                source=data["file"].name,
            )
        except ImportFailed as exc:
            return Response(exc.as_dict(), status=status.HTTP_400_BAD_REQUEST)
        finally:
            discard_upload(path)
        return Response(result.as_dict(), status=status.HTTP_201_CREATED)


class DatasetImportDetailApi(APIView):
    permission_classes = [HasRole(*DATA_ROLES)]

    @extend_schema(
        responses={200: DatasetImportSerializer, 404: OpenApiResponse(description="No such import.")}
    )
    def get(self, request, import_id: int):
        record = get_object_or_404(DatasetImport, pk=import_id)
        return Response(DatasetImportSerializer(record).data)


class DatasetImportCancelApi(APIView):
    permission_classes = [HasRole(*DATA_ROLES)]

    @extend_schema(
        request=None,
        responses={
            200: DatasetImportSerializer,
            404: OpenApiResponse(description="No such import."),
            409: OpenApiResponse(description="The import has ended already."),
        },
        summary="Cancel a queued import, or stop a running one before its next batch (nothing is kept)",
    )
    def post(self, request, import_id: int):
        record = get_object_or_404(DatasetImport, pk=import_id)
        try:
            record = dataset_import_cancel(record=record)
        except JobRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        record.refresh_from_db()
        return Response(DatasetImportSerializer(record).data)


class DatasetListApi(ListAPIView):
    permission_classes = [HasRole(*DATA_ROLES)]
    serializer_class = DatasetSerializer

    def get_queryset(self):
        return selectors.dataset_list()
