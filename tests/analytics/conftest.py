"""Projects answered through the real annotation services, with answers given in canonical terms.

Annotators see responses in their own shuffled order; these helpers turn "coder X rates response R
with v" into the shown positions of X's assignment, so the stored (canonical) data is exactly what a
test states, whatever the blinding permutation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import cache

from annotation import services
from annotation.models import Assignment
from tests.annotation import conftest as annotation_fixtures

make_project = annotation_fixtures.make_project
build_dataset = annotation_fixtures.build_dataset


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


def shown_payload(assignment: Assignment, answer: dict[str, Any]) -> dict[str, Any]:
    """Canonical answer -> the payload the annotator would post (shown numbers and labels).

    ``answer`` keys: ``ratings`` {response_id: {criterion: value}}, ``best`` response id or "all_bad",
    ``vote`` canonical A/B/tie/both_bad.
    """
    task, permutation = assignment.task, list(assignment.permutation)
    payload: dict[str, Any] = {}
    if "ratings" in answer:
        payload["ratings"] = {
            str(permutation.index(task.response_ids.index(rid)) + 1): values
            for rid, values in answer["ratings"].items()
        }
    if "best" in answer:
        best = answer["best"]
        payload["best"] = best if best == "all_bad" else permutation.index(task.response_ids.index(best)) + 1
    if "vote" in answer:
        vote = answer["vote"]
        if permutation == [1, 0] and vote in ("A", "B"):
            vote = "B" if vote == "A" else "A"
        payload["vote"] = vote
    return payload


def work_through(project, user, answer: Callable[[Assignment], dict[str, Any] | None]) -> int:
    """Claim and submit every task the annotator gets; ``answer`` returning None skips the task."""
    done = 0
    while True:
        assignment = services.assignment_claim(project=project, user=user)
        if assignment is None:
            return done
        wanted = answer(assignment)
        if wanted is None:
            services.assignment_skip(token=assignment.token, user=user, reason="test")
            continue
        services.assignment_submit(
            token=assignment.token, user=user, payload=shown_payload(assignment, wanted)
        )
        done += 1
