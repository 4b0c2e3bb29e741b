"""The judge leaderboard says "partial: n of N items" while a run that feeds it is unfinished."""

from __future__ import annotations

import pytest

from analytics import selectors
from evaluation.models import JudgeRun, JudgeTemplate, ModelEndpoint, PairVerdict

from .test_reports import pairwise  # noqa: F401 - the answered pairwise project fixture

pytestmark = pytest.mark.django_db


def running_judge(project, *, n_total: int) -> JudgeRun:
    """A pairwise judge run over the project's 2 tasks, still running, with a verdict on the first task."""
    endpoint = ModelEndpoint.objects.create(slug="juri-x", model_id="juri-x")
    template = JudgeTemplate.objects.get_or_create(
        kind="pairwise", language="en", version=99, defaults={"user": "x"}
    )[0]
    run = JudgeRun.objects.create(
        judge_kind="pairwise",
        endpoint=endpoint,
        template=template,
        annotation_project=project,
        status="running",
        n_total=n_total,
    )
    task = project.test_tasks[0]
    PairVerdict.objects.create(
        judge_run=run,
        target_key=f"task:{task.pk}",
        prompt=task.prompt,
        response_a=task.response_a,
        response_b=task.response_b,
        annotation_task_id=task.pk,
        verdict="A",
        consistency="consistent",
    )
    return run


def test_dashboard_says_partial_while_the_run_works_and_not_after(pairwise, role_client):  # noqa: F811
    run = running_judge(pairwise, n_total=2)
    assert selectors.judge_runs_unfinished(project=pairwise) == [
        {"run": run.pk, "judge": "juri-x", "status": "running", "n_total": 2, "n_done": 1}
    ]
    client = role_client("project_manager")
    page = f"/analytics/projects/{pairwise.pk}/"
    html = client.get(page).content.decode()
    assert f"juri-x (run {run.pk}): partial: 1 of 2 items" in html
    html = client.get(page, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert f"juri-x (proses {run.pk}): sebagian: 1 dari 2 butir" in html

    # The second item's verdict arrives and the run finishes: a new data version, no partial line.
    task = pairwise.test_tasks[1]
    PairVerdict.objects.create(
        judge_run=run,
        target_key=f"task:{task.pk}",
        prompt=task.prompt,
        response_a=task.response_a,
        response_b=task.response_b,
        annotation_task_id=task.pk,
        verdict="B",
        consistency="consistent",
    )
    version = selectors.data_version(project=pairwise)
    JudgeRun.objects.filter(pk=run.pk).update(status="succeeded", n_done=2)
    assert selectors.data_version(project=pairwise) != version  # the run's end alone changes the version
    html = client.get(page).content.decode()
    assert 'data-testid="partial"' not in html and "partial:" not in html
    assert f"juri-x (run {run.pk})" in html  # still on the leaderboard, now complete


def test_a_cancelled_run_reads_cancelled_not_partial(pairwise, role_client):  # noqa: F811
    run = running_judge(pairwise, n_total=2)
    JudgeRun.objects.filter(pk=run.pk).update(status="cancelled")
    client = role_client("project_manager")
    page = f"/analytics/projects/{pairwise.pk}/"
    html = client.get(page).content.decode()
    assert f"juri-x (run {run.pk}): cancelled: 1 of 2 done" in html and "partial:" not in html
    html = client.get(page, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert f"juri-x (proses {run.pk}): dibatalkan: 1 dari 2 selesai" in html


def test_a_cancelled_run_counts_the_same_on_its_page_as_on_the_dashboard(pairwise, role_client):  # noqa: F811
    # The cancel cut a chunk short: one verdict is written, the run's own count (moved per chunk) is 0.
    run = running_judge(pairwise, n_total=2)
    JudgeRun.objects.filter(pk=run.pk).update(status="cancelled", n_done=0)
    client = role_client("researcher")
    dashboard = client.get(f"/analytics/projects/{pairwise.pk}/").content.decode()
    assert "cancelled: 1 of 2 done" in dashboard
    page = client.get(f"/evaluation/runs/judge/{run.pk}/").content.decode()
    assert "1 / 2" in page and "0 / 2" not in page
