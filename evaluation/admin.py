from django.contrib import admin

from evaluation.models import (
    BenchmarkResult,
    BenchmarkRun,
    CategoryAspects,
    GenerationRun,
    JudgeRun,
    JudgeTemplate,
    Judgment,
    ModelEndpoint,
    PairVerdict,
    PromptTemplate,
    RunChunk,
    SpanJudgment,
)
from evaluation.services.judging import judge_template_update

RUN_FIELDS = ("id", "name", "status", "n_total", "n_done", "n_failed", "created_at", "finished_at")


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(admin.ModelAdmin):
    list_display = (
        "slug",
        "backend",
        "model_id",
        "base_url",
        "queue",
        "max_concurrency",
        "api_key_env",
        "is_active",
    )
    list_filter = ("backend", "queue", "is_active")
    search_fields = ("slug", "model_id")


@admin.register(JudgeTemplate)
class JudgeTemplateAdmin(admin.ModelAdmin):
    """Templates are versioned: saving an edited one here (its system message, user text or sampling) creates
    a new version (see ``save_model``)."""

    list_display = ("name", "kind", "language", "version", "created_at")
    list_filter = ("kind", "language")

    def save_model(self, request, obj, form, change):
        if change:
            original = JudgeTemplate.objects.get(pk=obj.pk)
            judge_template_update(
                template=original,
                system=obj.system,
                user=obj.user,
                sampling=obj.sampling or {},
                editor=request.user,
            )
            return
        obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    list_display = ("slug", "task", "language", "note", "created_at")
    list_filter = ("task", "language")
    search_fields = ("slug", "note", "body")


@admin.register(CategoryAspects)
class CategoryAspectsAdmin(admin.ModelAdmin):
    list_display = ("category", "language", "project", "updated_at")
    list_filter = ("language",)


@admin.register(GenerationRun)
class GenerationRunAdmin(admin.ModelAdmin):
    list_display = RUN_FIELDS
    list_filter = ("status",)
    readonly_fields = ("n_total", "n_done", "n_failed", "started_at", "finished_at")


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = (*RUN_FIELDS, "judge_kind", "endpoint")
    list_filter = ("status", "judge_kind")
    readonly_fields = ("n_total", "n_done", "n_failed", "started_at", "finished_at")


@admin.register(BenchmarkRun)
class BenchmarkRunAdmin(admin.ModelAdmin):
    list_display = (*RUN_FIELDS, "task", "endpoint")
    list_filter = ("status", "task")
    readonly_fields = ("n_total", "n_done", "n_failed", "started_at", "finished_at")


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ("id", "judge_run", "target_key", "order", "parse_status", "verdict", "score")
    list_filter = ("parse_status", "order")
    raw_id_fields = ("judge_run", "prompt", "response_a", "response_b")


@admin.register(PairVerdict)
class PairVerdictAdmin(admin.ModelAdmin):
    list_display = ("id", "judge_run", "target_key", "verdict", "consistency")
    raw_id_fields = ("judge_run", "prompt", "response_a", "response_b")


@admin.register(BenchmarkResult)
class BenchmarkResultAdmin(admin.ModelAdmin):
    list_display = ("id", "benchmark_run", "item_key", "prediction", "correct", "score")
    raw_id_fields = ("benchmark_run", "question", "prompt", "unit")


@admin.register(RunChunk)
class RunChunkAdmin(admin.ModelAdmin):
    list_display = ("id", "run_kind", "run_id", "index", "status", "n_done", "n_failed", "attempts")
    list_filter = ("run_kind", "status")


@admin.register(SpanJudgment)
class SpanJudgmentAdmin(admin.ModelAdmin):
    list_display = ("id", "task", "endpoint", "parse_status", "n_spans", "n_dropped", "updated_at")
    list_filter = ("parse_status",)
    raw_id_fields = ("task",)
