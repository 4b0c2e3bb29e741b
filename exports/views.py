"""Export pages for researchers and project managers: choose options, preview counts, export, download.

``export_new`` renders the options form; its "Preview counts" button posts the same form to
``export_preview`` (htmx swaps in the ``preview`` fragment) which builds the pairs without writing. The
export itself runs in a worker; ``export_detail`` polls its ``progress`` fragment until it finishes. A
translation project offers its parallel corpus and a question project its question set: the form then
shows only what applies to them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django import forms
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from accounts.permissions import role_required
from accounts.refusals import shown
from accounts.roles import DATA_ROLES
from annotation.models import Project
from exports import selectors
from exports.domain.preference_pairs import ORDERINGS, STRATEGIES
from exports.families import kinds_for
from exports.families.preferences import DEFAULT_STRATEGY, score_criteria, strategies_for
from exports.models import Export
from exports.options import (
    CORPUS_KINDS,
    PAIR_ONLY_DEFAULTS,
    QUESTION_SET,
    ExportInvalid,
    ExportOptions,
    parse_weights,
)
from exports.services import (
    export_create,
    export_download_name,
    export_preview,
)

STRATEGY_LABELS = {
    "scores": _("Scores: every response pair ordered by the mean ratings"),
    "best_vs_rest": _("Best vs rest: the most-picked response against each other one"),
    "pairwise_majority": _("Pairwise majority: the side most votes preferred"),
}
ORDERING_LABELS = {
    "weighted": _("weighted: the weighted sum of the criterion means"),
    "lexicographic": _("lexicographic: criteria compared one after another, in the order given"),
}


class ExportForm(forms.Form):
    kind = forms.ChoiceField(label=_("Format"), choices=Export.Kind.choices, initial="hf")
    strategy = forms.ChoiceField(label=_("Strategy"), required=False)
    weights = forms.CharField(label=_("Criterion weights"), required=False)
    ordering = forms.ChoiceField(
        label=_("Ordering"), choices=[(o, ORDERING_LABELS[o]) for o in ORDERINGS], initial="weighted"
    )
    min_margin = forms.FloatField(label=_("Minimum margin"), min_value=0, initial=0)
    min_annotators = forms.IntegerField(label=_("Minimum annotators per prompt"), min_value=1, initial=1)
    min_agreement = forms.FloatField(
        label=_("Minimum prompt agreement"), min_value=0, max_value=1, required=False
    )
    reliability_weights = forms.BooleanField(
        label=_("Weight votes by annotator reliability"),
        required=False,
        help_text=_(
            "Pairwise majority: each vote counts with its annotator's estimated reliability (Dawid-Skene) "
            "instead of 1; the weights are written to the dataset card."
        ),
    )
    categories = forms.MultipleChoiceField(label=_("Categories"), required=False)
    languages = forms.MultipleChoiceField(label=_("Languages"), required=False)
    registers = forms.MultipleChoiceField(label=_("Registers"), required=False)
    test_size = forms.FloatField(label=_("Test share"), min_value=0, max_value=0.9, initial=0.1)
    seed = forms.IntegerField(label=_("Seed"), min_value=0, required=False)
    provenance = forms.ChoiceField(
        label=_("Who gave the answers"),
        required=False,
        choices=[
            ("", _("Not stated")),
            ("expert", _("Native speakers or experts")),
            ("crowd", _("Crowd workers")),
            ("simulated", _("Simulated (no person)")),
        ],
        initial="",
        help_text=_(
            "Written on the dataset card (when not stated, the card says so). Simulated annotators are found "
            "and declared in any case."
        ),
    )
    license = forms.CharField(label=_("License"), required=False, max_length=100)
    pretty_name = forms.CharField(label=_("Dataset name"), required=False, max_length=200)
    push_to_hub = forms.CharField(
        label=_("Push to the Hugging Face Hub"),
        required=False,
        max_length=200,
        help_text=_("Repository id (owner/name); the server's HF_TOKEN is used."),
    )
    private = forms.BooleanField(label=_("Private repository"), required=False, initial=True)
    max_ambiguous = forms.IntegerField(
        label=_("Most ambiguous flags kept"),
        min_value=0,
        required=False,
        help_text=_("A question flagged ambiguous by more answers is left out. Empty: the project's limit."),
    )

    # Fields that shape preference pairs: a corpus export has none of them.
    PAIR_FIELDS = (
        *(n for n in PAIR_ONLY_DEFAULTS if n != "turn"),
        "ordering",
        "test_size",
        "seed",
        "provenance",
    )

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        kinds = kinds_for(project)
        labels = dict(Export.Kind.choices)
        self.fields["kind"].choices = [(k, labels.get(k, k)) for k in kinds]
        self.fields["kind"].initial = kinds[0] if kinds else None
        if QUESTION_SET not in kinds:
            del self.fields["max_ambiguous"]
        if set(kinds) & set(CORPUS_KINDS):
            for name in self.PAIR_FIELDS:
                del self.fields[name]
            return
        if project.kind != Project.Kind.PAIRWISE:
            del self.fields["reliability_weights"]
        if "scores" in strategies_for(project):
            self.fields["weights"].help_text = _weights_help(project)
        else:
            # Nothing to weigh: pairwise votes and best-of-N picks are not scores.
            del self.fields["weights"], self.fields["ordering"]
        facets = selectors.project_facets(project)
        for name, column in (
            ("categories", "category"),
            ("languages", "language"),
            ("registers", "register"),
        ):
            self.fields[name].choices = [(v, f"{v or '—'} ({n})") for v, n in facets[column]]
        self.fields["strategy"].choices = [("", _("Default for this project"))] + [
            (s, STRATEGY_LABELS[s]) for s in STRATEGIES
        ]
        self.fields["seed"].help_text = _("Empty: the project's seed.")
        self.fields["license"].help_text = _("Empty: the dataset's licence.")

    @property
    def is_corpus(self) -> bool:
        return "strategy" not in self.fields

    def clean_weights(self) -> dict[str, float] | None:
        try:
            return parse_weights(self.cleaned_data.get("weights"))
        except ExportInvalid as exc:
            raise forms.ValidationError(shown(exc.errors["weights"])) from None

    def options(self) -> ExportOptions:
        data = self.cleaned_data
        if self.is_corpus:
            return ExportOptions(
                kind=data["kind"],
                license=data["license"],
                pretty_name=data["pretty_name"],
                max_ambiguous=data.get("max_ambiguous"),
            )
        return ExportOptions(
            kind=data["kind"],
            strategy=data["strategy"] or None,
            weights=data.get("weights"),
            ordering=data.get("ordering") or "weighted",
            min_margin=data["min_margin"] or 0.0,
            min_annotators=data["min_annotators"] or 1,
            min_agreement=data["min_agreement"],
            categories=data["categories"] or None,
            languages=data["languages"] or None,
            registers=data["registers"] or None,
            reliability_weights=bool(data.get("reliability_weights")),
            test_size=data["test_size"] or 0.0,
            seed=data["seed"],
            provenance=data["provenance"] or "",
            license=data["license"],
            pretty_name=data["pretty_name"],
        )


def _weights_help(project: Project) -> str:
    """What an empty weights field means for this project: which criteria weigh 1 and which are left out."""
    criteria = score_criteria(project)
    text = _("For the scores strategy, e.g. relevance=2,fluency=1; empty: %(points)s weigh 1 each.") % {
        "points": ", ".join(criteria.on_points) or "-"
    }
    if criteria.on_categories:
        text += " " + _(
            "Left out of every score: %(named)s (rated on named categories, which have no order)."
        ) % {"named": ", ".join(criteria.on_categories)}
    return text


WORK_LABELS = {
    "translations": _("Translations (units)"),
    "review_verdicts": _("Review verdicts (every round)"),
    "accepting_verdicts": _("Accepting verdicts"),
    "questions": _("Questions written"),
    "answers": _("Answers"),
}


def _work_rows(preview: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The corpus preview's who-did-the-work rows, labelled in the page's language."""
    work = (preview or {}).get("work") or {}
    return [
        {
            "label": WORK_LABELS[key],
            "rows": c["rows"],
            "by_people": c["rows"] - c["simulated_rows"] - c["unrecorded_rows"],
            **c,
        }
        for key, c in work.items()
    ]


