from django.contrib import admin

from arena.models import Arena, Battle, BattleAnswer


@admin.register(Arena)
class ArenaAdmin(admin.ModelAdmin):
    list_display = ("project", "reveal", "sampler", "max_turns", "battles_per_hour", "timeout_s")
    filter_horizontal = ("endpoints",)


class BattleAnswerInline(admin.TabularInline):
    model = BattleAnswer
    extra = 0
    fields = ("turn", "side", "status", "n_tokens", "ttft_ms", "duration_ms", "error")
    readonly_fields = fields


@admin.register(Battle)
class BattleAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "user", "endpoint_a", "endpoint_b", "status", "vote", "created_at")
    list_filter = ("status", "project")
    readonly_fields = ("token", "prompt", "response_a", "response_b", "task", "assignment")
    inlines = [BattleAnswerInline]


@admin.register(BattleAnswer)
class BattleAnswerAdmin(admin.ModelAdmin):
    list_display = ("battle", "turn", "side", "status", "n_tokens", "ttft_ms")
    list_filter = ("status",)
