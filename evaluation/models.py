"""Model endpoints, inference / judge / benchmark runs and their result rows.

A run is planned into :class:`RunChunk` rows when it starts; every chunk is one Celery task on the queue of
the endpoint that serves it. A chunk writes its results and adds its counts to the run in one transaction
guarded by the chunk's own status, so a chunk delivered twice (a worker killed before it acknowledged the
message) neither duplicates a result nor counts one twice.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy as _

from evaluation.domain.endpoint_policy import (
    EndpointPolicy,
    Refusal,
    api_key_env_refusal,
    base_url_refusal,
)
from evaluation.domain.judge_templates import FACTUAL, NO_TIE, PAIRWISE, SINGLE_GRADE, WITH_TIE
from evaluation.domain.sampling import SamplingParamsError, checked_template_sampling

ENV_VAR_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,99}$")
QUEUE_NAME = re.compile(r"^(default|gpu\.[a-z0-9][a-z0-9_-]*)$")
# Prefixes of credentials people paste by mistake (OpenAI, Hugging Face, AWS, GitHub, Slack, Google, Groq).
# Case-sensitive, so HF_TOKEN (a variable name) is not mistaken for hf_... (a token).
_KEY_PREFIXES = ("sk-", "sk_", "hf_", "AKIA", "ASIA", "ghp_", "gho_", "github_pat_", "xox", "AIza", "gsk_")

# Options an endpoint may pass to its backend's constructor, per backend (each a keyword argument there).
BACKEND_OPTIONS: dict[str, frozenset[str]] = {
    "openai": frozenset(
        {
            "timeout_s",
            "max_attempts",
            "backoff_base_s",
            "backoff_max_s",
            "retry_after_max_s",
            "structured_output",
            "send_top_k",
            "strict_schema",
            "extra_body",
            "extra_headers",
        }
    ),
    "transformers": frozenset({"device", "dtype", "batch_size", "local_files_only", "trust_remote_code"}),
    "llamacpp": frozenset({"n_ctx", "n_threads", "n_batch", "chat_format", "reuse_prompt_cache"}),
    "vllm": frozenset(
        {
            "tensor_parallel_size",
            "dtype",
            "gpu_memory_utilization",
            "max_model_len",
            "seed",
            "trust_remote_code",
        }
    ),
}


def looks_like_secret(value: str) -> bool:
    """True for strings that look like a credential rather than the name of an environment variable."""
    text = value.strip()
    lowered = text.lower()
    if text.startswith(_KEY_PREFIXES) or lowered.startswith("bearer "):
        return True
    if (
        len(text) >= 16
        and "_" not in text
        and any(c.isdigit() for c in text)
        and any(c.isalpha() for c in text)
    ):
        return True  # a long run of mixed letters and digits with no word separators: a token, not a name
    return len(text) >= 32 and not ENV_VAR_NAME.match(text)


def endpoint_policy() -> EndpointPolicy:
    """The deployment's allow-lists of key variables and endpoint hosts (see docs/deployment.md)."""
    return EndpointPolicy.build(
        key_prefix=settings.MODEL_KEY_ENV_PREFIX,
        key_names=settings.MODEL_KEY_ENV_NAMES,
        hosts=settings.MODEL_ENDPOINT_HOSTS,
    )


_REFUSAL_MESSAGES = {
    "reserved_key_env": _(
        "API key variable (api_key_env): %(value)s holds one of Timbang's own secrets and is never sent to a "
        "model server. Allowed: %(rule)s."
    ),
    "key_env_not_allowed": _(
        "API key variable (api_key_env): the environment variable %(value)s is not allowed. Allowed: "
        "%(rule)s (settings MODEL_KEY_ENV_PREFIX and MODEL_KEY_ENV_NAMES)."
    ),
    "bad_url": _(
        "Base URL (base_url): %(value)s is not an http(s) URL with a plain host name. Allowed hosts: "
        "%(rule)s (setting MODEL_ENDPOINT_HOSTS)."
    ),
    "host_not_allowed": _(
        "Base URL (base_url): the host of %(value)s is not allowed. Allowed hosts: %(rule)s "
        "(setting MODEL_ENDPOINT_HOSTS)."
    ),
}


