"""Input and output shapes of the annotation API. Annotator-facing outputs carry no model name,
response id, prompt id or dataset meta: they are built from ``selectors.TaskView`` only."""

from django.contrib.auth import get_user_model
from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models import FlagRecompute, Membership, Project, StudyImport
from datasets_app.models import Dataset
from datasets_app.serializers import UploadField


class AnnotatorProjectSerializer(serializers.Serializer):
    """One of an annotator's projects, as ``annotation.selectors.annotator_projects`` reads it."""

    id = serializers.IntegerField(source="project.pk")
    name = serializers.CharField(source="project.name")
    kind = serializers.CharField(source="project.kind")
    status = serializers.CharField(source="project.status")
    group = serializers.CharField(source="group_name")
    done = serializers.IntegerField(help_text="Tasks you have submitted.")
    total = serializers.IntegerField(help_text="Tasks in the project.")
    percent = serializers.IntegerField()
    next_url = serializers.SerializerMethodField(help_text="Where to claim your next task.")

    def get_next_url(self, obj) -> str:
        return reverse("api-next-task", kwargs={"project_id": obj.project.pk})


class ProjectSerializer(serializers.ModelSerializer):
    groups = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = [
            "id",
            "name",
            "description",
            "kind",
            "dataset",
            "criteria",
            "rubric_versions",
            "best_pick",
            "allow_all_bad",
            "overlap",
            "seed",
            "lease_minutes",
            "allow_edits",
            "instructions_id",
            "instructions_en",
            "status",
            "pair_mode",
            "pairs_per_prompt",
            "turn_mode",
            "gold_rate",
            "n_tasks",
            "max_ambiguous",
            "flag_settings",
            "span_settings",
            "groups",
            "created_at",
        ]

    def get_groups(self, project) -> list[str]:
        return [group.name for group in project.groups.all()]


class ProjectCreateInputSerializer(serializers.Serializer):
    dataset = serializers.PrimaryKeyRelatedField(
        queryset=Dataset.objects.all(), required=False, allow_null=True
    )
    name = serializers.CharField(max_length=200)
    kind = serializers.ChoiceField(choices=Project.Kind.choices)
    criteria = serializers.ListField(child=serializers.CharField(max_length=40), required=False)
    best_pick = serializers.ChoiceField(choices=Project.BestPick.choices, default="off")
    allow_all_bad = serializers.BooleanField(default=False)
    overlap = serializers.IntegerField(min_value=1, max_value=50, default=3)
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, required=False, allow_null=True)
    lease_minutes = serializers.IntegerField(min_value=1, max_value=7 * 24 * 60, default=30)
    allow_edits = serializers.BooleanField(default=True)
    instructions_id = serializers.CharField(required=False, allow_blank=True, default="")
    instructions_en = serializers.CharField(required=False, allow_blank=True, default="")
    description = serializers.CharField(required=False, allow_blank=True, default="")
    pair_mode = serializers.ChoiceField(choices=Project.PairMode.choices, default="all")
    pairs_per_prompt = serializers.IntegerField(min_value=1, default=3)
    turn_mode = serializers.ChoiceField(choices=Project.TurnMode.choices, default="overall")
    gold_rate = serializers.FloatField(min_value=0, max_value=1, default=0)
    groups = serializers.ListField(child=serializers.CharField(max_length=100), default=["A"], min_length=1)
    max_ambiguous = serializers.IntegerField(min_value=0, max_value=50, default=3)
    flag_settings = serializers.DictField(required=False)
    span_settings = serializers.DictField(required=False)

    def validate(self, data):
        if data.get("dataset") is None and data.get("kind") != Project.Kind.QUESTION_AUTHORING:
            raise serializers.ValidationError({"dataset": "This field is required."})
        return data


class ProjectUpdateInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    description = serializers.CharField(required=False, allow_blank=True)
    instructions_id = serializers.CharField(required=False, allow_blank=True)
    instructions_en = serializers.CharField(required=False, allow_blank=True)
    lease_minutes = serializers.IntegerField(min_value=1, max_value=7 * 24 * 60, required=False)
    allow_edits = serializers.BooleanField(required=False)
    gold_rate = serializers.FloatField(min_value=0, max_value=1, required=False)
    best_pick = serializers.ChoiceField(choices=Project.BestPick.choices, required=False)
    allow_all_bad = serializers.BooleanField(required=False)
    overlap = serializers.IntegerField(min_value=1, max_value=50, required=False)
    max_ambiguous = serializers.IntegerField(min_value=0, max_value=50, required=False)
    flag_settings = serializers.DictField(required=False)
    span_settings = serializers.DictField(required=False)


class ProjectStatusInputSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["activate", "pause", "close"])


class MemberSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")
    group = serializers.CharField(source="group.name")

    class Meta:
        model = Membership
        fields = ["user", "username", "group", "added_at"]


