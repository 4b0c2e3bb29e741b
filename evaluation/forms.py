"""Forms of the evaluation pages; they only shape input for ``evaluation.services``, which validate it."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from accounts.refusals import shown
from annotation.models import Project
from datasets_app.models import Dataset
from evaluation.domain.presets import BENCHMARK as PRESET_BENCHMARK
from evaluation.domain.presets import JUDGE as PRESET_JUDGE
from evaluation.domain.presets import presets_of
from evaluation.domain.sampling import TEMPLATE_SAMPLING_KEYS
from evaluation.models import (
    BenchmarkRun,
    JudgeRun,
    JudgeTemplate,
    ModelEndpoint,
    looks_like_secret,
    validate_api_key_env,
    validate_base_url,
)
from evaluation.services.generation import MAX_SYSTEM_PROMPT_CHARS
from evaluation.services.prompt_templates import templates_available

SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "max_tokens", "seed")


class KeyNameInput(forms.TextInput):
    """A text input that never renders a pasted credential back into the page."""

    def format_value(self, value: Any) -> str | None:
        if value and looks_like_secret(str(value)):
            return None
        return super().format_value(value)


def _sampling_fields(*, run: bool = False) -> dict[str, forms.Field]:
    """Sampling parameters as fields; in a run form empty means the endpoint's default."""
    fields = {
        "temperature": forms.FloatField(
            required=False, label=_("Temperature"), help_text=_("Empty: 0.6 (study default).")
        ),
        "top_p": forms.FloatField(
            required=False, label=_("Top-p"), help_text=_("Empty: 0.95 (study default).")
        ),
        "top_k": forms.IntegerField(
            required=False, label=_("Top-k"), help_text=_("Empty: 20 (study default).")
        ),
        "max_tokens": forms.IntegerField(required=False, label=_("Max tokens"), help_text=_("Empty: 1024.")),
        "seed": forms.IntegerField(required=False, label=_("Seed"), help_text=_("Empty: no fixed seed.")),
    }
    if run:
        for field in fields.values():
            field.help_text = _("Empty: the endpoint's default.")
    return fields


def _filled(data: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: data[name] for name in names if data.get(name) not in (None, "")}


def add_service_errors(form: forms.Form, exc: ValidationError) -> None:
    """Put a service's ``ValidationError`` on the form's fields (others become non-field errors), in the
    page's language."""
    if not hasattr(exc, "error_dict"):
        for error in exc.error_list:
            form.add_error(None, shown(error))
        return
    for name, errors in exc.error_dict.items():
        for error in errors:
            field: str | None = name
            if name == "sampling_defaults":
                # SamplingParams errors start with the parameter's name ("top_p must be ...").
                first = str(error.message).split(" ", 1)[0]
                field = first if first in SAMPLING_FIELDS else None
            form.add_error(field if field in form.fields else None, shown(error))