def _key_rule(policy: EndpointPolicy) -> str:
    """The key rule in the active language (the domain's ``key_rule()`` is the English one for logs)."""
    parts = []
    if policy.key_prefix:
        parts.append(_("names that start with %(prefix)s") % {"prefix": policy.key_prefix})
    if policy.key_names:
        parts.append(_("one of %(names)s") % {"names": ", ".join(sorted(policy.key_names))})
    if not parts:
        return str(_("no variable at all in this deployment"))
    return str(_(" or ")).join(str(part) for part in parts)


def refusal_error(refusal: Refusal, policy: EndpointPolicy) -> ValidationError:
    """A translated ``ValidationError`` for a refusal of the endpoint policy."""
    # Lazy like the message, so both are rendered in the language active when the error is shown.
    rule = lazy(_key_rule, str)(policy) if refusal.field == "api_key_env" else refusal.rule
    return ValidationError(
        _REFUSAL_MESSAGES[refusal.code], code=refusal.code, params={"value": refusal.value, "rule": rule}
    )


def validate_base_url(value: str) -> None:
    """The host of ``value`` must be on the deployment's list of endpoint hosts, when it has one."""
    policy = endpoint_policy()
    refusal = base_url_refusal(value, policy)
    if refusal is not None:
        raise refusal_error(refusal, policy)


def trust_remote_code_refused(backend: str, model_id: str, backend_options: object) -> bool:
    """True when the options ask a local backend to run the model repository's own code and the deployment
    does not list ``model_id`` in ``TRUST_REMOTE_CODE_MODELS``."""
    if backend not in ("transformers", "vllm") or not isinstance(backend_options, dict):
        return False
    return (
        bool(backend_options.get("trust_remote_code")) and model_id not in settings.TRUST_REMOTE_CODE_MODELS
    )


def validate_trust_remote_code(backend: str, model_id: str, backend_options: object) -> None:
    if trust_remote_code_refused(backend, model_id, backend_options):
        allowed = ", ".join(settings.TRUST_REMOTE_CODE_MODELS) or _("none")
        raise ValidationError(
            _(
                "Backend options (backend_options): trust_remote_code is refused for the model %(model)s: a "
                "worker would run that repository's code with the server's secrets. Allowed models: "
                "%(allowed)s (setting TRUST_REMOTE_CODE_MODELS)."
            ),
            code="trust_remote_code",
            params={"model": model_id, "allowed": allowed},
        )


def validate_api_key_env(value: str) -> None:
    if not value:
        return
    if looks_like_secret(value):
        raise ValidationError(
            _(
                "This looks like an API key. Store the key in an environment variable and enter its name here."
            ),
            code="secret",
        )
    if not ENV_VAR_NAME.match(value):
        raise ValidationError(
            _(
                "Enter the NAME of an environment variable (capital letters, digits and _), "
                "e.g. %(prefix)sOPENAI."
            ),
            code="invalid",
            params={"prefix": settings.MODEL_KEY_ENV_PREFIX or "TIMBANG_MODEL_KEY_"},
        )
    policy = endpoint_policy()
    refusal = api_key_env_refusal(value, policy)
    if refusal is not None:
        raise refusal_error(refusal, policy)


def validate_template_sampling(value: object) -> None:
    """A judge template's sampling: some of temperature, top_p, top_k, max_tokens, in a run's ranges."""
    try:
        checked_template_sampling(value)
    except SamplingParamsError as exc:
        # The domain's texts are in the catalogue (marked there); translated when the error is shown.
        raise ValidationError(_(exc.message), code="sampling", params=exc.params or None) from exc


class ModelEndpoint(models.Model):
    """A model reachable through one backend; the API key is read from a named environment variable."""

    class Backend(models.TextChoices):
        OPENAI = "openai", _("OpenAI-compatible server")
        TRANSFORMERS = "transformers", _("Transformers (local)")
        VLLM = "vllm", _("vLLM (offline, GPU)")
        LLAMACPP = "llamacpp", _("llama.cpp (local GGUF)")

    slug = models.SlugField(max_length=100, unique=True)
    backend = models.CharField(max_length=20, choices=Backend.choices, default=Backend.OPENAI)
    base_url = models.CharField(max_length=500, blank=True, help_text=_("For OpenAI-compatible servers."))
    model_id = models.CharField(max_length=300, help_text=_("Model name at the server, or a local path."))
    queue = models.CharField(
        max_length=120, default="default", help_text=_("'default' or 'gpu.<slug>' for a GPU worker.")
    )
    max_concurrency = models.PositiveSmallIntegerField(default=8)
    sampling_defaults = models.JSONField(default=dict, blank=True)
    backend_options = models.JSONField(default=dict, blank=True)
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[validate_api_key_env],
        help_text=_("Name of the environment variable holding the key; never the key itself."),
    )
    is_active = models.BooleanField(default=True)
    family = models.CharField(
        max_length=100,
        blank=True,
        help_text=_(
            "Model family (e.g. qwen, llama, gemma). The judge lab compares a judge's verdicts on answers of "
            "its own family with people's."
        ),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(condition=Q(max_concurrency__gte=1), name="endpoint_concurrency_positive")
        ]

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        # Not a field validator, so that a change of the deployment's host list needs no migration.
        if self.base_url:
            try:
                validate_base_url(self.base_url)
            except ValidationError as exc:
                raise ValidationError({"base_url": exc.error_list}) from exc
        try:
            validate_trust_remote_code(self.backend, self.model_id, self.backend_options)
        except ValidationError as exc:
            raise ValidationError({"backend_options": exc.error_list}) from exc

    @property
    def model_name(self) -> str:
        """The name generated responses carry: the endpoint's slug (unique and stable)."""
        return self.slug


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


