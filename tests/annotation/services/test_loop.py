"""The shared loop: claims, k per group, leases, late submits, skips, time on task, gold items."""

from datetime import timedelta

import pytest
from django.db import connection, models
from django.db.models.signals import post_init
from django.test.utils import CaptureQueriesContext, isolate_apps
from django.utils import timezone

from annotation import services
from annotation.domain.gold import is_gold_slot
from annotation.models import Annotation, Assignment, TaskSlot
from annotation.services import assignment_claim, assignment_skip, assignment_submit, loop_sql
from tests.annotation.conftest import likert_payload

pytestmark = pytest.mark.django_db


def drain(project, user, payload_for):
    """Claim and submit until nothing is left; returns the task ids done."""
    done = []
    while (assignment := assignment_claim(project=project, user=user)) is not None:
        assignment_submit(token=assignment.token, user=user, payload=payload_for(assignment))
        done.append(assignment.task_id)
    return done


def test_exactly_k_per_group_and_never_twice(make_project):
    # 5 tasks, k=2, one group of 3: 10 places, so someone gets fewer than 5 and nobody gets one twice.
    project = make_project(n_prompts=5, per_group=3, overlap=2, n_models=3)
    per_user = {u.pk: drain(project, u, lambda a: likert_payload(3)) for u in project.annotators}
    for tasks in per_user.values():
        assert len(tasks) == len(set(tasks))
    assert sum(len(t) for t in per_user.values()) == 10
    for slot in TaskSlot.objects.filter(project=project):
        assert (slot.submitted_count, slot.open_count, slot.active_count) == (2, 0, 0)
    assert Assignment.objects.filter(project=project, status="submitted").count() == 10


def test_each_group_gets_its_own_k(make_project):
    project = make_project(n_prompts=3, groups=2, per_group=1, overlap=1)
    g1_user, g2_user = project.annotators
    assert len(drain(project, g1_user, lambda a: likert_payload(3))) == 3
    assert len(drain(project, g2_user, lambda a: likert_payload(3))) == 3


def test_claim_resumes_own_open_assignment(make_project):
    project = make_project()
    user = project.annotators[0]
    first = assignment_claim(project=project, user=user)
    again = assignment_claim(project=project, user=user)
    assert again.pk == first.pk
    assert TaskSlot.objects.get(pk=first.slot_id).active_count == 1


def test_claim_refuses_non_members_and_inactive_projects(make_project, make_user):
    project = make_project(activate=False)
    with pytest.raises(services.ProjectNotOpen):
        assignment_claim(project=project, user=project.annotators[0])
    with pytest.raises(services.NotAMember):
        assignment_claim(project=project, user=make_user("annotator"))


def test_expired_lease_goes_to_someone_else_and_back_when_it_reopens(make_project):
    # One task, k=1: the first holder lets the lease run out, the second gets the task.
    project = make_project(n_prompts=1, per_group=2, overlap=1, lease_minutes=30)
    slow, fast = project.annotators
    now = timezone.now()
    held = assignment_claim(project=project, user=slow, now=now)
    assert assignment_claim(project=project, user=fast, now=now + timedelta(minutes=29)) is None
    taken = assignment_claim(project=project, user=fast, now=now + timedelta(minutes=31))
    assert taken.task_id == held.task_id
    held.refresh_from_db()
    assert held.status == "expired"
    # While the place is taken the late holder gets nothing; once it reopens, the task is theirs again.
    assert assignment_claim(project=project, user=slow, now=now + timedelta(minutes=32)) is None
    assignment_skip(token=taken.token, user=fast)
    back = assignment_claim(project=project, user=slow, now=now + timedelta(minutes=33))
    assert (back.pk, back.token, back.status) == (held.pk, held.token, "assigned")
    assert back.permutation == held.permutation
    assert back.lease_expires_at == now + timedelta(minutes=33 + 30)
    slot = TaskSlot.objects.get(pk=held.slot_id)
    assert (slot.open_count, slot.active_count, slot.submitted_count) == (0, 1, 0)
    assignment_submit(token=back.token, user=slow, payload=likert_payload(3), now=now + timedelta(minutes=40))
    slot.refresh_from_db()
    assert (slot.open_count, slot.active_count, slot.submitted_count) == (0, 0, 1)
    # Submitted once: never again, to anyone in the group.
    assert assignment_claim(project=project, user=slow, now=now + timedelta(hours=2)) is None
    assert assignment_claim(project=project, user=fast, now=now + timedelta(hours=2)) is None


