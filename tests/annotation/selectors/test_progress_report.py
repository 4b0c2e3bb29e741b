"""The progress report read for the project page and API: per annotator, per group and overall."""

from __future__ import annotations

import pytest

from annotation import services
from annotation.selectors import progress_report

pytestmark = pytest.mark.django_db


def _submit(project, user, n):
    for _ in range(n):
        assignment = services.assignment_claim(project=project, user=user)
        services.assignment_submit(token=assignment.token, user=user, payload={"best": 1})


def test_counts_per_annotator_group_and_project(make_project):
    # 3 tasks, k = 1, two groups of one annotator each.
    project = make_project(kind="best_of_n", n_prompts=3, n_models=3, groups=2, per_group=1, overlap=1)
    first, second = project.annotators
    _submit(project, first, 3)
    _submit(project, second, 1)
    held = services.assignment_claim(project=project, user=second)  # in progress
    assert held is not None
    report = progress_report(project=project)
    rows = {(r["group"], r["done"], r["in_progress"]) for r in report.annotators}
    assert rows == {("G1", 3, 0), ("G2", 1, 1)}
    groups = {
        g["group"]: (g["members"], g["done"], g["toward_k"], g["required"], g["tasks_complete"])
        for g in report.groups
    }
    # G1: 3 of 3 submitted; G2: 1 of 3. Overall: 4 of k x groups x tasks = 6; only the task both groups
    # submitted is complete.
    assert groups == {"G1": (1, 3, 3, 3, 3), "G2": (1, 1, 1, 3, 1)}
    assert (report.project.done, report.project.required, report.project.tasks_complete) == (4, 6, 1)
