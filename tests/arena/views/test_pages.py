"""The arena's pages, stream, API and command, in English and Indonesian."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Annotation, Project
from arena import relay, services
from arena.models import Arena, Battle, BattleAnswer
from arena.selectors import battle_leaderboard_rows
from evaluation.models import ModelEndpoint
from tests.arena.builders import SECRET_SLUGS, make_arena, make_endpoints, run_answers

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(stream_stub, make_user, settings):
    settings.ARENA_STREAM_REDIS_URL = ""  # the embedded mode: the relay reads the stored answers
    voter = make_user("annotator", username="voter")
    project = make_arena(
        endpoints=make_endpoints(stream_stub.base_url),
        members=[voter],
        rules_en="Be kind.",
        rules_id="Bersikaplah sopan.",
        consent_en="Your prompts are kept for research.",
        consent_id="Prompt Anda disimpan untuk penelitian.",
    )
    return project, voter


def _events(response) -> list[dict]:
    body = b"".join(response.streaming_content).decode()
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]


@pytest.mark.parametrize(
    ("lang", "texts"),
    [
        ("en", ["Be kind.", "Send to both models", "Your prompt", "Register"]),
        ("id", ["Bersikaplah sopan.", "Kirim ke kedua model", "Prompt Anda", "Ragam"]),
    ],
)
def test_arena_page_in_both_languages(client, setup, no_dispatch, lang, texts):
    project, voter = setup
    client.force_login(voter)
    client.cookies["django_language"] = lang
    page = client.get(reverse("arena:project", args=[project.pk]), HTTP_ACCEPT_LANGUAGE=lang)
    text = page.content.decode()
    for expected in texts:
        assert expected in text, expected
    # Consent is required when the arena has a consent text.
    refused = client.post(
        reverse("arena:project", args=[project.pk]),
        {"language": "ind", "register": "", "category": "chat", "text": "Halo"},
        HTTP_ACCEPT_LANGUAGE=lang,
    )
    assert refused.status_code == 200 and not Battle.objects.exists()


def test_battle_flow_from_the_pages(client, setup, no_dispatch):
    project, voter = setup
    client.force_login(voter)
    started = client.post(
        reverse("arena:project", args=[project.pk]),
        {
            "language": "jav",
            "register": "krama",
            "category": "culture",
            "text": "Sugeng enjing",
            "consent": "on",
        },
    )
    battle = Battle.objects.get()
    assert started.status_code == 302 and started["Location"] == reverse("arena:battle", args=[battle.token])
    page = client.get(started["Location"]).content.decode()
    assert 'data-status="streaming"' in page
    assert reverse("arena:stream", args=[battle.token]) + "?turn=0" in page
    assert 'data-testid="vote-submit" disabled' in page
    early = client.post(reverse("arena:vote", args=[battle.token]), {"vote": "A"})
    assert early.status_code == 302 and not Annotation.objects.exists()

    run_answers(battle)
    events = _events(client.get(reverse("arena:stream", args=[battle.token])))
    assert [e["type"] for e in events] == ["done", "done", "end"]
    assert {e["side"] for e in events[:2]} == {"A", "B"} and events[-1]["status"] == "ready"
    page = client.get(reverse("arena:battle", args=[battle.token])).content.decode()
    assert "Halo, apa kabar?" in page and 'data-testid="vote-submit" disabled' not in page
    for slug in SECRET_SLUGS:
        assert slug not in page

    voted = client.post(
        reverse("arena:vote", args=[battle.token]), {"vote": "tie", "reason": "sama"}, follow=True
    )
    text = voted.content.decode()
    assert 'data-testid="reveal"' in text
    battle.refresh_from_db()
    assert battle.status == Battle.Status.VOTED and battle.vote == "tie"
    assert battle.endpoint_a.slug in text and battle.endpoint_b.slug in text


def test_an_arena_that_never_reveals_keeps_names_after_the_vote(client, setup, no_dispatch):
    project, voter = setup
    Arena.objects.filter(project=project).update(reveal="never")
    battle = services.battle_start(project=project, user=voter, text="Halo", language="ind")
    run_answers(battle)
    page = client
    page.force_login(voter)
    text = page.post(reverse("arena:vote", args=[battle.token]), {"vote": "A"}, follow=True).content.decode()
    assert "keeps the model names hidden" in text
    for slug in SECRET_SLUGS:
        assert slug not in text


def test_a_failed_battle_shows_not_counted_in_indonesian(client, setup, no_dispatch, stream_stub):
    project, voter = setup
    stream_stub.script.status = 500
    battle = services.battle_start(project=project, user=voter, text="Halo", language="ind")
    run_answers(battle)
    client.force_login(voter)
    events = _events(client.get(reverse("arena:stream", args=[battle.token])))
    assert events[-1] == {"type": "end", "status": "not_counted"}
    assert {"type": "failed", "side": "A", "turn": 0, "reason": "model_error"} in events
    text = client.get(
        reverse("arena:battle", args=[battle.token]), HTTP_ACCEPT_LANGUAGE="id"
    ).content.decode()
    assert "Pertarungan ini tidak dihitung" in text
    assert 'data-testid="vote-form"' not in text


def test_the_stream_expires_an_overdue_battle(client, setup, no_dispatch):
    project, voter = setup
    battle = services.battle_start(project=project, user=voter, text="Halo", language="ind")
    Battle.objects.filter(pk=battle.pk).update(turn_deadline=battle.created_at)
    frames = relay.battle_stream(battle=battle, turn=0, timeout_s=0.0)
    events = [json.loads(f[6:]) for f in frames if f.startswith(b"data: ")]
    assert events[-1] == {"type": "end", "status": "not_counted"}
    assert {e.get("reason") for e in events if e["type"] == "failed"} == {"timeout"}
    battle.refresh_from_db()
    assert battle.ending == "timeout"


def test_the_stream_ends_an_overdue_battle_at_its_deadline_not_at_its_own_limit(client, setup, no_dispatch):
    # The answers' worker died: nothing moves. The stream's limit is far off (300 s); the battle's deadline
    # has passed, so the first read ends it as not counted.
    project, voter = setup
    battle = services.battle_start(project=project, user=voter, text="Halo", language="ind")
    BattleAnswer.objects.filter(battle=battle, side="A").update(status="streaming", text="Hal")
    Battle.objects.filter(pk=battle.pk).update(turn_deadline=battle.created_at)
    battle.refresh_from_db()
    now = [0.0]
    frames = relay.battle_stream(
        battle=battle,
        turn=0,
        timeout_s=300.0,
        clock=lambda: now[0],
        sleep=lambda s: now.__setitem__(0, now[0] + s),
    )
    events = [json.loads(f[6:]) for f in frames if f.startswith(b"data: ")]
    assert events[-1] == {"type": "end", "status": "not_counted"}
    assert now[0] < 1.0
    battle.refresh_from_db()
    assert (battle.status, battle.ending) == ("not_counted", "timeout")
    with pytest.raises(services.BattleConflict):
        services.battle_vote(battle=battle, user=voter, vote="A")
    assert not Annotation.objects.exists()


def test_the_stream_relays_redis_pieces_without_repeating_them(setup, no_dispatch, settings):
    redis = pytest.importorskip("redis")
    url = "redis://127.0.0.1:6379/3"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.RedisError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    settings.ARENA_STREAM_REDIS_URL = url
    from arena import streams
    from arena.domain.battles import delta_event, done_event

    project, voter = setup
    battle = services.battle_start(project=project, user=voter, text="Halo", language="ind")
    BattleAnswer.objects.filter(battle=battle, side="A").update(status="streaming", text="Hal")
    frames = relay.battle_stream(battle=battle, turn=0, timeout_s=30, recheck_s=30)
    assert next(frames).startswith(b"retry:")
    first = json.loads(next(frames)[6:])  # subscribed, then the stored text
    assert first == {"type": "delta", "side": "A", "turn": 0, "offset": 0, "text": "Hal"}
    streams.publish(battle.token, "A", delta_event("A", 0, 0, "Halo"))  # overlaps what was shown
    streams.publish(battle.token, "B", delta_event("B", 0, 0, "Sa"))
    assert json.loads(next(frames)[6:]) == {"type": "delta", "side": "A", "turn": 0, "offset": 3, "text": "o"}
    assert json.loads(next(frames)[6:])["text"] == "Sa"
    BattleAnswer.objects.filter(battle=battle).update(status="done")
    Battle.objects.filter(pk=battle.pk).update(status="ready")
    streams.publish(battle.token, "A", done_event("A", 0, "Halo!"))
    streams.publish(battle.token, "B", done_event("B", 0, "Salam"))
    rest = [json.loads(f[6:]) for f in frames if f.startswith(b"data: ")]
    assert rest == [
        {"type": "done", "side": "A", "turn": 0, "text": "Halo!"},
        {"type": "done", "side": "B", "turn": 0, "text": "Salam"},
        {"type": "end", "status": "ready"},
    ]


def test_other_people_cannot_see_a_battle(client, setup, no_dispatch, make_user):
    project, voter = setup
    battle = services.battle_start(project=project, user=voter, text="Halo", language="ind")
    client.force_login(make_user("annotator", username="other"))
    for name in ("arena:battle", "arena:stream"):
        assert client.get(reverse(name, args=[battle.token])).status_code == 404
    assert client.post(reverse("arena:vote", args=[battle.token]), {"vote": "A"}).status_code == 404
    assert client.get(reverse("arena:project", args=[project.pk])).status_code == 404


def test_manager_creates_an_arena_and_downloads_its_battles(client, setup, no_dispatch, make_user):
    project, voter = setup
    battle = services.battle_start(project=project, user=voter, text="Halo", language="ind")
    run_answers(battle)
    services.battle_vote(battle=battle, user=voter, vote="A")
    manager = make_user("project_manager")
    client.force_login(manager)
    form = client.get(reverse("arena:manage_create"))
    assert form.status_code == 200
    created = client.post(
        reverse("arena:manage_create"),
        {
            "name": "Arena Sunda",
            "endpoints": [e.pk for e in ModelEndpoint.objects.all()],
            "reveal": "after_vote",
            "sampler": "active",
            "max_prompt_chars": 500,
            "battles_per_hour": 10,
            "max_turns": 2,
            "max_tokens": 64,
            "timeout_s": 60,
            "blocked_terms": "judi\nkasar",
        },
    )
    new = Project.objects.get(name="Arena Sunda")
    assert created.status_code == 302 and created["Location"] == reverse(
        "annotation:manage_detail", args=[new.pk]
    )
    assert Arena.objects.get(project=new).blocked_terms == ["judi", "kasar"]
    detail = client.get(reverse("arena:manage_detail", args=[project.pk])).content.decode()
    assert "1 voted" in detail and f"/analytics/arena/{project.pk}/leaderboard/" in detail
    rows = list(
        csv.DictReader(
            io.StringIO(client.get(reverse("arena:manage_battles_csv", args=[project.pk])).content.decode())
        )
    )
    assert len(rows) == 1 and rows[0]["winner"] == "model_a"
    assert rows[0]["model_a"] == battle.endpoint_a.slug


def test_api_battle_start_detail_vote_and_rows(setup, no_dispatch, make_user):
    project, voter = setup
    api = APIClient()
    api.force_authenticate(voter)
    made = api.post(
        f"/api/v1/arena/projects/{project.pk}/battles", {"prompt": "Halo", "language": "ind"}, format="json"
    )
    assert made.status_code == 201
    body = made.json()
    assert set(body) == {
        "battle",
        "status",
        "ending",
        "language",
        "register",
        "category",
        "turns",
        "can_vote",
        "vote",
        "stream_url",
        "reveal",
    }
    token = body["battle"]
    assert api.post(f"/api/v1/arena/battles/{token}/vote", {"vote": "A"}, format="json").status_code == 409
    run_answers(Battle.objects.get(token=token))
    detail = api.get(f"/api/v1/arena/battles/{token}").json()
    assert detail["can_vote"] and detail["turns"][0]["a"] == {"status": "done", "text": "Halo, apa kabar?"}
    for slug in SECRET_SLUGS:
        assert slug not in json.dumps(detail)
    voted = api.post(f"/api/v1/arena/battles/{token}/vote", {"vote": "both_bad"}, format="json").json()
    assert voted["status"] == "voted" and set(voted["reveal"].values()) == set(SECRET_SLUGS)
    bad = api.post(
        f"/api/v1/arena/projects/{project.pk}/battles", {"prompt": "", "language": "ind"}, format="json"
    )
    assert bad.status_code == 400
    researcher = APIClient()
    researcher.force_authenticate(make_user("researcher"))
    rows = researcher.get(f"/api/v1/arena/projects/{project.pk}/leaderboard-rows").json()
    assert [r["winner"] for r in rows] == ["tie (bothbad)"]


def test_command_writes_the_leaderboard_csv(setup, no_dispatch, tmp_path):
    project, voter = setup
    battle = services.battle_start(project=project, user=voter, text="Halo", language="sun", register="lemes")
    run_answers(battle)
    services.battle_vote(battle=battle, user=voter, vote="B")
    out = io.StringIO()
    call_command("arena_battles", "--project", str(project.pk), "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["n_battles"] == 1 and data["rows"][0]["register"] == "lemes"
    path = tmp_path / "battles.csv"
    out = io.StringIO()
    call_command("arena_battles", "--project", str(project.pk), "--out", str(path), "--json", stdout=out)
    assert json.loads(out.getvalue())["n_battles"] == 1
    header = path.read_text().splitlines()[0].split(",")
    assert header[:3] == ["model_a", "model_b", "winner"] and "length_a" in header
    with pytest.raises(CommandError) as caught:
        call_command("arena_battles", "--project", str(project.pk), "--out", str(path))
    assert caught.value.returncode == 2
    with pytest.raises(CommandError):
        call_command("arena_battles", "--project", "999999")


def test_a_reviewer_takes_a_battle_out_of_the_leaderboard_and_puts_it_back(
    client, setup, no_dispatch, make_user
):
    project, voter = setup
    battles = []
    for vote in ("A", "B"):
        battle = services.battle_start(project=project, user=voter, text="Halo", language="ind")
        run_answers(battle)
        battles.append(services.battle_vote(battle=battle, user=voter, vote=vote))
    client.force_login(make_user("reviewer"))
    page = client.get(reverse("arena:manage_detail", args=[project.pk])).content.decode()
    assert page.count('data-testid="exclude"') == 2
    url = reverse("arena:battle_exclude", args=[battles[0].pk])
    refused = client.post(url, {"reason": " "}, follow=True)
    assert "Say why" in refused.content.decode()
    client.post(url, {"reason": "prompt berisi spam", "action": "exclude"})
    battles[0].refresh_from_db()
    assert battles[0].excluded and battles[0].excluded_reason == "prompt berisi spam"
    assert [r["battle"] for r in battle_leaderboard_rows(project_ids=[project.pk])] == [battles[1].token]
    assert (
        "prompt berisi spam" in client.get(reverse("arena:manage_detail", args=[project.pk])).content.decode()
    )
    client.post(url, {"action": "include"})
    assert len(battle_leaderboard_rows(project_ids=[project.pk])) == 2
    # The vote itself is never touched.
    assert Annotation.objects.filter(criterion="vote").count() == 2
