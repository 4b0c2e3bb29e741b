"""Exports: one row per export of a project, with its options, counts, files and Hub location."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from datasets_app.models import JobRecord


class Export(JobRecord):
    """One export of a rating project: its options, what came out, and where it went.

    ``options`` holds every parameter the export used (pair strategy and filters, split, seed, format), so
    running an export with the same options on the same annotations gives the same rows.
    """

    class Kind(models.TextChoices):
        HF = "hf", _("Hugging Face dataset (preference pairs)")
        TRL_STRINGS = "trl-strings", _("TRL prompt/chosen/rejected as text")
        TRL_MESSAGES = "trl-messages", _("TRL prompt/chosen/rejected as messages")
        RAW_PARQUET = "raw-parquet", _("Raw annotations (Parquet)")
        RAW_CSV = "raw-csv", _("Raw annotations (CSV)")
        RAW_JSONL = "raw-jsonl", _("Raw annotations (JSON Lines)")
        PARALLEL_CORPUS = "parallel-corpus", _("Parallel corpus (Hugging Face dataset)")
        QUESTION_SET = "question-set", _("Question set (Hugging Face dataset)")
        ERROR_SPANS = "error-spans", _("Error spans (Hugging Face dataset)")
        MQM_TSV = "mqm-tsv", _("Error spans (MQM TSV file)")
        LABEL_STUDIO = "label-studio", _("Label Studio project (tasks and annotations as JSON)")
        ARENA_BATTLES = "arena-battles", _("Arena battles (Hugging Face dataset)")

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    project = models.ForeignKey(
        "annotation.Project", null=True, blank=True, on_delete=models.SET_NULL, related_name="exports"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.HF)
    strategy = models.CharField(max_length=30, blank=True, help_text="Pair strategy; empty for raw exports.")
    options = models.JSONField(default=dict, blank=True)
    filters = models.JSONField(default=dict, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0, help_text="Percent done.")
    stage = models.CharField(max_length=100, blank=True)
    folder_path = models.CharField(max_length=500, blank=True, help_text="Folder the files were written to.")
    zip_path = models.CharField(max_length=500, blank=True)
    hub_repo_id = models.CharField(max_length=200, blank=True)
    hub_private = models.BooleanField(default=True)
    hub_revision = models.CharField(max_length=64, blank=True, help_text="Commit sha returned by the Hub.")
    hub_url = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        # The table kept the name it had when exports lived in datasets_app.
        db_table = "datasets_app_export"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="export_project_created")]

    def __str__(self) -> str:
        return f"export {self.pk} ({self.kind}, {self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    @property
    def is_raw(self) -> bool:
        return self.kind.startswith("raw-")
