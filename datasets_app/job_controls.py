"""Imports under the one job-control surface (datasets_app.job_control): cancel, page and API."""

from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from accounts.roles import DATA_ROLES
from datasets_app.job_control import JobControl, JobTexts, job_control_register


def _live_progress(record) -> dict:
    """The records read so far of a running import (kept in the cache by the worker)."""
    from datasets_app.services import import_progress_get

    if record.status != record.Status.RUNNING:
        return {}
    return {"progress": {record.pk: import_progress_get(import_id=record.pk)}}


IMPORT_CONTROL = job_control_register(
    JobControl(
        name="import",
        model="datasets_app.DatasetImport",
        id_kwarg="import_id",
        roles=tuple(DATA_ROLES),
        cancel="datasets_app.services.dataset_import_cancel",
        service_arg="record",
        serializer="datasets_app.serializers.DatasetImportSerializer",
        detail_context=_live_progress,
        page=lambda record: reverse("datasets:import_detail", kwargs={"import_id": record.pk}),
        cancel_url=lambda record: reverse("datasets:import_cancel", kwargs={"import_id": record.pk}),
        testid="import",
        texts=JobTexts(
            cancel_button=_("Cancel import"),
            cancelling=_("Cancelling: the import stops before its next batch."),
            cancel_refused=_("Only a queued or running import can be cancelled."),
            cancelled=_("Import cancelled."),
            stopping=_("The import stops before its next batch; nothing of it is kept."),
        ),
    )
)
