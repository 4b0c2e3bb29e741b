from django.contrib import admin

from exports.models import Export


@admin.register(Export)
class ExportAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "kind", "strategy", "status", "progress", "created_by", "created_at"]
    list_filter = ["status", "kind"]
    raw_id_fields = ["project", "created_by"]
    readonly_fields = ["options", "filters", "counts", "hub_revision", "started_at", "finished_at"]
