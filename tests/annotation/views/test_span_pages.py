"""The error-span pages: the annotator's task page (blind, both languages), its submit with the spans as
JSON, the reviewer's view of the spans, the manager's system scores and their API."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import services
from annotation.models import Annotation, ErrorSpan
from datasets_app.models import Dataset, TranslationUnit

pytestmark = pytest.mark.django_db

SYSTEMS = ("zeta-secret-mt", "omega-hidden-mt")
# Written for these tests.
SEGMENTS = [
    ("Harga beras naik 5 persen.", ("Regine beras mundhak 50 persen.", "Regine beras mundhak 5 persen.")),
    ("Dia tidak datang kemarin.", ("Dheweke teka wingi.", "Dheweke ora teka wingi.")),
]


def build_units() -> Dataset:
    dataset = Dataset.objects.create(name="dataset-secret-spans", kind=Dataset.Kind.TRANSLATIONS)
    for i, (source, targets) in enumerate(SEGMENTS):
        for system, target in zip(SYSTEMS, targets, strict=True):
            TranslationUnit.objects.create(
                dataset=dataset,
                external_id=f"unit-secret-{i}-{system}",
                source_text=source,
                source_language="ind",
                target_language="jav",
                register="ngoko",
                translation_text=target,
                translator_name=system,
                status="accepted",
                meta={"system_note": "meta-secret-system"},
            )
    return dataset


@pytest.fixture
def project(make_user, job_project):
    people = [make_user("annotator"), make_user("annotator")]
    project = job_project(kind="translation_mqm", dataset=build_units(), members=people, overlap=2)
    project.people = people
    return project


def forbidden(project) -> list[str]:
    units = TranslationUnit.objects.filter(dataset=project.dataset)
    return [
        *SYSTEMS,
        project.dataset.name,
        "meta-secret-system",
        *(u.external_id for u in units),
    ]


def test_the_task_page_is_blind_and_in_both_languages(client, project):
    user = project.people[0]
    client.force_login(user)
    started = client.post(reverse("annotation:start", args=[project.pk]))
    page = client.get(started["Location"])
    text = page.content.decode()
    assert not [s for s in forbidden(project) if s in text]
    assert 'data-testid="span-target"' in text and "Accuracy · Mistranslation" in text
    data = json.loads(page.context["span_data"] and json.dumps(page.context["span_data"]))
    assert data["target"] in {t for _, ts in SEGMENTS for t in ts}
    client.cookies["django_language"] = "id"
    page_id = client.get(started["Location"], HTTP_ACCEPT_LANGUAGE="id")
    body = page_id.content.decode()
    assert "Akurasi · Salah terjemah" in body
    assert "Tidak ada kesalahan" in body


def test_submit_with_spans_then_the_reviewer_and_the_manager_see_them(client, project, make_user):
    user = project.people[0]
    client.force_login(user)
    client.post(reverse("annotation:start", args=[project.pk]))
    assignment = user.annotation_assignments.get()
    target = assignment.task.translation_unit.translation_text
    spans = [{"side": "target", "start": 0, "end": 6, "category": "fluency/spelling", "severity": "minor"}]
    bad = client.post(
        reverse("annotation:submit", args=[assignment.token]),
        {"spans": json.dumps([{**spans[0], "end": 999}])},
    )
    assert bad.status_code == 200 and "Error 1" in bad.content.decode()
    assert not ErrorSpan.objects.exists()
    done = client.post(reverse("annotation:submit", args=[assignment.token]), {"spans": json.dumps(spans)})
    assert done.status_code == 302
    again = client.post(reverse("annotation:submit", args=[assignment.token]), {"spans": json.dumps(spans)})
    assert again.status_code == 302
    assert ErrorSpan.objects.filter(assignment=assignment).count() == 1
    assert Annotation.objects.get(assignment=assignment).value_int == 1

    reviewer = make_user("reviewer")
    client.force_login(reviewer)
    review = client.get(reverse("annotation:review"), {"project": project.pk})
    html = review.content.decode()
    assert f"«{target[0:6]}»" in html
    assert "Fluency · Spelling" in html
    assert '<mark class="err-minor"' in html

    manager = make_user("project_manager")
    client.force_login(manager)
    scores = client.get(reverse("annotation:manage_span_scores", args=[project.pk]))
    assert scores.status_code == 200
    system = assignment.task.translation_unit.translator_name
    assert f'data-system="{system}"' in scores.content.decode()
    assert 'data-testid="score-chart"' in scores.content.decode()
    api = APIClient()
    api.force_authenticate(manager)
    body = api.get(reverse("api-span-scores", args=[project.pk]), {"bootstrap": "50", "seed": "1"}).json()
    [row] = body["systems"]
    assert (row["system"], row["score"], row["segments"], row["errors"]) == (system, 1.0, 1, 1)
    assert row["by_category"] == {"fluency/spelling": 1.0}
    assert body["protocol"] == "mqm" and body["agreement"]["segments"] == 0
    refused = api.get(reverse("api-span-scores", args=[project.pk]), {"bootstrap": "many"})
    assert refused.status_code == 400 and "bootstrap" in refused.json()["detail"]


def test_the_api_loop_takes_span_answers_and_is_blind(project):
    user = project.people[1]
    api = APIClient()
    api.force_authenticate(user)
    got = api.get(reverse("api-next-task", args=[project.pk]))
    text = got.content.decode()
    assert not [s for s in forbidden(project) if s in text]
    token = got.json()["task"]
    answer = {"answer": {"no_error": True}}
    created = api.post(reverse("api-annotation-create", args=[token]), answer, format="json")
    assert created.status_code == 201
    assert Annotation.objects.get(assignment__token=token).choice == "no_error"
    wrong = api.post(reverse("api-annotation-create", args=[token]), {"answer": {}}, format="json")
    assert wrong.status_code == 400


def test_two_raters_give_span_agreement_on_the_scores_page(client, project, make_user):
    first, second = project.people
    marks = {first.pk: (0, 6), second.pk: (0, 6)}
    for user in (first, second):
        a = services.assignment_claim(project=project, user=user)
        while a.task.translation_unit.external_id != f"unit-secret-0-{SYSTEMS[0]}":
            services.assignment_submit(token=a.token, user=user, payload={"no_error": True})
            a = services.assignment_claim(project=project, user=user)
        start, end = marks[user.pk]
        services.assignment_submit(
            token=a.token,
            user=user,
            payload={"spans": [{"start": start, "end": end, "category": "style", "severity": "major"}]},
        )
    client.force_login(make_user("project_manager"))
    page = client.get(reverse("annotation:manage_span_scores", args=[project.pk]))
    report = page.context["report"]
    assert report["agreement"]["char_f1"] == 1.0
    assert report["agreement"]["segments"] >= 1
    quality = client.get(reverse("annotation:manage_detail", args=[project.pk])).content.decode()
    assert 'data-testid="quality-span-agreement"' in quality
    assert (
        f"{first.username} / {second.username}" in quality
        or f"{second.username} / {first.username}" in quality
    )


def test_the_task_page_reads_a_fixed_number_of_statements(client, project, django_assert_max_num_queries):
    user = project.people[0]
    client.force_login(user)
    started = client.post(reverse("annotation:start", args=[project.pk]))
    with django_assert_max_num_queries(6):
        page = client.get(started["Location"])
    assert page.status_code == 200


def test_managers_create_and_follow_an_esa_project_and_annotators_score_with_the_form(client, make_user):
    dataset = build_units()
    manager = make_user("project_manager")
    client.force_login(manager)
    created = client.post(
        reverse("annotation:manage_create"),
        {
            "kind": "translation_esa",
            "dataset": dataset.pk,
            "name": "ESA jav",
            "overlap": 1,
            "groups": "A",
            "lease_minutes": 30,
            "allow_edits": "on",
        },
    )
    assert created.status_code == 302, created.content.decode()[:2000]
    from annotation.models import Project

    esa = Project.objects.get(name="ESA jav")
    assert (esa.kind, esa.n_tasks) == ("translation_esa", 4)
    annotator = make_user("annotator")
    services.project_member_add(project=esa, user=annotator, group=esa.groups.get())
    services.project_activate(project=esa)
    detail = client.get(reverse("annotation:manage_detail", args=[esa.pk]))
    assert detail.status_code == 200 and 'data-testid="span-scores-link"' in detail.content.decode()

    client.force_login(annotator)
    client.post(reverse("annotation:start", args=[esa.pk]))
    assignment = annotator.annotation_assignments.get()
    page = client.get(reverse("annotation:task", args=[assignment.token]))
    assert 'data-testid="esa-score"' in page.content.decode()
    spans = [{"side": "target", "start": 0, "end": 6, "category": "", "severity": "major"}]
    client.post(
        reverse("annotation:submit", args=[assignment.token]), {"spans": json.dumps(spans), "score": "35"}
    )
    row = Annotation.objects.get(assignment=assignment)
    assert (row.criterion, row.value_int) == ("esa", 35)

    client.force_login(manager)
    body = client.get(reverse("annotation:manage_span_scores", args=[esa.pk])).content.decode()
    assert "ESA: the mean 0–100 score" in body and "35.00" in body


def test_an_answer_reopened_from_my_work_starts_from_its_spans(client, project):
    user = project.people[0]
    a = services.assignment_claim(project=project, user=user)
    spans = [{"start": 0, "end": 6, "category": "style", "severity": "minor"}]
    services.assignment_submit(token=a.token, user=user, payload={"spans": spans})
    client.force_login(user)
    opened = client.post(reverse("annotation:my_work_edit", args=[a.token]))
    assert opened.status_code == 302
    page = client.get(opened["Location"])
    assert page.context["span_data"]["spans"][0]["start"] == 0
    assert page.context["span_data"]["spans"][0]["category"] == "style"
    spans[0]["severity"] = "major"
    client.post(reverse("annotation:submit", args=[a.token]), {"spans": json.dumps(spans), "from": "mine"})
    a.refresh_from_db()
    assert a.round == 2
    assert list(ErrorSpan.objects.filter(assignment=a, round=2).values_list("severity", flat=True)) == [
        "major"
    ]


def test_managers_set_the_category_tree_and_weights_and_bad_settings_change_nothing(
    client, project, make_user
):
    from annotation.models import Project

    manager = make_user("project_manager")
    client.force_login(manager)
    detail = client.get(reverse("annotation:manage_detail", args=[project.pk]))
    shown = json.loads(detail.context["span_settings"])
    assert shown["weights"]["severity"]["major"] == 5.0
    assert any(c["code"] == "fluency" for c in shown["categories"])
    own = {
        "categories": [
            {"label": "Meaning", "name": {"en": "Meaning", "id": "Makna"}},
            {"label": "Register", "name": {"en": "Register", "id": "Ragam"}, "register": True},
        ],
        "weights": {"severity": {"major": 10, "minor": 2}},
    }
    url = reverse("annotation:manage_span_settings", args=[project.pk])
    client.post(url, {"span_settings": json.dumps(own)})
    project.refresh_from_db()
    assert project.span_settings == own
    annotator = project.people[0]
    a = services.assignment_claim(project=project, user=annotator)
    services.assignment_submit(
        token=a.token,
        user=annotator,
        payload={"spans": [{"start": 0, "end": 3, "category": "register", "severity": "major"}]},
    )
    body = client.get(reverse("api-span-scores", args=[project.pk])).json()
    assert body["systems"][0]["score"] == 10.0  # the project's weights
    for bad in (
        "{not json",
        "[]",
        json.dumps({"categories": [{"label": "Meaning"}]}),
        json.dumps({"colour": 1}),
    ):
        answer = client.post(url, {"span_settings": bad}, follow=True)
        assert answer.status_code == 200
        assert Project.objects.get(pk=project.pk).span_settings == own
    # "register" is used by a marked span: a tree without it is refused.
    messages = [
        str(m)
        for m in client.post(
            url, {"span_settings": json.dumps({"categories": own["categories"][:1]})}, follow=True
        ).context["messages"]
    ]
    assert any("register" in m for m in messages)
