"""Moving a study in from Label Studio, Argilla or Potato: upload the export (choosing its tool), see
what was found and which data fields hold the prompt and the responses, then import it with its answers in
the background, its progress on the import's page and then a link to the project.

A file with problems is shown with every problem (file, record, field) and nothing is written."""

from __future__ import annotations

from pathlib import Path

from django import forms
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.permissions import role_required
from accounts.roles import PROJECT_MANAGER
from annotation.domain.tool_studies.label_studio import FieldMapping
from annotation.domain.tool_studies.study import TOOL_LABELS, Problem, StudyInvalid
from annotation.models import StudyImport
from annotation.services import ProjectInvalid, study_import_progress_get, study_import_queue
from annotation.tool_files import field_choices, read_study
from datasets_app.domain.languages import LANGUAGES
from datasets_app.models import Dataset
from datasets_app.uploads import UploadRejected, store_upload

UPLOAD_SALT = "annotation.tool-study-upload"
UPLOAD_MAX_AGE = 24 * 3600
PREVIEW_ITEMS = 5
RECENT_IMPORTS = 10


class ToolStudyUploadForm(forms.Form):
    tool = forms.ChoiceField(label=_("Made with"), choices=list(TOOL_LABELS.items()))
    file = forms.FileField(
        label=_("Export"),
        help_text=_(
            "Label Studio: the JSON export. Argilla: the dataset folder as a .zip. "
            "Potato: the annotation_output folder as a .zip."
        ),
    )
    name = forms.CharField(label=_("Name of the new dataset and project"), max_length=200)
    language = forms.ChoiceField(
        label=_("Language of the items"),
        choices=[(code, f"{lang.name_en} ({code})") for code, lang in LANGUAGES.items()],
        initial="ind",
    )


@role_required(PROJECT_MANAGER)
def study_import(request: HttpRequest) -> HttpResponse:
    """The upload: the file is kept on disk and the preview opens."""
    form = ToolStudyUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            path, _format = store_upload(upload, file_format=None)
        except UploadRejected as exc:
            form.add_error("file", str(exc))
        else:
            token = signing.dumps(
                {
                    "path": str(path),
                    "tool": form.cleaned_data["tool"],
                    "filename": Path(upload.name).name,
                    "name": form.cleaned_data["name"],
                    "language": form.cleaned_data["language"],
                },
                salt=UPLOAD_SALT,
            )
            return redirect("annotation:study_import_preview", token=token)
    status = 400 if request.method == "POST" else 200
    recent = list(StudyImport.objects.select_related("project")[:RECENT_IMPORTS])
    for job in recent:
        job.tool_label = TOOL_LABELS.get(job.tool, job.tool)
    return render(request, "annotation/study_import.html", {"form": form, "recent": recent}, status=status)


def _pending(token: str) -> dict:
    try:
        pending = signing.loads(token, salt=UPLOAD_SALT, max_age=UPLOAD_MAX_AGE)
    except signing.BadSignature:
        raise Http404("no such upload") from None
    if not Path(pending["path"]).exists():
        raise Http404("the upload was imported or has expired")
    return pending


def _mapping_from(data) -> FieldMapping | None:
    if "prompt_field" not in data:
        return None
    return FieldMapping(
        prompt=data.get("prompt_field", "").strip(),
        responses=tuple(f for f in data.getlist("response_field") if f.strip()),
        item_id=data.get("item_id_field", "").strip(),
    )


def _shown(problem: Problem) -> str:
    """The problem's message in the page's language (the readers' messages are in the catalogue)."""
    if problem.params:
        return gettext(problem.template) % problem.params
    return gettext(problem.template or problem.message)


