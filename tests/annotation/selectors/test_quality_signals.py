"""Quality signals of real submitted work, read by ``quality_report``; numbers checked by hand."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.urls import reverse

from annotation import selectors, services
from annotation.models import Assignment

pytestmark = pytest.mark.django_db

VARIED = {
    "1": {"relevance": 1, "fluency": 2},
    "2": {"relevance": 3, "fluency": 4},
    "3": {"relevance": 5, "fluency": 5},
}


def _answer_all(project, user, payload, seconds):
    for secs in seconds:
        assignment = services.assignment_claim(project=project, user=user)
        services.assignment_submit(token=assignment.token, user=user, payload=payload)
        # The browser's time is capped by the time since the claim; set the figure the signal reads.
        Assignment.objects.filter(pk=assignment.pk).update(seconds_on_task=secs)
    assert services.assignment_claim(project=project, user=user) is None


@pytest.fixture
def likert(make_project):
    project = make_project(n_prompts=5, n_models=3, per_group=2, overlap=2)
    flat, careful = project.annotators
    _answer_all(
        project,
        flat,
        {"ratings": {str(i): {"relevance": 4, "fluency": 4} for i in (1, 2, 3)}},
        [2, 2, 2, 3, 60],
    )
    _answer_all(project, careful, {"ratings": VARIED}, [20, 30, 40, 50, 60])
    return project


def test_straight_lining_spread_and_speed(likert):
    flat, careful = likert.annotators
    report = selectors.quality_report(project=likert)
    rows = {row["user_id"]: row for row in report.rows}
    f, c = rows[flat.pk]["signals"], rows[careful.pk]["signals"]
    assert (f.n_tasks, f.straight_share, f.spread) == (5, 1.0, 0.0)
    # careful: 1,2,3,4,5,5 in every task, mean 10/3, squared deviations 40/3 over 6 values
    assert (c.straight_share, c.spread) == (0.0, pytest.approx((20 / 9) ** 0.5))
    # everybody: thirty 4s and five times 1,2,3,4,5,5; mean 11/3; squared deviations 220/3 over 60
    assert f.project_spread == pytest.approx((11 / 9) ** 0.5)
    assert (f.median_seconds, f.fast_share) == (2, 0.8)  # 2,2,2,3 of 2,2,2,3,60 are under 5 s
    assert (c.median_seconds, c.fast_share) == (40, 0.0)
    assert f.project_median_seconds == 25  # (20 + 30) / 2 of the ten times
    assert rows[flat.pk]["flags"] == ["straight_lining", "spread", "speed"]
    assert rows[careful.pk]["flags"] == []
    assert report.flagged_ids == {flat.pk}


def test_position_bias_of_pairwise_votes(make_project):
    project = make_project(kind="pairwise", n_prompts=4, n_models=3, per_group=1, overlap=1)
    (user,) = project.annotators
    _answer_all(project, user, {"vote": "A"}, [30] * 12)
    (row,) = selectors.quality_report(project=project).rows
    signals = row["signals"]
    # 12 of 12 votes for the side shown first: p = 2 / 2^12
    assert (signals.first_share, signals.n_position_votes) == (1.0, 12)
    assert signals.position_p == pytest.approx(2 / 4096)
    assert row["flags"] == ["position"]


def test_thresholds_change_the_flags_and_the_queue_filter(client, make_user, likert):
    flat, careful = likert.annotators
    manager = make_user("project_manager")
    client.force_login(manager)
    url = reverse("annotation:manage_quality_settings", args=[likert.pk])
    form = {
        "gold_accuracy_min": 0.7,
        "straight_share_max": 1,
        "spread_ratio_min": 0,
        "speed_floor_seconds": 2,
        "fast_share_max": 0.3,
        "position_p_max": 0.01,
        "min_tasks": 5,
    }
    client.post(url, form)
    likert.refresh_from_db()
    assert likert.quality_settings["speed_floor_seconds"] == 2.0
    assert selectors.quality_report(project=likert).flagged_ids == set()  # 0 of 5 under 2 s
    bad = client.post(url, {**form, "fast_share_max": 2}, follow=True).content.decode()
    assert "Tasks under the floor above (share)" in bad and "less than or equal to 1" in bad
    likert.refresh_from_db()
    assert likert.quality_settings["fast_share_max"] == 0.3
    client.post(url, {**form, "speed_floor_seconds": 5})
    client.force_login(make_user("reviewer"))
    page = client.get(reverse("annotation:review"), {"project": likert.pk, "flagged": "1"}).content.decode()
    items = re.findall(r'<article class="card review-item".*?</article>', page, flags=re.S)
    assert "5 items" in page and len(items) == 5
    assert all(flat.username in item and 'data-testid="flagged"' in item for item in items)


def test_api_and_csv_carry_the_signals(client, make_user, likert):
    flat, _ = likert.annotators
    client.force_login(make_user("project_manager"))
    data = client.get(reverse("api-project-quality", args=[likert.pk])).json()
    row = next(r for r in data["annotators"] if r["annotator"] == flat.username)
    assert (row["straight_share"], row["fast_share"], row["flags"]) == (
        1.0,
        0.8,
        ["straight_lining", "spread", "speed"],
    )
    assert data["thresholds"]["speed_floor_seconds"] == 5.0
    text = client.get(reverse("annotation:manage_quality_csv", args=[likert.pk])).content.decode()
    rows = {r["annotator"]: r for r in csv.DictReader(io.StringIO(text))}
    assert rows[flat.username]["flags"] == "straight_lining;spread;speed"
    assert rows[flat.username]["median_seconds"] == "2.0"


def test_progress_page_shows_the_signals_with_a_fixed_number_of_queries(
    client, make_user, make_project, likert, django_assert_num_queries
):
    client.force_login(make_user("project_manager"))
    url = reverse("annotation:manage_detail", args=[likert.pk])
    page = client.get(url).content.decode()
    assert page.count('data-testid="quality-row"') == 2 and "straight-lining" in page
    with django_assert_num_queries(15) as small:  # the session read with its user and their roles
        client.get(url)
    big = make_project(n_prompts=12, n_models=3, per_group=3, overlap=3)
    for user in big.annotators:
        _answer_all(big, user, {"ratings": VARIED}, [30] * 12)
    with django_assert_num_queries(len(small.captured_queries)):
        client.get(reverse("annotation:manage_detail", args=[big.pk]))


def test_dawid_skene_reliability_beside_the_signals(make_project):
    project = make_project(kind="pairwise", n_prompts=4, n_models=3, per_group=3, overlap=3)
    x, y, z = project.annotators
    for user, honest in ((x, True), (y, True), (z, False)):
        while (assignment := services.assignment_claim(project=project, user=user)) is not None:
            truth = "A" if assignment.task_id % 2 == 0 else "B"  # the better side alternates over the pairs
            canonical = truth if honest else {"A": "B", "B": "A"}[truth]
            swapped = assignment.permutation == [1, 0]
            shown = {"A": "B", "B": "A"}[canonical] if swapped else canonical
            services.assignment_submit(token=assignment.token, user=user, payload={"vote": shown})
    rows = {row["user_id"]: row["reliability"] for row in selectors.quality_report(project=project).rows}
    # 12 pairs, 6 of each class; x and y give the true side, z the other, so EM settles on the majority's
    # classes with certainty: x's diagonal is (6 + 0.01) / (6 + 0.02) in both rows, z's 0.01 / 6.02.
    assert rows[x.pk] == pytest.approx(6.01 / 6.02, abs=1e-3)
    assert rows[y.pk] == pytest.approx(6.01 / 6.02, abs=1e-3)
    assert rows[z.pk] == pytest.approx(0.01 / 6.02, abs=1e-3)
