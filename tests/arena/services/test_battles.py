"""Battles end to end through the services, against a real streaming HTTP server (``StreamStub``)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from annotation.models import Annotation, Assignment, Project, Task
from arena import selectors, services
from arena.models import Arena, Battle, BattleAnswer
from datasets_app.models import Response
from tests.arena.builders import SECRET_SLUGS, add_battles, make_arena, make_endpoints, run_answers
from tests.arena.domain.test_sampling import CLOSE_PAIR_HISTORY

pytestmark = pytest.mark.django_db


@pytest.fixture
def voter(make_user):
    return make_user("annotator", username="voter")


@pytest.fixture
def arena_project(stream_stub, voter):
    return make_arena(endpoints=make_endpoints(stream_stub.base_url), members=[voter], max_turns=2)


def _start(project, user, text="Apa kabar?", **kwargs):
    return services.battle_start(
        project=project,
        user=user,
        text=text,
        language=kwargs.pop("language", "ind"),
        rng=np.random.default_rng(1),
        **kwargs,
    )


def test_arena_create_makes_an_arena_project_with_its_own_dataset(stream_stub, make_user):
    manager = make_user("project_manager")
    endpoints = make_endpoints(stream_stub.base_url)
    project = services.arena_create(
        name="Arena Jawa",
        endpoints=endpoints,
        reveal="never",
        blocked_terms=[" bom ", ""],
        created_by=manager,
    )
    assert project.kind == Project.Kind.ARENA and project.status == Project.Status.DRAFT
    assert project.dataset.name == "Arena Jawa (arena prompts)"
    arena = Arena.objects.get(project=project)
    assert arena.blocked_terms == ["bom"] and arena.reveal == "never"
    assert set(arena.endpoints.all()) == set(endpoints)
    assert project.groups.count() == 1


def test_arena_create_refuses_bad_settings_and_writes_nothing(stream_stub):
    endpoints = make_endpoints(stream_stub.base_url)
    with pytest.raises(services.ArenaInvalid) as caught:
        services.arena_create(name="", endpoints=endpoints[:1], max_turns=0, sampler="bogus")
    assert set(caught.value.errors) == {"name", "endpoints", "max_turns", "sampler"}
    assert not Project.objects.exists()


def test_a_battle_streams_both_sides_and_stores_responses(arena_project, voter, no_dispatch):
    battle = _start(arena_project, voter, category="culture", language="jav", register="ngoko")
    assert battle.status == Battle.Status.STREAMING
    assert battle.sampler == "uniform" and battle.probability == pytest.approx(1.0)
    assert {battle.endpoint_a.slug, battle.endpoint_b.slug} == set(SECRET_SLUGS)
    assert len(no_dispatch) == 0  # queued on commit only
    assert run_answers(battle) == ["done", "done"]
    battle.refresh_from_db()
    assert battle.status == Battle.Status.READY
    for response in (battle.response_a, battle.response_b):
        response.refresh_from_db()
        assert response.turns == ["Halo, apa kabar?"]
        assert response.origin == Response.Origin.GENERATED
        assert response.meta["tokens"] == [9] and response.meta["ttft_ms"][0] >= 0
    assert battle.prompt.language == "jav" and battle.prompt.register == "ngoko"
    # Delivered again (a worker killed after it finished): nothing changes.
    assert run_answers(battle) == ["done", "done"]


def test_answers_are_queued_on_each_endpoints_queue(
    arena_project, voter, no_dispatch, django_capture_on_commit_callbacks
):
    for endpoint in Arena.objects.get(project=arena_project).endpoints.all():
        endpoint.queue = f"gpu.{endpoint.slug}"
        endpoint.save()
    with django_capture_on_commit_callbacks(execute=True):
        battle = _start(arena_project, voter)
    answers = {a.pk: a for a in BattleAnswer.objects.filter(battle=battle)}
    assert sorted(queue for _, queue in no_dispatch) == sorted(f"gpu.{s}" for s in SECRET_SLUGS)
    for answer_id, queue in no_dispatch:
        endpoint = battle.endpoint_a if answers[answer_id].side == "A" else battle.endpoint_b
        assert queue == endpoint.queue


def test_the_vote_is_a_pairwise_annotation_and_only_after_both_answers(arena_project, voter, no_dispatch):
    battle = _start(arena_project, voter)
    with pytest.raises(services.BattleConflict):
        services.battle_vote(battle=battle, user=voter, vote="A")
    run_answers(battle)
    battle = services.battle_vote(battle=battle, user=voter, vote="B", reason="lebih sopan")
    assert battle.status == Battle.Status.VOTED
    task = Task.objects.get(pk=battle.task_id)
    assert task.response_ids == [battle.response_a_id, battle.response_b_id]
    assignment = Assignment.objects.get(pk=battle.assignment_id)
    assert assignment.status == Assignment.Status.SUBMITTED and assignment.annotator == voter
    vote = Annotation.objects.counted().get(assignment=assignment, criterion="vote")
    assert vote.choice == "B" and vote.response_id == battle.response_b_id
    assert Annotation.objects.get(assignment=assignment, criterion="comment").comment == "lebih sopan"
    # The same vote again changes nothing; another one is refused.
    services.battle_vote(battle=battle, user=voter, vote="B")
    with pytest.raises(services.BattleConflict):
        services.battle_vote(battle=battle, user=voter, vote="A")
    assert Annotation.objects.filter(criterion="vote").count() == 1


def test_multi_turn_sends_the_whole_conversation(arena_project, voter, no_dispatch, stream_stub):
    battle = _start(arena_project, voter, text="Siapa presiden pertama?")
    run_answers(battle)
    battle = services.battle_continue(battle=battle, user=voter, text="Kapan lahir?")
    assert battle.status == Battle.Status.STREAMING and battle.n_turns == 2
    stream_stub.bodies.clear()
    run_answers(battle)
    assert stream_stub.bodies[0]["messages"] == [
        {"role": "user", "content": "Siapa presiden pertama?"},
        {"role": "assistant", "content": "Halo, apa kabar?"},
        {"role": "user", "content": "Kapan lahir?"},
    ]
    assert stream_stub.bodies[0]["stream"] is True
    battle.refresh_from_db()
    assert battle.status == Battle.Status.READY
    battle.response_a.refresh_from_db()
    assert len(battle.response_a.turns) == 2
    with pytest.raises(services.BattleConflict):  # max_turns = 2
        services.battle_continue(battle=battle, user=voter, text="Lagi")


@pytest.mark.parametrize(
    ("script", "ending"),
    [
        ({"status": 500}, "model_error"),
        ({"cut_after": 2}, "model_error"),
        ({"stall_s": 6.5}, "timeout"),  # the endpoint's read timeout is 5 s
    ],
)
def test_a_failed_model_ends_the_battle_not_counted(
    arena_project, voter, no_dispatch, stream_stub, script, ending
):
    for key, value in script.items():
        setattr(stream_stub.script, key, value)
    battle = _start(arena_project, voter)
    answer = BattleAnswer.objects.get(battle=battle, side="A")
    assert services.battle_answer_stream(answer_id=answer.pk) == "failed"
    battle.refresh_from_db()
    assert (battle.status, battle.ending) == (Battle.Status.NOT_COUNTED, ending)
    answer.refresh_from_db()
    assert answer.error  # kept for managers
    # The other side still runs to the end, and the battle stays not counted: no vote, never a loss.
    stream_stub.script.__init__()
    other = BattleAnswer.objects.get(battle=battle, side="B")
    services.battle_answer_stream(answer_id=other.pk)
    battle.refresh_from_db()
    assert battle.status == Battle.Status.NOT_COUNTED
    with pytest.raises(services.BattleConflict):
        services.battle_vote(battle=battle, user=voter, vote="B")
    assert not Annotation.objects.exists()
    assert selectors.battle_leaderboard_rows(project_ids=[arena_project.pk]) == []


def test_an_overdue_battle_expires_not_counted(arena_project, voter, no_dispatch):
    battle = _start(arena_project, voter)
    assert services.battle_expire(battle_id=battle.pk).status == Battle.Status.STREAMING  # not due yet
    later = battle.turn_deadline + timedelta(seconds=1)
    battle = services.battle_expire(battle_id=battle.pk, now=later)
    assert (battle.status, battle.ending) == (Battle.Status.NOT_COUNTED, "timeout")
    assert set(BattleAnswer.objects.filter(battle=battle).values_list("status", flat=True)) == {"failed"}
    # A worker that picks the answer up afterwards does not start it.
    assert run_answers(battle) == ["failed", "failed"]


def test_prompt_rules_and_limits(arena_project, voter, no_dispatch, make_user):
    arena = Arena.objects.get(project=arena_project)
    arena.blocked_terms = ["judi online"]
    arena.max_prompt_chars = 30
    arena.battles_per_hour = 2
    arena.save()
    with pytest.raises(services.PromptRefused, match="judi online"):
        _start(arena_project, voter, text="Situs Judi   Online terbaik?")
    with pytest.raises(services.PromptRefused, match="30"):
        _start(arena_project, voter, text="x" * 31)
    with pytest.raises(services.PromptRefused):
        _start(arena_project, voter, language="zzz")
    with pytest.raises(services.PromptRefused):
        _start(arena_project, voter, category="no-such-category")
    assert not Battle.objects.exists()
    _start(arena_project, voter)
    _start(arena_project, voter)
    with pytest.raises(services.ArenaError, match="2 battles an hour"):
        _start(arena_project, voter)
    # An hour later the limit is free again.
    services.battle_start(
        project=arena_project,
        user=voter,
        text="lagi",
        language="ind",
        now=timezone.now() + timedelta(hours=1, seconds=1),
    )
    with pytest.raises(services.ArenaError):
        _start(arena_project, make_user("annotator", username="stranger"))


def test_leaderboard_rows_of_voted_battles(arena_project, voter, no_dispatch):
    votes = ["A", "tie", "both_bad"]
    for vote in votes:
        battle = _start(arena_project, voter)
        run_answers(battle)
        services.battle_vote(battle=battle, user=voter, vote=vote)
    _start(arena_project, voter)  # still answering: not a row
    rows = selectors.battle_leaderboard_rows(project_ids=[arena_project.pk])
    assert [r["winner"] for r in rows] == ["model_a", "tie", "tie (bothbad)"]
    assert all({r["model_a"], r["model_b"]} == set(SECRET_SLUGS) for r in rows)
    assert all(r["length_a"] == 9 and r["language"] == "ind" for r in rows)


def test_the_annotation_loop_hands_out_nothing_in_an_arena(arena_project, voter, no_dispatch, client):
    from annotation import services as annotation_services

    battle = _start(arena_project, voter)
    run_answers(battle)
    battle = services.battle_vote(battle=battle, user=voter, vote="A")
    assert annotation_services.assignment_claim(project=arena_project, user=voter) is None
    with pytest.raises(annotation_services.AnnotationError):
        annotation_services.assignment_submit(
            token=battle.assignment.token, user=voter, payload={"vote": "B"}
        )
    with pytest.raises(annotation_services.ProjectInvalid):
        annotation_services.project_create(name="x", kind="arena", dataset=arena_project.dataset)
    client.force_login(voter)
    start = client.get(f"/annotate/projects/{arena_project.pk}/")
    assert start.status_code == 302 and start["Location"] == f"/arena/{arena_project.pk}/"
    home = client.get("/").content.decode()
    assert f'href="/arena/{arena_project.pk}/"' in home and "1 vote cast" in home


def test_the_active_sampler_records_its_choice_and_probability(stream_stub, voter, no_dispatch):
    endpoints = make_endpoints(stream_stub.base_url, slugs=("m-one", "m-two", "m-three"))
    project = make_arena(endpoints=endpoints, members=[voter], sampler="active", battles_per_hour=100)
    rng = np.random.default_rng(4)
    seen = set()
    for _ in range(6):
        battle = services.battle_start(project=project, user=voter, text="Halo", language="ind", rng=rng)
        run_answers(battle)
        services.battle_vote(battle=battle, user=voter, vote="A")
        assert battle.sampler == "active"
        # Three pairs: the favoured one has 0.8 + 0.2 / 3, the others the floor 0.2 / 3.
        assert battle.probability == pytest.approx(0.2 / 3) or battle.probability == pytest.approx(
            0.8 + 0.2 / 3
        )
        seen.add(frozenset((battle.endpoint_a.slug, battle.endpoint_b.slug)))
    assert len(seen) >= 2


def test_the_live_active_sampler_favours_the_pair_the_current_ratings_leave_unresolved(
    stream_stub, voter, make_user, no_dispatch
):
    slugs = ("m-top", "m-close-one", "m-close-two", "m-bottom")
    endpoints = make_endpoints(stream_stub.base_url, slugs=slugs)
    project = make_arena(endpoints=endpoints, members=[voter], sampler="active", battles_per_hour=100)
    others = make_user("annotator", username="history")
    # The domain test's history: 0 well above 1 and 2 (close), well above 3; the close pair has the most
    # votes, so votes alone would favour another pair.
    for a, b, vote, n in CLOSE_PAIR_HISTORY:
        add_battles(project, others, endpoints[a], endpoints[b], {vote: n})
    # Not counted, or taken out by a reviewer: these would separate the close pair if they were counted.
    add_battles(project, others, endpoints[1], endpoints[2], {"A": 300}, excluded=True)
    add_battles(project, others, endpoints[1], endpoints[2], {"A": 50}, status=Battle.Status.NOT_COUNTED)
    add_battles(project, others, endpoints[2], endpoints[1], {"B": 50}, status=Battle.Status.READY)

    rng = np.random.default_rng(5)
    top, floor = 0.8 + 0.2 / 6, 0.2 / 6
    chosen = []
    for _ in range(8):
        battle = services.battle_start(project=project, user=voter, text="Halo", language="ind", rng=rng)
        battle.refresh_from_db()
        assert battle.sampler == "active"
        pair = {battle.endpoint_a.slug, battle.endpoint_b.slug}
        expected = top if pair == {"m-close-one", "m-close-two"} else floor
        assert battle.probability == pytest.approx(expected)
        chosen.append(pair == {"m-close-one", "m-close-two"})
    assert sum(chosen) >= 4  # drawn with probability 0.83 each
