"""Input and output serializers of the evaluation API. No serializer ever carries an API key."""

from rest_framework import serializers

from evaluation.domain.judge_parsing import plain_score
from evaluation.models import (
    BenchmarkResult,
    BenchmarkRun,
    GenerationRun,
    JudgeRun,
    Judgment,
    ModelEndpoint,
    PairVerdict,
    RunStatus,
    validate_api_key_env,
    validate_base_url,
)

ENDPOINT_OUTPUT_FIELDS = [
    "id",
    "slug",
    "backend",
    "base_url",
    "model_id",
    "queue",
    "max_concurrency",
    "sampling_defaults",
    "backend_options",
    "api_key_env",
    "is_active",
    "family",
    "created_at",
    "updated_at",
]


class EndpointSerializer(serializers.ModelSerializer):
    class Meta:
        model = ModelEndpoint
        fields = ENDPOINT_OUTPUT_FIELDS
        read_only_fields = fields


class EndpointInputSerializer(serializers.Serializer):
    slug = serializers.SlugField(max_length=100)
    backend = serializers.ChoiceField(choices=ModelEndpoint.Backend.choices, default="openai")
    base_url = serializers.CharField(
        max_length=500,
        allow_blank=True,
        default="",
        validators=[validate_base_url],
        help_text="For OpenAI-compatible servers; its host must be allowed by MODEL_ENDPOINT_HOSTS when set.",
    )
    model_id = serializers.CharField(max_length=300)
    queue = serializers.CharField(max_length=120, default="default")
    max_concurrency = serializers.IntegerField(min_value=1, max_value=1024, default=8)
    sampling_defaults = serializers.DictField(default=dict)
    backend_options = serializers.DictField(default=dict)
    api_key_env = serializers.CharField(
        max_length=100,
        allow_blank=True,
        default="",
        validators=[validate_api_key_env],
        help_text="NAME of the environment variable holding the key; it must start with the deployment's "
        "MODEL_KEY_ENV_PREFIX (default TIMBANG_MODEL_KEY_) or be listed in MODEL_KEY_ENV_NAMES.",
    )
    is_active = serializers.BooleanField(default=True)
    family = serializers.CharField(
        max_length=100,
        allow_blank=True,
        default="",
        help_text="Model family (qwen, llama, ...), for the judge lab.",
    )


class EndpointUpdateSerializer(EndpointInputSerializer):
    def __init__(self, *args, **kwargs):
        kwargs["partial"] = True
        super().__init__(*args, **kwargs)


_RUN_FIELDS = [
    "id",
    "name",
    "status",
    "config",
    "n_total",
    "n_done",
    "n_failed",
    "progress_percent",
    "error",
    "created_at",
    "started_at",
    "finished_at",
]


class GenerationRunSerializer(serializers.ModelSerializer):
    endpoints = serializers.SlugRelatedField(many=True, read_only=True, slug_field="slug")

    class Meta:
        model = GenerationRun
        fields = [*_RUN_FIELDS, "dataset", "endpoints", "n_per_prompt"]
        read_only_fields = fields


class JudgeRunSerializer(serializers.ModelSerializer):
    endpoint = serializers.SlugRelatedField(read_only=True, slug_field="slug")
    template_version = serializers.IntegerField(source="template.version", read_only=True)
    template_language = serializers.CharField(source="template.language", read_only=True)

    class Meta:
        model = JudgeRun
        fields = [
            *_RUN_FIELDS,
            "judge_kind",
            "endpoint",
            "template",
            "template_version",
            "template_language",
            "source",
            "dataset",
            "annotation_project",
            "order_mode",
            "pairwise_family",
        ]
        read_only_fields = fields


class BenchmarkRunSerializer(serializers.ModelSerializer):
    endpoint = serializers.SlugRelatedField(read_only=True, slug_field="slug")
    judge_endpoint = serializers.SlugRelatedField(read_only=True, slug_field="slug")

    class Meta:
        model = BenchmarkRun
        fields = [*_RUN_FIELDS, "task", "mode", "endpoint", "dataset", "judge_endpoint"]
        read_only_fields = fields


