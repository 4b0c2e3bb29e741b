"""Forms of the project manager pages; they only shape input for ``annotation.services``."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from accounts.roles import ANNOTATOR
from annotation.domain import rubrics as default_rubrics
from annotation.domain.quality import QualityThresholds
from annotation.models import AnnotatorGroup, Project
from annotation.services.projects import SINGLE_OWNER_KINDS
from annotation.services.questions import concept_pairs_read
from datasets_app.domain.languages import LANGUAGES, TARGET_LANGUAGE_CODES
from datasets_app.domain.questions import LLM_ERROR_CATEGORIES
from datasets_app.domain.translation_flags import DEFAULT_LENGTH_Z_THRESHOLD, DEFAULT_REGISTER_MARKERS
from datasets_app.models import Dataset


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
        choices=[(c, default_rubrics.CRITERION_LABELS[c]["en"]) for c in default_rubrics.CRITERIA],
        initial=list(default_rubrics.CRITERIA),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Likert: each response is rated 1-5 on each criterion."),
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
