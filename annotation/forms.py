"""Forms of the project manager pages; they only shape input for ``annotation.services``."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from accounts.roles import ANNOTATOR
from accounts.selectors import real_users
from annotation.domain import rubrics as default_rubrics
from annotation.domain.quality import QualityThresholds
from annotation.domain.span_settings import MAX_CHECK_SHARE
from annotation.models import AnnotatorGroup, AttentionCheck, Project
from annotation.selectors.rubrics import rubric_choices
from annotation.services.projects import SINGLE_OWNER_KINDS
from annotation.services.questions import concept_pairs_read
from datasets_app.domain.languages import LANGUAGES, TARGET_LANGUAGE_CODES
from datasets_app.domain.questions import (
    OPTIONS,
    QUESTION,
    ErrorCategory,
    TaxonomyInvalid,
    taxonomy_from_data,
    taxonomy_from_text,
    taxonomy_to_text,
)
from datasets_app.domain.translation_flags import (
    BACK_TRANSLATION_CHRF,
    BACK_TRANSLATION_EMBEDDING,
    DEFAULT_BACK_TRANSLATION_EMBEDDING_THRESHOLD,
    DEFAULT_BACK_TRANSLATION_MEASURE,
    DEFAULT_BACK_TRANSLATION_THRESHOLD,
    DEFAULT_LENGTH_Z_THRESHOLD,
    DEFAULT_REGISTER_MARKERS,
)
from datasets_app.models import Dataset

# The fields each kind of project uses, besides the common ones; the form shows and checks only these.
COMMON_FIELDS = (
    "kind",
    "dataset",
    "name",
    "groups",
    "seed",
    "lease_minutes",
    "allow_edits",
    "instructions_id",
    "instructions_en",
)
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    Project.Kind.LIKERT: ("criteria", "best_pick", "allow_all_bad", "overlap", "gold_rate"),
    Project.Kind.BEST_OF_N: ("allow_all_bad", "overlap", "gold_rate"),
    Project.Kind.PAIRWISE: ("pair_mode", "pairs_per_prompt", "turn_mode", "overlap", "gold_rate"),
    Project.Kind.TRANSLATION: (),
    Project.Kind.TRANSLATION_REVIEW: (),
    Project.Kind.QUESTION_AUTHORING: (),
    Project.Kind.MCQ_ANSWER: ("overlap", "max_ambiguous"),
    Project.Kind.TRANSLATION_MQM: ("overlap", "attention_share", "attention_kinds"),
    Project.Kind.TRANSLATION_ESA: ("overlap", "attention_share", "attention_kinds"),
}
# What the new-project page's preview is drawn from (``from_form``: the template's marker that the
# request comes from the form, so that nothing ticked means none).
PREVIEW_FIELDS = ("dataset", "criteria", "best_pick", "allow_all_bad", "from_form")
# Which datasets each kind reads.
KIND_DATASETS: dict[str, str] = {
    Project.Kind.LIKERT: Dataset.Kind.PROMPTS,
    Project.Kind.BEST_OF_N: Dataset.Kind.PROMPTS,
    Project.Kind.PAIRWISE: Dataset.Kind.PROMPTS,
    Project.Kind.TRANSLATION: Dataset.Kind.TRANSLATIONS,
    Project.Kind.TRANSLATION_REVIEW: Dataset.Kind.TRANSLATIONS,
    Project.Kind.QUESTION_AUTHORING: Dataset.Kind.QUESTIONS,
    Project.Kind.MCQ_ANSWER: Dataset.Kind.QUESTIONS,
    Project.Kind.TRANSLATION_MQM: Dataset.Kind.TRANSLATIONS,
    Project.Kind.TRANSLATION_ESA: Dataset.Kind.TRANSLATIONS,
}


def _criterion_choices() -> list[tuple[str, str]]:
    """Every criterion with a rubric (the designer's), IndoPref's relevance and fluency first."""
    lang = "id" if (get_language() or "en").startswith("id") else "en"
    found = dict(rubric_choices(lang))
    defaults = [
        (c, found.pop(c, default_rubrics.CRITERION_LABELS[c][lang])) for c in default_rubrics.CRITERIA
    ]
    return defaults + sorted(found.items())


class ProjectCreateForm(forms.Form):
    """A new project of one kind: built with ``kind=``, it holds (and checks) only that kind's fields."""

    dataset = forms.ModelChoiceField(
        label=_("Dataset"),
        queryset=Dataset.objects.order_by("name"),
        required=False,
        help_text=_(
            "Prompts for rating jobs, translation units for translation jobs, questions for answering. "
            "Question authoring without a dataset creates one."
        ),
    )
    name = forms.CharField(label=_("Name"), max_length=200)
    kind = forms.ChoiceField(label=_("Kind"), choices=Project.Kind.choices, widget=forms.HiddenInput)
    criteria = forms.MultipleChoiceField(
        label=_("Criteria"),
        choices=_criterion_choices,
        initial=list(default_rubrics.CRITERIA),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Likert: each response is rated on each criterion's scale (rubrics under Rubrics)."),
    )
    best_pick = forms.ChoiceField(
        label=_("Best-of-N pick"), choices=Project.BestPick.choices, initial="optional"
    )
    allow_all_bad = forms.BooleanField(required=False, label=_('Allow "all bad" as the best pick'))
    overlap = forms.IntegerField(
        label=_("Overlap (k)"),
        min_value=1,
        max_value=50,
        initial=3,
        help_text=_("Annotators per task per group."),
    )
    groups = forms.CharField(
        label=_("Groups"),
        initial="A, B",
        help_text=_("Comma-separated group names; k applies in each group."),
        max_length=500,
    )
    pair_mode = forms.ChoiceField(label=_("Pairs"), choices=Project.PairMode.choices, initial="sample")
    pairs_per_prompt = forms.IntegerField(label=_("Pairs per prompt"), min_value=1, max_value=45, initial=3)
    turn_mode = forms.ChoiceField(label=_("Vote per"), choices=Project.TurnMode.choices, initial="overall")
    seed = forms.IntegerField(
        label=_("Seed"), min_value=0, max_value=2**31 - 1, required=False, help_text=_("Empty: random.")
    )
    lease_minutes = forms.IntegerField(
        label=_("Lease (minutes)"), min_value=1, max_value=7 * 24 * 60, initial=30
    )
    allow_edits = forms.BooleanField(label=_("Allow edits after submitting"), required=False, initial=True)
    gold_rate = forms.FloatField(label=_("Gold item rate"), min_value=0, max_value=1, initial=0)
    instructions_id = forms.CharField(
        label=_("Instructions (Indonesian)"), widget=forms.Textarea(attrs={"rows": 4}), required=False
    )
    instructions_en = forms.CharField(
        label=_("Instructions (English)"), widget=forms.Textarea(attrs={"rows": 4}), required=False
    )
    max_ambiguous = forms.IntegerField(
        min_value=0,
        max_value=50,
        initial=3,
        required=False,
        label=_("Ambiguous flags allowed"),
        help_text=_("Answering: a question flagged ambiguous by more annotators than this is excluded."),
    )

    attention_share = forms.FloatField(
        label=_("Attention checks (share of targets, 0-0.5)"),
        min_value=0,
        max_value=MAX_CHECK_SHARE,
        initial=0,
        required=False,
        help_text=_(
            "This share of the translations gets one more task with a known error put in; annotators are "
            "scored on finding it, and those tasks count in no score. 0: none."
        ),
    )
    attention_kinds = forms.MultipleChoiceField(
        label=_("Errors to put in"),
        choices=AttentionCheck.Kind.choices,
        initial=list(AttentionCheck.Kind.values),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )

    def __init__(self, *args, kind: str, **kwargs):
        super().__init__(*args, **kwargs)
        if kind not in KIND_FIELDS:
            raise ValueError(f"unknown project kind {kind!r}")
        self.kind = kind
        self.initial["kind"] = kind
        self.fields["kind"].choices = [(kind, Project.Kind(kind).label)]
        wanted = set(COMMON_FIELDS) | set(KIND_FIELDS[kind])
        for name in [n for n in self.fields if n not in wanted]:
            del self.fields[name]
        self.fields["dataset"].queryset = Dataset.objects.filter(kind=KIND_DATASETS[kind]).order_by("name")
        # Choosing a dataset shows its counts and one of its tasks with the criteria ticked and the best pick
        # as set; changing either shows it again (htmx; without it, a "show" button). The requests go one
        # at a time, the last change waiting for the one in flight (hx-sync): an older answer arriving
        # late cannot replace the newer preview.
        refresh = {
            "hx-get": f"{reverse('annotation:manage_create')}?kind={kind}",
            "hx-target": "#dataset-summary",
            "hx-trigger": "change",
            "hx-include": ", ".join(f"[name={name}]" for name in PREVIEW_FIELDS),
            "hx-sync": "closest form:queue last",
        }
        for name in PREVIEW_FIELDS:
            if name in self.fields:
                self.fields[name].widget.attrs.update(refresh)
        if kind == Project.Kind.QUESTION_AUTHORING:
            self.fields["dataset"].empty_label = _("(a new dataset for the questions written)")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("dataset") and self.kind != Project.Kind.QUESTION_AUTHORING:
            self.add_error("dataset", _("Choose a dataset."))
        if data.get("attention_share") and not data.get("attention_kinds"):
            self.add_error("attention_kinds", _("Choose at least one kind of error to put in."))
        return data

    def service_kwargs(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        data["groups"] = [name.strip() for name in data["groups"].split(",") if name.strip()]
        if self.kind in SINGLE_OWNER_KINDS:
            data["overlap"] = 1  # one translator, reviewer or author per item
        if data.get("max_ambiguous") is None:
            data.pop("max_ambiguous", None)
        share, kinds = data.pop("attention_share", None), data.pop("attention_kinds", None)
        if share:
            data["span_settings"] = {"attention_checks": {"share": share, "kinds": list(kinds)}}
        return data


class GroupForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100)


class GroupChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: AnnotatorGroup) -> str:
        return obj.name


class PersonChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj) -> str:
        full = obj.get_full_name()
        return f"{obj.get_username()} ({full})" if full else obj.get_username()


class MemberForm(forms.Form):
    """Annotators who can log in (never the demo's simulated ones), put into one of the project's groups."""

    users = PersonChoiceField(label=_("Annotators"), queryset=get_user_model().objects.none())
    group = GroupChoiceField(label=_("Group"), queryset=AnnotatorGroup.objects.none())

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["users"].queryset = real_users().filter(groups__name=ANNOTATOR).order_by("username")
        self.fields["group"].queryset = project.groups.order_by("id")


def _words(text: str) -> list[str]:
    return [w.strip() for line in text.splitlines() for w in line.split(",") if w.strip()]


class FlagSettingsForm(forms.Form):
    """The length threshold, how back-translations are compared with their sources (measure and threshold of
    each), and the per-register word lists (one word or phrase per line or comma)."""

    length_z_threshold = forms.FloatField(
        min_value=0.5,
        max_value=20,
        initial=DEFAULT_LENGTH_Z_THRESHOLD,
        label=_("Length threshold (robust z-score)"),
    )

    back_translation_measure = forms.ChoiceField(
        required=False,
        choices=[
            (BACK_TRANSLATION_EMBEDDING, _("Sentence embedding (multilingual-e5-small), as in id-csqa")),
            (BACK_TRANSLATION_CHRF, _("chrF++ (character overlap, no model)")),
        ],
        initial=DEFAULT_BACK_TRANSLATION_MEASURE,
        label=_("Back-translation measure"),
    )

    back_translation_embedding_threshold = forms.FloatField(
        required=False,
        min_value=0.01,
        max_value=1,
        initial=DEFAULT_BACK_TRANSLATION_EMBEDDING_THRESHOLD,
        label=_("Back-translation threshold (sentence embedding, 0-1)"),
        help_text=_(
            "A unit whose back-translation has a cosine similarity to the source below this is flagged "
            "(id-csqa: 0.9). This model scores unrelated sentences about 0.75-0.85 and paraphrases about "
            "0.91-1."
        ),
    )

    back_translation_threshold = forms.FloatField(
        required=False,
        min_value=0.01,
        max_value=1,
        initial=DEFAULT_BACK_TRANSLATION_THRESHOLD,
        label=_("Back-translation threshold (chrF++, 0-1)"),
        help_text=_(
            "A unit whose back-translation has a chrF++ similarity to the source below this is flagged "
            "(id-csqa: 0.9)."
        ),
    )

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        settings = project.flag_settings or {}
        self.fields["length_z_threshold"].initial = settings.get(
            "length_z_threshold", DEFAULT_LENGTH_Z_THRESHOLD
        )
        self.fields["back_translation_measure"].initial = settings.get(
            "back_translation_measure", DEFAULT_BACK_TRANSLATION_MEASURE
        )
        self.fields["back_translation_embedding_threshold"].initial = settings.get(
            "back_translation_embedding_threshold", DEFAULT_BACK_TRANSLATION_EMBEDDING_THRESHOLD
        )
        self.fields["back_translation_threshold"].initial = settings.get(
            "back_translation_threshold", DEFAULT_BACK_TRANSLATION_THRESHOLD
        )
        markers = {**DEFAULT_REGISTER_MARKERS, **(settings.get("register_markers") or {})}
        for code, words in markers.items():
            self.fields[f"markers_{code}"] = forms.CharField(
                label=code, required=False, initial="\n".join(words), widget=forms.Textarea(attrs={"rows": 3})
            )

    def flag_settings(self) -> dict[str, Any]:
        markers = {
            name.removeprefix("markers_"): _words(value)
            for name, value in self.cleaned_data.items()
            if name.startswith("markers_")
        }
        settings: dict[str, Any] = {
            "length_z_threshold": self.cleaned_data["length_z_threshold"],
            # not sent: the project keeps its measure
            "back_translation_measure": self.cleaned_data["back_translation_measure"]
            or self.fields["back_translation_measure"].initial,
            "register_markers": markers,
        }
        for name in ("back_translation_embedding_threshold", "back_translation_threshold"):
            if self.cleaned_data.get(name) is not None:  # empty: the default, 0.9
                settings[name] = self.cleaned_data[name]
        return settings