_FIELD_OF_OPTION = {"format": "kind", "split": "test_size", "push_to_hub": "push_to_hub"}


def _add_errors(form: ExportForm, exc: ExportInvalid) -> None:
    for key, message in exc.errors.items():
        field = _FIELD_OF_OPTION.get(key, key)
        form.add_error(field if field in form.fields else None, shown(message))


def _named(form: ExportForm, key: str, message: str) -> str:
    """``message`` after the label of the field it is about, as the page shows that field."""
    field = form.fields.get(_FIELD_OF_OPTION.get(key, key))
    return f"{field.label}: {message}" if field is not None and field.label else message


@role_required(*DATA_ROLES)
def export_list(request: HttpRequest) -> HttpResponse:
    context = {
        "projects": selectors.export_projects(),
        "exports": selectors.export_list()[:50],
    }
    return render(request, "exports/list.html", context)


def _export_project(project_id: int) -> Project:
    project = get_object_or_404(Project.objects.select_related("dataset"), pk=project_id)
    if not kinds_for(project):
        raise Http404("this project has nothing to export")
    return project


@role_required(*DATA_ROLES)
def export_new(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _export_project(project_id)
    if request.method == "POST":
        form = ExportForm(request.POST, project=project)
        if form.is_valid():
            try:
                record = export_create(
                    project=project,
                    options=form.options(),
                    user=request.user,
                    hub_repo_id=form.cleaned_data["push_to_hub"],
                    hub_private=form.cleaned_data["private"],
                )
            except ExportInvalid as exc:
                _add_errors(form, exc)
            else:
                return redirect("exports:export_detail", export_id=record.pk)
    else:
        form = ExportForm(project=project, initial={"strategy": ""})
    context = {
        "project": project,
        "form": form,
        "default_strategy": DEFAULT_STRATEGY.get(project.kind, ""),
        "exports": selectors.export_list(project=project)[:20],
    }
    return render(request, "exports/new.html", context)


@require_POST
@role_required(*DATA_ROLES)
def export_preview_view(request: HttpRequest, project_id: int) -> HttpResponse:
    """Counts of the export the form describes, without writing (the ``preview`` fragment)."""
    project = _export_project(project_id)
    form = ExportForm(request.POST, project=project)
    preview = None
    error = ""
    if form.is_valid():
        try:
            preview = export_preview(project=project, options=form.options())
        except ExportInvalid as exc:
            error = "; ".join(_named(form, k, shown(v)) for k, v in exc.errors.items())
        except ValueError as exc:  # the pair builder refusing this project's data
            error = str(exc)
    else:
        error = "; ".join(_named(form, k, " ".join(v)) for k, v in form.errors.items())
    context = {
        "project": project,
        "form": form,
        "preview": preview,
        "preview_error": error,
        "work_rows": _work_rows(preview),
    }
    template = "exports/new.html#preview" if request.htmx else "exports/new.html"
    return render(request, template, context)


@role_required(*DATA_ROLES)
def export_detail(request: HttpRequest, export_id: int) -> HttpResponse:
    record = get_object_or_404(Export.objects.select_related("project", "created_by"), pk=export_id)
    template = "exports/detail.html#progress" if request.htmx else "exports/detail.html"
    return render(request, template, {"export": record})


@role_required(*DATA_ROLES)
def export_download(request: HttpRequest, export_id: int) -> FileResponse:
    record = get_object_or_404(Export.objects.select_related("project"), pk=export_id)
    path = Path(record.zip_path) if record.zip_path else None
    if record.status != Export.Status.SUCCEEDED or path is None or not path.is_file():
        raise Http404("this export has no file to download")
    return FileResponse(path.open("rb"), as_attachment=True, filename=export_download_name(record))
