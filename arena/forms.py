"""Forms of the arena pages: a manager's new arena, and a voter's new battle, next message and vote."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from arena.domain.battles import CATEGORIES
from arena.models import Arena
from datasets_app.domain.languages import LANGUAGES, TARGET_LANGUAGE_CODES
from datasets_app.models import Dataset
from evaluation.models import ModelEndpoint

CATEGORY_LABELS = {
    "chat": _("Everyday chat"),
    "knowledge": _("General knowledge"),
    "culture": _("Local culture"),
    "writing": _("Writing"),
    "translation": _("Translation"),
    "reasoning": _("Reasoning"),
    "math": _("Mathematics"),
    "coding": _("Coding"),
    "advice": _("Advice"),
    "other": _("Other"),
}


def language_choices(lang: str) -> list[tuple[str, str]]:
    return [
        (code, LANGUAGES[code].name_id if lang == "id" else LANGUAGES[code].name_en)
        for code in TARGET_LANGUAGE_CODES
    ]


def register_choices(lang: str) -> list[tuple[str, str]]:
    choices: list[tuple[str, str]] = [("", _("No particular register"))]
    for code in TARGET_LANGUAGE_CODES:
        language = LANGUAGES[code]
        for register in language.registers:
            name = language.name_id if lang == "id" else language.name_en
            label = register.name_id if lang == "id" else register.name_en
            choices.append((register.code, f"{name}: {label}"))
    return choices


class ArenaCreateForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=150)
    description = forms.CharField(
        label=_("Description"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    endpoints = forms.ModelMultipleChoiceField(
        label=_("Model endpoints"),
        queryset=ModelEndpoint.objects.filter(is_active=True).order_by("slug"),
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Every battle pits two of them against each other."),
    )
    reveal = forms.ChoiceField(label=_("Show the model names"), choices=Arena.Reveal.choices)
    sampler = forms.ChoiceField(
        label=_("Sampler"),
        choices=Arena.Sampler.choices,
        help_text=_(
            "Uniform: every pair as often. Active: the pair whose next vote narrows the ratings most."
        ),
    )
    rules_id = forms.CharField(
        label=_("Rules (Indonesian)"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    rules_en = forms.CharField(
        label=_("Rules (English)"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    consent_id = forms.CharField(
        label=_("Consent text (Indonesian)"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    consent_en = forms.CharField(
        label=_("Consent text (English)"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    seed_dataset = forms.ModelChoiceField(
        label=_("Seed prompts"),
        queryset=Dataset.objects.filter(kind=Dataset.Kind.PROMPTS).order_by("name"),
        required=False,
        help_text=_("Optional: prompts offered to people who want a starting point."),
    )
    max_prompt_chars = forms.IntegerField(label=_("Longest prompt (characters)"), min_value=1, initial=2000)
    battles_per_hour = forms.IntegerField(label=_("Battles per person per hour"), min_value=1, initial=30)
    max_turns = forms.IntegerField(label=_("Messages per battle"), min_value=1, max_value=20, initial=3)
    max_tokens = forms.IntegerField(label=_("Longest answer (tokens)"), min_value=1, initial=512)
    timeout_s = forms.IntegerField(label=_("Time limit per answer (seconds)"), min_value=5, initial=120)
    blocked_terms = forms.CharField(
        label=_("Blocked terms"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("One per line; a prompt containing one is refused."),
    )

    def service_kwargs(self) -> dict:
        data = dict(self.cleaned_data)
        data["blocked_terms"] = [line.strip() for line in data["blocked_terms"].splitlines() if line.strip()]
        data["endpoints"] = list(data["endpoints"])
        return data


class BattleForm(forms.Form):
    language = forms.ChoiceField(label=_("Language"))
    register = forms.ChoiceField(label=_("Register"), required=False)
    category = forms.ChoiceField(
        label=_("Category"), choices=[(c, CATEGORY_LABELS[c]) for c in CATEGORIES], initial="chat"
    )
    text = forms.CharField(label=_("Your prompt"), widget=forms.Textarea(attrs={"rows": 4}), strip=False)
    consent = forms.BooleanField(label=_("I agree"), required=False)

    def __init__(self, *args, lang: str, consent_required: bool, max_chars: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["language"].choices = language_choices(lang)
        self.fields["register"].choices = register_choices(lang)
        self.fields["text"].widget.attrs["maxlength"] = max_chars
        self.fields["consent"].required = consent_required


class ContinueForm(forms.Form):
    text = forms.CharField(
        label=_("Your next message"), widget=forms.Textarea(attrs={"rows": 3}), strip=False
    )


class VoteForm(forms.Form):
    vote = forms.ChoiceField(choices=[("A", "A"), ("B", "B"), ("tie", "tie"), ("both_bad", "both_bad")])
    reason = forms.CharField(required=False, max_length=2000)
