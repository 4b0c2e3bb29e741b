from django.contrib import admin

from annotation.models import (
    Annotation,
    AnnotatorGroup,
    Assignment,
    AttentionCheck,
    ConceptPair,
    ErrorSpan,
    FlagRecompute,
    Membership,
    Project,
    QuestionErrorReview,
    QuestionRound,
    Review,
    Rubric,
    SpanSuggestion,
    StudyImport,
    Task,
    TaskSlot,
    TranslationRound,
)


@admin.register(Rubric)
class RubricAdmin(admin.ModelAdmin):
    list_display = ["criterion", "category", "version", "scale", "created_at"]
    list_filter = ["criterion", "category"]


class GroupInline(admin.TabularInline):
    model = AnnotatorGroup
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "dataset", "status", "overlap", "n_tasks", "created_at"]
    list_filter = ["kind", "status"]
    search_fields = ["name"]
    inlines = [GroupInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "project", "group", "n_served", "added_at"]
    list_filter = ["project"]
    raw_id_fields = ["user"]


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "prompt", "turn", "is_gold"]
    list_filter = ["project", "is_gold"]
    raw_id_fields = ["prompt", "response_a", "response_b", "translation_unit", "question", "concept_pair"]


@admin.register(TaskSlot)
class TaskSlotAdmin(admin.ModelAdmin):
    """Read-only: the counts change only through the claim, submit, skip and review services."""

    list_display = ["id", "task", "group", "capacity", "open_count", "active_count", "submitted_count"]
    list_filter = ["project"]
    readonly_fields = [f.name for f in TaskSlot._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(AnnotatorGroup)
class AnnotatorGroupAdmin(admin.ModelAdmin):
    list_display = ["name", "project"]
    list_filter = ["project"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "task", "annotator", "group", "status", "round", "lease_expires_at"]
    list_filter = ["project", "status"]
    raw_id_fields = ["task", "slot", "annotator"]


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["id", "assignment", "round", "criterion", "value_int", "choice", "response"]
    list_filter = ["criterion"]
    raw_id_fields = ["assignment", "response"]


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ["id", "assignment", "reviewer", "verdict", "round", "created_at"]
    list_filter = ["verdict"]
    raw_id_fields = ["assignment", "annotation"]


@admin.register(ConceptPair)
class ConceptPairAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "category", "concept", "language"]
    list_filter = ["project", "language"]
    search_fields = ["concept", "category"]


@admin.register(TranslationRound)
class TranslationRoundAdmin(admin.ModelAdmin):
    list_display = ["id", "unit", "round", "translator", "reviewer", "verdict", "reviewed_at"]
    list_filter = ["verdict"]
    raw_id_fields = ["unit", "translator", "reviewer", "translation_assignment", "review_assignment"]


@admin.register(QuestionRound)
class QuestionRoundAdmin(admin.ModelAdmin):
    list_display = ["id", "question", "round", "author", "reviewer", "verdict", "reviewed_at"]
    list_filter = ["verdict"]
    raw_id_fields = ["question", "assignment", "author", "reviewer"]


@admin.register(QuestionErrorReview)
class QuestionErrorReviewAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "question", "reviewer", "errors", "updated_at"]
    list_filter = ["project"]
    raw_id_fields = ["question", "reviewer"]


@admin.register(FlagRecompute)
class FlagRecomputeAdmin(admin.ModelAdmin):
    """Read-only: runs are started from the project page or the API."""

    list_display = ["id", "project", "status", "done", "total", "n_flagged", "created_at", "finished_at"]
    list_filter = ["status"]
    readonly_fields = [f.name for f in FlagRecompute._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(StudyImport)
class StudyImportAdmin(admin.ModelAdmin):
    """Read-only: imports are started from the study import page, the API or ``import_study``."""

    list_display = ["id", "name", "tool", "status", "project", "n_errors", "created_at", "finished_at"]
    list_filter = ["status", "tool"]
    readonly_fields = [f.name for f in StudyImport._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(SpanSuggestion)
class SpanSuggestionAdmin(admin.ModelAdmin):
    list_display = ["id", "task", "source", "side", "start", "end", "category", "severity"]
    list_filter = ["source", "severity"]
    raw_id_fields = ["task"]


@admin.register(ErrorSpan)
class ErrorSpanAdmin(admin.ModelAdmin):
    list_display = ["id", "assignment", "round", "side", "start", "end", "category", "severity", "outcome"]
    list_filter = ["severity", "origin", "outcome"]
    raw_id_fields = ["assignment", "suggestion"]


@admin.register(AttentionCheck)
class AttentionCheckAdmin(admin.ModelAdmin):
    list_display = ["id", "task", "kind", "start", "end", "category", "severity", "note"]
    list_filter = ["kind"]
    raw_id_fields = ["task"]
