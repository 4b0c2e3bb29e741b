"""What is judged: datasets, prompts, responses, translation units, questions, and their imports."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class JobRecord(models.Model):
    """What every background job row keeps for the job framework (``datasets_app.jobs``): the deliveries
    that took it, the Celery id of the delivery meant to run it, a cancel asked for while it runs, when its
    worker was last heard from once found stopped, who asked for it and when it was made, started and
    ended. Imports, exports, flag recomputes and study imports are such rows."""

    attempts = models.PositiveSmallIntegerField(default=0)
    task_id = models.CharField(max_length=64, blank=True)
    cancel_requested = models.BooleanField(default=False)
    worker_stopped_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class Dataset(models.Model):
    class Kind(models.TextChoices):
        PROMPTS = "prompts", _("Prompts and responses")
        TRANSLATIONS = "translations", _("Translation units")
        QUESTIONS = "questions", _("Questions")

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.PROMPTS)
    description = models.TextField(blank=True)
    license = models.CharField(max_length=100, blank=True)
    source = models.CharField(
        max_length=500, blank=True, help_text="Where the data came from (file, URL, study)."
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class Prompt(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="prompts")
    external_id = models.CharField(max_length=200)
    category = models.CharField(max_length=100, blank=True)
    language = models.CharField(max_length=3, help_text="ISO 639-3 code, e.g. ind, sun, jav.")
    register = models.CharField(max_length=40, blank=True)
    turns = models.JSONField(help_text="User messages, one per turn.")
    references = models.JSONField(default=list, blank=True, help_text="Reference answer per turn, or empty.")
    meta = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["dataset", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "external_id"], name="uniq_prompt_external_id_per_dataset"
            )
        ]
        indexes = [
            models.Index(fields=["dataset", "category"], name="prompt_dataset_category"),
            models.Index(fields=["dataset", "language"], name="prompt_dataset_language"),
        ]

    def __str__(self) -> str:
        return f"{self.dataset_id}:{self.external_id}"

    @property
    def n_turns(self) -> int:
        return len(self.turns)


class Response(models.Model):
    class Origin(models.TextChoices):
        IMPORTED = "imported", _("Imported")
        GENERATED = "generated", _("Generated")

    prompt = models.ForeignKey(Prompt, on_delete=models.CASCADE, related_name="responses")
    model_name = models.CharField(max_length=200)
    turns = models.JSONField(help_text="Assistant messages, one per turn.")
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.IMPORTED)
    generation_run = models.ForeignKey(
        "evaluation.GenerationRun",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="responses",
    )
    meta = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["prompt", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["prompt", "model_name"],
                condition=models.Q(origin="imported"),
                name="uniq_imported_response_per_model",
            ),
            models.UniqueConstraint(
                fields=["prompt", "model_name", "generation_run"],
                condition=models.Q(origin="generated"),
                name="uniq_generated_response_per_run",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prompt_id}:{self.model_name}"


class TranslationUnit(models.Model):
    class Status(models.TextChoices):
        TO_TRANSLATE = "to_translate", _("To translate")
        TO_REVIEW = "to_review", _("To review")
        REVISE = "revise", _("Returned for revision")
        ACCEPTED = "accepted", _("Accepted")

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="translation_units")
    external_id = models.CharField(max_length=200)
    source_text = models.TextField()
    source_language = models.CharField(max_length=3, default="ind")
    target_language = models.CharField(max_length=3)
    register = models.CharField(max_length=40, blank=True)
    translation_text = models.TextField(blank=True)
    translator_name = models.CharField(max_length=200, blank=True, help_text="As given in the imported file.")
    translator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.TO_TRANSLATE)
    flags = models.JSONField(default=list, blank=True)
    meta = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["dataset", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "external_id"], name="uniq_unit_external_id_per_dataset"
            )
        ]
        indexes = [models.Index(fields=["dataset", "target_language"], name="unit_dataset_target")]

    def __str__(self) -> str:
        return f"{self.dataset_id}:{self.external_id}"


class Question(models.Model):
    class Origin(models.TextChoices):
        HUMAN = "human", _("Written by a person")
        LLM = "llm", _("Generated by a model")

    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        IN_REVIEW = "in_review", _("In review")
        RETURNED = "returned", _("Returned to author")
        ACCEPTED = "accepted", _("Accepted")
        EXCLUDED = "excluded", _("Excluded")

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="questions")
    external_id = models.CharField(max_length=200)
    concept = models.CharField(max_length=200, blank=True)
    category = models.CharField(max_length=100, blank=True)
    language = models.CharField(max_length=3)
    text = models.TextField()
    choices = models.JSONField(help_text='Options keyed "A" to "E".')
    answer_key = models.CharField(max_length=1)
    distractor = models.CharField(max_length=1, blank=True)
    creator_name = models.CharField(max_length=200, blank=True, help_text="As given in the imported file.")
    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.HUMAN)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACCEPTED)
    meta = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["dataset", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "external_id"], name="uniq_question_external_id_per_dataset"
            )
        ]

    def __str__(self) -> str:
        return f"{self.dataset_id}:{self.external_id}"


class DatasetImport(JobRecord):
    """One import attempt, run in the request or by a worker; keeps its errors."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, blank=True, help_text="Empty: detected from the first record.")
    file_format = models.CharField(max_length=10)
    # The column mapping the file was read with (datasets_app.domain.column_mapping), empty for none.
    mapping = models.JSONField(default=dict, blank=True)
    # The new dataset's description and licence, given with the upload and kept for the worker.
    description = models.TextField(blank=True)
    license = models.CharField(max_length=100, blank=True)
    # A Hugging Face Hub dataset read by the worker instead of an upload: {dataset, config, split, revision}.
    hub = models.JSONField(default=dict, blank=True)
    replace = models.BooleanField(default=False)
    upload_path = models.CharField(max_length=500)
    original_filename = models.CharField(max_length=300, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    dataset = models.ForeignKey(
        Dataset, null=True, blank=True, on_delete=models.SET_NULL, related_name="imports"
    )
    counts = models.JSONField(default=dict, blank=True)
    errors = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"import {self.pk} ({self.name}, {self.status})"


class ImportMapping(models.Model):
    """A column mapping saved under a name, to read the next file of the same shape the same way."""

    name = models.CharField(max_length=100, unique=True)
    mapping = models.JSONField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
