"""One surface to control the background jobs people start: cancel, retry and read them, on the page or the API.

Every kind of job row a person controls (imports, exports, flag recomputations, study imports) registers a
:class:`JobControl`: the roles that may control it, how the page finds its row from the URL (a project
manager's membership, say), the services that cancel and retry it, the serializer of its API answers, the
page to go back to and the messages the page shows. Services and serializers are named by dotted path and
imported on first use, so the URL modules that register a kind stay light.

The kinds' URL patterns all point at the same views (:mod:`datasets_app.job_views`) and API operations
(:mod:`datasets_app.job_api`), passing ``{"job": name}``; ``/api/v1/jobs/<name>/<id>`` (``/cancel``,
``/retry``) reaches the same operations by the kind's name. Model runs (chunks on model queues) and agreement
reports have their own control: a run is cancelled part by part, a report is recomputed, not retried.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404
from django.utils.module_loading import import_string


@dataclass(frozen=True)
class JobTexts:
    """What the page shows: its buttons, and what it says after each verb (lazy translations)."""

    cancel_button: Any
    cancelling: Any
    cancel_refused: Any
    cancelled: Any
    stopping: Any
    retry_refused: Any = ""
    retried: Any = ""


@dataclass(frozen=True)
class JobControl:
    name: str
    # "app_label.Model" of the job rows.
    model: str
    # The URL keyword that holds the row's id (``export_id``).
    id_kwarg: str
    roles: tuple[str, ...]
    # Dotted paths of the services, called with the row as the keyword ``service_arg``.
    cancel: str
    service_arg: str
    serializer: str
    texts: JobTexts
    # Where the page goes back to after a verb.
    page: Callable[[Any], str]
    # The page routes of the verbs for a row (the forms of the controls fragment post there).
    cancel_url: Callable[[Any], str]
    # The controls' data-testid prefix ("export" gives export-cancel and export-retry).
    testid: str
    retry: str = ""
    retry_url: Callable[[Any], str] | None = None
    # Dotted paths of exceptions a retry may refuse with besides ``JobRefused`` (their text is shown).
    retry_refusals: tuple[str, ...] = ()
    # The page's lookup (the API's is the row by id): may check membership and raise 404.
    find_on_page: Callable[[HttpRequest, Mapping[str, Any]], Any] | None = None
    # Extra serializer context for the detail answer (live progress of a running row).
    detail_context: Callable[[Any], dict] | None = None

    def model_class(self):
        return apps.get_model(self.model)

    def row(self, kwargs: Mapping[str, Any]):
        """The row the URL names: by the kind's own keyword, or ``job_id`` on the ``/jobs/`` routes."""
        pk = kwargs[self.id_kwarg] if self.id_kwarg in kwargs else kwargs["job_id"]
        return get_object_or_404(self.model_class(), pk=pk)

    def row_on_page(self, request: HttpRequest, kwargs: Mapping[str, Any]):
        return self.find_on_page(request, kwargs) if self.find_on_page else self.row(kwargs)

    def do_cancel(self, job):
        return import_string(self.cancel)(**{self.service_arg: job})

    def do_retry(self, job):
        if not self.retry:
            raise Http404(f"a {self.name} cannot be retried")
        return import_string(self.retry)(**{self.service_arg: job})

    def refusals_on_retry(self) -> tuple[type[Exception], ...]:
        return tuple(import_string(path) for path in self.retry_refusals)

    def serialize(self, job, *, detail: bool = False) -> dict:
        context = self.detail_context(job) if detail and self.detail_context else {}
        return import_string(self.serializer)(job, context=context).data


_CONTROLS: dict[str, JobControl] = {}


def job_control_register(control: JobControl) -> JobControl:
    """Add a kind (once; registering the same name with another control is a mistake)."""
    existing = _CONTROLS.get(control.name)
    if existing is not None and existing is not control:
        raise ValueError(f"a job control named {control.name!r} is registered already")
    _CONTROLS[control.name] = control
    return control


def job_control(name: str) -> JobControl:
    try:
        return _CONTROLS[name]
    except KeyError:
        raise Http404(f"no job kind {name!r}") from None


def job_controls() -> dict[str, JobControl]:
    return dict(_CONTROLS)
