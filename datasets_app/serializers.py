from rest_framework import serializers

from datasets_app.domain.import_records import KINDS
from datasets_app.models import Dataset, DatasetImport
from datasets_app.readers import FORMATS


class DatasetImportInputSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="JSONL or CSV file, or a .zip of a Hugging Face dataset folder.")
    name = serializers.CharField(max_length=200)
    format = serializers.ChoiceField(choices=FORMATS, required=False)
    kind = serializers.ChoiceField(choices=KINDS, required=False)
    replace = serializers.BooleanField(default=False)
    background = serializers.BooleanField(
        default=False, help_text="Run the import on a worker and answer 202 with an import record to poll."
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


class DatasetImportSerializer(serializers.ModelSerializer):
    class Meta:
        model = DatasetImport
        fields = [
            "id",
            "name",
            "kind",
            "file_format",
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
