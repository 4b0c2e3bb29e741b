"""REST operations of datasets_app, one view per operation."""

from django.conf import settings
from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.generics import ListAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import HasRole
from accounts.roles import DATA_ROLES
from datasets_app import selectors
from datasets_app.models import ImportMapping
from datasets_app.readers import HubSource
from datasets_app.serializers import (
    DatasetImportInputSerializer,
    DatasetImportSerializer,
    DatasetSerializer,
    ImportErrorSerializer,
    ImportMappingSerializer,
    ImportResultSerializer,
)
from datasets_app.services import (
    ImportFailed,
    ImportProblem,
    dataset_import,
    dataset_import_queue,
    discard_upload,
    import_mapping_resolve,
    import_mapping_save,
)
from datasets_app.uploads import UploadRejected, store_upload


class DatasetImportApi(APIView):
    permission_classes = [HasRole(*DATA_ROLES)]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": DatasetImportInputSerializer},
        responses={
            201: ImportResultSerializer,
            202: DatasetImportSerializer,
            400: ImportErrorSerializer,
        },
        summary="Import a dataset file (prompts, translation units or questions), or a Hub dataset",
        description="Send a file, or a Hub dataset id (hub_dataset, read by a worker). Files whose columns "
        "are not ours are read through a column mapping: given as JSON (mapping), saved under a name "
        "(mapping_name) or reused from an earlier import (mapping_from_import); save_mapping_as saves it.",
    )
    def post(self, request):
        serializer = DatasetImportInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        upload = data.get("file")
        hub_id = (data.get("hub_dataset") or "").strip()
        if (upload is None) == (not hub_id):
            problem = ImportProblem("", "file", "send a file or a hub_dataset (one of them)")
            return Response(ImportFailed([problem]).as_dict(), status=status.HTTP_400_BAD_REQUEST)
        try:
            mapping = import_mapping_resolve(
                mapping=data.get("mapping"),
                mapping_name=data.get("mapping_name", ""),
                from_import=data.get("mapping_from_import"),
            )
            if data.get("save_mapping_as") and mapping is not None:
                import_mapping_save(name=data["save_mapping_as"], mapping=mapping, user=request.user)
        except ImportFailed as exc:
            return Response(exc.as_dict(), status=status.HTTP_400_BAD_REQUEST)
        if hub_id:
            hub = HubSource(hub_id, data["hub_config"], data["hub_split"], data["hub_revision"])
            with transaction.atomic():
                record = dataset_import_queue(
                    hub=hub,
                    name=data["name"],
                    kind=data.get("kind"),
                    replace=data["replace"],
                    user=request.user,
                    mapping=mapping,
                    description=data["description"],
                    license=data["license"],
                )
            return Response(DatasetImportSerializer(record).data, status=status.HTTP_202_ACCEPTED)
        try:
            path, file_format = store_upload(upload, file_format=data.get("format"))
        except UploadRejected as exc:
            return Response(
                {"detail": str(exc), "errors": [], "n_errors": 1}, status=status.HTTP_400_BAD_REQUEST
            )
        # A large file is checked by a worker: the web request only stores it.
        if data["background"] or upload.size > settings.IMPORT_INLINE_MAX_BYTES:
            with transaction.atomic():
                record = dataset_import_queue(
                    upload_path=path,
                    name=data["name"],
                    file_format=file_format or "",
                    kind=data.get("kind"),
                    replace=data["replace"],
                    user=request.user,
                    original_filename=upload.name,
                    mapping=mapping,
                    description=data["description"],
                    license=data["license"],
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
                source=upload.name,
                mapping=mapping,
            )
        except ImportFailed as exc:
            return Response(exc.as_dict(), status=status.HTTP_400_BAD_REQUEST)
        finally:
            discard_upload(path)
        return Response(result.as_dict(), status=status.HTTP_201_CREATED)


class DatasetListApi(ListAPIView):
    permission_classes = [HasRole(*DATA_ROLES)]
    serializer_class = DatasetSerializer

    def get_queryset(self):
        return selectors.dataset_list()


class ImportMappingListApi(ListAPIView):
    """The saved column mappings, to reuse by name (mapping_name) in an import."""

    permission_classes = [HasRole(*DATA_ROLES)]
    serializer_class = ImportMappingSerializer
    queryset = ImportMapping.objects.all()
