"""A study from another tool imported in the background (``StudyImport`` rows, ``datasets_app.jobs``).

The page and the API read the file first (its every problem is shown at once) and queue the import; a worker
reads it again and runs ``tool_study_import``, one transaction: a failure or a cancel leaves no dataset, no
project and no accounts behind. Progress is the step the import is at, kept in the cache (the import's one
long transaction would hide the row's own updates until it ends).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db import transaction
from django.utils.translation import gettext_noop

from accounts.events import IMPORT_FINISHED
from annotation.domain.tool_studies.label_studio import FieldMapping
from annotation.domain.tool_studies.study import Problem, Study, StudyInvalid
from annotation.models import StudyImport
from annotation.services.loop import AnnotationError, ProjectInvalid
from annotation.services.studies import TOOL_STUDY_STEPS, tool_study_import, tool_study_name_check
from annotation.tool_files import read_study
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
from datasets_app.services import discard_upload

__all__ = [
    "STUDY_IMPORT_JOB",
    "study_import_cancel",
    "study_import_progress_get",
    "study_import_queue",
    "study_import_retry",
    "study_import_run",
]

logger = logging.getLogger(__name__)

PROGRESS_TTL_SECONDS = 6 * 3600


def _json_value(value: object) -> object:
    return value if isinstance(value, str | int | float | bool) or value is None else str(value)


def problem_as_dict(problem: Problem) -> dict[str, object]:
    """A problem as stored on the row: where and what, with the template and values of its message."""
    return {
        **problem.as_dict(),
        "template": problem.template,
        "params": {k: _json_value(v) for k, v in problem.params.items()},
    }


def _failure(job: StudyImport, message: str) -> list[str]:
    job.errors = [{"file": job.original_filename, "record": "", "field": "", "message": message[:2000]}]
    job.n_errors = 1
    return ["errors", "n_errors"]


def _reset(job: StudyImport) -> list[str]:
    job.errors = []
    job.n_errors = 0
    job.counts = {}
    job.criteria = {}
    job.project = None
    return ["errors", "n_errors", "counts", "criteria", "project"]


def _clean_up(job: StudyImport, status: str) -> None:
    # The import is one transaction, so an attempt that ended left nothing in the database. The upload is
    # removed once imported; a failed or cancelled import keeps it so that it can be run again.
    cache.delete(_progress_key(job.pk))
    if status == StudyImport.Status.SUCCEEDED and job.upload_path:
        discard_upload(Path(job.upload_path))


STUDY_IMPORT_JOB = JobKind(
    model=StudyImport,
    noun="study import",
    task="annotation.study_import_run",
    time_limit=timedelta(seconds=3 * 3600 + 60),
    record_failure=_failure,
    reset=_reset,
    clean_up=_clean_up,
    # Site-wide webhooks hear it (the project it made is new: no endpoint of its own yet).
    event=IMPORT_FINISHED,
    event_project=lambda job: job.project_id,
    event_key="study_import",
)


def _progress_key(job_id: int) -> str:
    return f"annotation:study-import-progress:{job_id}"


def _progress_store(job_id: int, step: str) -> None:
    done = TOOL_STUDY_STEPS.index(step)
    cache.set(
        _progress_key(job_id),
        {"step": step, "done": done, "total": len(TOOL_STUDY_STEPS)},
        PROGRESS_TTL_SECONDS,
    )


def study_import_progress_get(*, job: StudyImport) -> dict[str, object] | None:
    """The step a running import is at: ``{"step", "done", "total"}`` (steps finished of all); None when
    it is not running or has not started its first step."""
    if job.status != StudyImport.Status.RUNNING:
        return None
    return cache.get(_progress_key(job.pk))


def _mapping_as_dict(mapping: FieldMapping | None) -> dict:
    if mapping is None:
        return {}
    return {"prompt": mapping.prompt, "responses": list(mapping.responses), "item_id": mapping.item_id}


def _mapping_from_dict(data: dict) -> FieldMapping | None:
    if not data:
        return None
    return FieldMapping(
        prompt=data.get("prompt", ""),
        responses=tuple(data.get("responses") or ()),
        item_id=data.get("item_id", ""),
    )


@transaction.atomic
def study_import_queue(
    *,
    study: Study,
    upload_path: Path,
    original_filename: str,
    name: str,
    language: str = "ind",
    mapping: FieldMapping | None = None,
    created_by: AbstractBaseUser | None = None,
) -> StudyImport:
    """Record the import of the study read from ``upload_path`` (with ``mapping``) and hand it to a worker
    once committed. A name that is empty or taken is refused here (``ProjectInvalid``), before any work."""
    tool_study_name_check(name)
    job = StudyImport.objects.create(
        tool=study.tool,
        tool_version=study.tool_version,
        kind=study.kind,
        name=name.strip(),
        language=language,
        mapping=_mapping_as_dict(mapping),
        upload_path=str(upload_path),
        original_filename=original_filename,
        created_by=created_by,
        task_id=new_task_id(),
    )
    job_send(kind=STUDY_IMPORT_JOB, job_id=job.pk, task_id=job.task_id)
    return job


def study_import_run(*, job: StudyImport, task_id: str | None = None) -> StudyImport:
    """Run a queued import (or restart one whose earlier delivery died); the outcome is stored on the row.

    Safe to run twice: a delivery with nothing to run returns the row as it is. A cancel asked for while it
    runs stops it at its next step, and nothing of it is kept.
    """
    taken = job_take(kind=STUDY_IMPORT_JOB, job_id=job.pk, task_id=task_id)
    if taken is None:
        job.refresh_from_db()
        return job
    job = taken.job

    def step(name: str) -> None:
        _progress_store(job.pk, name)
        job_check(kind=STUDY_IMPORT_JOB, job=job)

    try:
        with job_heartbeat(kind=STUDY_IMPORT_JOB, job=job):
            step("read")
            path = Path(job.upload_path)
            if not path.exists():
                raise StudyInvalid(
                    [Problem(job.original_filename, "", "", "The uploaded file is gone; upload it again.")]
                )
            study = read_study(
                job.tool, path, mapping=_mapping_from_dict(job.mapping), shown=job.original_filename
            )
            done = tool_study_import(
                study=study, name=job.name, language=job.language, created_by=job.created_by, step=step
            )
    except JobCancelled:
        return job_finish(kind=STUDY_IMPORT_JOB, job=job, status=StudyImport.Status.CANCELLED)
    except StudyInvalid as exc:
        job.errors = [problem_as_dict(p) for p in exc.problems]
        job.n_errors = exc.total
        return job_finish(
            kind=STUDY_IMPORT_JOB, job=job, status=StudyImport.Status.FAILED, fields=["errors", "n_errors"]
        )
    except ProjectInvalid as exc:
        job.errors = [
            {"file": job.original_filename, "record": "", "field": field, "message": message}
            for field, message in exc.errors.items()
        ]
        job.n_errors = len(job.errors)
        return job_finish(
            kind=STUDY_IMPORT_JOB, job=job, status=StudyImport.Status.FAILED, fields=["errors", "n_errors"]
        )
    except Exception as exc:  # the row must say what went wrong, whatever it was; the worker stays up
        logger.exception("study import %s failed", job.pk)
        message = f"the import stopped on an unexpected error: {type(exc).__name__}: {exc}"
        return job_finish(kind=STUDY_IMPORT_JOB, job=job, status=StudyImport.Status.FAILED, message=message)
    job.project = done.project
    job.counts = done.counts
    job.criteria = done.criteria
    job.tool_version = study.tool_version
    job.kind = done.project.kind
    return job_finish(
        kind=STUDY_IMPORT_JOB,
        job=job,
        status=StudyImport.Status.SUCCEEDED,
        fields=["project", "counts", "criteria", "tool_version", "kind"],
    )


def study_import_cancel(*, job: StudyImport) -> StudyImport:
    """Cancel a queued import at once, or stop a running one at its next step (nothing of it is kept)."""
    return job_cancel(kind=STUDY_IMPORT_JOB, job_id=job.pk)


def study_import_retry(*, job: StudyImport) -> StudyImport:
    """Run a failed or cancelled import again, from its upload (refused once the upload is gone)."""
    if not job.upload_path or not Path(job.upload_path).exists():
        raise AnnotationError(gettext_noop("The uploaded file is gone; upload it again."))
    return job_retry(kind=STUDY_IMPORT_JOB, job_id=job.pk)