def test_a_group_of_exactly_k_finishes_after_expired_leases(make_project):
    # Two members, k=2: every member must do every task. Both leave a task open past the lease; the
    # lease is reclaimed by the sweep, and each still gets their task back and the group finishes.
    project = make_project(n_prompts=4, per_group=2, overlap=2, lease_minutes=30)
    first, second = project.annotators
    now = timezone.now()
    a = assignment_claim(project=project, user=first, now=now)
    b = assignment_claim(project=project, user=second, now=now)
    assert services.leases_reclaim(now=now + timedelta(minutes=31)) == 2
    later = now + timedelta(minutes=35)
    done = {u.pk: [] for u in (first, second)}
    for user in (first, second):
        while (assignment := assignment_claim(project=project, user=user, now=later)) is not None:
            assignment_submit(token=assignment.token, user=user, payload=likert_payload(3), now=later)
            done[user.pk].append(assignment.task_id)
    # The lapsed task comes back first, before a new one.
    assert done[first.pk][0] == a.task_id and done[second.pk][0] == b.task_id
    for tasks in done.values():
        assert sorted(tasks) == sorted(set(tasks)) and len(tasks) == 4
    for slot in TaskSlot.objects.filter(project=project):
        assert (slot.submitted_count, slot.open_count, slot.active_count) == (2, 0, 0)
    assert not Assignment.objects.filter(project=project, status="expired").exists()


def test_a_lapsed_lease_nobody_reclaimed_is_resumed_with_a_new_lease(make_project):
    project = make_project(n_prompts=2, per_group=1, overlap=1, lease_minutes=30)
    user = project.annotators[0]
    now = timezone.now()
    held = assignment_claim(project=project, user=user, now=now)
    again = assignment_claim(project=project, user=user, now=now + timedelta(minutes=45))
    assert (again.pk, again.status) == (held.pk, "assigned")
    assert again.lease_expires_at == now + timedelta(minutes=75)
    again.refresh_from_db()
    assert again.lease_expires_at == now + timedelta(minutes=75)
    slot = TaskSlot.objects.get(pk=held.slot_id)
    assert (slot.open_count, slot.active_count) == (0, 1)


def test_a_lapsed_task_is_not_given_back_in_another_group(make_project):
    # The member moved to the other group: the lapsed task's place belongs to the old group.
    project = make_project(n_prompts=1, groups=2, per_group=1, overlap=1, lease_minutes=30)
    mover, other = project.annotators
    now = timezone.now()
    held = assignment_claim(project=project, user=mover, now=now)
    services.leases_reclaim(now=now + timedelta(minutes=31))
    from annotation.models import Membership

    Membership.objects.filter(project=project, user=mover).update(
        group=Membership.objects.get(project=project, user=other).group
    )
    assert assignment_claim(project=project, user=mover, now=now + timedelta(minutes=32)) is None
    held.refresh_from_db()
    assert held.status == "expired"


def test_a_removed_member_cannot_submit_or_skip_what_they_held(make_project):
    project = make_project(n_prompts=1, per_group=2, overlap=1)
    leaving, staying = project.annotators
    held = assignment_claim(project=project, user=leaving)
    assert services.project_member_remove(project=project, user=leaving)
    with pytest.raises(services.NotAMember):
        assignment_submit(token=held.token, user=leaving, payload=likert_payload(3))
    with pytest.raises(services.NotAMember):
        assignment_skip(token=held.token, user=leaving)
    held.refresh_from_db()
    assert held.status == "expired"
    assert not Annotation.objects.filter(assignment=held).exists()
    # The place went back to the pool: the one who stays takes it.
    assert assignment_claim(project=project, user=staying).task_id == held.task_id


