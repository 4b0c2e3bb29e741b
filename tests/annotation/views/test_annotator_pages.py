import re

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Annotation, Assignment, Project
from tests.annotation.conftest import build_dataset

pytestmark = pytest.mark.django_db


def login(client, user):
    client.force_login(user)
    return client


def test_home_lists_projects_and_start_claims_a_task(client, make_project):
    project = make_project(n_prompts=3, n_models=3, per_group=1)
    user = project.annotators[0]
    login(client, user)
    home = client.get(reverse("home"))
    assert b"likert project" in home.content and b"0 of 3 done" in home.content
    response = client.post(reverse("annotation:start", args=[project.pk]))
    assignment = Assignment.objects.get(annotator=user)
    assert response.status_code == 302 and response["Location"] == reverse(
        "annotation:task", args=[assignment.token]
    )
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert b"Response 1" in page.content and b"Response 3" in page.content and b"0 of 3 done" in page.content


def test_htmx_submit_swaps_in_the_next_task(client, make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=1)
    user = project.annotators[0]
    login(client, user)
    first = services.assignment_claim(project=project, user=user)
    form = {f"r-{n}-{c}": "4" for n in (1, 2) for c in ("relevance", "fluency")}
    response = client.post(reverse("annotation:submit", args=[first.token]), form, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    second = Assignment.objects.get(annotator=user, status="assigned")
    assert response["HX-Push-Url"] == reverse("annotation:task", args=[second.token])
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="task"') and "<html" not in body
    assert "1 of 2 done" in body
    assert Annotation.objects.filter(assignment=first).count() == 4


def test_missing_rating_shows_errors_and_keeps_the_answer(client, make_project):
    project = make_project(n_prompts=1, n_models=2, per_group=1)
    user = project.annotators[0]
    login(client, user)
    assignment = services.assignment_claim(project=project, user=user)
    form = {"r-1-relevance": "5", "r-1-fluency": "4", "r-2-relevance": "3"}
    response = client.post(
        reverse("annotation:submit", args=[assignment.token]), form, HTTP_HX_REQUEST="true"
    )
    body = response.content.decode()
    assert "Response 2 · Fluency: This rating is required." in body
    # The given ratings stay checked.
    assert re.search(r'name="r-1-relevance" value="5"\s+checked', body)
    assignment.refresh_from_db()
    assert assignment.status == "assigned"


def test_the_form_errors_speak_the_pages_language_and_the_api_keeps_english(client, make_project):
    project = make_project(n_prompts=1, n_models=2, per_group=1, best_pick="required")
    user = project.annotators[0]
    login(client, user)
    client.cookies["django_language"] = "id"
    assignment = services.assignment_claim(project=project, user=user)
    form = {"r-1-relevance": "5", "r-1-fluency": "4", "r-2-relevance": "3"}
    body = client.post(
        reverse("annotation:submit", args=[assignment.token]), form, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Penilaian ini wajib diisi." in body and "Pilih respons terbaik." in body
    assert "This rating is required." not in body and "Pick the best response." not in body
    api = client.post(
        f"/api/v1/tasks/{assignment.token}/annotations",
        {"answer": {"ratings": {"1": {"relevance": 5, "fluency": 4}, "2": {"relevance": 3}}}},
        content_type="application/json",
    )
    assert api.status_code == 400
    assert api.json()["errors"]["best"] == ["Pick the best response."]  # what scripts read stays as it was


def test_a_closed_project_says_so_in_the_pages_language(client, make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=1)
    user = project.annotators[0]
    login(client, user)
    client.cookies["django_language"] = "id"
    assignment = services.assignment_claim(project=project, user=user)
    services.project_close(project=project)
    form = {f"r-{n}-{c}": "4" for n in (1, 2) for c in ("relevance", "fluency")}
    response = client.post(reverse("annotation:submit", args=[assignment.token]), form, follow=True)
    body = response.content.decode()
    assert "Proyek ini sudah ditutup." in body and "This project is closed." not in body
    assert not Annotation.objects.filter(assignment=assignment).exists()


def test_last_submit_shows_done(client, make_project):
    project = make_project(n_prompts=1, n_models=2, kind="best_of_n", per_group=1)
    user = project.annotators[0]
    login(client, user)
    assignment = services.assignment_claim(project=project, user=user)
    response = client.post(
        reverse("annotation:submit", args=[assignment.token]), {"best": "2"}, HTTP_HX_REQUEST="true"
    )
    assert b"All done for now" in response.content
    # Without htmx the same post redirects (a plain form works too).
    assert (
        client.post(reverse("annotation:submit", args=[assignment.token]), {"best": "2"}).status_code == 302
    )


def test_skip_moves_on(client, make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=1)
    user = project.annotators[0]
    login(client, user)
    first = services.assignment_claim(project=project, user=user)
    response = client.post(
        reverse("annotation:skip", args=[first.token]), {"reason": "language", "note": "Madura"}
    )
    first.refresh_from_db()
    assert first.status == "skipped" and first.skip_reason.endswith(": Madura")
    second = Assignment.objects.get(annotator=user, status="assigned")
    assert response["Location"] == reverse("annotation:task", args=[second.token])


def test_another_annotators_task_is_404(client, make_project):
    project = make_project(per_group=2)
    owner, other = project.annotators
    assignment = services.assignment_claim(project=project, user=owner)
    login(client, other)
    assert client.get(reverse("annotation:task", args=[assignment.token])).status_code == 404
    assert client.post(reverse("annotation:submit", args=[assignment.token]), {}).status_code == 404
    assert client.post(reverse("annotation:skip", args=[assignment.token]), {}).status_code == 404
    assert client.get(reverse("annotation:start", args=[make_project().pk])).status_code == 404


@pytest.mark.parametrize(
    "name,args",
    [
        ("annotation:manage_list", []),
        ("annotation:manage_create", []),
        ("annotation:manage_detail", ["P"]),
        ("annotation:review", []),
    ],
)
def test_annotators_get_403_on_manager_pages(client, make_project, name, args):
    project = make_project()
    login(client, project.annotators[0])
    url = reverse(name, args=[project.pk if a == "P" else a for a in args])
    assert client.get(url).status_code == 403


def test_pairwise_page_shows_sides_and_vote_keys(client, make_project):
    project = make_project(kind="pairwise", n_models=2, n_turns=2, per_group=1)
    user = project.annotators[0]
    login(client, user)
    assignment = services.assignment_claim(project=project, user=user)
    body = client.get(reverse("annotation:task", args=[assignment.token])).content.decode()
    assert "<h3>A</h3>" in body and "<h3>B</h3>" in body and "Turn 2" in body
    for key in ("a", "b", "t", "x"):
        assert f'data-key="{key}"' in body
    response = client.post(
        reverse("annotation:submit", args=[assignment.token]), {"vote": "tie"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert Annotation.objects.get(assignment=assignment, criterion="vote").choice == "tie"


@pytest.mark.parametrize(
    ("kind", "options", "has_rubric"),
    [
        ("pairwise", {"n_models": 2}, False),
        ("best_of_n", {}, False),
        ("likert", {}, True),
    ],
)
def test_the_rubric_language_toggle_is_offered_only_with_a_rubric(
    client, make_project, kind, options, has_rubric
):
    project = make_project(kind=kind, per_group=1, **options)
    user = project.annotators[0]
    login(client, user)
    assignment = services.assignment_claim(project=project, user=user)
    for lang in ("en", "id"):
        client.cookies["django_language"] = lang
        body = client.get(reverse("annotation:task", args=[assignment.token])).content.decode()
        assert ('data-action="rubric-lang"' in body) is has_rubric, (kind, lang)
        assert ("Rubric in Indonesian" in body or "Rubrik dalam bahasa Indonesia" in body) is has_rubric
        assert ("rubric language" in body or "bahasa rubrik" in body) is has_rubric, (kind, lang)
        assert ('aria-label="Rubric"' in body or 'aria-label="Rubrik"' in body) is has_rubric


def test_rubric_follows_category_and_language(client, make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=1)
    user = project.annotators[0]
    login(client, user)
    seen = set()
    while (assignment := services.assignment_claim(project=project, user=user)) is not None:
        body = client.get(reverse("annotation:task", args=[assignment.token])).content.decode()
        category = assignment.task.prompt.category
        seen.add(category)
        if category == "math":
            assert "Correct final answer" in body and "Jawaban akhir benar" in body
        else:
            assert "Correct final answer" not in body
        services.assignment_submit(
            token=assignment.token,
            user=user,
            payload={"ratings": {"1": {"relevance": 3, "fluency": 3}, "2": {"relevance": 3, "fluency": 3}}},
        )
    assert seen == {"math", "analysis"}


def test_manager_creates_project_adds_members_and_activates(client, make_user):
    dataset = build_dataset(n_prompts=3, n_models=3)
    manager = make_user("project_manager")
    annotator = make_user("annotator")
    login(client, manager)
    response = client.post(
        reverse("annotation:manage_create"),
        {
            "dataset": dataset.pk,
            "name": "Uji",
            "kind": "likert",
            "criteria": ["relevance", "fluency"],
            "best_pick": "optional",
            "overlap": 2,
            "groups": "A, B",
            "pair_mode": "all",
            "pairs_per_prompt": 3,
            "turn_mode": "overall",
            "lease_minutes": 30,
            "allow_edits": "on",
            "gold_rate": 0,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    detail_url = response["Location"]
    project = Project.objects.get(name="Uji")
    assert project.n_tasks == 3 and list(project.groups.values_list("name", flat=True)) == ["A", "B"]
    group = project.groups.get(name="B")
    client.post(
        reverse("annotation:manage_member_add", args=[project.pk]),
        {"users": [annotator.pk], "group": group.pk},
    )
    client.post(reverse("annotation:manage_status", args=[project.pk]), {"action": "activate"})
    project.refresh_from_db()
    assert project.status == "active"
    page = client.get(detail_url).content.decode()
    assert annotator.username in page and "0 of 12 submissions" in page
    reclaim = client.post(reverse("annotation:manage_reclaim", args=[project.pk]))
    assert reclaim.status_code == 302


def test_reviewer_rejects_and_the_task_returns_with_the_comment(client, make_project, make_user):
    project = make_project(n_prompts=1, n_models=2, per_group=1, kind="best_of_n")
    user = project.annotators[0]
    assignment = services.assignment_claim(project=project, user=user)
    services.assignment_submit(token=assignment.token, user=user, payload={"best": 1})
    login(client, make_user("reviewer"))
    queue = client.get(reverse("annotation:review"))
    assert b"Response 1" in queue.content
    client.post(
        reverse("annotation:review_submit", args=[assignment.pk]),
        {"verdict": "reject", "comment": "Periksa lagi"},
    )
    login(client, user)
    response = client.post(reverse("annotation:start", args=[project.pk]))
    page = client.get(response["Location"]).content.decode()
    assert "Periksa lagi" in page
