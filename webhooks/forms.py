from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.events import EVENT_NAMES
from annotation.models import Project

EVENT_LABELS = {
    "task.submitted": _("task.submitted: an annotator submitted a task"),
    "project.completed": _("project.completed: every place of every task is submitted"),
    "review.rejected": _("review.rejected: a reviewer sent work back"),
    "run.finished": _("run.finished: a generation, judge or benchmark run ended"),
    "export.finished": _("export.finished: an export ended"),
    "import.finished": _("import.finished: a dataset or study import ended (site-wide endpoints only)"),
}


class WebhookForm(forms.Form):
    url = forms.URLField(label=_("URL"), max_length=500, assume_scheme="https")
    project = forms.ModelChoiceField(
        label=_("Project"),
        queryset=Project.objects.order_by("name"),
        required=False,
        empty_label=_("All projects (site-wide)"),
    )
    events = forms.MultipleChoiceField(
        label=_("Events"),
        choices=[(name, EVENT_LABELS[name]) for name in EVENT_NAMES],
        widget=forms.CheckboxSelectMultiple,
    )
    description = forms.CharField(label=_("Description"), max_length=200, required=False)