class EndpointForm(forms.Form):
    """Create or edit a model endpoint; default sampling parameters are separate fields."""

    slug = forms.SlugField(
        label=_("Slug"),
        max_length=100,
        help_text=_("Unique name; generated responses carry it as their model name."),
    )
    backend = forms.ChoiceField(
        label=_("Backend"), choices=ModelEndpoint.Backend.choices, initial=ModelEndpoint.Backend.OPENAI
    )
    base_url = forms.CharField(
        max_length=500,
        required=False,
        label=_("Base URL"),
        validators=[validate_base_url],
        help_text=_("For OpenAI-compatible servers, e.g. http://localhost:8000/v1."),
    )
    model_id = forms.CharField(
        label=_("Model id"), max_length=300, help_text=_("Model name at the server, or a local path.")
    )
    queue = forms.CharField(
        label=_("Queue"),
        max_length=120,
        required=False,
        help_text=_(
            "Leave empty for the endpoint's own queue gpu.<slug>, which the model workers of scripts/serve "
            "pick up within seconds; or 'default', or 'gpu.<name>' to share a GPU worker's queue."
        ),
    )
    max_concurrency = forms.IntegerField(
        label=_("Concurrent requests"),
        min_value=1,
        max_value=1024,
        initial=8,
        help_text=_("Requests in flight per worker process."),
    )
    backend_options = forms.JSONField(
        label=_("Backend options"),
        required=False,
        initial=dict,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_('A JSON object of backend settings, e.g. {"timeout_s": 60}. Never put keys here.'),
    )
    api_key_env = forms.CharField(
        max_length=100,
        required=False,
        label=_("API key variable"),
        widget=KeyNameInput,
        validators=[validate_api_key_env],
        help_text=_(
            "The NAME of the environment variable that holds the key on the workers; the deployment allows "
            "names that start with TIMBANG_MODEL_KEY_ (or its own prefix and list). "
            "The key itself is never stored."
        ),
    )
    is_active = forms.BooleanField(required=False, initial=True, label=_("Active"))
    family = forms.CharField(
        label=_("Model family"),
        max_length=100,
        required=False,
        help_text=_(
            "e.g. qwen, llama, gemma. The judge lab compares a judge's verdicts on answers of its own family "
            "with people's."
        ),
    )

    def __init__(self, *args: Any, endpoint: ModelEndpoint | None = None, **kwargs: Any) -> None:
        self.endpoint = endpoint
        if endpoint is not None:
            initial = {
                "slug": endpoint.slug,
                "backend": endpoint.backend,
                "base_url": endpoint.base_url,
                "model_id": endpoint.model_id,
                "queue": endpoint.queue,
                "max_concurrency": endpoint.max_concurrency,
                "backend_options": endpoint.backend_options,
                "api_key_env": endpoint.api_key_env,
                "is_active": endpoint.is_active,
                "family": endpoint.family,
                **{name: (endpoint.sampling_defaults or {}).get(name) for name in SAMPLING_FIELDS},
            }
            kwargs["initial"] = {**initial, **kwargs.get("initial", {})}
        super().__init__(*args, **kwargs)
        # Sampling fields after the connection settings and before the backend options.
        fields = dict(self.fields)
        order = ["slug", "backend", "base_url", "model_id", "queue", "max_concurrency"]
        sampling = _sampling_fields()
        self.fields = {
            **{name: fields[name] for name in order},
            **sampling,
            **{name: field for name, field in fields.items() if name not in order},
        }
        if endpoint is not None:
            # Responses already generated carry the slug as their model name: it stays.
            self.fields["slug"].disabled = True

    def service_fields(self) -> dict[str, Any]:
        """Keyword arguments for ``endpoint_create`` / ``endpoint_update``."""
        data = self.cleaned_data
        previous = dict(self.endpoint.sampling_defaults or {}) if self.endpoint else {}
        sampling = {k: v for k, v in previous.items() if k not in SAMPLING_FIELDS}  # e.g. ``stop``
        for name in SAMPLING_FIELDS:
            if data.get(name) is not None:
                sampling[name] = data[name]
            elif name in previous and previous[name] is None:
                sampling[name] = None  # an explicit "do not send", e.g. top_k for hosted APIs
        fields = {
            name: data[name]
            for name in ("backend", "base_url", "model_id", "queue", "max_concurrency", "is_active")
        }
        fields["api_key_env"] = (data.get("api_key_env") or "").strip()
        fields["family"] = (data.get("family") or "").strip()
        fields["backend_options"] = {} if data.get("backend_options") is None else data["backend_options"]
        fields["sampling_defaults"] = sampling
        if self.endpoint is None:
            fields["slug"] = data["slug"]
        return fields


def _endpoints() -> Any:
    return ModelEndpoint.objects.filter(is_active=True).order_by("slug")


