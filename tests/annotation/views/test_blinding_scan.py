"""Nothing that identifies a model, a response, a prompt or the dataset reaches an annotator."""

import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import services
from arena.models import Battle
from datasets_app.models import Prompt, Response
from tests.annotation.conftest import MODEL_NAMES, build_dataset
from tests.arena.builders import SECRET_SLUGS, make_arena, make_endpoints, run_answers

pytestmark = pytest.mark.django_db

FIRST_PK = 770_000_000  # ids this long cannot turn up by accident in counts, tokens or markup


def forbidden_strings(dataset) -> list[str]:
    prompts = Prompt.objects.filter(dataset=dataset)
    responses = Response.objects.filter(prompt__dataset=dataset)
    return [
        *MODEL_NAMES,
        dataset.name,
        str(dataset.pk),
        "meta-secret-note",
        "meta-secret-version",
        *(p.external_id for p in prompts),
        *(str(p.pk) for p in prompts),
        *(str(r.pk) for r in responses),
    ]


def scan(text: str, forbidden: list[str], where: str) -> None:
    leaked = [s for s in forbidden if s in text]
    assert not leaked, f"{where} shows {leaked[:5]}"


def http_text(response) -> str:
    headers = " ".join(f"{k}: {v}" for k, v in response.items())
    return headers + "\n" + response.content.decode()


@pytest.mark.parametrize(
    "kind,options",
    [
        ("likert", {"best_pick": "optional", "allow_all_bad": True}),
        ("best_of_n", {}),
        ("pairwise", {"turn_mode": "per_turn", "pair_mode": "sample", "pairs_per_prompt": 2}),
    ],
)
def test_every_annotator_page_and_payload_is_blind(client, make_project, kind, options):
    dataset = build_dataset(n_prompts=3, n_models=5, n_turns=2, name="dataset-secret-name", first_pk=FIRST_PK)
    project = make_project(kind=kind, dataset=dataset, per_group=1, **options)
    forbidden = forbidden_strings(dataset)
    user = project.annotators[0]
    client.force_login(user)
    scan(http_text(client.get(reverse("home"))), forbidden, "home")
    scan(http_text(client.get(reverse("annotation:start", args=[project.pk]))), forbidden, "project page")
    started = client.post(reverse("annotation:start", args=[project.pk]))
    scan(http_text(started), forbidden, "start redirect")
    api = APIClient()
    api.force_authenticate(user)
    pages = 0
    answer = {
        "likert": {f"r-{n}-{c}": "3" for n in range(1, 6) for c in ("relevance", "fluency")} | {"best": "2"},
        "best_of_n": {"best": "1"},
        "pairwise": {"vote": "tie"},
    }[kind]
    while True:
        payload = api.get(f"/api/v1/projects/{project.pk}/next")
        if payload.status_code == 204:
            break
        scan(json.dumps(payload.json(), ensure_ascii=False) + http_text(payload), forbidden, "next payload")
        token = payload.json()["task"]
        page = client.get(reverse("annotation:task", args=[token]))
        scan(http_text(page), forbidden, "task page")
        invalid = client.post(reverse("annotation:submit", args=[token]), {}, HTTP_HX_REQUEST="true")
        scan(http_text(invalid), forbidden, "validation errors")
        swapped = client.post(reverse("annotation:submit", args=[token]), answer, HTTP_HX_REQUEST="true")
        scan(http_text(swapped), forbidden, "next fragment")
        again = api.post(f"/api/v1/tasks/{token}/annotations", {"answer": {"vote": "A"}}, format="json")
        scan(http_text(again), forbidden, "submit answer")
        # The submitted task, reopened for an edit, shows the stored answer in screen positions only.
        scan(http_text(client.get(reverse("annotation:task", args=[token]))), forbidden, "edit page")
        pages += 1
    assert pages == project.n_tasks > 0
    scan(http_text(client.get(reverse("home"))), forbidden, "home after work")


def test_reviewer_page_is_blind_too(client, make_project, make_user):
    dataset = build_dataset(n_prompts=1, n_models=5, name="dataset-secret-name", first_pk=FIRST_PK)
    project = make_project(kind="best_of_n", dataset=dataset, per_group=1)
    user = project.annotators[0]
    assignment = services.assignment_claim(project=project, user=user)
    services.assignment_submit(token=assignment.token, user=user, payload={"best": 2})
    client.force_login(make_user("reviewer"))
    forbidden = [s for s in forbidden_strings(dataset)]
    scan(http_text(client.get(reverse("annotation:review"))), forbidden, "review queue")