class MemberAddInputSerializer(serializers.Serializer):
    user = serializers.SlugRelatedField(slug_field="username", queryset=get_user_model().objects.all())
    group = serializers.CharField(max_length=100, help_text="Group name; created when missing.")


class MemberRemoveInputSerializer(serializers.Serializer):
    user = serializers.SlugRelatedField(slug_field="username", queryset=get_user_model().objects.all())


class ShownResponseSerializer(serializers.Serializer):
    number = serializers.IntegerField(help_text="1-based position on screen.")
    label = serializers.CharField()
    turns = serializers.ListField(child=serializers.CharField(allow_blank=True))


class CriterionSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.DictField(child=serializers.CharField())
    question = serializers.DictField(child=serializers.CharField())
    rubric_version = serializers.IntegerField()
    levels = serializers.DictField(child=serializers.DictField(child=serializers.CharField()))
    scale = serializers.DictField(
        help_text='{"points": 7} (values 1..7) or {"categories": [{"value": "yes", "label": {"id", "en"}}, ...]}.'
    )


class NextTaskSerializer(serializers.Serializer):
    """A blinded task. ``task`` is the assignment's opaque token, used in the annotations URL."""

    task = serializers.CharField()
    kind = serializers.CharField()
    status = serializers.CharField()
    round = serializers.IntegerField()
    project = serializers.DictField()
    instructions = serializers.DictField(child=serializers.CharField(allow_blank=True))
    prompt = serializers.DictField()
    responses = ShownResponseSerializer(many=True)
    criteria = CriterionSerializer(many=True)
    best_pick = serializers.CharField()
    allow_all_bad = serializers.BooleanField()
    judged_turn = serializers.IntegerField(allow_null=True)
    progress = serializers.DictField(child=serializers.IntegerField())
    lease_expires_at = serializers.DateTimeField(allow_null=True)
    current = serializers.DictField()
    review_comment = serializers.CharField(allow_blank=True)


class AnnotationInputSerializer(serializers.Serializer):
    """Answer in the positions the annotator saw; validated by ``annotation.domain.submission``.

    Likert: ``{"ratings": {"1": {"relevance": 4, "fluency": 5}, ...}, "best": 2, "comment": ""}``;
    best-of-N: ``{"best": 3}``; pairwise: ``{"vote": "A" | "B" | "tie" | "both_bad", "rationale": ""}``.
    """

    answer = serializers.DictField(help_text="The answer object described above.")
    seconds = serializers.FloatField(required=False, min_value=0, help_text="Time the task was in view.")


class AnnotationResultSerializer(serializers.Serializer):
    task = serializers.CharField()
    status = serializers.CharField()
    outcome = serializers.ChoiceField(choices=["created", "unchanged", "edited"])
    next = NextTaskSerializer(
        required=False, allow_null=True, help_text="With ?next=1: the caller's next task, null when done."
    )
    next_detail = serializers.CharField(
        required=False, help_text="With ?next=1: why no next task was claimed, when the project refused."
    )


class SkipInputSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=500, allow_blank=True, default="")


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = serializers.DictField(required=False)


class ProgressSerializer(serializers.Serializer):
    project = serializers.DictField(allow_null=True)
    groups = serializers.ListField(child=serializers.DictField())
    annotators = serializers.ListField(child=serializers.DictField())


class ConceptPairItemSerializer(serializers.Serializer):
    category = serializers.CharField(max_length=100)
    concept = serializers.CharField(max_length=200)
    language = serializers.CharField(max_length=3, required=False)


class ConceptPairsInputSerializer(serializers.Serializer):
    pairs = ConceptPairItemSerializer(many=True, allow_empty=False)
    language = serializers.CharField(max_length=3, default="ind", help_text="For pairs without a language.")


class MqmImportInputSerializer(serializers.Serializer):
    """A WMT/Anthea MQM TSV file as its text (JSON) or as an uploaded ``file`` (multipart)."""

    text = serializers.CharField(required=False, trim_whitespace=False, help_text="The TSV file's text.")
    file = serializers.FileField(required=False, help_text="Or the file itself (multipart).")
    name = serializers.CharField(max_length=200)
    source_language = serializers.RegexField(r"^[a-z]{3}$", help_text="ISO 639-3 code, e.g. eng.")
    target_language = serializers.RegexField(r"^[a-z]{3}$", help_text="ISO 639-3 code, e.g. ind.")
    protocol = serializers.ChoiceField(choices=("mqm", "esa"), default="mqm")
    rater_prefix = serializers.CharField(max_length=60, required=False, default="")

    def validate(self, attrs: dict) -> dict:
        if bool(attrs.get("text")) == bool(attrs.get("file")):
            raise serializers.ValidationError({"text": "Give the file's text or the file, one of the two."})
        if attrs.get("file"):
            try:
                attrs["text"] = b"".join(attrs.pop("file").chunks()).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise serializers.ValidationError({"file": f"Not UTF-8 text (byte {exc.start})."}) from exc
        return attrs


