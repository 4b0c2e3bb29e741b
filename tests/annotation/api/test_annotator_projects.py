"""An annotator lists their own projects with their progress and makes (and revokes) their token."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation import services
from annotation.models import Project
from tests.factories import PromptFactory, ResponseFactory

pytestmark = pytest.mark.django_db


def _project(manager, dataset, name, member=None):
    project = services.project_create(
        created_by=manager, dataset=dataset, name=name, kind="likert", groups=["A"], overlap=1
    )
    if member is not None:
        services.project_member_add(project=project, user=member, group=project.groups.get())
        services.project_status_set(project=project, action="activate")
    return Project.objects.get(pk=project.pk)


def test_an_annotator_lists_their_projects_and_makes_a_token(make_user):
    manager = make_user("project_manager")
    sari = make_user("annotator", username="sari")
    prompt = PromptFactory()
    for _ in range(2):
        ResponseFactory(prompt=prompt)
    PromptFactory(dataset=prompt.dataset)
    for p in prompt.dataset.prompts.exclude(pk=prompt.pk):
        ResponseFactory(prompt=p)
        ResponseFactory(prompt=p)
    mine = _project(manager, prompt.dataset, "Mine", member=sari)
    _project(manager, prompt.dataset, "Not mine", member=make_user("annotator"))

    session = APIClient()
    session.force_login(sari)
    made = session.post("/api/v1/auth/token/rotate")
    assert made.status_code == 201
    key = made.json()["token"]

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    listing = api.get("/api/v1/projects/")
    assert listing.status_code == 200
    rows = listing.json()["results"]
    assert [(r["id"], r["name"], r["group"], r["done"], r["total"]) for r in rows] == [
        (mine.pk, "Mine", "A", 0, mine.n_tasks)
    ]
    assert "dataset" not in rows[0] and "model" not in str(rows[0]).lower()
    task = api.get(rows[0]["next_url"])
    assert task.status_code == 200

    assert api.post("/api/v1/auth/token/revoke").status_code == 204
    assert not Token.objects.filter(user=sari).exists()
    assert api.get("/api/v1/projects/").status_code in (401, 403)


def test_managers_still_list_every_project(api_client_for, make_user):
    api = api_client_for("project_manager")
    prompt = PromptFactory()
    ResponseFactory(prompt=prompt)
    ResponseFactory(prompt=prompt)
    _project(api.user, prompt.dataset, "Draft")
    rows = api.get("/api/v1/projects/").json()["results"]
    assert [r["name"] for r in rows] == ["Draft"] and "dataset" in rows[0]


def test_researchers_without_projects_get_403(api_client_for):
    assert api_client_for("researcher").get("/api/v1/projects/").status_code == 403
