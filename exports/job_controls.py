"""Exports under the one job-control surface (datasets_app.job_control): cancel and retry, page and API."""

from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from accounts.roles import DATA_ROLES
from datasets_app.job_control import JobControl, JobTexts, job_control_register

EXPORT_CONTROL = job_control_register(
    JobControl(
        name="export",
        model="exports.Export",
        id_kwarg="export_id",
        roles=tuple(DATA_ROLES),
        cancel="exports.services.export_cancel",
        retry="exports.services.export_retry",
        service_arg="export",
        serializer="exports.api.ExportSerializer",
        page=lambda export: reverse("exports:export_detail", kwargs={"export_id": export.pk}),
        cancel_url=lambda export: reverse("exports:export_cancel", kwargs={"export_id": export.pk}),
        retry_url=lambda export: reverse("exports:export_retry", kwargs={"export_id": export.pk}),
        testid="export",
        texts=JobTexts(
            cancel_button=_("Cancel export"),
            cancelling=_("Cancelling: the export stops at its next step."),
            cancel_refused=_("Only a queued or running export can be cancelled."),
            cancelled=_("Export cancelled."),
            stopping=_("The export stops at its next step and removes its files."),
            retry_refused=_("Only a failed or cancelled export can be run again."),
            retried=_("The export was queued again."),
        ),
    )
)