ACTIVE_STATUSES = (RunStatus.QUEUED, RunStatus.RUNNING)


class Run(models.Model):
    """Fields every run kind shares: status, progress counts, configuration, timing."""

    name = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=12, choices=RunStatus.choices, default=RunStatus.QUEUED)
    config = models.JSONField(default=dict, blank=True, help_text=_("Sampling parameters, seed, options."))
    n_total = models.PositiveIntegerField(default=0)
    n_done = models.PositiveIntegerField(default=0)
    n_failed = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    kind: str = ""

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} run {self.pk} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def n_not_sent(self) -> int:
        """Items neither done nor failed: not reached yet, or left by a cancel."""
        return max(0, self.n_total - self.n_done - self.n_failed)

    @property
    def n_without_result(self) -> int:
        """Items with no result: failed, or not sent."""
        return max(0, self.n_total - self.n_done)

    @property
    def can_retry(self) -> bool:
        """An ended run with items that have no result (failed, or left by a cancel)."""
        return not self.is_active and self.n_without_result > 0

    @property
    def progress_percent(self) -> int:
        if not self.n_total:
            return 100 if not self.is_active else 0
        return int(100 * (self.n_done + self.n_failed) / self.n_total)


class GenerationRun(Run):
    """Models x prompts of a dataset -> generated ``datasets_app.Response`` rows."""

    kind = "generation"

    dataset = models.ForeignKey(
        "datasets_app.Dataset", on_delete=models.PROTECT, related_name="generation_runs"
    )
    endpoints = models.ManyToManyField(ModelEndpoint, related_name="generation_runs")
    n_per_prompt = models.PositiveSmallIntegerField(default=1)


