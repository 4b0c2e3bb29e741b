from django.contrib import admin

from datasets_app.models import (
    Dataset,
    DatasetImport,
    ImportMapping,
    Prompt,
    Question,
    Response,
    TranslationUnit,
)


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "license", "created_by", "created_at"]
    search_fields = ["name", "description"]
    list_filter = ["kind"]


@admin.register(Prompt)
class PromptAdmin(admin.ModelAdmin):
    list_display = ["external_id", "dataset", "category", "language", "register"]
    list_filter = ["dataset", "category", "language"]
    search_fields = ["external_id"]
    list_select_related = ["dataset"]


@admin.register(Response)
class ResponseAdmin(admin.ModelAdmin):
    list_display = ["id", "prompt", "model_name", "origin", "created_at"]
    list_filter = ["origin", "model_name"]
    raw_id_fields = ["prompt"]


@admin.register(TranslationUnit)
class TranslationUnitAdmin(admin.ModelAdmin):
    list_display = ["external_id", "dataset", "source_language", "target_language", "register", "status"]
    list_filter = ["target_language", "register", "status"]
    raw_id_fields = ["translator"]


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["external_id", "dataset", "category", "concept", "language", "origin", "status"]
    list_filter = ["category", "origin", "status"]
    raw_id_fields = ["creator"]


@admin.register(DatasetImport)
class DatasetImportAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "file_format", "status", "created_by", "created_at", "finished_at"]
    list_filter = ["status"]


@admin.register(ImportMapping)
class ImportMappingAdmin(admin.ModelAdmin):
    list_display = ["name", "created_by", "updated_at"]
    search_fields = ["name"]