@role_required(PROJECT_MANAGER)
def study_import_preview(request: HttpRequest, token: str) -> HttpResponse:
    """What the file holds, read with the chosen fields; confirming imports it (all or nothing)."""
    pending = _pending(token)
    path, tool = Path(pending["path"]), pending["tool"]
    # An upload that is being imported, or was, shows its import: it is not imported twice.
    started = (
        StudyImport.objects.filter(upload_path=str(path))
        .exclude(status__in=[StudyImport.Status.FAILED, StudyImport.Status.CANCELLED])
        .first()
    )
    if started is not None:
        return redirect("annotation:study_import_detail", import_id=started.pk)
    data = request.POST if request.method == "POST" else request.GET
    mapping = _mapping_from(data)
    name = (data.get("name") or pending["name"]).strip()
    keys, suggested = field_choices(tool, path)
    problems: list[Problem] = []
    n_problems = 0
    study = None
    try:
        study = read_study(tool, path, mapping=mapping, shown=pending["filename"])
    except StudyInvalid as exc:
        problems, n_problems = exc.problems, exc.total
    if request.method == "POST" and study is not None:
        try:
            job = study_import_queue(
                study=study,
                upload_path=path,
                original_filename=pending["filename"],
                name=name,
                language=pending["language"],
                mapping=mapping,
                created_by=request.user,
            )
        except ProjectInvalid as exc:
            errors = dict(exc.errors)
            if "name" in errors and name and Dataset.objects.filter(name=name).exists():
                errors["name"] = gettext("A dataset of this name exists already; choose another name.")
            problems = [Problem(pending["filename"], "", field, message) for field, message in errors.items()]
            n_problems = len(problems)
        else:
            return redirect("annotation:study_import_detail", import_id=job.pk)
    shown = mapping or (
        FieldMapping(
            prompt=str(study.fields.get("prompt", "")),
            responses=tuple(study.fields.get("responses", ())),  # type: ignore[arg-type]
            item_id=str(study.fields.get("item_id", "")),
        )
        if study is not None
        else suggested
    )
    context = {
        "token": token,
        "pending": pending,
        "tool_label": TOOL_LABELS[tool],
        "name": name,
        "summary": study.summary() if study else None,
        "items": [
            {"id": i.external_id, "prompt": i.prompt, "responses": [t for _, t in i.responses]}
            for i in (study.items[:PREVIEW_ITEMS] if study else ())
        ],
        "problems": [{**p.as_dict(), "message": _shown(p)} for p in problems],
        "n_problems": n_problems,
        "keys": keys,
        "mapping": shown,
    }
    return render(request, "annotation/study_import_preview.html", context, status=400 if problems else 200)


STEP_LABELS = {
    "read": _("Reading the file"),
    "items": _("Writing the items and their responses"),
    "project": _("Creating the project"),
    "annotators": _("Adding the annotators"),
    "answers": _("Writing the answers"),
}


def _stored_problem(job: StudyImport, problem: dict) -> dict:
    """A problem stored on the import, its message in the page's language."""
    message = problem.get("message", "")
    if problem.get("field") == "name" and Dataset.objects.filter(name=job.name).exists():
        message = gettext("A dataset of this name exists already; choose another name.")
    elif problem.get("template"):
        try:
            message = gettext(problem["template"]) % problem.get("params", {})
        except (KeyError, TypeError, ValueError):  # values that did not keep their type: the English text
            pass
    elif message:
        message = gettext(message)
    return {**problem, "message": message}


@role_required(PROJECT_MANAGER)
def study_import_detail(request: HttpRequest, import_id: int) -> HttpResponse:
    """Where a study's import stands: the step it is at while it runs, then a link to its project, or every
    problem that stopped it (nothing of it written)."""
    job = get_object_or_404(StudyImport.objects.select_related("project"), pk=import_id)
    progress = study_import_progress_get(job=job)
    context = {
        "job": job,
        "tool_label": TOOL_LABELS.get(job.tool, job.tool),
        "active": job.status in (StudyImport.Status.QUEUED, StudyImport.Status.RUNNING),
        "progress": progress,
        "step_label": STEP_LABELS.get(progress["step"], "") if progress else "",
        "percent": round(100 * progress["done"] / progress["total"]) if progress else None,
        "problems": [_stored_problem(job, p) for p in job.errors or []],
    }
    template = (
        "annotation/study_import_detail.html#study-import-status"
        if request.htmx
        else "annotation/study_import_detail.html"
    )
    return render(request, template, context)
