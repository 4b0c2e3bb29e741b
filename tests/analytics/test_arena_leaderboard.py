"""The arena leaderboard page and its JSON API over real voted battles: the same numbers as the domain
function and the command, options, both languages, roles, an arena without votes, and bad options."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.utils import timezone

from analytics import selectors
from analytics.domain.leaderboard import leaderboard_fit
from arena.models import Battle, BattleAnswer
from datasets_app.models import Prompt, Response
from tests.arena.builders import make_arena, make_endpoints

pytestmark = pytest.mark.django_db

SLUGS = ("lb-alpha", "lb-beta", "lb-gamma")


def _voted(project, user, a, b, vote: str, *, language="ind", register="", category="", texts=("x", "y")):
    """One voted battle as the arena stores it: prompt, the two responses, the answers and the vote."""
    n = Battle.objects.count()
    prompt = Prompt.objects.create(
        dataset_id=project.dataset_id,
        external_id=f"lb-{n}",
        category=category,
        language=language,
        register=register,
        turns=["Apa kabar?"],
    )
    responses = [
        Response.objects.create(
            prompt=prompt, model_name=e.model_name, turns=[t], origin=Response.Origin.GENERATED
        )
        for e, t in ((a, texts[0]), (b, texts[1]))
    ]
    now = timezone.now()
    battle = Battle.objects.create(
        project=project,
        user=user,
        prompt=prompt,
        endpoint_a=a,
        endpoint_b=b,
        response_a=responses[0],
        response_b=responses[1],
        sampler="uniform",
        probability=1 / 3,
        language=language,
        register=register,
        category=category,
        status=Battle.Status.VOTED,
        vote=vote,
        turn_deadline=now + timedelta(minutes=2),
        voted_at=now,
    )
    for side, text in zip("AB", texts, strict=True):
        BattleAnswer.objects.create(
            battle=battle,
            side=side,
            turn=0,
            status=BattleAnswer.Status.DONE,
            text=text,
            n_tokens=len(text.split()),
        )
    return battle


@pytest.fixture
def arena(make_user):
    voter = make_user("annotator")
    endpoints = make_endpoints("http://127.0.0.1:9/v1", slugs=SLUGS)
    project = make_arena(endpoints=endpoints, members=[voter])
    alpha, beta, gamma = endpoints
    # alpha beats beta 3 of 4 in Indonesian (a tie and a both-bad among them: 2 + 1/2 + 1/2 = 3 half wins);
    # beta beats alpha twice in Javanese; gamma never battled.
    texts = [
        ("## Jawab\n**ya** satu dua tiga", "tidak"),
        ("ya", "**tidak** mau"),
        ("satu dua", "tiga"),
        ("**a** b c d", "e f"),
    ]
    for vote, pair in zip(("A", "A", "tie", "both_bad"), texts, strict=True):
        _voted(project, voter, alpha, beta, vote, texts=pair)
    _voted(project, voter, beta, alpha, "A", language="jav", register="krama", texts=("**x** y", "z"))
    _voted(project, voter, alpha, beta, "B", language="jav", register="krama", texts=("x", "y z w"))
    return project


def page(project, query: str = "") -> str:
    return f"/analytics/arena/{project.pk}/leaderboard/{query}"


def api(project, query: str = "") -> str:
    return f"/api/v1/arena/projects/{project.pk}/leaderboard{query}"


def test_api_gives_the_domain_functions_leaderboard(api_client_for, arena):
    client = api_client_for("researcher")
    body = client.get(api(arena, "?bootstrap=50&seed=4")).json()
    direct = leaderboard_fit(
        selectors.arena_battle_frame(project=arena),
        bootstrap=50,
        seed=4,
        groups=("language", "register", "category"),
        models=SLUGS,
    ).to_dict()
    assert body == direct
    by = {row["model"]: row for row in body["models"]}
    # Overall alpha: 2 wins + 2 ties + 2 losses = 3 of 6: equal ratings.
    assert by["lb-alpha"]["rating"] == pytest.approx(1000.0, abs=1e-6)
    assert by["lb-gamma"]["rated"] is False and by["lb-gamma"]["battles"] == 0
    assert (by["lb-alpha"]["ties"], by["lb-alpha"]["both_bad"]) == (2, 1)
    ind = {row["model"]: row for row in body["breakdowns"]["language"]["ind"]["models"]}
    assert ind["lb-alpha"]["rating"] - ind["lb-beta"]["rating"] == pytest.approx(
        400 * math.log10(3), abs=1e-6
    )
    assert set(body["breakdowns"]["register"]) == {"(unspecified)", "krama"}
    assert body["pair_matrix"]["votes"][0][1] == 6


def test_style_control_and_davidson_through_the_api(api_client_for, arena):
    client = api_client_for("project_manager")
    response = client.get(api(arena, "?ties=davidson&style=length&style=bold&bootstrap=0"))
    body = response.json()
    assert response.status_code == 200, body
    assert body["ties"] == "davidson" and body["davidson_nu"]["nu"] > 0
    assert [c["feature"] for c in body["style"]["coefficients"]] == ["length", "bold"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("?ties=drop", "ties must be one of half, davidson"),
        ("?style=emoji", "style: 'emoji' is not one of length, headers, bold, lists"),
        ("?bootstrap=many", "bootstrap must be a whole number"),
        ("?bootstrap=999999", "bootstrap must be between 0 and 2000"),
    ],
)
def test_bad_options_are_a_400_with_the_reason(api_client_for, role_client, arena, query, message):
    response = api_client_for("researcher").get(api(arena, query))
    assert response.status_code == 400 and message in response.json()["detail"]
    page_response = role_client("researcher").get(page(arena, query))
    assert page_response.status_code == 400 and message in page_response.content.decode()


def test_an_arena_without_votes_says_so(api_client_for, role_client, make_user):
    endpoints = make_endpoints("http://127.0.0.1:9/v1", slugs=("e1", "e2"))
    project = make_arena(endpoints=endpoints, members=[make_user("annotator")])
    response = api_client_for("researcher").get(api(project))
    assert response.status_code == 409 and response.json()["detail"] == "there are no battles"
    html = role_client("project_manager").get(page(project)).content.decode()
    assert 'data-testid="leaderboard-problem"' in html and "No leaderboard yet." in html


def test_page_shows_ratings_intervals_pairs_drop_and_breakdowns(role_client, arena):
    html = role_client("project_manager").get(page(arena, "?bootstrap=50")).content.decode()
    for testid in (
        "leaderboard-table",
        "rating-plot",
        "pair-matrix",
        "vote-drop",
        "breakdown-language",
        "breakdown-register",
    ):
        assert f'data-testid="{testid}"' in html, testid
    assert 'data-model="lb-gamma"' in html and "No battles yet." in html
    assert "no two models have both won and lost" in html  # Javanese: beta won both


def test_page_reads_in_indonesian(role_client, arena):
    client = role_client("researcher")
    client.cookies["django_language"] = "id"
    html = client.get(page(arena, "?bootstrap=20&style=length"), HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "Papan peringkat" in html and "Suara per pasangan" in html and "Kontrol gaya" in html
    assert "Votes per pair" not in html


def test_style_table_on_the_page(role_client, arena):
    html = (
        role_client("researcher").get(page(arena, "?style=length&style=headers&bootstrap=0")).content.decode()
    )
    assert 'data-testid="style-coefficients"' in html and "<td>headers</td>" in html


def test_annotators_and_reviewers_are_refused(role_client, api_client_for, arena):
    assert role_client("annotator").get(page(arena)).status_code == 403
    assert api_client_for("reviewer").get(api(arena)).status_code == 403


def test_a_project_that_is_not_an_arena_is_not_found(role_client, api_client_for, arena):
    from annotation.models import Project

    other = Project.objects.exclude(kind=Project.Kind.ARENA).first()
    pk = other.pk if other else arena.pk + 1000
    assert role_client("researcher").get(f"/analytics/arena/{pk}/leaderboard/").status_code == 404
    assert api_client_for("researcher").get(f"/api/v1/arena/projects/{pk}/leaderboard").status_code == 404


def test_the_leaderboard_follows_new_votes(api_client_for, arena):
    client = api_client_for("researcher")
    first = client.get(api(arena, "?bootstrap=0")).json()
    alpha, beta, _ = arena.arena.endpoints.order_by("slug")
    voter = Battle.objects.filter(project=arena).first().user
    _voted(arena, voter, alpha, beta, "A")
    second = client.get(api(arena, "?bootstrap=0")).json()
    assert second["n_battles"] == first["n_battles"] + 1
    by = {row["model"]: row["rating"] for row in second["models"]}
    assert by["lb-alpha"] > by["lb-beta"]  # 3 half wins of 7 for beta now


def test_the_page_reads_the_battles_in_a_few_queries_and_then_from_the_cache(
    role_client, arena, django_assert_max_num_queries
):
    from django.core.cache import cache

    cache.clear()
    client = role_client("researcher")
    # Session, user, roles, project; the vote version; the battles and their answers; the arena's endpoints.
    with django_assert_max_num_queries(10):
        assert client.get(page(arena, "?bootstrap=20")).status_code == 200
    with django_assert_max_num_queries(5):  # cached until the next vote: the version query alone
        assert client.get(page(arena, "?bootstrap=20")).status_code == 200