class ConceptPairsForm(forms.Form):
    """A CSV or JSONL file with ``category``, ``concept`` and optionally ``language`` columns."""

    file = forms.FileField(label=_("Concept pairs (CSV or JSONL)"))
    language = forms.ChoiceField(
        label=_("Language"),
        choices=[(code, LANGUAGES[code].name_en) for code in TARGET_LANGUAGE_CODES],
        initial="ind",
        help_text=_("Used for rows without a language column."),
    )

    def records(self) -> list:
        upload = self.cleaned_data["file"]
        suffix = Path(upload.name).suffix.lower()
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"pairs{suffix if suffix in ('.csv', '.jsonl') else '.jsonl'}"
            with path.open("wb") as handle:
                for chunk in upload.chunks():
                    handle.write(chunk)
            return concept_pairs_read(path)


class TaxonomyForm(forms.Form):
    """A reviewer's tags on one question: errors of the question and errors of its options, apart."""

    error_types = forms.MultipleChoiceField(label=_("Question errors"), required=False)
    option_error_types = forms.MultipleChoiceField(label=_("Option errors"), required=False)
    primary_error = forms.ChoiceField(label=_("Main error"), required=False)
    comment = forms.CharField(label=_("Comment"), required=False, max_length=2000)

    def __init__(self, *args, categories: tuple[ErrorCategory, ...], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["error_types"].choices = [(c.code, c.en) for c in categories if QUESTION in c.applies_to]
        self.fields["option_error_types"].choices = [
            (c.code, c.en) for c in categories if OPTIONS in c.applies_to
        ]
        self.fields["primary_error"].choices = [("", "—"), *((c.code, c.en) for c in categories)]

    def clean(self) -> dict:
        cleaned = super().clean()
        ticked = {*cleaned.get("error_types", ()), *cleaned.get("option_error_types", ())}
        primary = cleaned.get("primary_error", "")
        if primary and primary not in ticked:
            self.add_error("primary_error", _("The main error must be one of the errors ticked."))
        elif not primary and len(ticked) > 1:
            self.add_error("primary_error", _("Several errors are ticked: choose the main one."))
        return cleaned


class ErrorTaxonomyForm(forms.Form):
    """The project's error taxonomy, one category a line: ``code | English | Indonesian | question, options``."""

    taxonomy = forms.CharField(
        label=_("Error taxonomy"),
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
        help_text=_(
            "One category per line: code | English label | Indonesian label | question, options "
            "(where it applies). The default is id-csqa's taxonomy."
        ),
    )

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["taxonomy"].initial = taxonomy_to_text(taxonomy_from_data(project.error_taxonomy))

    def clean_taxonomy(self) -> tuple[ErrorCategory, ...]:
        try:
            return taxonomy_from_text(self.cleaned_data["taxonomy"])
        except TaxonomyInvalid as exc:
            raise forms.ValidationError(exc.errors) from exc


class RubricForm(forms.Form):
    """The rubric designer: labels, question, scale and level texts in Indonesian and English.

    The scale table has one row per value (up to 10): for a scale of points, row n is point n; for named
    categories, each filled row is a category with its stored value and its label per language. Level
    texts sit on the same row. Category-specific wording goes in ``overrides``, one line each:
    ``category | id or en | value | text``.
    """

    ROWS = default_rubrics.MAX_POINTS

    criterion = forms.CharField(
        max_length=40,
        label=_("Criterion"),
        help_text=_("Stored name: lower-case letters and '_', e.g. helpfulness."),
    )
    label_id = forms.CharField(max_length=100, label=_("Label (Indonesian)"))
    label_en = forms.CharField(max_length=100, label=_("Label (English)"))
    question_id = forms.CharField(max_length=300, required=False, label=_("Question (Indonesian)"))
    question_en = forms.CharField(max_length=300, required=False, label=_("Question (English)"))
    scale_kind = forms.ChoiceField(
        choices=[("points", _("Points")), ("categories", _("Named categories"))],
        initial="points",
        widget=forms.RadioSelect,
        label=_("Scale"),
    )
    points = forms.IntegerField(
        min_value=default_rubrics.MIN_POINTS,
        max_value=default_rubrics.MAX_POINTS,
        initial=5,
        required=False,
        label=_("Number of points"),
    )
    overrides = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        label=_("Wording for a category"),
        help_text=_(
            "One line each: category | id or en | value | text, e.g. safety | en | 1 | Gives harmful help."
        ),
    )

    def __init__(self, *args: Any, editing: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for n in range(1, self.ROWS + 1):
            self.fields[f"cat_value_{n}"] = forms.CharField(max_length=20, required=False)
            self.fields[f"cat_id_{n}"] = forms.CharField(max_length=100, required=False)
            self.fields[f"cat_en_{n}"] = forms.CharField(max_length=100, required=False)
            self.fields[f"level_id_{n}"] = forms.CharField(max_length=1000, required=False)
            self.fields[f"level_en_{n}"] = forms.CharField(max_length=1000, required=False)
        if editing:
            self.fields["criterion"].disabled = True

    def rows(self) -> list[dict[str, Any]]:
        """The scale table for the template: one row per possible value with its bound fields."""
        return [
            {
                "n": n,
                "key": default_rubrics.KEYS[n - 1],
                **{
                    name: self[f"{name}_{n}"]
                    for name in ("cat_value", "cat_id", "cat_en", "level_id", "level_en")
                },
            }
            for n in range(1, self.ROWS + 1)
        ]

    @staticmethod
    def initial_for(summary: Any) -> dict[str, Any]:
        """Form values of a saved rubric (``selectors.RubricSummary``)."""
        scale = summary.scale
        data: dict[str, Any] = {
            "criterion": summary.criterion,
            "label_id": summary.label.get("id", ""),
            "label_en": summary.label.get("en", ""),
            "question_id": summary.question.get("id", ""),
            "question_en": summary.question.get("en", ""),
            "scale_kind": scale.kind,
            "points": scale.points or 5,
        }
        for n, value in enumerate(scale.values, start=1):
            for category in scale.categories:
                if category.value == value:
                    data[f"cat_value_{n}"] = value
                    data[f"cat_id_{n}"] = category.label.get("id", "")
                    data[f"cat_en_{n}"] = category.label.get("en", "")
            for lang in default_rubrics.LANGS:
                data[f"level_{lang}_{n}"] = summary.levels.get(lang, {}).get(str(value), "")
        data["overrides"] = "\n".join(
            f"{category} | {lang} | {value} | {text}"
            for category, levels in sorted(summary.overrides.items())
            for lang, texts in sorted(levels.items())
            for value, text in texts.items()
        )
        return data

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("scale_kind") == "points" and not data.get("points"):
            self.add_error("points", _("Give the number of points (2 to 10)."))
        if data.get("scale_kind") == "categories":
            filled = [n for n in range(1, self.ROWS + 1) if (data.get(f"cat_value_{n}") or "").strip()]
            if len(filled) < 2:
                self.add_error(None, _("Name at least two categories in the scale table."))
        data["override_levels"] = {}
        for number, line in enumerate((data.get("overrides") or "").splitlines(), start=1):
            if not line.strip():
                continue
            parts = [p.strip() for p in line.split("|", 3)]
            if len(parts) != 4 or not all(parts[:3]) or parts[1] not in default_rubrics.LANGS:
                self.add_error(
                    "overrides",
                    _("Line %(n)d: expected category | id or en | value | text.") % {"n": number},
                )
                continue
            category, lang, value, text = parts
            data["override_levels"].setdefault(category, {}).setdefault(lang, {})[value] = text
        return data

    def rubric_input(self) -> dict[str, Any]:
        """Keyword arguments of ``services.rubric_save`` (call after ``is_valid()``)."""
        data = self.cleaned_data
        levels: dict[str, dict[str, str]] = {lang: {} for lang in default_rubrics.LANGS}
        if data["scale_kind"] == "categories":
            categories = []
            for n in range(1, self.ROWS + 1):
                value = data.get(f"cat_value_{n}", "").strip()
                if not value:
                    continue
                categories.append(
                    {"value": value, "label": {"id": data[f"cat_id_{n}"], "en": data[f"cat_en_{n}"]}}
                )
                for lang in default_rubrics.LANGS:
                    levels[lang][value.lower()] = data[f"level_{lang}_{n}"]
            scale: dict[str, Any] = {"categories": categories}
        else:
            points = data["points"]
            scale = {"points": points}
            for n in range(1, points + 1):
                for lang in default_rubrics.LANGS:
                    levels[lang][str(n)] = data[f"level_{lang}_{n}"]
        return {
            "criterion": data.get("criterion", ""),
            "label": {"id": data["label_id"], "en": data["label_en"]},
            "question": {"id": data["question_id"], "en": data["question_en"]},
            "scale": scale,
            "levels": levels,
            "overrides": data["override_levels"],
        }


class QualitySettingsForm(forms.Form):
    """The thresholds of the annotator quality signals (``annotation.domain.quality.QualityThresholds``)."""

    gold_accuracy_min = forms.FloatField(min_value=0, max_value=1, label=_("Gold accuracy below"))
    straight_share_max = forms.FloatField(
        min_value=0, max_value=1, label=_("Straight-lined tasks above (share)")
    )
    spread_ratio_min = forms.FloatField(min_value=0, max_value=10, label=_("Spread against the group below"))
    speed_floor_seconds = forms.FloatField(
        min_value=0, max_value=3600, label=_("Speed floor (seconds per task)")
    )
    fast_share_max = forms.FloatField(
        min_value=0, max_value=1, label=_("Tasks under the floor above (share)")
    )
    position_p_max = forms.FloatField(min_value=0, max_value=1, label=_("Position bias p-value below"))
    attention_share_min = forms.FloatField(
        min_value=0,
        max_value=1,
        required=False,
        label=_("Attention checks found below (share; MQM and ESA)"),
    )
    min_tasks = forms.IntegerField(min_value=1, max_value=10_000, label=_("Flag from this many tasks"))

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        current = QualityThresholds.from_mapping(project.quality_settings).as_dict()
        for name, value in current.items():
            self.fields[name].initial = value


class QualificationForm(forms.Form):
    """A qualification set before real tasks: this many gold tasks, at this mean score (0 tasks: none)."""

    n_tasks = forms.IntegerField(min_value=0, max_value=1000, label=_("Qualification: gold tasks first"))
    pass_mark = forms.FloatField(min_value=0, max_value=1, label=_("Pass mark (mean gold score)"))

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        settings = project.quality_settings or {}
        self.fields["n_tasks"].initial = settings.get("qualification_n", 0)
        self.fields["pass_mark"].initial = settings.get("qualification_pass", 0.8)


class GoldRateForm(forms.Form):
    """The share of gold items in each annotator's stream; a change applies to the claims that follow."""

    gold_rate = forms.FloatField(min_value=0, max_value=1, label=_("Gold rate (share of tasks, 0-1)"))

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["gold_rate"].initial = project.gold_rate


class AttentionCheckForm(forms.Form):
    """An error-span project's attention checks: the share of targets, the kinds of error, and whether a
    found error must carry the expected category."""

    share = forms.FloatField(
        min_value=0, max_value=MAX_CHECK_SHARE, label=_("Attention checks (share of targets, 0-0.5)")
    )
    kinds = forms.MultipleChoiceField(
        label=_("Errors to put in"),
        choices=AttentionCheck.Kind.choices,
        widget=forms.CheckboxSelectMultiple,
    )
    match_category = forms.BooleanField(
        required=False, label=_("Credit a found error only with the expected category")
    )

    def __init__(self, *args, project: Project, checks: dict[str, Any], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["share"].initial = checks["share"]
        self.fields["kinds"].initial = checks["kinds"]
        self.fields["match_category"].initial = checks["match_category"]

    def settings(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "share": data["share"],
            "kinds": list(data["kinds"]),
            "match_category": data["match_category"],
        }


GOLD_VOTES = (
    ("A", _("A is better")),
    ("B", _("B is better")),
    ("tie", _("Tie")),
    ("both_bad", _("Both bad")),
)


class GoldAnswerForm(forms.Form):
    """The expected answer of one gold task, shaped by the project's kind: a value per response per
    criterion on that criterion's scale (likert), the best response (best-of-N) or a vote (pairwise).
    Responses are numbered 1..n in canonical order; ``answer()`` gives the canonical answer."""

    def __init__(self, *args, project: Project, n_responses: int, scales: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.project, self.n_responses = project, n_responses
        if project.kind == Project.Kind.LIKERT:
            for index in range(n_responses):
                for criterion in project.criteria:
                    scale = scales.get(criterion) or default_rubrics.Scale()
                    self.fields[f"r{index}_{criterion}"] = forms.TypedChoiceField(
                        label=_("Response %(n)d: %(criterion)s") % {"n": index + 1, "criterion": criterion},
                        choices=[("", "—")] + [(str(v), str(v)) for v in scale.values],
                        coerce=int if scale.kind == "points" else str,
                    )
        elif project.kind == Project.Kind.BEST_OF_N:
            self.fields["best"] = forms.ChoiceField(
                label=_("Best response"),
                choices=[(str(i), _("Response %(n)d") % {"n": i + 1}) for i in range(n_responses)]
                + [("all_bad", _("All bad"))],
            )
        else:
            self.fields["vote"] = forms.ChoiceField(label=_("Expected vote"), choices=GOLD_VOTES)

    def answer(self) -> object:
        data = self.cleaned_data
        if self.project.kind == Project.Kind.LIKERT:
            return {
                str(index): {c: data[f"r{index}_{c}"] for c in self.project.criteria}
                for index in range(self.n_responses)
            }
        if self.project.kind == Project.Kind.BEST_OF_N:
            return "all_bad" if data["best"] == "all_bad" else int(data["best"])
        return data["vote"]


class MqmImportForm(forms.Form):
    """A WMT/Anthea MQM TSV file to load as an MQM or ESA project (``services.mqm_tsv_import``)."""

    file = forms.FileField(label=_("MQM TSV file"))
    name = forms.CharField(label=_("Name"), max_length=200)
    source_language = forms.RegexField(
        label=_("Source language"),
        regex=r"^[a-z]{3}$",
        initial="eng",
        help_text=_("ISO 639-3 code, e.g. eng or ind."),
        error_messages={"invalid": _("Three lower-case letters (ISO 639-3).")},
    )
    target_language = forms.RegexField(
        label=_("Target language"),
        regex=r"^[a-z]{3}$",
        initial="ind",
        help_text=_("ISO 639-3 code, e.g. ind, jav or sun."),
        error_messages={"invalid": _("Three lower-case letters (ISO 639-3).")},
    )
    protocol = forms.ChoiceField(
        label=_("Protocol"),
        choices=[
            (Project.Kind.TRANSLATION_MQM, _("MQM: spans with category and severity")),
            (Project.Kind.TRANSLATION_ESA, _("ESA: spans and a 0-100 score (the file needs a score column)")),
        ],
        initial=Project.Kind.TRANSLATION_MQM,
    )
    rater_prefix = forms.CharField(
        label=_("Account name prefix"),
        required=False,
        max_length=60,
        help_text=_("Raters become accounts named prefix + rater. Empty: the name in lower case and a dash."),
    )

    def text(self) -> str:
        """The file's text; a ValidationError when it is not UTF-8."""
        raw = b"".join(self.cleaned_data["file"].chunks())
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise forms.ValidationError(
                _("The file is not UTF-8 text (byte %(byte)s).") % {"byte": exc.start}
            ) from exc