def test_a_removed_member_cannot_edit_submitted_work(make_project):
    project = make_project(n_prompts=1, per_group=1, overlap=1)
    assert project.allow_edits
    leaving = project.annotators[0]
    held = assignment_claim(project=project, user=leaving)
    assignment_submit(token=held.token, user=leaving, payload=likert_payload(3, value=3))
    services.project_member_remove(project=project, user=leaving)
    with pytest.raises(services.NotAMember):
        assignment_submit(token=held.token, user=leaving, payload=likert_payload(3, value=5))
    with pytest.raises(services.NotAMember):
        services.assignment_edit_open(token=held.token, user=leaving)
    assert set(Annotation.objects.filter(assignment=held).values_list("value_int", flat=True)) == {3}


def test_late_submit_is_kept_while_a_place_is_open(make_project):
    project = make_project(n_prompts=1, per_group=2, overlap=1)
    user = project.annotators[0]
    now = timezone.now()
    held = assignment_claim(project=project, user=user, now=now)
    assert services.leases_reclaim(now=now + timedelta(hours=1)) == 1
    result = assignment_submit(
        token=held.token, user=user, payload=likert_payload(3), now=now + timedelta(hours=1)
    )
    assert result.outcome == "created"
    slot = TaskSlot.objects.get(pk=held.slot_id)
    assert (slot.open_count, slot.active_count, slot.submitted_count) == (0, 0, 1)


def test_late_submit_is_refused_when_the_place_was_filled(make_project):
    project = make_project(n_prompts=1, per_group=2, overlap=1)
    slow, fast = project.annotators
    now = timezone.now()
    held = assignment_claim(project=project, user=slow, now=now)
    later = now + timedelta(hours=1)
    taken = assignment_claim(project=project, user=fast, now=later)
    assignment_submit(token=taken.token, user=fast, payload=likert_payload(3), now=later)
    with pytest.raises(services.AssignmentClosed):
        assignment_submit(token=held.token, user=slow, payload=likert_payload(3), now=later)


def test_skip_returns_the_task_to_the_pool(make_project):
    project = make_project(n_prompts=1, per_group=2, overlap=1)
    first, second = project.annotators
    assignment = assignment_claim(project=project, user=first)
    skipped = assignment_skip(token=assignment.token, user=first, reason="Saya tidak paham bahasa Jawa")
    assert skipped.status == "skipped" and skipped.skip_reason == "Saya tidak paham bahasa Jawa"
    assert assignment_claim(project=project, user=first) is None
    assert assignment_claim(project=project, user=second).task_id == assignment.task_id


def test_time_on_task_is_recorded_and_capped(make_project):
    project = make_project(n_models=3)
    user = project.annotators[0]
    now = timezone.now()
    assignment = assignment_claim(project=project, user=user, now=now)
    result = assignment_submit(
        token=assignment.token,
        user=user,
        payload=likert_payload(3),
        seconds=500,
        now=now + timedelta(seconds=95),
    )
    assert result.assignment.seconds_on_task == 95


