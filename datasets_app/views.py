"""Dataset browser for project managers and researchers (annotators never see model names)."""

from itertools import zip_longest
from pathlib import Path

from django.core import signing
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from accounts.domain.echo import echoed
from accounts.permissions import role_required
from accounts.roles import DATA_ROLES
from datasets_app import import_messages, selectors
from datasets_app.domain.column_mapping import (
    ColumnMapping,
    ResponseColumn,
    mapping_from_dict,
    missing_columns,
    needs_mapping,
    suggest_mapping,
)
from datasets_app.forms import HubImportForm, UploadForm, mapping_data_from_post, mapping_form_rows
from datasets_app.models import Dataset, DatasetImport, ImportMapping
from datasets_app.readers import HubSource, UnreadableFile, detect_format
from datasets_app.services import (
    ImportFailed,
    ImportProblem,
    dataset_import_queue,
    discard_upload,
    import_mapping_resolve,
    import_mapping_save,
    import_progress_get,
)
from datasets_app.uploads import UploadRejected, store_upload

PAGE_SIZE = 25


@role_required(*DATA_ROLES)
def dataset_list(request):
    return render(request, "datasets/list.html", _list_context(request))


@role_required(*DATA_ROLES)
def dataset_detail(request, dataset_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    category = request.GET.get("category", "")
    language = request.GET.get("language", "")
    search = request.GET.get("q", "").strip()
    prompts = selectors.prompt_list(dataset=dataset, category=category, language=language, search=search)
    page = Paginator(prompts, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "dataset": dataset,
        "page": page,
        "facets": selectors.dataset_facets(dataset=dataset),
        "filters": {"category": category, "language": language, "q": search},
    }
    template = "datasets/detail.html#prompt-table" if request.htmx else "datasets/detail.html"
    return render(request, template, context)


@role_required(*DATA_ROLES)
def prompt_detail(request, dataset_id: int, prompt_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    prompt = get_object_or_404(dataset.prompts.prefetch_related("responses"), pk=prompt_id)
    turns = list(zip_longest(prompt.turns, prompt.references or []))[: len(prompt.turns)]
    return render(request, "datasets/prompt.html", {"dataset": dataset, "prompt": prompt, "turns": turns})


# -- import in the browser ------------------------------------------------------------------------------

UPLOAD_SALT = "datasets_app.import-upload"
COUNT_LABELS = {
    "prompts": gettext_lazy("prompts"),
    "responses": gettext_lazy("responses"),
    "translation_units": gettext_lazy("translation units"),
    "questions": gettext_lazy("questions"),
}
UPLOAD_MAX_AGE = 24 * 3600


def _list_context(request, **extra):
    return {
        "datasets": selectors.dataset_list(),
        "imports": selectors.import_list(),
        "upload_form": UploadForm(),
        "hub_form": HubImportForm(mapping_names=_mapping_names()),
        **extra,
    }


def _mapping_names() -> list[str]:
    return list(ImportMapping.objects.values_list("name", flat=True))


@role_required(*DATA_ROLES)
@require_POST
def import_upload(request):
    """Store the uploaded file (streamed to disk) and show its first rows to map before importing."""
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return render(request, "datasets/list.html", _list_context(request, upload_form=form), status=400)
    upload = form.cleaned_data["file"]
    try:
        path, file_format = store_upload(upload, file_format=None)
    except UploadRejected as exc:
        form.add_error("file", import_messages.file_problem(str(exc)))
        return render(request, "datasets/list.html", _list_context(request, upload_form=form), status=400)
    try:
        file_format = file_format or detect_format(path, name=upload.name)
    except UnreadableFile as exc:
        discard_upload(path)
        form.add_error("file", import_messages.file_problem(str(exc)))
        return render(request, "datasets/list.html", _list_context(request, upload_form=form), status=400)
    token = signing.dumps(
        {
            "path": str(path),
            "format": file_format,
            "filename": Path(upload.name).name,
            "name": form.cleaned_data["name"],
            "replace": form.cleaned_data["replace"],
        },
        salt=UPLOAD_SALT,
    )
    return redirect("datasets:import_preview", token=token)


def _pending_upload(token: str) -> dict:
    try:
        pending = signing.loads(token, salt=UPLOAD_SALT, max_age=UPLOAD_MAX_AGE)
    except signing.BadSignature:
        raise Http404("no such upload") from None
    if not Path(pending["path"]).exists():
        raise Http404("the upload was imported or has expired")
    return pending


@role_required(*DATA_ROLES)
def import_preview(request, token: str):
    """The first rows of the uploaded file, and the column mapping to read it with; confirming queues it."""
    pending = _pending_upload(token)
    path = Path(pending["path"])
    try:
        preview = selectors.import_preview(path=path, file_format=pending["format"], name=pending["filename"])
    except UnreadableFile as exc:
        discard_upload(path)
        form = UploadForm()
        return render(
            request,
            "datasets/list.html",
            _list_context(request, upload_form=form, upload_error=import_messages.file_problem(str(exc))),
            status=400,
        )
    mapping_names = _mapping_names()
    errors: list[str] = []
    chosen = request.GET.get("mapping", "")
    if request.method == "POST":
        use_mapping = request.POST.get("use_mapping") == "on"
        data = mapping_data_from_post(request.POST) if use_mapping else None
        save_as = request.POST.get("save_mapping_as", "").strip()
        try:
            mapping = import_mapping_resolve(mapping=data) if use_mapping else None
            if mapping is not None and preview.columns:
                absent = missing_columns(mapping, preview.columns)
                if absent and pending["format"] != "jsonl":
                    raise ImportFailed(
                        [
                            ImportProblem(
                                "",
                                "mapping",
                                _("reads column(s) the file does not have: %(columns)s")
                                % {"columns": echoed(absent, ordered=False)},
                            )
                        ]
                    )
            with transaction.atomic():
                if mapping is not None and save_as:
                    import_mapping_save(name=save_as, mapping=mapping, user=request.user)
                record = dataset_import_queue(
                    upload_path=path,
                    name=pending["name"],
                    file_format=pending["format"],
                    kind=None,
                    replace=pending["replace"],
                    user=request.user,
                    original_filename=pending["filename"],
                    mapping=mapping,
                )
        except ImportFailed as exc:
            errors = [_problem_line(import_messages.shown(e.as_dict())) for e in exc.errors]
            mapping = mapping_from_post_or_none(data)
        else:
            return redirect("datasets:import_detail", import_id=record.pk)
    elif chosen and chosen in mapping_names:
        mapping = mapping_from_dict(ImportMapping.objects.get(name=chosen).mapping)
    else:
        mapping = suggest_mapping(preview.columns)
    use_mapping = (
        request.POST.get("use_mapping") == "on"
        if request.method == "POST"
        else bool(chosen) or needs_mapping(preview.columns)
    )
    context = {
        "pending": pending,
        "token": token,
        "preview": preview,
        "form": mapping_form_rows(mapping or ColumnMapping(), preview.columns),
        "use_mapping": use_mapping,
        "needs_mapping": needs_mapping(preview.columns),
        "mapping_names": mapping_names,
        "chosen": chosen,
        "errors": errors,
    }
    return render(request, "datasets/import_preview.html", context, status=400 if errors else 200)


def mapping_from_post_or_none(data: dict | None) -> ColumnMapping | None:
    """The mapping as the user left it, to show the form again after a problem (unchecked)."""
    if not data:
        return None
    return ColumnMapping(
        columns=data["columns"],
        constants=data["constants"],
        responses=tuple(
            ResponseColumn(r["text"], r.get("model_column", ""), r.get("model_name", ""))
            for r in data["responses"]
        ),
        keep_other_columns=data["keep_other_columns"],
    )


@role_required(*DATA_ROLES)
@require_POST
def import_hub(request):
    """Queue the import of a Hub dataset, read by a worker with datasets.load_dataset."""
    form = HubImportForm(request.POST, mapping_names=_mapping_names())
    if not form.is_valid():
        return render(request, "datasets/list.html", _list_context(request, hub_form=form), status=400)
    data = form.cleaned_data
    try:
        mapping = import_mapping_resolve(mapping_name=data["mapping_name"])
    except ImportFailed as exc:
        form.add_error("mapping_name", exc.summary())
        return render(request, "datasets/list.html", _list_context(request, hub_form=form), status=400)
    with transaction.atomic():
        record = dataset_import_queue(
            hub=HubSource(data["dataset"].strip(), data["config"], data["split"], data["revision"]),
            name=data["name"],
            kind=None,
            replace=data["replace"],
            user=request.user,
            mapping=mapping,
        )
    return redirect("datasets:import_detail", import_id=record.pk)


def _problem_line(problem: dict[str, str]) -> str:
    parts = [problem["location"], problem["field"], problem["message"]]
    return ": ".join(p for p in parts if p)


@role_required(*DATA_ROLES)
def import_detail(request, import_id: int):
    """Where an import stands: a progress bar while it runs, every error found when it failed."""
    record = get_object_or_404(DatasetImport.objects.select_related("dataset"), pk=import_id)
    progress = (
        import_progress_get(import_id=record.pk) if record.status == DatasetImport.Status.RUNNING else None
    )
    active = record.status in (DatasetImport.Status.QUEUED, DatasetImport.Status.RUNNING)
    context = {
        "record": record,
        "errors": [import_messages.shown(e) for e in record.errors or []],
        "active": active,
        "progress": progress,
        "percent": (
            round(100 * progress["done"] / progress["total"]) if progress and progress.get("total") else None
        ),
        "n_errors": record.counts.get("n_errors", len(record.errors)) if record.errors else 0,
        "counts": [
            (n, COUNT_LABELS.get(key, key))
            for key, n in record.counts.items()
            if record.status == DatasetImport.Status.SUCCEEDED
        ],
    }
    template = "datasets/import_detail.html#import-status" if request.htmx else "datasets/import_detail.html"
    return render(request, template, context)
