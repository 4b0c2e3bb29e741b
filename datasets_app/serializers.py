from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from datasets_app.domain.import_records import KINDS
from datasets_app.models import Dataset, DatasetImport, ImportMapping
from datasets_app.readers import FORMATS


@extend_schema_field(OpenApiTypes.BINARY)
class UploadField(serializers.FileField):
    """A file sent as a multipart part; the schema says binary so that Swagger UI shows a file picker."""


class DatasetImportInputSerializer(serializers.Serializer):
    file = UploadField(
        required=False,
        help_text="JSONL or CSV file, or a .zip of a Hugging Face dataset folder (or give hub_dataset).",
    )
    hub_dataset = serializers.CharField(
        required=False,
        max_length=300,
        help_text="A Hugging Face Hub dataset id (owner/name) read by a worker with datasets.load_dataset "
        "instead of a file; always runs in the background.",
    )
    hub_config = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    hub_split = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    hub_revision = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    mapping = serializers.JSONField(
        required=False,
        binary=True,
        help_text='Column mapping as JSON, for files whose columns are not ours: {"columns": {"prompt": '
        '"instruction", "id": "#row"}, "constants": {"language": "ind", "category": "general"}, "responses": '
        '[{"text": "output_1", "model_column": "generator_1"}]}.',
    )
    mapping_name = serializers.CharField(
        required=False, max_length=100, help_text="Use the mapping saved under this name."
    )
    mapping_from_import = serializers.IntegerField(
        required=False, help_text="Use the mapping an earlier import (its id) was read with."
    )
    save_mapping_as = serializers.CharField(
        required=False, max_length=100, help_text="Save the mapping used under this name, for later imports."
    )
    name = serializers.CharField(max_length=200)
    format = serializers.ChoiceField(choices=FORMATS, required=False)
    kind = serializers.ChoiceField(choices=KINDS, required=False)
    replace = serializers.BooleanField(default=False)
    background = serializers.BooleanField(
        default=False,
        help_text="Run the import on a worker and answer 202 with an import record to poll. Files larger "
        "than the server's IMPORT_INLINE_MAX_BYTES (1 MiB by default) always run on a worker.",
    )
    description = serializers.CharField(required=False, allow_blank=True, default="")
    license = serializers.CharField(required=False, allow_blank=True, default="")


class ImportResultSerializer(serializers.Serializer):
    dataset = serializers.CharField()
    dataset_id = serializers.IntegerField()
    kind = serializers.CharField()
    prompts = serializers.IntegerField(required=False)
    responses = serializers.IntegerField(required=False)
    translation_units = serializers.IntegerField(required=False)
    questions = serializers.IntegerField(required=False)


class ImportErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    n_errors = serializers.IntegerField()
    errors = serializers.ListField(child=serializers.DictField())


class ImportProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField(allow_null=True)


class DatasetImportSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()

    @extend_schema_field(ImportProgressSerializer(allow_null=True))
    def get_progress(self, record) -> dict | None:
        """Records read so far (and the file's total, when known) while the import runs."""
        return self.context.get("progress", {}).get(record.pk)

    class Meta:
        model = DatasetImport
        fields = [
            "id",
            "name",
            "kind",
            "file_format",
            "mapping",
            "hub",
            "progress",
            "status",
            "dataset",
            "counts",
            "errors",
            "attempts",
            "cancel_requested",
            "created_at",
            "started_at",
            "finished_at",
        ]


class DatasetSerializer(serializers.ModelSerializer):
    n_prompts = serializers.IntegerField(read_only=True)
    n_units = serializers.IntegerField(read_only=True)
    n_questions = serializers.IntegerField(read_only=True)

    class Meta:
        model = Dataset
        fields = [
            "id",
            "name",
            "kind",
            "description",
            "license",
            "source",
            "created_at",
            "n_prompts",
            "n_units",
            "n_questions",
        ]


class ImportMappingSerializer(serializers.ModelSerializer):
    class Meta:
        model = ImportMapping
        fields = ["id", "name", "mapping", "created_at", "updated_at"]