class _RunForm(forms.Form):
    """Fields every run start shares; ``options()`` builds the service's options dict."""

    name = forms.CharField(label=_("Name"), max_length=200, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields.update(_sampling_fields(run=True))

    def sampling_options(self) -> dict[str, Any]:
        data = self.cleaned_data
        options: dict[str, Any] = {}
        sampling = _filled(data, ("temperature", "top_p", "top_k"))
        if sampling:
            options["sampling"] = sampling
        options.update(_filled(data, ("seed", "max_tokens")))
        return options


class GenerationRunForm(_RunForm):
    dataset = forms.ModelChoiceField(
        label=_("Dataset"), queryset=Dataset.objects.filter(kind=Dataset.Kind.PROMPTS).order_by("name")
    )
    endpoints = forms.ModelMultipleChoiceField(
        queryset=_endpoints(), widget=forms.CheckboxSelectMultiple, label=_("Models")
    )
    n_per_prompt = forms.IntegerField(
        min_value=1, max_value=100, initial=1, label=_("Samples per prompt"), help_text=_("1 to 100.")
    )
    system_prompt = forms.CharField(
        label=_("System prompt"),
        required=False,
        max_length=MAX_SYSTEM_PROMPT_CHARS,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            "Sent as the first message of every conversation, before the prompt's own turns, e.g. "
            '"You are a helpful assistant." Empty: none.'
        ),
    )
    chunk_size = forms.IntegerField(
        label=_("Chunk size"), required=False, help_text=_("Items per worker task. Empty: 16.")
    )

    field_order = ["name", "dataset", "endpoints", "n_per_prompt"]

    def service_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        options = self.sampling_options()
        options.update(_filled(data, ("system_prompt", "chunk_size")))
        return {
            "dataset": data["dataset"],
            "endpoints": list(data["endpoints"]),
            "n_per_prompt": data["n_per_prompt"],
            "options": options,
            "name": data.get("name") or "",
        }