def test_gold_items_come_at_the_rate_and_do_not_count_toward_k(make_project):
    project = make_project(
        n_prompts=12, n_models=3, per_group=1, activate=False, kind="best_of_n", gold_rate=0.25
    )
    gold_tasks = list(project.tasks.order_by("id")[:4])
    for task in gold_tasks:
        services.task_gold_set(task=task, answer=0)
    services.project_activate(project=project)
    project.refresh_from_db()
    assert project.n_tasks == 8
    user = project.annotators[0]
    served = drain(project, user, lambda a: {"best": a.permutation.index(0) + 1})
    gold_ids = {t.pk for t in gold_tasks}
    n_gold = len([t for t in served if t in gold_ids])
    assert len(served) - n_gold == 8 and n_gold >= 1
    # Gold comes exactly where the annotator's seeded gold slots fall (positions drawn per block of the
    # stream, see annotation.domain.gold), while the annotator has gold items left to see (each once; a
    # slot after the last one gets an ordinary task); which positions those are depends on the annotator's id.
    expected, seen = [], 0
    for i in range(len(served)):
        gold = is_gold_slot(project.seed, user.pk, i, project.gold_rate) and seen < len(gold_tasks)
        seen += gold
        expected.append(gold)
    assert [task in gold_ids for task in served] == expected
    assert not TaskSlot.objects.filter(task__in=gold_tasks).exists()


def test_new_instances_are_the_models_own(db):
    values = {"assignment_id": 7, "round": 2, "criterion": "relevance", "value_int": 4, "response_id": 3}
    (made,) = loop_sql.new_instances(Annotation, [values])
    expected = Annotation(**values)
    fields = [f.attname for f in Annotation._meta.concrete_fields]
    assert [getattr(made, f) for f in fields] == [getattr(expected, f) for f in fields]
    assert made._state.adding and made._state.db is None and made.pk is None
    # Each instance has its own state and values.
    first, second = loop_sql.new_instances(Annotation, [{"criterion": "a"}, {"criterion": "b"}])
    assert first._state is not second._state and (first.criterion, second.criterion) == ("a", "b")
    assert first.round == 1 and first.choice == "" and first.response_id is None


@isolate_apps("annotation")
def test_new_instances_call_a_callable_default_for_every_instance():
    counter = iter(range(100))

    class Stamped(models.Model):
        code = models.CharField(max_length=8, default=lambda: f"c{next(counter)}")
        n = models.IntegerField(default=0)

        class Meta:
            app_label = "annotation"

        def __str__(self) -> str:
            return self.code

    first, second = loop_sql.new_instances(Stamped, [{"n": 1}, {"n": 2}])
    assert first.code != second.code and (first.n, second.n) == (1, 2)


def test_a_new_assignment_is_what_the_model_would_make(make_project):
    """Built without ``Model.__init__``: the same fields as ``Assignment(...)``, a token of its own, the
    given related objects cached (no query to reach them), and it saves."""
    project = make_project(n_prompts=2, per_group=1)
    task = project.tasks.order_by("id").first()
    group = project.groups.first()
    user = project.annotators[0]
    now = timezone.now()
    values = {"group_id": group.pk, "annotator_id": user.pk, "permutation": [1, 0], "started_at": now}
    first, second = loop_sql.new_instances(
        Assignment,
        [values, values],
        related=[{"project": project, "task": task, "slot": None}, {"project": project, "task": task}],
    )
    expected = Assignment(project=project, task=task, slot=None, **values)
    fields = [f.attname for f in Assignment._meta.concrete_fields if f.attname != "token"]
    assert [getattr(first, f) for f in fields] == [getattr(expected, f) for f in fields]
    assert first.status == Assignment.Status.ASSIGNED and first.slot_id is None
    assert len(first.token) == len(expected.token) and first.token != second.token
    with CaptureQueriesContext(connection) as queries:
        assert first.project is project and first.task is task and first.slot is None
    assert len(queries) == 0
    first.save(force_insert=True)
    assert Assignment.objects.get(pk=first.pk).token == first.token
    # A related object and its id side by side could disagree: refused, with or without Model.__init__.
    for watched in (False, True):
        receiver = lambda **kwargs: None  # noqa: E731
        if watched:
            post_init.connect(receiver, sender=Assignment)
        try:
            with pytest.raises(ValueError, match="project given both as an object and as project_id"):
                loop_sql.new_instances(
                    Assignment, [{**values, "project_id": 0}], related=[{"project": project}]
                )
        finally:
            post_init.disconnect(receiver, sender=Assignment)


