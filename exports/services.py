"""Exports (DESIGN.md §7): preference datasets (Hugging Face, TRL) and raw annotations of rating projects;
the final parallel corpus of a translation project and the final question set of a question project.

``export_create`` validates the options and records an ``Export`` row (queued, run by the
``datasets_app.export_run`` task after commit, or at once by the command); ``export_run`` takes the row and
drives the export's family (``exports.families``) through the same steps for every format: options, read,
build, card, write; then zips the folder and pushes it to the Hub when asked (``exports.hub``).
``export_preview`` gives the counts a researcher sees before exporting, without writing anything.

The options stored on the row are complete (defaults resolved), so an export can be run again from its
row alone and gives the same rows for the same annotations.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import replace
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils.text import slugify
from django.utils.translation import gettext_noop

from accounts.events import EXPORT_FINISHED
from annotation.models import Project
from datasets_app.jobs import (
    JobCancelled,
    JobKind,
    job_cancel,
    job_check,
    job_finish,
    job_heartbeat,
    job_retry,
    job_send,
    job_take,
    new_task_id,
)
from exports.families import family_for, formats, kinds_for
from exports.families.base import Destination
from exports.families.preferences import ALPHA_NAMES as ALPHA_NAMES
from exports.hub import REPO_ID_RE, hub_push, hub_token
from exports.models import Export
from exports.options import ExportFailed, ExportInvalid, ExportOptions, Refusal
from exports.writers import zip_folder

logger = logging.getLogger(__name__)

ERROR_CHARS = 2000


def options_resolve(*, project: Project, options: ExportOptions) -> ExportOptions:
    """Check ``options`` against the project and fill in its defaults; raises ``ExportInvalid``.

    An empty ``kind`` means the project's default format (``kinds_for``); the format's family checks the
    rest.
    """
    allowed_kinds = kinds_for(project)
    if not allowed_kinds:
        raise ExportInvalid({"project": f"a {project.kind} project has nothing to export"})
    kind = options.kind or allowed_kinds[0]
    known = formats()
    if kind not in known:
        raise ExportInvalid({"format": f"unknown format {kind!r}; expected one of {', '.join(known)}"})
    if kind not in allowed_kinds:
        raise ExportInvalid(
            {"format": f"a {project.kind} project exports as {' or '.join(allowed_kinds)}, not {kind}"}
        )
    return family_for(kind).resolve(project=project, options=replace(options, kind=kind))


def export_preview(*, project: Project, options: ExportOptions) -> dict[str, Any]:
    """The counts an export with these options would give, without writing anything."""
    options = options_resolve(project=project, options=options)
    return family_for(options.kind).preview(project=project, options=options)


# --- the Export row ---------------------------------------------------------------------------------


@transaction.atomic
def export_create(
    *,
    project: Project,
    options: ExportOptions,
    user=None,
    hub_repo_id: str = "",
    hub_private: bool = True,
    out_dir: str | Path | None = None,
    queue: bool = True,
) -> Export:
    """Validate and record an export; with ``queue`` it runs in a worker once the transaction commits.

    ``out_dir`` (the command's ``--out``) is the folder to write; by default a folder per export under
    ``EXPORTS_DIR``.
    """
    options = options_resolve(project=project, options=options)
    hub_repo_id = (hub_repo_id or "").strip()
    if hub_repo_id:
        if not REPO_ID_RE.fullmatch(hub_repo_id):
            raise ExportInvalid(
                {
                    "push_to_hub": Refusal(
                        gettext_noop("bad repo id %(repo)s: expected owner/name"), repo=repr(hub_repo_id)
                    )
                }
            )
        if not hub_token():
            raise ExportInvalid({"push_to_hub": Refusal(gettext_noop("no Hugging Face token: set HF_TOKEN"))})
    record = Export.objects.create(
        project=project,
        kind=options.kind,
        strategy=options.strategy or "",
        options=options.as_dict(),
        filters=options.filters(),
        hub_repo_id=hub_repo_id,
        hub_private=hub_private,
        folder_path=str(Path(out_dir).resolve()) if out_dir else "",
        created_by=user if getattr(user, "is_authenticated", False) else None,
        task_id=new_task_id(),
    )
    if queue:
        job_send(kind=EXPORT_JOB, job_id=record.pk, task_id=record.task_id)
    return record


def _own_folder(export: Export) -> Path:
    return Path(settings.EXPORTS_DIR) / f"export-{export.pk}"


def _export_folder(export: Export) -> Path:
    # The command names its folder (and has checked it may be replaced); the others get one per export.
    return Path(export.folder_path) if export.folder_path else _own_folder(export)


def _in_own_folder(export: Export) -> bool:
    """Whether the export writes to its own folder under ``EXPORTS_DIR`` (not a folder the command named)."""
    return _export_folder(export) == _own_folder(export)


def _export_failure(export: Export, message: str) -> list[str]:
    export.error = message[:ERROR_CHARS]
    return ["error"]


def _export_reset(export: Export) -> list[str]:
    export.progress = 1
    export.stage = "starting"
    export.error = ""
    export.counts = {}
    export.zip_path = ""
    export.hub_revision = ""
    export.hub_url = ""
    return ["progress", "stage", "error", "counts", "zip_path", "hub_revision", "hub_url"]


def _export_clean_up(export: Export, status: str) -> None:
    """Remove what an unfinished attempt wrote: the folder, its zip and any staging folder beside it.

    Only a folder this export owns (one per export under ``EXPORTS_DIR``) is removed: a folder named by
    the command (``--out``) is the user's, and may hold the previous export it was allowed to replace.
    """
    if status == Export.Status.SUCCEEDED or not _in_own_folder(export):
        return
    folder = _own_folder(export)
    if folder.is_dir():
        shutil.rmtree(folder, ignore_errors=True)
    folder.with_name(folder.name + ".zip").unlink(missing_ok=True)
    for staging in folder.parent.glob(f".{folder.name}.partial-*"):
        shutil.rmtree(staging, ignore_errors=True)


EXPORT_JOB = JobKind(
    model=Export,
    noun="export",
    task="datasets_app.export_run",
    time_limit=timedelta(seconds=3600 + 60),
    record_failure=_export_failure,
    reset=_export_reset,
    clean_up=_export_clean_up,
    event=EXPORT_FINISHED,
    event_project=lambda export: export.project_id,
    # An export the command runs writes to the command's folder, in the command's process.
    on_worker=_in_own_folder,
)


def _progress(record: Export, percent: int, stage: str) -> None:
    """A progress step: stored on the row; raises JobCancelled when the export was cancelled meanwhile."""
    job_check(kind=EXPORT_JOB, job=record, progress=percent, stage=stage[:100])


def export_run(*, export: Export, task_id: str | None = None) -> Export:
    """Run a queued export to the end; the row says succeeded (with counts and paths), failed (why) or
    cancelled.

    Safe to call twice: only a queued row is taken, or a running one whose earlier delivery of the same
    task died (it starts again from a clean folder); anything else is returned as it is. A cancel asked
    for while it runs stops it at its next progress step. A failed or cancelled export leaves no files.
    """
    taken = job_take(kind=EXPORT_JOB, job_id=export.pk, task_id=task_id)
    if taken is None:
        export.refresh_from_db()
        return export
    export = taken.job
    Export.objects.filter(pk=export.pk).update(progress=1, stage="starting", error="")
    try:
        with job_heartbeat(kind=EXPORT_JOB, job=export):
            _export_write(export)
    except JobCancelled:
        job_finish(kind=EXPORT_JOB, job=export, status=Export.Status.CANCELLED)
    except Exception as exc:  # the row must say what went wrong, whatever it was
        logger.exception("export %s failed", export.pk)
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        job_finish(kind=EXPORT_JOB, job=export, status=Export.Status.FAILED, message=message)
    else:
        Export.objects.filter(pk=export.pk).update(progress=100, stage="done")
        job_finish(kind=EXPORT_JOB, job=export, status=Export.Status.SUCCEEDED)
    export.refresh_from_db()
    return export


def export_cancel(*, export: Export) -> Export:
    """Cancel a queued export at once, or stop a running one at its next step (its files are removed)."""
    return job_cancel(kind=EXPORT_JOB, job_id=export.pk)


def export_retry(*, export: Export) -> Export:
    """Run a failed or cancelled export again with the same options."""
    return job_retry(kind=EXPORT_JOB, job_id=export.pk)


def _export_write(export: Export) -> None:
    project = export.project
    if project is None:
        raise ExportFailed("the project of this export was deleted")
    options = ExportOptions.from_dict(export.options)
    family = family_for(options.kind)
    destination = Destination(folder=_export_folder(export), hub_repo_id=export.hub_repo_id)
    folder = destination.folder

    def step(percent: int, stage: str) -> None:
        _progress(export, percent, stage)

    # What was read is handed to build alone (no name holds it here), so a family can let it go before it
    # reads again.
    built = family.build(
        project=project,
        options=options,
        data=family.read(project=project, options=options, step=step),
        step=step,
    )
    card = partial(family.card, project=project, options=options, built=built, destination=destination)
    counts = family.write(destination=destination, built=built, card=card, step=step)
    updates: dict[str, Any] = {"counts": counts, "folder_path": str(folder)}
    if options.zip:
        step(92, "zipping")
        zip_path = folder.with_name(folder.name + ".zip")
        zip_folder(folder, zip_path)
        updates["zip_path"] = str(zip_path)
    Export.objects.filter(pk=export.pk).update(**updates)
    if export.hub_repo_id:
        step(95, "pushing to the Hugging Face Hub")
        commit = hub_push(
            folder=folder,
            repo_id=export.hub_repo_id,
            private=export.hub_private,
            commit_message=f"Timbang export {export.pk} of project {project.pk} ({export.kind})",
        )
        Export.objects.filter(pk=export.pk).update(hub_revision=commit.oid, hub_url=commit.repo_url)


def export_download_name(export: Export) -> str:
    """File name offered for the zip: the project's name as a slug, the export id and the format."""
    base = slugify(export.project.name if export.project else "project") or "project"
    return f"{base}-export-{export.pk}-{export.kind}.zip"
