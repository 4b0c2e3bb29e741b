"""Forms of the people pages; they only shape input for ``accounts.services``."""

from __future__ import annotations

from django import forms
from django.contrib.auth.models import Group
from django.utils.translation import gettext_lazy as _

from accounts.models import language_code
from accounts.roles import role_label


class GroupChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: Group) -> str:
        return role_label(obj.name)


class PersonCreateForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)
    first_name = forms.CharField(label=_("First name"), max_length=150, required=False)
    last_name = forms.CharField(label=_("Last name"), max_length=150, required=False)
    email = forms.EmailField(
        label=_("E-mail"), help_text=_("The link to set a password is sent to this address.")
    )
    language = forms.CharField(
        label=_("Language"),
        max_length=3,
        required=False,
        validators=[language_code],
        help_text=_("ISO 639-3 code of the language they annotate in: ind, jav, sun, mad, min, ..."),
    )
    groups = GroupChoiceField(
        label=_("Groups"),
        queryset=Group.objects.order_by("name"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Their roles: annotator, reviewer, project manager, researcher."),
    )


class PeopleSearchForm(forms.Form):
    q = forms.CharField(label=_("Search"), required=False, max_length=150)