class JudgeTemplate(models.Model):
    """A judge prompt as data; editing makes a new version, and judgments keep the version they used."""

    class Kind(models.TextChoices):
        PAIRWISE = PAIRWISE, _("Pairwise verdict")
        SINGLE_GRADE = SINGLE_GRADE, _("Single-answer grade 1-10")
        FACTUAL = FACTUAL, _("Factual correctness 1-5")

    class Language(models.TextChoices):
        EN = "en", _("English")
        ID = "id", _("Indonesian")

    name = models.CharField(max_length=100, default="default")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    language = models.CharField(max_length=2, choices=Language.choices)
    version = models.PositiveIntegerField(default=1)
    system = models.TextField(blank=True)
    user = models.TextField()
    output_schema = models.JSONField(default=dict, blank=True)
    sampling = models.JSONField(
        default=dict,
        blank=True,
        validators=[validate_template_sampling],
        help_text=_(
            'Sampling that judge runs with this template take unless the run sets it, e.g. {"temperature": 0}: '
            "temperature, top_p, top_k, max_tokens. What it leaves out comes from the endpoint's defaults."
        ),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "kind", "language", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["name", "kind", "language", "version"], name="uniq_judge_template_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name}/{self.kind}/{self.language} v{self.version}"


class CategoryAspects(models.Model):
    """Priority aspects of a prompt category for the single-answer judge (overrides the shipped ones)."""

    # Empty: the shared aspects of every run; set: that annotation project's own, over the shared ones.
    project = models.ForeignKey(
        "annotation.Project",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="category_aspects",
    )
    category = models.CharField(max_length=100)
    language = models.CharField(max_length=2, choices=JudgeTemplate.Language.choices)
    aspects = models.JSONField(help_text=_("List of aspects, most important first."))
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["category", "language"]
        constraints = [
            models.UniqueConstraint(
                fields=["category", "language"],
                condition=Q(project__isnull=True),
                name="uniq_shared_aspects_per_category_language",
            ),
            models.UniqueConstraint(
                fields=["project", "category", "language"],
                condition=Q(project__isnull=False),
                name="uniq_project_aspects_per_category_language",
            ),
        ]

    def __str__(self) -> str:
        scope = f"project {self.project_id}" if self.project_id else "shared"
        return f"{self.category} ({self.language}, {scope})"


class JudgeRun(Run):
    """An LLM judge over response pairs (pairwise) or single responses (graded)."""

    class Source(models.TextChoices):
        DATASET = "dataset", _("Responses of a dataset")
        ANNOTATION_PROJECT = "annotation_project", _("Tasks of an annotation project")

    class OrderMode(models.TextChoices):
        BOTH = "both", _("Both orders")
        SINGLE_RANDOM = "single_random", _("One randomised order")

    class PairwiseFamily(models.TextChoices):
        NO_TIE = NO_TIE, _("No tie: Response 1 or Response 2 (IndoPref)")
        WITH_TIE = WITH_TIE, _("With a tie: A, B or tie (MT-bench)")

    kind = "judge"

    judge_kind = models.CharField(max_length=20, choices=JudgeTemplate.Kind.choices)
    pairwise_family = models.CharField(
        max_length=10,
        choices=PairwiseFamily.choices,
        default=PairwiseFamily.NO_TIE,
        help_text=_("Pairwise judges: whether the judge may answer that neither response is better."),
    )
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="judge_runs")
    template = models.ForeignKey(JudgeTemplate, on_delete=models.PROTECT, related_name="judge_runs")
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.DATASET)
    dataset = models.ForeignKey(
        "datasets_app.Dataset", null=True, blank=True, on_delete=models.PROTECT, related_name="judge_runs"
    )
    annotation_project = models.ForeignKey(
        "annotation.Project", null=True, blank=True, on_delete=models.PROTECT, related_name="judge_runs"
    )
    order_mode = models.CharField(max_length=15, choices=OrderMode.choices, default=OrderMode.BOTH)


class Judgment(models.Model):
    """One judge call: the target (pair or single response, and turn), the order shown, raw and parsed."""

    class Order(models.TextChoices):
        AB = "ab", _("A shown first")
        BA = "ba", _("B shown first")
        SINGLE = "single", _("Single response")

    class ParseStatus(models.TextChoices):
        OK = "ok", _("Parsed")
        ERROR = "error", _("Parse error")

    judge_run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="judgments")
    target_key = models.CharField(max_length=100)
    prompt = models.ForeignKey("datasets_app.Prompt", on_delete=models.CASCADE, related_name="+")
    response_a = models.ForeignKey("datasets_app.Response", on_delete=models.CASCADE, related_name="+")
    response_b = models.ForeignKey(
        "datasets_app.Response", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    turn = models.PositiveSmallIntegerField(null=True, blank=True, help_text=_("0-based; empty: all turns."))
    annotation_task_id = models.PositiveIntegerField(null=True, blank=True, db_index=True)
    order = models.CharField(max_length=6, choices=Order.choices)
    sample = models.PositiveSmallIntegerField(
        default=0, help_text=_("Which of the run's k sampled verdicts of the item this is (0-based).")
    )
    template_kind = models.CharField(max_length=20)
    template_version = models.PositiveIntegerField()
    raw_output = models.TextField(blank=True)
    parse_status = models.CharField(max_length=5, choices=ParseStatus.choices)
    parse_reason = models.CharField(max_length=200, blank=True)
    shown_verdict = models.CharField(
        max_length=12, blank=True, help_text=_('"Response 1", "Response 2" or "tie", as shown.')
    )
    verdict = models.CharField(max_length=3, blank=True, help_text=_("Canonical A, B or tie (pairwise)."))
    score = models.FloatField(
        null=True, blank=True, help_text=_("Graded judges: the score as given, whole or decimal (7 or 7.5).")
    )
    explanation = models.TextField(blank=True)
    latency_s = models.FloatField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judge_run", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["judge_run", "target_key", "order"], name="uniq_judgment_per_order"
            ),
            models.CheckConstraint(
                condition=Q(parse_status="ok") | (Q(score__isnull=True) & Q(verdict="")),
                name="judgment_parse_error_has_no_score",
            ),
        ]

    def __str__(self) -> str:
        return f"judgment {self.pk} of run {self.judge_run_id} ({self.target_key}, {self.order})"


