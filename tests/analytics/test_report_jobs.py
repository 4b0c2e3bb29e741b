# ruff: noqa: F811 - test arguments named after the imported ``likert`` fixture
"""Agreement reports computed in the background: redelivery after a dead worker, a stale status sent
again or failed, cancel and compute again from the dashboard and the API."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from analytics import selectors, services
from analytics.tasks import agreement_report
from datasets_app.jobs import heartbeat_touch

from .test_reports import likert  # noqa: F401 - the answered Likert project fixture

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_heartbeats_of_other_tests():
    """Heartbeats live in the cache, which outlives each test's database."""
    cache.clear()


def url(project, suffix: str = "") -> str:
    return f"/analytics/projects/{project.pk}/{suffix}"


def status_of(project, level="ordinal") -> dict:
    version = selectors.data_version(project=project)
    return services._status(project.pk, level, version)


def running(project, *, task_id="first-delivery", attempts=1, started=None, level="ordinal") -> str:
    """The status a worker killed at 2% leaves behind."""
    version = selectors.data_version(project=project)
    services.status_set(
        project_id=project.pk,
        level=level,
        version=version,
        state="running",
        progress=2,
        stage="reading answers",
        task_id=task_id,
        attempts=attempts,
        started_at=started if started is not None else time.time(),
    )
    return version


def test_a_queued_report_runs_under_the_task_id_it_was_sent_with(
    likert, settings, django_capture_on_commit_callbacks
):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        state = services.report_state(project=likert, level="ordinal")
    assert state.status == "queued"
    queued = status_of(likert)
    assert queued["task_id"] and queued["attempts"] == 0
    callbacks[0]()
    assert services.report_state(project=likert, level="ordinal").ready


def test_a_redelivered_task_computes_the_report_its_dead_delivery_left_at_2_percent(likert, settings):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    version = running(likert)
    assert (
        agreement_report.apply(args=[likert.pk, "ordinal", version], task_id="first-delivery").get()
        == version
    )
    assert services.report_state(project=likert, level="ordinal").ready


def test_another_delivery_leaves_a_running_report_alone(likert, settings):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    version = running(likert)
    assert agreement_report.apply(args=[likert.pk, "ordinal", version], task_id="other").get() is None
    assert status_of(likert)["progress"] == 2


def test_a_report_out_of_attempts_fails_with_a_message(likert, settings):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    settings.JOB_MAX_ATTEMPTS = 2
    version = running(likert, attempts=2)
    assert (
        agreement_report.apply(args=[likert.pk, "ordinal", version], task_id="first-delivery").get() is None
    )
    state = services.report_state(project=likert, level="ordinal")
    assert state.status == "failed" and "stopped 2 time(s) before it finished" in state.error


def test_a_stale_running_report_is_sent_again_on_the_next_visit(
    likert, settings, django_capture_on_commit_callbacks
):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    running(likert, started=time.time() - services.STALE_AFTER_S - 5)
    with django_capture_on_commit_callbacks(execute=True):
        state = services.report_state(project=likert, level="ordinal")
    assert state.status == "queued"  # sent again under a new task id; it ran when the transaction committed
    assert services.report_state(project=likert, level="ordinal").ready


def test_a_stale_report_out_of_attempts_fails(likert, settings):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    settings.JOB_MAX_ATTEMPTS = 1
    running(likert, started=time.time() - services.STALE_AFTER_S - 5)
    state = services.report_state(project=likert, level="ordinal")
    assert state.status == "failed"
    assert "stopped 1 time(s) before it finished" in state.error


def test_a_running_report_within_its_time_limit_keeps_running(likert, settings):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    running(likert, started=time.time() - 60)
    state = services.report_state(project=likert, level="ordinal")
    assert (state.status, state.progress) == ("running", 2)


def test_cancel_a_running_report_stops_it_at_its_next_step(likert, settings):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    version = running(likert)
    assert services.report_cancel(project=likert, level="ordinal") == "running"
    assert services.report_state(project=likert, level="ordinal").cancelling
    # The dead delivery's redelivery finds the cancel and ends it.
    assert (
        agreement_report.apply(args=[likert.pk, "ordinal", version], task_id="first-delivery").get() is None
    )
    assert services.report_state(project=likert, level="ordinal").status == "cancelled"