class JudgeRunForm(_RunForm):
    preset = forms.ChoiceField(
        label=_("Preset"),
        required=False,
        choices=[("", _("None"))] + [(p.id, p.study) for p in presets_of(PRESET_JUDGE)],
        help_text=_("The study whose rules this run follows; the run page marks each rule against it."),
    )
    judge_kind = forms.ChoiceField(choices=JudgeTemplate.Kind.choices, label=_("Judge kind"))
    endpoint = forms.ModelChoiceField(queryset=_endpoints(), label=_("Judge model"))
    dataset = forms.ModelChoiceField(
        label=_("Dataset"),
        queryset=Dataset.objects.filter(kind=Dataset.Kind.PROMPTS).order_by("name"),
        required=False,
        help_text=_("Either a dataset (its responses) or an annotation project (its tasks)."),
    )
    annotation_project = forms.ModelChoiceField(
        label=_("Annotation project"),
        queryset=Project.objects.order_by("name"),
        required=False,
        help_text=_("Either a dataset (its responses) or an annotation project (its tasks)."),
    )
    order_mode = forms.ChoiceField(
        label=_("Orders"), choices=JudgeRun.OrderMode.choices, initial=JudgeRun.OrderMode.BOTH
    )
    pairwise_family = forms.ChoiceField(
        choices=[("", _("The template's family (no tie when no template is chosen)"))]
        + list(JudgeRun.PairwiseFamily.choices),
        required=False,
        label=_("Pairwise templates"),
        help_text=_("Pairwise judges: may the judge answer that neither response is better?"),
    )
    language = forms.ChoiceField(
        choices=JudgeTemplate.Language.choices,
        initial=JudgeTemplate.Language.EN,
        label=_("Template language"),
    )
    template = forms.ModelChoiceField(
        label=_("Template"),
        queryset=JudgeTemplate.objects.order_by("name", "kind", "language", "-version"),
        required=False,
        help_text=_("Empty: the latest default template of the kind, in the language above."),
    )
    models = forms.CharField(
        required=False,
        max_length=2000,
        label=_("Only these models"),
        help_text=_("Dataset source: comma-separated model names. Empty: every model."),
    )
    per_turn = forms.BooleanField(
        required=False, label=_("One verdict per turn"), help_text=_("Pairwise over a dataset.")
    )
    structured_output = forms.BooleanField(
        label=_("Structured output"),
        required=False,
        initial=True,
        help_text=_("Ask for JSON with the template's schema."),
    )
    on_one_error = forms.ChoiceField(
        choices=[("use_other", _("Use the other order")), ("error", _("Count as an error"))],
        initial="use_other",
        label=_("When one order cannot be parsed"),
    )
    chunk_size = forms.IntegerField(
        label=_("Chunk size"), required=False, help_text=_("Items per worker task. Empty: 16.")
    )
    samples = forms.IntegerField(
        label=_("Verdicts per item"),
        min_value=1,
        max_value=10,
        initial=1,
        required=False,
        help_text=_(
            "Sample the judge this many times per item (3 or more, with a temperature above 0) so the judge "
            "lab can measure its calibration."
        ),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in TEMPLATE_SAMPLING_KEYS:
            self.fields[name].help_text = _("Empty: the template's value, else the endpoint's default.")

    field_order = [
        "preset",
        "name",
        "judge_kind",
        "endpoint",
        "dataset",
        "annotation_project",
        "order_mode",
        "pairwise_family",
        "language",
    ]

    def service_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        options = self.sampling_options()
        options["language"] = data["language"]
        options.update(_filled(data, ("preset",)))
        options["structured_output"] = data["structured_output"]
        options["per_turn"] = data["per_turn"]
        options["on_one_error"] = data["on_one_error"]
        models = [m.strip() for m in (data.get("models") or "").split(",") if m.strip()]
        if models:
            options["models"] = models
        options.update(_filled(data, ("chunk_size",)))
        if (data.get("samples") or 1) > 1:
            options["samples"] = data["samples"]
        return {
            "judge_kind": data["judge_kind"],
            "endpoint": data["endpoint"],
            "dataset": data.get("dataset"),
            "annotation_project": data.get("annotation_project"),
            "template": data.get("template"),
            "order_mode": data["order_mode"],
            "pairwise_family": data.get("pairwise_family") or None,
            "options": options,
            "name": data.get("name") or "",
        }


class BenchmarkRunForm(_RunForm):
    preset = forms.ChoiceField(
        label=_("Preset"),
        required=False,
        choices=[("", _("None"))] + [(p.id, p.study) for p in presets_of(PRESET_BENCHMARK)],
        help_text=_("The study whose rules this run follows; the run page marks each rule against it."),
    )
    task = forms.ChoiceField(label=_("Task"), choices=BenchmarkRun.Task.choices)
    endpoint = forms.ModelChoiceField(queryset=_endpoints(), label=_("Model"))
    dataset = forms.ModelChoiceField(label=_("Dataset"), queryset=Dataset.objects.order_by("name"))
    scoring = forms.ChoiceField(
        label=_("Scoring"),
        choices=[
            ("", _("Task default")),
            ("extract", _("Multiple choice: extract the answer letter")),
            ("logprob", _("Multiple choice: option log-probabilities")),
            ("chrf", _("Translation: chrF++")),
            ("substring", _("Open QA: reference substring")),
            ("judge", _("Open QA: factual judge (1-5)")),
        ],
        required=False,
        help_text=_("Defaults: extract, chrF++, substring."),
    )
    mode = forms.ChoiceField(
        choices=[
            ("", _("Default (chat, or letter log-probabilities when chosen above)")),
            *BenchmarkRun.Mode.choices,
        ],
        required=False,
        label=_("Multiple-choice mode"),
        help_text=_(
            "Completion suits base models; cloze scores each option's text without showing the options."
        ),
    )
    match_rule = forms.ChoiceField(
        label=_("Open QA match rule"),
        choices=[
            ("substring", _("The reference is a substring of the answer (LoraxBench)")),
            ("whole_word", _("The reference occurs in the answer as whole words")),
        ],
        initial="substring",
        required=False,
        help_text=_(
            "Open QA scored by substring. A number in the reference never matches inside a longer number."
        ),
    )
    direction = forms.ChoiceField(
        label=_("Translation direction"),
        choices=[
            ("to_source", _("From the local language into Indonesian (LoraxBench)")),
            ("from_source", _("From Indonesian into the local language and register")),
        ],
        initial="to_source",
        required=False,
        help_text=_(
            "Translation: which side of each unit the model translates; chrF++ is against the other."
        ),
    )
    cloze_rule = forms.ChoiceField(
        label=_("Cloze rule"),
        choices=[
            ("total", _("Highest total log-probability of the option (LoraxBench)")),
            ("mean", _("Highest mean log-probability per token")),
        ],
        initial="total",
        required=False,
        help_text=_("Multiple choice in cloze mode."),
    )
    judge_endpoint = forms.ModelChoiceField(
        label=_("Judge model"),
        queryset=_endpoints(),
        required=False,
        help_text=_("Open QA scored by a judge."),
    )
    judge_language = forms.ChoiceField(
        label=_("Judge language"), choices=JudgeTemplate.Language.choices, initial="en"
    )
    prompt_language = forms.ChoiceField(
        label=_("Prompt language"),
        choices=[("id", _("Indonesian")), ("en", _("English"))],
        initial="id",
        help_text=_("Language of the multiple-choice prompt variants."),
    )
    variant = forms.CharField(
        label=_("Prompt variant"),
        required=False,
        max_length=40,
        help_text=_("One prompt variant id. Empty: a seeded choice per question."),
    )
    templates = forms.MultipleChoiceField(
        label=_("Prompt templates"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_(
            "The templates the run asks with (of the chosen task). Empty: the prompt language's shipped set "
            "(multiple choice) or its one shipped template."
        ),
    )
    aggregation = forms.ChoiceField(
        label=_("Over the templates"),
        choices=[
            ("draw", _("Draw one template per item (SeaExam)")),
            ("mean", _("Ask with every template; the mean of their figures (id-csqa)")),
            ("max", _("Ask with every template; the best template's figure (LoraxBench)")),
        ],
        initial="draw",
        required=False,
    )
    k_shot = forms.IntegerField(
        required=False, min_value=0, max_value=32, initial=0, label=_("Examples (k-shot)")
    )
    shot_split = forms.CharField(
        label=_("Split of the examples"),
        required=False,
        max_length=40,
        help_text=_("Questions whose split is this serve as examples."),
    )
    shot_dataset = forms.ModelChoiceField(
        label=_("Dataset of the examples"),
        queryset=Dataset.objects.filter(kind=Dataset.Kind.QUESTIONS).order_by("name"),
        required=False,
        help_text=_("Where the examples come from. Empty: the same dataset."),
    )
    eval_split = forms.CharField(
        label=_("Split to score"),
        required=False,
        max_length=40,
        help_text=_("Only questions of this split are scored. Empty: all."),
    )
    chunk_size = forms.IntegerField(
        label=_("Chunk size"), required=False, help_text=_("Items per worker task. Empty: 16.")
    )
    back_translate = forms.BooleanField(
        required=False,
        label=_("Back-translate"),
        help_text=_(
            "Translation: translate each unit's translation back into the source language and keep it on the "
            "unit for the back-translation flag."
        ),
    )

    field_order = [
        "preset",
        "name",
        "task",
        "endpoint",
        "dataset",
        "scoring",
        "match_rule",
        "direction",
        "mode",
        "cloze_rule",
        "templates",
        "aggregation",
        "judge_endpoint",
        "judge_language",
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["max_tokens"].help_text = _("Empty: 32 for multiple choice, 512 otherwise.")
        task_names = dict(BenchmarkRun.Task.choices)
        self.fields["templates"].choices = [
            (template.id, f"{task_names[task]} · {template.id} ({template.language})")
            for task in BenchmarkRun.Task.values
            for template in templates_available(task)
        ]

    def service_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        options = self.sampling_options()
        options.update(
            _filled(
                data,
                ("scoring", "variant", "k_shot", "shot_split", "eval_split", "chunk_size"),
            )
        )
        options["prompt_language"] = data["prompt_language"]
        options.update(_filled(data, ("preset",)))
        if data.get("templates"):
            options["templates"] = list(data["templates"])
        options.update(_filled(data, ("aggregation",)))
        # Each rule is passed only where it applies: open QA by substring, multiple choice in cloze mode.
        if data["task"] == BenchmarkRun.Task.OPEN_QA and data.get("scoring") in ("", "substring"):
            options.update(_filled(data, ("match_rule",)))
        if data["task"] == BenchmarkRun.Task.MCQ and data.get("mode") == BenchmarkRun.Mode.CLOZE:
            options.update(_filled(data, ("cloze_rule",)))
        if data["task"] == BenchmarkRun.Task.TRANSLATION:
            options.update(_filled(data, ("direction",)))
        if data.get("back_translate"):
            options["back_translate"] = True
        if data.get("judge_endpoint"):
            options["judge_language"] = data["judge_language"]
        if data.get("shot_dataset"):
            options["shot_dataset_id"] = data["shot_dataset"].pk
        return {
            "task": data["task"],
            "endpoint": data["endpoint"],
            "dataset": data["dataset"],
            "judge_endpoint": data.get("judge_endpoint"),
            "mode": data.get("mode") or None,
            "options": options,
            "name": data.get("name") or "",
        }


RUN_FORMS: dict[str, type[_RunForm]] = {
    "generation": GenerationRunForm,
    "judge": JudgeRunForm,
    "benchmark": BenchmarkRunForm,
}


class CategoryAspectsForm(forms.Form):
    """The priority aspects of one category, one aspect a line, in English and Indonesian."""

    aspects_en = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}),
        label=_("Aspects in English"),
        help_text=_("One aspect a line, the most important first."),
    )
    aspects_id = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}),
        label=_("Aspects in Indonesian"),
        help_text=_("One aspect a line, the most important first."),
    )

    def aspects(self, language: str) -> list[str]:
        return [
            line.strip() for line in self.cleaned_data[f"aspects_{language}"].splitlines() if line.strip()
        ]