class FlagRecomputeSerializer(serializers.ModelSerializer):
    class Meta:
        model = FlagRecompute
        fields = [
            "id",
            "project",
            "status",
            "total",
            "done",
            "n_flagged",
            "error",
            "attempts",
            "cancel_requested",
            "created_at",
            "started_at",
            "finished_at",
        ]


class ToolStudyImportInputSerializer(serializers.Serializer):
    tool = serializers.ChoiceField(choices=["label_studio", "argilla", "potato"])
    file = UploadField(
        help_text="Label Studio: the JSON export. Argilla: the dataset folder as a .zip. Potato: the "
        "annotation_output folder as a .zip."
    )
    name = serializers.CharField(max_length=200, help_text="Name of the new dataset and project.")
    language = serializers.CharField(max_length=3, default="ind", help_text="ISO 639-3 code of the items.")
    prompt_field = serializers.CharField(required=False, allow_blank=True, max_length=200)
    response_field = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, help_text="Response fields, in order."
    )
    item_id_field = serializers.CharField(required=False, allow_blank=True, max_length=200)
    dry_run = serializers.BooleanField(
        default=False, help_text="Check and describe the study; write nothing."
    )


class StudyProblemSerializer(serializers.Serializer):
    file = serializers.CharField()
    record = serializers.CharField()
    field = serializers.CharField()
    message = serializers.CharField()


class StudyImportProgressSerializer(serializers.Serializer):
    step = serializers.ChoiceField(
        choices=["read", "items", "project", "annotators", "answers"], help_text="The step under way."
    )
    done = serializers.IntegerField(help_text="Steps finished.")
    total = serializers.IntegerField(help_text="Steps in all.")


class StudyImportSerializer(serializers.ModelSerializer):
    """A study import: queued, running (with the step it is at), or ended with its project or every
    problem found. ``project`` ... ``counts`` are those of the synchronous import's answer, filled in
    once it succeeded."""

    url = serializers.SerializerMethodField()
    dataset = serializers.SerializerMethodField()
    errors = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()

    class Meta:
        model = StudyImport
        fields = [
            "id",
            "url",
            "status",
            "project",
            "dataset",
            "name",
            "kind",
            "tool",
            "tool_version",
            "language",
            "criteria",
            "counts",
            "errors",
            "n_errors",
            "progress",
            "attempts",
            "cancel_requested",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_url(self, job) -> str:
        return reverse("api-study-import-detail", kwargs={"import_id": job.pk})

    def get_dataset(self, job) -> int | None:
        return job.project.dataset_id if job.project_id else None

    @extend_schema_field(StudyProblemSerializer(many=True))
    def get_errors(self, job) -> list[dict]:
        keys = ("file", "record", "field", "message")
        return [{k: str(e.get(k, "")) for k in keys} for e in job.errors or []]

    @extend_schema_field(StudyImportProgressSerializer(allow_null=True))
    def get_progress(self, job) -> dict | None:
        return self.context.get("progress")


class ToolStudyErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = StudyProblemSerializer(many=True)
    n_errors = serializers.IntegerField()


class ReviewItemSerializer(serializers.Serializer):
    """Submitted work waiting in the review queue (ids and who did it; the work itself is on the page)."""

    assignment = serializers.IntegerField(source="pk")
    project = serializers.IntegerField(source="project_id")
    kind = serializers.CharField(source="project.kind")
    annotator = serializers.CharField(source="annotator.username")
    group = serializers.CharField(source="group.name", allow_null=True)
    round = serializers.IntegerField()
    submitted_at = serializers.DateTimeField()


class ReviewInputSerializer(serializers.Serializer):
    assignment = serializers.IntegerField(min_value=1)
    verdict = serializers.ChoiceField(choices=["accept", "reject"])
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=4000)


class ReviewSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    assignment = serializers.IntegerField(source="assignment_id")
    verdict = serializers.CharField()
    comment = serializers.CharField(allow_blank=True)
    round = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class AttentionChecksInSerializer(serializers.Serializer):
    """An error-span project's attention checks; ranges and kinds are checked with the project's span
    settings (``span_settings.check_settings_from_json``)."""

    share = serializers.FloatField()
    kinds = serializers.ListField(child=serializers.CharField(max_length=40), required=False)
    match_category = serializers.BooleanField(required=False, default=False)


class AttentionChecksOutSerializer(serializers.Serializer):
    added = serializers.IntegerField()
    checks = serializers.IntegerField()
    attention_checks = serializers.DictField()