def test_dashboard_cancel_and_compute_again(
    role_client, likert, settings, django_capture_on_commit_callbacks
):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    client = role_client("researcher")
    with django_capture_on_commit_callbacks(execute=False):
        html = client.get(url(likert)).content.decode()  # queues it; the worker has not started
    assert 'data-testid="report-cancel"' in html and "csrfmiddlewaretoken" in html
    assert client.post(url(likert, "cancel") + "?level=ordinal").status_code == 302
    html = client.get(url(likert)).content.decode()
    assert 'data-testid="report-cancelled"' in html and 'data-testid="report-retry"' in html
    assert "hx-trigger" not in html  # no polling of a cancelled report
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url(likert, "retry") + "?level=ordinal")
        client.get(url(likert))
    assert services.report_state(project=likert, level="ordinal").ready
    assert role_client("annotator").post(url(likert, "cancel")).status_code == 403


def test_api_cancel_and_retry(api_client_for, likert, settings, django_capture_on_commit_callbacks):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    api = api_client_for("project_manager")
    base = f"/api/v1/projects/{likert.pk}/agreement"
    assert api.post(base + "/cancel").status_code == 409  # nothing being computed
    running(likert)
    response = api.post(base + "/cancel")
    assert response.status_code == 200 and response.json()["status"] == "running"
    services._report_cancelled(likert.pk, "ordinal", selectors.data_version(project=likert))
    assert api.get(base).json()["status"] == "cancelled"
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(base + "/retry")
    assert response.status_code in (200, 202)
    assert api.get(base).status_code == 200
    assert api.post(base + "/cancel?level=nope").status_code == 400


def _heard(likert, version, *, seconds_ago: float, task_id="first-delivery") -> datetime:
    """The killed delivery's last heartbeat."""
    heard = datetime.now(tz=UTC) - timedelta(seconds=seconds_ago)
    key = services._heartbeat_key(likert.pk, "ordinal", version, task_id)
    heartbeat_touch(key=key, now=heard)
    return heard


def test_a_report_whose_worker_stopped_beating_is_sent_again_and_the_dashboard_says_so(
    role_client, likert, settings, django_capture_on_commit_callbacks
):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    settings.JOB_HEARTBEAT_TIMEOUT_S = 90
    settings.JOB_MAX_ATTEMPTS = 3
    # Begun three minutes ago, well inside the task's time limit; heard from last two minutes ago.
    version = running(likert, started=time.time() - 180)
    heard = _heard(likert, version, seconds_ago=120)
    client = role_client("researcher")
    with django_capture_on_commit_callbacks(execute=False):
        html = client.get(url(likert)).content.decode()
    assert status_of(likert)["state"] == "queued" and status_of(likert)["task_id"] != "first-delivery"
    shown = f"{timezone.localtime(heard):%H:%M}"
    assert f"The worker stopped at {shown}; requeued (attempt 2 of 3)." in html
    client.cookies["django_language"] = "id"
    html = client.get(url(likert), HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert f"Worker berhenti pada pukul {shown}; dimasukkan ke antrean lagi (percobaan 2 dari 3)." in html


def test_a_report_heard_from_a_moment_ago_keeps_running(likert, settings):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    settings.JOB_HEARTBEAT_TIMEOUT_S = 90
    version = running(likert, started=time.time() - 180)
    _heard(likert, version, seconds_ago=30)
    state = services.report_state(project=likert, level="ordinal")
    assert (state.status, state.worker_stopped_at) == ("running", None)


def test_cancel_ends_at_once_a_report_whose_worker_stopped(likert, settings):  # noqa: F811
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    settings.JOB_HEARTBEAT_TIMEOUT_S = 90
    version = running(likert, started=time.time() - 180)
    _heard(likert, version, seconds_ago=120)
    assert services.report_cancel(project=likert, level="ordinal") == "cancelled"
    state = services.report_state(project=likert, level="ordinal")
    assert state.status == "cancelled" and not state.cancelling and state.worker_stopped_at is not None