class GenerationRunInputSerializer(serializers.Serializer):
    dataset = serializers.IntegerField()
    endpoints = serializers.ListField(child=serializers.SlugField(), min_length=1)
    n_per_prompt = serializers.IntegerField(min_value=1, max_value=100, default=1)
    name = serializers.CharField(max_length=200, allow_blank=True, default="")
    options = serializers.DictField(
        default=dict,
        help_text="sampling, seed, max_tokens, system_prompt (sent as the first chat message of every "
        "conversation), chunk_size, prompt_ids",
    )


class JudgeRunInputSerializer(serializers.Serializer):
    judge_kind = serializers.ChoiceField(choices=["pairwise", "single_grade", "factual"])
    endpoint = serializers.SlugField()
    dataset = serializers.IntegerField(required=False)
    annotation_project = serializers.IntegerField(required=False)
    template = serializers.IntegerField(
        required=False, help_text="A template id; default: latest default one."
    )
    order_mode = serializers.ChoiceField(choices=JudgeRun.OrderMode.choices, default="both")
    pairwise_family = serializers.ChoiceField(
        choices=JudgeRun.PairwiseFamily.choices,
        required=False,
        help_text="Pairwise judges: no_tie (Response 1 / Response 2) or with_tie (A / B / tie). "
        "Default: the template's family, or no_tie.",
    )
    name = serializers.CharField(max_length=200, allow_blank=True, default="")
    options = serializers.DictField(
        default=dict,
        help_text="language, sampling, seed, max_tokens, chunk_size, models, generation_run_ids, per_turn, "
        "structured_output, explanation_max_chars, on_one_error, samples (k verdicts per item, temperature > 0). Sampling: these values, else the "
        "template's sampling, else the endpoint's defaults (config.sampling_sources says which).",
    )


class BenchmarkRunInputSerializer(serializers.Serializer):
    task = serializers.ChoiceField(choices=BenchmarkRun.Task.choices)
    endpoint = serializers.SlugField()
    dataset = serializers.IntegerField()
    judge_endpoint = serializers.SlugField(required=False)
    mode = serializers.ChoiceField(
        choices=BenchmarkRun.Mode.choices,
        required=False,
        help_text="Multiple choice: chat, completion (base models), logprob (option letters) or cloze "
        "(option texts). Default: chat, or logprob when options.scoring is logprob.",
    )
    name = serializers.CharField(max_length=200, allow_blank=True, default="")
    options = serializers.DictField(default=dict)


class CancelResultSerializer(serializers.Serializer):
    cancelled = serializers.BooleanField()
    status = serializers.ChoiceField(choices=RunStatus.choices)


class RetryResultSerializer(serializers.Serializer):
    queued = serializers.IntegerField(help_text="Items without a result queued again (0: nothing to retry).")
    status = serializers.ChoiceField(choices=RunStatus.choices)


JUDGMENT_FIELDS = [
    "id",
    "target_key",
    "prompt",
    "response_a",
    "response_b",
    "turn",
    "annotation_task_id",
    "order",
    "sample",
    "template_kind",
    "template_version",
    "parse_status",
    "parse_reason",
    "shown_verdict",
    "verdict",
    "score",
    "explanation",
    "raw_output",
    "latency_s",
    "prompt_tokens",
    "completion_tokens",
]


class ScoreField(serializers.FloatField):
    """A graded judge's score: a whole one as an integer (7), any other as a decimal (7.5); null for none."""

    def to_representation(self, value):
        return plain_score(float(value))


class JudgmentSerializer(serializers.ModelSerializer):
    score = ScoreField(read_only=True, allow_null=True)

    class Meta:
        model = Judgment
        fields = JUDGMENT_FIELDS
        read_only_fields = fields


PAIR_VERDICT_FIELDS = [
    "id",
    "target_key",
    "prompt",
    "response_a",
    "response_b",
    "turn",
    "annotation_task_id",
    "verdict",
    "consistency",
    "sample",
    "reason",
]


class PairVerdictSerializer(serializers.ModelSerializer):
    class Meta:
        model = PairVerdict
        fields = PAIR_VERDICT_FIELDS
        read_only_fields = fields


BENCHMARK_RESULT_FIELDS = [
    "id",
    "item_key",
    "question",
    "prompt",
    "unit",
    "category",
    "language",
    "register",
    "variant",
    "prediction",
    "reference",
    "correct",
    "score",
    "latency_s",
    "prompt_tokens",
    "completion_tokens",
]


class BenchmarkResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = BenchmarkResult
        fields = [*BENCHMARK_RESULT_FIELDS, "raw"]
        read_only_fields = fields