def _separate_state(project, user, now):
    with loop_sql.claim_state_ahead(project_id=0, user_id=0, now=now):
        return loop_sql.claim_state(project_id=project.pk, user_id=user.pk, now=now)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's submit is one statement")
@pytest.mark.parametrize("gold", [False, True])
def test_the_claim_state_read_with_the_submit_is_the_one_read_after_it(make_project, gold):
    """The submit statement reads the claim state from its snapshot, before its own writes: it must still
    come out as a separate read just after the submit finds it (the submitted task neither held nor
    expired, and counted as done unless it is gold), and it spares the claim its statement."""
    project = make_project(
        n_prompts=16,  # enough that the other annotator still has a task to hold below
        n_models=3,
        per_group=2,
        overlap=1,
        activate=False,
        kind="best_of_n",
        lease_minutes=30,
        gold_rate=0.5 if gold else 0.0,
    )
    if gold:
        for task in project.tasks.order_by("id")[:3]:
            services.task_gold_set(task=task, answer=0)
    services.project_activate(project=project)
    project.refresh_from_db()
    user, other = project.annotators
    now = timezone.now()

    def answer(assignment):
        return {"best": assignment.permutation.index(0) + 1}

    # At least one task done before, and then one held that is gold or not as the case asks.
    mine, done_before = assignment_claim(project=project, user=user, now=now), 0
    while not (done_before and mine.is_gold == gold):
        assignment_submit(token=mine.token, user=user, payload=answer(mine), now=now)
        mine, done_before = assignment_claim(project=project, user=user, now=now), done_before + 1
    # Someone else's lease ran out (and nobody has reclaimed it yet): the state must say so.
    assert assignment_claim(project=project, user=other, now=now - timedelta(minutes=40)) is not None

    with loop_sql.claim_state_ahead(project_id=project.pk, user_id=user.pk, now=now):
        assignment_submit(token=mine.token, user=user, payload=answer(mine), now=now)
        with CaptureQueriesContext(connection) as queries:
            ahead = loop_sql.claim_state(project_id=project.pk, user_id=user.pk, now=now)
        assert len(queries) == 0
        # Read once: a second call in the block asks the database again.
        with CaptureQueriesContext(connection) as queries:
            again = loop_sql.claim_state(project_id=project.pk, user_id=user.pk, now=now)
        assert len(queries) == 1
    separate = _separate_state(project, user, now)

    for state in (ahead, again):
        assert (state.own_id, state.has_expired, state.done) == (
            separate.own_id,
            separate.has_expired,
            separate.done,
        )
        assert state.membership.pk == separate.membership.pk
        assert state.membership.project.pk == project.pk
    done = Assignment.objects.filter(
        project=project, annotator=user, status="submitted", is_gold=False
    ).count()
    assert (separate.own_id, separate.has_expired, separate.done) == (None, True, done)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's submit is one statement")
def test_a_late_submit_reads_no_claim_state_ahead(make_project):
    """An expired assignment submitted late is not the caller's held one: its statement reads nothing
    ahead and the claim reads the state itself."""
    project = make_project(n_prompts=3, per_group=1, overlap=1, lease_minutes=30)
    user = project.annotators[0]
    start = timezone.now()
    late = assignment_claim(project=project, user=user, now=start)
    now = start + timedelta(minutes=31)
    assert services.leases_reclaim(now=now) == 1
    with loop_sql.claim_state_ahead(project_id=project.pk, user_id=user.pk, now=now):
        assignment_submit(token=late.token, user=user, payload=likert_payload(3), now=now)
        with CaptureQueriesContext(connection) as queries:
            state = loop_sql.claim_state(project_id=project.pk, user_id=user.pk, now=now)
        assert len(queries) == 1
    assert state.done == 1 and state.own_id is None
