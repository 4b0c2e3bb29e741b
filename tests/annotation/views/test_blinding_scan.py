"""Nothing that identifies a model, a response, a prompt or the dataset reaches an annotator."""

import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import services
from datasets_app.models import Prompt, Response
from tests.annotation.conftest import MODEL_NAMES, build_dataset

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
