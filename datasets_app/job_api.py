"""The API's read, cancel and retry of every controlled job kind (see :mod:`datasets_app.job_control`)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import HasRole
from datasets_app.job_control import JobControl, job_control
from datasets_app.jobs import JobRefused

NOT_FOUND = OpenApiResponse(description="No such job (or no such kind of job).")
ENDED = OpenApiResponse(description="The job's state does not allow it (the detail says why).")


class _JobApi(APIView):
    """Checks the kind's roles (``HasRole``): the kind comes from the URL, so per request."""

    def control(self, request, job: str) -> JobControl:
        control = job_control(job)
        permission = HasRole(*control.roles)()
        if not permission.has_permission(request, self):
            self.permission_denied(request, message=permission.message)
        return control


class JobDetailApi(_JobApi):
    @extend_schema(
        responses={
            200: OpenApiResponse(description="The job as its kind's detail answers it."),
            404: NOT_FOUND,
        },
        summary="A background job's status and progress",
    )
    def get(self, request, job: str, **kwargs):
        control = self.control(request, job)
        return Response(control.serialize(control.row(kwargs), detail=True))


class JobCancelApi(_JobApi):
    @extend_schema(
        request=None,
        responses={200: OpenApiResponse(description="The job after the cancel."), 404: NOT_FOUND, 409: ENDED},
        summary="Cancel a queued job, or stop a running one at its next step",
    )
    def post(self, request, job: str, **kwargs):
        control = self.control(request, job)
        row = control.row(kwargs)
        try:
            row = control.do_cancel(row)
        except JobRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        row.refresh_from_db()
        return Response(control.serialize(row))


class JobRetryApi(_JobApi):
    @extend_schema(
        request=None,
        responses={202: OpenApiResponse(description="The job queued again."), 404: NOT_FOUND, 409: ENDED},
        summary="Run a failed or cancelled job again",
    )
    def post(self, request, job: str, **kwargs):
        control = self.control(request, job)
        row = control.row(kwargs)
        try:
            row = control.do_retry(row)
        except JobRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except control.refusals_on_retry() as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        row.refresh_from_db()
        return Response(control.serialize(row), status=status.HTTP_202_ACCEPTED)
