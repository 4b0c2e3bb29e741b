"""Forms of the project manager pages; they only shape input for ``annotation.services``."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from accounts.roles import ANNOTATOR
from annotation.domain import rubrics as default_rubrics
from annotation.models import AnnotatorGroup, Project
from annotation.selectors.rubrics import rubric_choices
from annotation.services.projects import SINGLE_OWNER_KINDS
from annotation.services.questions import concept_pairs_read
from datasets_app.domain.languages import LANGUAGES, TARGET_LANGUAGE_CODES
from datasets_app.domain.questions import LLM_ERROR_CATEGORIES
from datasets_app.domain.translation_flags import DEFAULT_LENGTH_Z_THRESHOLD, DEFAULT_REGISTER_MARKERS
from datasets_app.models import Dataset


def _criterion_choices() -> list[tuple[str, str]]:
    """Every criterion with a rubric (the designer's), IndoPref's relevance and fluency first."""
    lang = "id" if (get_language() or "en").startswith("id") else "en"
    found = dict(rubric_choices(lang))
    defaults = [
        (c, found.pop(c, default_rubrics.CRITERION_LABELS[c][lang])) for c in default_rubrics.CRITERIA
    ]
    return defaults + sorted(found.items())


class ProjectCreateForm(forms.Form):
    dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.order_by("name"),
        required=False,
        help_text=_(
            "Prompts for rating jobs, translation units for translation jobs, questions for answering. "
            "Question authoring without a dataset creates one."
        ),
    )
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=Project.Kind.choices)
    criteria = forms.MultipleChoiceField(
        choices=_criterion_choices,
        initial=list(default_rubrics.CRITERIA),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Likert: each response is rated on each criterion's scale (rubrics under Rubrics)."),
    )
    best_pick = forms.ChoiceField(choices=Project.BestPick.choices, initial="optional")
    allow_all_bad = forms.BooleanField(required=False, label=_('Allow "all bad" as the best pick'))
    overlap = forms.IntegerField(
        min_value=1, max_value=50, initial=3, help_text=_("Annotators per task per group.")
    )
    groups = forms.CharField(
        initial="A, B", help_text=_("Comma-separated group names; k applies in each group."), max_length=500
    )
    pair_mode = forms.ChoiceField(choices=Project.PairMode.choices, initial="sample")
    pairs_per_prompt = forms.IntegerField(min_value=1, max_value=45, initial=3)
    turn_mode = forms.ChoiceField(choices=Project.TurnMode.choices, initial="overall")
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, required=False, help_text=_("Empty: random."))
    lease_minutes = forms.IntegerField(min_value=1, max_value=7 * 24 * 60, initial=30)
    allow_edits = forms.BooleanField(required=False, initial=True)
    gold_rate = forms.FloatField(min_value=0, max_value=1, initial=0)
    instructions_id = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False)
    instructions_en = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False)
    max_ambiguous = forms.IntegerField(
        min_value=0,
        max_value=50,
        initial=3,
        required=False,
        label=_("Ambiguous flags allowed"),
        help_text=_("Answering: a question flagged ambiguous by more annotators than this is excluded."),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        kind = data.get("kind")
        if kind in SINGLE_OWNER_KINDS:
            data["overlap"] = 1  # one translator, reviewer or author per item
        if not data.get("dataset") and kind != Project.Kind.QUESTION_AUTHORING:
            self.add_error("dataset", _("Choose a dataset."))
        return data

    def service_kwargs(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        data["groups"] = [name.strip() for name in data["groups"].split(",") if name.strip()]
        if data.get("max_ambiguous") is None:
            data["max_ambiguous"] = 3
        if data["kind"] not in (Project.Kind.LIKERT, Project.Kind.BEST_OF_N, Project.Kind.PAIRWISE):
            for name in (
                "criteria",
                "best_pick",
                "allow_all_bad",
                "pair_mode",
                "pairs_per_prompt",
                "turn_mode",
            ):
                data.pop(name, None)
        return data


class GroupForm(forms.Form):
    name = forms.CharField(max_length=100)


class MemberForm(forms.Form):
    users = forms.ModelMultipleChoiceField(queryset=get_user_model().objects.none())
    group = forms.ModelChoiceField(queryset=AnnotatorGroup.objects.none())

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["users"].queryset = (
            get_user_model().objects.filter(groups__name=ANNOTATOR, is_active=True).order_by("username")
        )
        self.fields["group"].queryset = project.groups.order_by("id")


def _words(text: str) -> list[str]:
    return [w.strip() for line in text.splitlines() for w in line.split(",") if w.strip()]


class FlagSettingsForm(forms.Form):
    """The length threshold and the per-register word lists (one word or phrase per line or comma)."""

    length_z_threshold = forms.FloatField(
        min_value=0.5,
        max_value=20,
        initial=DEFAULT_LENGTH_Z_THRESHOLD,
        label=_("Length threshold (robust z-score)"),
    )

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        settings = project.flag_settings or {}
        self.fields["length_z_threshold"].initial = settings.get(
            "length_z_threshold", DEFAULT_LENGTH_Z_THRESHOLD
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
        return {"length_z_threshold": self.cleaned_data["length_z_threshold"], "register_markers": markers}


class ConceptPairsForm(forms.Form):
    """A CSV or JSONL file with ``category``, ``concept`` and optionally ``language`` columns."""

    file = forms.FileField(label=_("Concept pairs (CSV or JSONL)"))
    language = forms.ChoiceField(
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
    error_types = forms.MultipleChoiceField(
        choices=[(code, texts[0]) for code, texts in LLM_ERROR_CATEGORIES.items()], required=False
    )
    comment = forms.CharField(required=False, max_length=2000)


class RubricForm(forms.Form):
    """The rubric designer: labels, question, scale and level texts in Indonesian and English.

    The scale table has one row per value (up to 10): for a scale of points, row n is point n; for named
    categories, each filled row is a category with its stored value and its label per language. Level
    texts sit on the same row. Category-specific wording goes in ``overrides``, one line each:
    ``category | id or en | value | text``.
    """

    ROWS = default_rubrics.MAX_POINTS

    criterion = forms.CharField(
        max_length=40, help_text=_("Stored name: lower-case letters and '_', e.g. helpfulness.")
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
