"""Exact-k distribution under real concurrency on PostgreSQL: 30 annotators in two groups race."""

from __future__ import annotations

import functools
import threading
import time
from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from annotation import services
from annotation.models import Assignment, TaskSlot
from tests.annotation import conftest as annotation_fixtures
from tests.annotation.conftest import build_dataset

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
make_project = annotation_fixtures.make_project  # the rating-job project builder, as a fixture here

N_TASKS = 500
K = 3
PER_GROUP = 15


def drain(project, user) -> None:
    """Claim and submit until the group needs nothing more from ``user``."""
    misses = 0
    # A claim can find nothing while the last open places are locked by claims in flight; only a few
    # empty answers in a row mean the group needs nothing more from this annotator.
    while misses < 3:
        assignment = services.assignment_claim(project=project, user=user)
        if assignment is None:
            misses += 1
            time.sleep(0.05)
            continue
        misses = 0
        services.assignment_submit(token=assignment.token, user=user, payload={"best": 1})


def at_once(*calls, timeout: float = 120) -> list[BaseException]:
    """Run ``calls`` in threads released together; the errors they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(len(calls))

    def work(call):
        try:
            start.wait()
            call()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    return errors


def race(project, users) -> list[BaseException]:
    return at_once(*(functools.partial(drain, project, user) for user in users))


def test_thirty_annotators_two_groups_exactly_k_each(make_project, make_user):
    assert connection.vendor == "postgresql"
    dataset = build_dataset(n_prompts=N_TASKS, n_models=2)
    project = make_project(kind="best_of_n", dataset=dataset, groups=2, per_group=PER_GROUP, overlap=K)
    group_one = project.groups.order_by("id").first()

    # A holder that dies: it claims a task and never comes back; its lease has run out by the race.
    dead = make_user("annotator")
    services.project_member_add(project=project, user=dead, group=group_one)
    abandoned = services.assignment_claim(project=project, user=dead)
    Assignment.objects.filter(pk=abandoned.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))

    started = time.monotonic()
    errors = race(project, project.annotators)
    elapsed = time.monotonic() - started
    assert not errors, errors[:3]

    abandoned.refresh_from_db()
    assert abandoned.status == "expired"

    submitted = list(
        Assignment.objects.filter(project=project, status="submitted").values_list(
            "task_id", "group_id", "annotator_id"
        )
    )
    per_task_group = defaultdict(list)
    for task_id, group_id, annotator_id in submitted:
        per_task_group[(task_id, group_id)].append(annotator_id)
    # 500 tasks x 2 groups, each with exactly 3 distinct annotators; nobody had a task twice.
    assert len(per_task_group) == N_TASKS * 2
    assert all(len(a) == K and len(set(a)) == K for a in per_task_group.values())
    assert max(Counter((t, a) for t, _, a in submitted).values()) == 1
    # The abandoned task was completed by three others in the dead holder's group.
    others = per_task_group[(abandoned.task_id, group_one.pk)]
    assert dead.pk not in others and len(others) == K
    assert (
        not TaskSlot.objects.filter(project=project)
        .exclude(open_count=0, active_count=0, submitted_count=K)
        .exists()
    )
    print(f"{len(submitted)} submissions by 30 threads in {elapsed:.1f} s")


def test_a_group_of_exactly_k_with_lapsed_leases_finishes_under_a_race(make_project):
    # Every member must do every task; each first leaves a task open past its lease. In the race the
    # lapsed tasks come back to their holders while the others claim around them: every place is filled
    # once, by distinct members, and nothing deadlocks.
    assert connection.vendor == "postgresql"
    n_tasks, k = 60, 4
    dataset = build_dataset(n_prompts=n_tasks, n_models=2)
    project = make_project(kind="best_of_n", dataset=dataset, groups=1, per_group=k, overlap=k)
    lapsed = [services.assignment_claim(project=project, user=u) for u in project.annotators]
    Assignment.objects.filter(pk__in=[a.pk for a in lapsed]).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    services.leases_reclaim(project=project)

    errors = race(project, project.annotators)
    assert not errors, errors[:3]

    submitted = list(
        Assignment.objects.filter(project=project, status="submitted").values_list("task_id", "annotator_id")
    )
    assert len(submitted) == n_tasks * k == len(set(submitted))
    assert not Assignment.objects.filter(project=project).exclude(status="submitted").exists()
    assert {a.pk for a in lapsed} <= set(
        Assignment.objects.filter(project=project, status="submitted").values_list("pk", flat=True)
    )
    assert (
        not TaskSlot.objects.filter(project=project)
        .exclude(open_count=0, active_count=0, submitted_count=k)
        .exists()
    )


def test_a_late_submit_and_a_claim_of_the_same_lapsed_task_do_not_deadlock(make_project):
    # One annotator, two windows: one submits the lapsed task late while the other claims, which would
    # hand the same task back. Whatever order they meet in, the task is submitted once and the place
    # counted once.
    assert connection.vendor == "postgresql"
    for _ in range(5):
        project = make_project(
            kind="best_of_n", dataset=build_dataset(n_prompts=3, n_models=2), per_group=1, overlap=1
        )
        (user,) = project.annotators
        held = services.assignment_claim(project=project, user=user)
        Assignment.objects.filter(pk=held.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
        services.leases_reclaim(project=project)
        errors = at_once(
            functools.partial(services.assignment_submit, token=held.token, user=user, payload={"best": 1}),
            functools.partial(services.assignment_claim, project=project, user=user),
        )
        assert not errors, errors
        held.refresh_from_db()
        assert held.status == "submitted"
        slot = TaskSlot.objects.get(pk=held.slot_id)
        assert (slot.open_count, slot.active_count, slot.submitted_count) == (0, 0, 1)