class PairVerdict(models.Model):
    """The pairwise verdict of one target over its orders, with the position-consistency flag."""

    class Verdict(models.TextChoices):
        A = "A", "A"
        B = "B", "B"
        TIE = "tie", _("Tie")
        ERROR = "error", _("Error")

    class Consistency(models.TextChoices):
        CONSISTENT = "consistent", _("Consistent")
        BIASED_FIRST = "biased_first", _("Biased to the first shown")
        BIASED_SECOND = "biased_second", _("Biased to the second shown")
        ERROR = "error", _("Error")
        SINGLE = "single", _("One order only")

    judge_run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="pair_verdicts")
    target_key = models.CharField(max_length=100)
    prompt = models.ForeignKey("datasets_app.Prompt", on_delete=models.CASCADE, related_name="+")
    response_a = models.ForeignKey("datasets_app.Response", on_delete=models.CASCADE, related_name="+")
    response_b = models.ForeignKey("datasets_app.Response", on_delete=models.CASCADE, related_name="+")
    turn = models.PositiveSmallIntegerField(null=True, blank=True)
    annotation_task_id = models.PositiveIntegerField(null=True, blank=True, db_index=True)
    verdict = models.CharField(max_length=5, choices=Verdict.choices)
    consistency = models.CharField(max_length=15, choices=Consistency.choices)
    sample = models.PositiveSmallIntegerField(
        default=0, help_text=_("Which of the run's k sampled verdicts of the item this is (0-based).")
    )
    reason = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["judge_run", "id"]
        constraints = [
            models.UniqueConstraint(fields=["judge_run", "target_key"], name="uniq_pair_verdict_per_target")
        ]

    def __str__(self) -> str:
        return f"{self.target_key}: {self.verdict} ({self.consistency})"


class BenchmarkRun(Run):
    """A model scored on questions (multiple choice), translation units (chrF++) or open QA prompts."""

    class Task(models.TextChoices):
        MCQ = "mcq", _("Multiple choice")
        TRANSLATION = "translation", _("Translation (chrF++)")
        OPEN_QA = "open_qa", _("Open QA")

    class Mode(models.TextChoices):
        """How a multiple-choice question is put to the model and how its answer is read."""

        CHAT = "chat", _("Chat: the prompt as a message, the answer letter read from the reply")
        COMPLETION = (
            "completion",
            _("Completion (base models): the k-shot prompt continued, the answer read from the first line"),
        )
        LOGPROB = "logprob", _("Log-probability of each option letter")
        CLOZE = "cloze", _("Cloze: log-probability of each option's text, per token")

    kind = "benchmark"

    task = models.CharField(max_length=12, choices=Task.choices)
    mode = models.CharField(
        max_length=12,
        choices=Mode.choices,
        default=Mode.CHAT,
        help_text=_("Multiple choice: how questions are asked and answers read."),
    )
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="benchmark_runs")
    dataset = models.ForeignKey(
        "datasets_app.Dataset", on_delete=models.PROTECT, related_name="benchmark_runs"
    )
    judge_endpoint = models.ForeignKey(
        ModelEndpoint, null=True, blank=True, on_delete=models.PROTECT, related_name="benchmark_judge_runs"
    )
    judge_template = models.ForeignKey(
        JudgeTemplate, null=True, blank=True, on_delete=models.PROTECT, related_name="benchmark_runs"
    )