@pytest.mark.parametrize("kind", ["translation_mqm", "translation_esa"])
def test_error_span_pages_are_blind(client, make_user, kind):
    """The system (the unit's translator, a model's name) and the judge that suggested spans never reach
    the annotator of an error-span task: pages, fragments, the API's payloads, the edit page."""
    from annotation.domain.span_marking import SuggestedSpan
    from annotation.models import Task
    from datasets_app.models import Dataset, TranslationUnit

    dataset = Dataset.objects.create(name="dataset-secret-name", kind=Dataset.Kind.TRANSLATIONS)
    for i, system in enumerate(MODEL_NAMES[:3]):
        TranslationUnit.objects.create(
            dataset=dataset,
            external_id=f"unit-secret-{i}",
            source_text="Harga beras naik 5 persen.",
            target_language="jav",
            register="ngoko",
            translation_text=f"Regine beras mundhak {i}5 persen (tenan).",
            translator_name=system,
            status="accepted",
            meta={"source_note": "meta-secret-note"},
            flags=[{"code": "bracket_addition", "details": {"in_source": []}}],
        )
    user = make_user("annotator")
    project = services.project_create(dataset=dataset, name="spans", kind=kind, overlap=1, seed=4)
    services.project_member_add(project=project, user=user, group=project.groups.get())
    services.project_activate(project=project)
    for task in Task.objects.filter(project=project):
        services.span_suggestions_replace(
            task=task,
            source="llm",
            spans=[SuggestedSpan("target", 0, 6, "style", "minor", "judge-secret-slug")],
        )
    forbidden = [*MODEL_NAMES, dataset.name, "meta-secret-note", "judge-secret-slug", "unit-secret-"]
    client.force_login(user)
    api = APIClient()
    api.force_authenticate(user)
    answer = {"no_error": "on", "score": "70"}
    pages = 0
    while True:
        payload = api.get(f"/api/v1/projects/{project.pk}/next")
        if payload.status_code == 204:
            break
        scan(json.dumps(payload.json(), ensure_ascii=False) + http_text(payload), forbidden, "next payload")
        token = payload.json()["task"]
        scan(http_text(client.get(reverse("annotation:task", args=[token]))), forbidden, "task page")
        invalid = client.post(reverse("annotation:submit", args=[token]), {}, HTTP_HX_REQUEST="true")
        scan(http_text(invalid), forbidden, "validation errors")
        swapped = client.post(reverse("annotation:submit", args=[token]), answer, HTTP_HX_REQUEST="true")
        scan(http_text(swapped), forbidden, "next fragment")
        scan(http_text(client.get(reverse("annotation:task", args=[token]))), forbidden, "edit page")
        pages += 1
    assert pages == project.n_tasks == 3


@pytest.mark.parametrize("reveal", ["after_vote", "never"])
def test_arena_pages_api_and_stream_are_blind_until_the_vote(
    client, make_user, stream_stub, no_dispatch, settings, reveal
):
    """Every byte a voter receives before the vote (the arena page, the battle page, its event stream, the
    API) names no model, endpoint, response, prompt id or dataset; after it, only an arena that reveals."""
    settings.ARENA_STREAM_REDIS_URL = ""
    voter = make_user("annotator", username="arena-voter")
    endpoints = make_endpoints(stream_stub.base_url, model_id="secret-model-id-xyz")
    project = make_arena(endpoints=endpoints, members=[voter], reveal=reveal, name="arena-secret-project")
    client.force_login(voter)
    api = APIClient()
    api.force_authenticate(voter)
    started = client.post(
        reverse("arena:project", args=[project.pk]),
        {"language": "ind", "register": "", "category": "chat", "text": "Apa kabar?"},
    )
    battle = Battle.objects.get()
    forbidden = [
        *SECRET_SLUGS,
        "secret-model-id-xyz",
        stream_stub.base_url,
        project.dataset.name,
        battle.prompt.external_id,
        "response_id",
        "endpoint",
    ]
    received = [http_text(started), http_text(client.get(reverse("arena:project", args=[project.pk])))]
    received.append(http_text(client.get(reverse("arena:battle", args=[battle.token]))))
    received.append(http_text(api.get(f"/api/v1/arena/battles/{battle.token}")))
    run_answers(battle)
    stream = client.get(reverse("arena:stream", args=[battle.token]))
    received.append(b"".join(stream.streaming_content).decode())
    received.append(http_text(client.get(reverse("arena:battle", args=[battle.token]))))
    received.append(http_text(api.get(f"/api/v1/arena/battles/{battle.token}")))
    received.append(http_text(client.get(reverse("home"))))
    assert "Halo, apa kabar?" in received[4]  # the stream carried the answers
    for n, text in enumerate(received):
        scan(text, forbidden, f"arena response {n} before the vote")
    after = http_text(client.post(reverse("arena:vote", args=[battle.token]), {"vote": "A"}, follow=True))
    after_api = http_text(api.get(f"/api/v1/arena/battles/{battle.token}"))
    if reveal == "never":
        scan(after + after_api, forbidden, "arena after the vote")
    else:
        assert all(slug in after and slug in after_api for slug in SECRET_SLUGS)
        scan(after + after_api, forbidden[2:], "arena after the vote")