class PromptTemplateForm(forms.Form):
    """A benchmark prompt template a researcher adds (e.g. a paper's own prompt, pasted)."""

    slug = forms.SlugField(
        label=_("Id"),
        max_length=40,
        help_text=_("How runs name it, e.g. idcsqa-p1 (letters, digits, - and _)."),
    )
    task = forms.ChoiceField(label=_("Task"), choices=BenchmarkRun.Task.choices)
    language = forms.ChoiceField(label=_("Language"), choices=JudgeTemplate.Language.choices)
    instruction = forms.CharField(
        label=_("Instruction"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("Multiple choice: the text before the question; {{letters}} lists the option letters."),
    )
    body = forms.CharField(
        label=_("Prompt"),
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text=_(
            "Multiple choice: {{question}} and {{choices}}, ending where the answer follows. Translation: "
            "{{source}}, {{target}}, {{text}} and optionally {{register}}. Open QA: {{question}}."
        ),
    )
    choice_line = forms.CharField(
        label=_("Option line"),
        required=False,
        max_length=200,
        help_text=_(
            "Multiple choice: how each option is written, with {{letter}} and {{text}}. Empty: {{letter}}. {{text}}"
        ),
    )
    cloze_body = forms.CharField(
        label=_("Cloze prompt"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_(
            "Multiple choice in cloze mode: {{question}}, ending where an option's text follows. Empty: {{question}}"
        ),
    )
    note = forms.CharField(
        label=_("Source"),
        required=False,
        max_length=300,
        help_text=_("Where the text comes from, e.g. the paper and its table."),
    )