class BenchmarkResult(models.Model):
    benchmark_run = models.ForeignKey(BenchmarkRun, on_delete=models.CASCADE, related_name="results")
    item_key = models.CharField(max_length=100)
    question = models.ForeignKey(
        "datasets_app.Question", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    prompt = models.ForeignKey(
        "datasets_app.Prompt", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    unit = models.ForeignKey(
        "datasets_app.TranslationUnit", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    category = models.CharField(max_length=100, blank=True)
    language = models.CharField(max_length=3, blank=True)
    register = models.CharField(max_length=40, blank=True)
    variant = models.CharField(max_length=40, blank=True)
    prediction = models.TextField(blank=True)
    reference = models.TextField(blank=True)
    correct = models.BooleanField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True)
    raw = models.JSONField(
        default=dict, blank=True, help_text=_("Raw output, option log-probabilities, judge.")
    )
    latency_s = models.FloatField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["benchmark_run", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark_run", "item_key"], name="uniq_benchmark_result_per_item"
            )
        ]

    def __str__(self) -> str:
        return f"{self.item_key} of benchmark run {self.benchmark_run_id}"


class RunChunk(models.Model):
    """A slice of a run's items processed by one Celery task; its status makes a redelivery a no-op."""

    class RunKind(models.TextChoices):
        GENERATION = "generation", _("Generation")
        JUDGE = "judge", _("Judge")
        BENCHMARK = "benchmark", _("Benchmark")

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        DONE = "done", _("Done")

    run_kind = models.CharField(max_length=12, choices=RunKind.choices)
    run_id = models.PositiveIntegerField()
    index = models.PositiveIntegerField()
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="+")
    items = models.JSONField(help_text=_("Item descriptors, in processing order."))
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    n_done = models.PositiveIntegerField(default=0)
    n_failed = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    queued_at = models.DateTimeField(
        null=True, blank=True, help_text=_("When the chunk's task was last sent to the broker.")
    )
    started_at = models.DateTimeField(null=True, blank=True, help_text=_("When its last attempt began."))
    finished_at = models.DateTimeField(null=True, blank=True)
    worker_stopped_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text=_(
            "When the worker running it was last heard from, once the sweep found that worker stopped."
        ),
    )

    class Meta:
        ordering = ["run_kind", "run_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run_kind", "run_id", "index"], name="uniq_chunk_per_run")
        ]
        indexes = [models.Index(fields=["run_kind", "run_id", "status"], name="chunk_run_status")]

    def __str__(self) -> str:
        return f"{self.run_kind} run {self.run_id} chunk {self.index}"


class PromptTemplate(models.Model):
    """A benchmark prompt a researcher added (a paper's own text, say), beside the ones Timbang ships.

    Multiple choice: ``instruction`` (may hold ``{{letters}}``), ``body`` with ``{{question}}`` and
    ``{{choices}}`` ending with the answer prefix, ``choice_line`` with ``{{letter}}`` (and ``{{text}}``),
    ``cloze_body`` with ``{{question}}``. Translation: ``body`` with ``{{source}}``, ``{{target}}``,
    ``{{text}}`` and optionally ``{{register}}``. Open QA: ``body`` with ``{{question}}``. A run keeps a copy
    of the texts it used, so a later edit never changes what a finished run reports."""

    slug = models.SlugField(
        max_length=40, unique=True, help_text=_("The template's id in runs, e.g. idcsqa-p1.")
    )
    task = models.CharField(max_length=12, choices=BenchmarkRun.Task.choices)
    language = models.CharField(max_length=2, choices=JudgeTemplate.Language.choices)
    instruction = models.TextField(blank=True)
    body = models.TextField()
    choice_line = models.CharField(max_length=200, blank=True, default="{{letter}}. {{text}}")
    cloze_body = models.TextField(blank=True, default="{{question}}")
    note = models.CharField(
        max_length=300, blank=True, help_text=_("Where the text comes from, e.g. the paper and its table.")
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "language", "slug"]

    def __str__(self) -> str:
        return f"{self.slug} ({self.task}, {self.language})"


class SpanJudgment(models.Model):
    """One error-span judge call on one task of an MQM or ESA project: the raw reply, its parse status and
    how many spans it suggested (stored as the task's ``SpanSuggestion`` rows, source ``llm``). Unique per
    (endpoint, task), so running the pre-fill again updates the row instead of adding one."""

    class ParseStatus(models.TextChoices):
        OK = "ok", _("Parsed")
        ERROR = "error", _("Parse error")

    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="span_judgments")
    task = models.ForeignKey("annotation.Task", on_delete=models.CASCADE, related_name="span_judgments")
    language = models.CharField(max_length=2, default="en", help_text=_("Language of the prompt."))
    raw_output = models.TextField(blank=True)
    parse_status = models.CharField(max_length=5, choices=ParseStatus.choices)
    parse_reason = models.CharField(max_length=200, blank=True)
    n_spans = models.PositiveSmallIntegerField(default=0)
    n_dropped = models.PositiveSmallIntegerField(default=0)
    latency_s = models.FloatField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["task", "endpoint"]
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "task"], name="uniq_span_judgment_per_endpoint_task")
        ]

    def __str__(self) -> str:
        return f"span judgment of task {self.task_id} by {self.endpoint_id} ({self.parse_status})"
