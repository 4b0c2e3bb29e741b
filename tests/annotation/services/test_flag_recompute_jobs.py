"""Flag recomputations as background jobs: redelivery after a dead worker, sweep, cancel, retry."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from annotation import services
from annotation.models import FlagRecompute
from annotation.services import FLAG_RECOMPUTE_JOB
from annotation.services import translation as translation_services
from annotation.tasks import flag_recomputes_requeue_stale_task, translation_flags_recompute_task
from datasets_app.jobs import JobRefused, job_heartbeat_touch
from datasets_app.models import TranslationUnit
from tests.annotation.conftest import build_translation_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_heartbeats_of_other_tests():
    """Heartbeats live in the cache, which outlives each test's database."""
    cache.clear()


@pytest.fixture
def project(make_user, job_project):
    dataset = build_translation_dataset(n_units=10, translated=True)
    project = job_project(kind="translation_review", dataset=dataset, members=[make_user("annotator")])
    services.project_update(
        project=project, flag_settings={"register_markers": {"ngoko": ["kula"], "krama": []}}
    )
    return project


def died_while_running(project, *, attempts=1, started=None) -> FlagRecompute:
    return FlagRecompute.objects.create(
        project=project,
        status="running",
        task_id="first-delivery",
        attempts=attempts,
        total=10,
        done=4,
        started_at=started or timezone.now(),
    )


def test_a_redelivered_task_recomputes_from_the_first_unit(project):
    run = died_while_running(project)
    assert (
        translation_flags_recompute_task.apply(args=[run.pk], task_id="first-delivery").get() == "succeeded"
    )
    run.refresh_from_db()
    assert (run.status, run.attempts, run.done, run.total, run.n_flagged) == ("succeeded", 2, 10, 10, 3)
    assert TranslationUnit.objects.exclude(flags=[]).count() == 3


def test_another_delivery_leaves_a_running_recomputation_alone(project):
    run = died_while_running(project)
    assert translation_flags_recompute_task.apply(args=[run.pk], task_id="other").get() == "running"
    run.refresh_from_db()
    assert (run.status, run.done) == ("running", 4)


def test_the_sweep_sends_a_stale_recomputation_again_or_gives_up(
    project, settings, django_capture_on_commit_callbacks
):
    settings.JOB_MAX_ATTEMPTS = 2
    long_ago = timezone.now() - FLAG_RECOMPUTE_JOB.time_limit - timedelta(minutes=2)
    run = died_while_running(project, started=long_ago)
    with django_capture_on_commit_callbacks(execute=True):
        assert flag_recomputes_requeue_stale_task.apply().get() == {"sent": 1, "failed": 0, "cancelled": 0}
    run.refresh_from_db()
    assert (run.status, run.attempts, run.done) == ("succeeded", 2, 10)
    stuck = died_while_running(project, attempts=2, started=long_ago)
    assert flag_recomputes_requeue_stale_task.apply().get() == {"sent": 0, "failed": 1, "cancelled": 0}
    stuck.refresh_from_db()
    assert stuck.status == "failed" and "flag recomputation stopped without finishing" in stuck.error


def test_a_running_recomputation_cancelled_stops_after_its_batch(project, monkeypatch):
    monkeypatch.setattr(translation_services, "RECOMPUTE_BATCH", 3)
    run = FlagRecompute.objects.create(project=project, task_id="t")
    steps = []
    real_check = translation_services.job_check

    def cancel_after_the_first_batch(*, kind, job, **updates):
        steps.append(updates)
        if len(steps) == 2:
            services.flag_recompute_cancel(run=FlagRecompute.objects.get(pk=job.pk))
        real_check(kind=kind, job=job, **updates)

    monkeypatch.setattr(translation_services, "job_check", cancel_after_the_first_batch)
    assert translation_flags_recompute_task.apply(args=[run.pk], task_id="t").get() == "cancelled"
    run.refresh_from_db()
    assert (run.status, run.done) == ("cancelled", 3)


def test_retry_and_its_refusals(project, django_capture_on_commit_callbacks):
    run = FlagRecompute.objects.create(project=project, status="failed", error="boom", done=2)
    with pytest.raises(JobRefused):
        services.flag_recompute_cancel(run=run)
    other = FlagRecompute.objects.create(project=project)  # another one queued: no retry meanwhile
    with pytest.raises(services.AnnotationError, match="already under way"):
        services.flag_recompute_retry(run=run)
    other.delete()
    with django_capture_on_commit_callbacks(execute=True):
        services.flag_recompute_retry(run=run)
    run.refresh_from_db()
    assert (run.status, run.error, run.done, run.attempts) == ("succeeded", "", 10, 1)


def test_manage_page_buttons_and_api(
    role_client, api_client_for, project, django_capture_on_commit_callbacks
):
    run = FlagRecompute.objects.create(project=project, task_id="t")
    client = role_client("project_manager")
    html = client.get(reverse("annotation:manage_flags_progress", args=[project.pk])).content.decode()
    assert 'data-testid="recompute-cancel"' in html and "csrfmiddlewaretoken" in html
    client.post(reverse("annotation:manage_flags_cancel", args=[project.pk, run.pk]))
    run.refresh_from_db()
    assert run.status == "cancelled"
    html = client.get(reverse("annotation:manage_flags_progress", args=[project.pk])).content.decode()
    assert 'data-testid="recompute-retry"' in html and 'data-testid="recompute-cancel"' not in html

    api = api_client_for("project_manager")
    assert api.post(f"/api/v1/flag-recomputes/{run.pk}/cancel").status_code == 409
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/v1/flag-recomputes/{run.pk}/retry")
    assert response.status_code == 202
    assert api.get(f"/api/v1/flag-recomputes/{run.pk}").json()["status"] == "succeeded"
    assert api_client_for("researcher").post(f"/api/v1/flag-recomputes/{run.pk}/retry").status_code == 403


def test_a_recomputation_whose_worker_stopped_beating_fails_once_out_of_attempts_and_says_so(
    project, role_client, settings
):
    settings.JOB_HEARTBEAT_TIMEOUT_S = 90
    settings.JOB_MAX_ATTEMPTS = 2
    heard = timezone.now() - timedelta(minutes=2)  # half an hour inside its time limit
    run = died_while_running(project, attempts=2, started=heard - timedelta(seconds=5))
    job_heartbeat_touch(kind=FLAG_RECOMPUTE_JOB, job=run, now=heard)
    assert flag_recomputes_requeue_stale_task.apply().get() == {"sent": 0, "failed": 1, "cancelled": 0}
    run.refresh_from_db()
    assert (run.status, run.worker_stopped_at) == ("failed", heard)
    html = role_client("project_manager").get(reverse("annotation:manage_flags_progress", args=[project.pk]))
    expected = f"Failed: the worker stopped responding at {timezone.localtime(heard):%H:%M}."
    assert expected in html.content.decode()
