"""Attention checks on the pages: the manager's setting and action, the quality section and API, and a
check task that looks to its annotator exactly like any other task."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import services
from annotation.models import AttentionCheck, Project
from tests.annotation.services.test_attention_checks import NEGATION_ONLY, build_units

pytestmark = pytest.mark.django_db


@pytest.fixture
def checked(make_user, job_project):
    people = [make_user("annotator"), make_user("annotator")]
    project = job_project(
        kind="translation_mqm", dataset=build_units(), members=people, overlap=2, span_settings=NEGATION_ONLY
    )
    return project, people


def _normalised(page: str, token: str, target: str) -> str:
    for form in {
        target,
        html.escape(target),
        json.dumps(target)[1:-1],
        html.escape(json.dumps(target)[1:-1]),
    }:
        page = page.replace(form, "TARGET")
    page = page.replace(token, "TOKEN")
    page = re.sub(r"[A-Za-z0-9]{40,}", "CSRF", page)  # the CSRF token of each response
    return re.sub(r"\d+", "0", page)


def test_a_check_task_page_differs_from_its_twin_only_in_the_text(client, checked):
    project, (user, _) = checked
    check = AttentionCheck.objects.get(task__project=project)
    twin_text = check.task.translation_unit.translation_text
    client.force_login(user)
    pages = {}
    while (assignment := services.assignment_claim(project=project, user=user)) is not None:
        if assignment.task.translation_unit_id == check.task.translation_unit_id:
            is_check = assignment.task_id == check.task_id
            page = client.get(reverse("annotation:task", args=[assignment.token])).content.decode()
            api = APIClient()
            api.force_authenticate(user)
            payload = api.get(reverse("api-next-task", args=[project.pk])).json()
            assert payload["task"] == assignment.token
            text = check.target_text if is_check else twin_text
            pages[is_check] = (_normalised(page, assignment.token, text), payload, page)
        services.assignment_submit(token=assignment.token, user=user, payload={"no_error": True})
    (check_page, check_payload, raw), (twin_page, twin_payload, _) = pages[True], pages[False]
    assert check.target_text in raw
    assert "attention" not in raw.lower() and str(check.pk) not in re.findall(r"\d+", check_page)
    assert check_page == twin_page
    assert check_payload["item"]["translation"] == check.target_text
    assert set(check_payload["item"]) == set(twin_payload["item"])
    assert set(check_payload) == set(twin_payload)


def test_the_project_page_and_the_api_show_checks_seen_and_found(client, checked, make_user):
    project, (idle, careful) = checked
    check = AttentionCheck.objects.get(task__project=project)
    for user, payload in (
        (idle, {"no_error": True}),
        (
            careful,
            {"spans": [{"start": 8, "end": 12, "category": "accuracy/mistranslation", "severity": "major"}]},
        ),
    ):
        while (assignment := services.assignment_claim(project=project, user=user)) is not None:
            answer = payload if assignment.task_id == check.task_id else {"no_error": True}
            services.assignment_submit(token=assignment.token, user=user, payload=answer)
    manager = make_user("project_manager")
    client.force_login(manager)
    page = client.get(reverse("annotation:manage_detail", args=[project.pk]))
    rows = {row["annotator"]: row["attention"] for row in page.context["quality"].rows}
    assert rows[idle.username] == {"seen": 1, "found": 0, "missed": 1, "share": 0.0}
    assert rows[careful.username] == {"seen": 1, "found": 1, "missed": 0, "share": 1.0}
    body = page.content.decode()
    assert 'data-testid="attention-checks"' in body and "Checks seen" in body
    page_id = client.get(reverse("annotation:manage_detail", args=[project.pk]), HTTP_ACCEPT_LANGUAGE="id")
    assert "Cek yang dikerjakan" in page_id.content.decode() and "Porsi ditemukan" in page_id.content.decode()
    api = APIClient()
    api.force_authenticate(manager)
    data = api.get(reverse("api-project-quality", args=[project.pk])).json()
    assert data["attention_checks"] == 1
    found = {
        row["annotator"]: (row["checks_seen"], row["checks_found"], row["checks_share"])
        for row in data["annotators"]
    }
    assert found == {idle.username: (1, 0, 0.0), careful.username: (1, 1, 1.0)}
    flags = {row["annotator"]: row["flags"] for row in data["annotators"]}
    # Five tasks each (flags start at five): only the one who missed the check is flagged for it.
    assert "attention" in flags[idle.username] and "attention" not in flags[careful.username]
    assert "missed attention checks" in body
    csv = client.get(reverse("annotation:manage_quality_csv", args=[project.pk])).content.decode()
    assert "checks_seen,checks_found,checks_missed,checks_share" in csv.splitlines()[0]


def test_the_manager_saves_the_setting_and_adds_checks(client, make_user, job_project):
    project = job_project(kind="translation_mqm", dataset=build_units(), members=[make_user("annotator")])
    client.force_login(make_user("project_manager"))
    url = reverse("annotation:manage_attention_checks", args=[project.pk])
    done = client.post(url, {"share": "0.5", "kinds": ["number_swap", "negation_drop"]}, follow=True)
    assert "2 checks added" in done.content.decode()
    project.refresh_from_db()
    assert project.span_settings["attention_checks"] == {
        "share": 0.5,
        "kinds": ["number_swap", "negation_drop"],
        "match_category": False,
    }
    assert AttentionCheck.objects.filter(task__project=project).count() == 2
    bad = client.post(url, {"share": "0.9", "kinds": ["number_swap"]}, follow=True)
    assert "0.5" in bad.content.decode()
    none = client.post(url, {"share": "0.2"}, follow=True)
    assert "This field is required" in none.content.decode()
    project.refresh_from_db()
    assert project.span_settings["attention_checks"]["share"] == 0.5  # refused: nothing saved
    services.project_close(project=project)
    closed = client.post(url, {"share": "0.5", "kinds": ["untranslated"]}, follow=True)
    assert "closed project gets no new attention checks" in closed.content.decode()
    project.refresh_from_db()
    assert project.span_settings["attention_checks"]["kinds"] == ["number_swap", "negation_drop"]
    assert project.status == Project.Status.CLOSED


def test_the_new_project_form_sets_the_checks(client, make_user):
    dataset = build_units()
    client.force_login(make_user("project_manager"))
    created = client.post(
        reverse("annotation:manage_create") + "?kind=translation_mqm",
        {
            "kind": "translation_mqm",
            "dataset": dataset.pk,
            "name": "with checks",
            "groups": "A",
            "overlap": "1",
            "lease_minutes": "30",
            "attention_share": "0.25",
            "attention_kinds": ["negation_drop"],
        },
    )
    assert created.status_code == 302, created.content.decode()[:2000]
    project = Project.objects.get(name="with checks")
    assert project.span_settings == {"attention_checks": {"share": 0.25, "kinds": ["negation_drop"]}}
    assert AttentionCheck.objects.filter(task__project=project).count() == 1
    refused = client.post(
        reverse("annotation:manage_create") + "?kind=translation_mqm",
        {
            "kind": "translation_mqm",
            "dataset": dataset.pk,
            "name": "no kinds",
            "groups": "A",
            "overlap": "1",
            "lease_minutes": "30",
            "attention_share": "0.25",
        },
    )
    assert "Choose at least one kind of error to put in." in refused.content.decode()
    assert not Project.objects.filter(name="no kinds").exists()


def test_the_api_sets_the_checks_and_refuses_a_bad_setting(make_user, job_project):
    project = job_project(kind="translation_esa", dataset=build_units(), members=[make_user("annotator")])
    api = APIClient()
    api.force_authenticate(make_user("project_manager"))
    url = reverse("api-attention-checks", args=[project.pk])
    done = api.post(url, {"share": 0.25, "kinds": ["number_swap"]}, format="json")
    assert done.status_code == 200
    assert done.json() == {
        "added": 1,
        "checks": 1,
        "attention_checks": {"share": 0.25, "kinds": ["number_swap"], "match_category": False},
    }
    bad = api.post(url, {"share": 0.25, "kinds": ["typo"]}, format="json")
    assert bad.status_code == 400
    assert "unknown kind 'typo'" in bad.json()["errors"]["span_settings"]
    assert api.post(url, {"kinds": ["number_swap"]}, format="json").status_code == 400
    project.refresh_from_db()
    assert project.span_settings["attention_checks"]["kinds"] == ["number_swap"]
    services.project_close(project=project)
    assert api.post(url, {"share": 0.5}, format="json").status_code == 409
    translating = job_project(kind="translation", dataset=build_units("other-units"))
    assert (
        api.post(
            reverse("api-attention-checks", args=[translating.pk]), {"share": 0.1}, format="json"
        ).status_code
        == 404
    )
