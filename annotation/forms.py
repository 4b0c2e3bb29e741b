"""Forms of the project manager pages; they only shape input for ``annotation.services``."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from annotation.domain import rubrics as default_rubrics
from annotation.models import AnnotatorGroup, Project
from config.roles import ANNOTATOR
from datasets_app.models import Dataset


class ProjectCreateForm(forms.Form):
    dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.filter(kind=Dataset.Kind.PROMPTS).order_by("name")
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

    def service_kwargs(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        data["groups"] = [name.strip() for name in data["groups"].split(",") if name.strip()]
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
