import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation import services
from annotation.models import Project
from demo.services import (
    ANSWERING_PROJECT,
    AUTHORING_PROJECT,
    DEMO_PROJECTS,
    PAIRWISE_PROJECT,
    RATING_PROJECT,
    REVIEW_PROJECT,
    TRANSLATION_PROJECT,
    demo_load,
)

pytestmark = pytest.mark.django_db


def test_demo_projects_are_ready_to_work_on_and_survive_a_reload():
    demo_load(password="rahasia-demo-1", simulate=False)
    demo_load(password="rahasia-demo-2", simulate=False)
    projects = {p.name: p for p in Project.objects.filter(name__in=DEMO_PROJECTS)}
    assert set(projects) == set(DEMO_PROJECTS)
    assert {p.status for p in projects.values()} == {"active"}
    likert, pairwise = projects[RATING_PROJECT], projects[PAIRWISE_PROJECT]
    assert likert.kind == "likert" and likert.best_pick == "required"
    assert sorted(likert.groups.values_list("name", flat=True)) == [
        "Kelompok A",
        "Kelompok B",
        "Simulasi (demo)",
    ]
    # Every sampled prompt gives 3 pairs.
    assert pairwise.n_tasks == 3 * likert.n_tasks
    assert projects[REVIEW_PROJECT].kind == "translation_review" and projects[REVIEW_PROJECT].n_tasks == 17
    assert projects[AUTHORING_PROJECT].n_tasks == 8  # one task per uploaded (category, concept) pair
    assert projects[ANSWERING_PROJECT].n_tasks == 8
    user = get_user_model().objects.get(username="anotator3")
    for project in (likert, pairwise):
        assignment = services.assignment_claim(project=project, user=user)
        assert assignment is not None and assignment.group.name == "Kelompok B"
    for name in (REVIEW_PROJECT, AUTHORING_PROJECT, ANSWERING_PROJECT):
        assignment = services.assignment_claim(project=projects[name], user=user)
        assert assignment is not None and assignment.group.name == "Anotator"


def test_the_demo_translation_projects_show_a_back_translation_flag(client):
    from datasets_app.models import TranslationUnit

    demo_load(password="rahasia-demo-4", simulate=False)
    projects = {p.name: p for p in Project.objects.filter(name__in=DEMO_PROJECTS)}
    units = {
        u.external_id: u for u in TranslationUnit.objects.filter(dataset=projects[REVIEW_PROJECT].dataset)
    }

    def back(unit_id: str) -> list[dict]:
        return [f for f in units[unit_id].flags if f["code"] == "low_back_translation"]

    # tr-17's back-translation says something else; tr-07's and tr-11's paraphrase their sources.
    [flag] = back("tr-17")
    assert flag["details"]["measure"] == "embedding" and flag["details"]["similarity"] < 0.9
    assert back("tr-07") == [] and back("tr-11") == []
    client.force_login(get_user_model().objects.get(username="manajer"))
    for name in (REVIEW_PROJECT, TRANSLATION_PROJECT):
        body = client.get(reverse("annotation:manage_detail", args=[projects[name].pk])).content.decode()
        table = body[body.index('data-testid="back-translation-flags"') :]
        assert "tr-17" in table[: table.index("</table>")]


def test_a_unit_the_reviewer_rejects_is_revised_by_a_demo_translator_and_comes_back_to_review():
    from datasets_app.models import TranslationUnit

    demo_load(password="rahasia-demo-3", simulate=False)
    projects = {p.name: p for p in Project.objects.filter(name__in=DEMO_PROJECTS)}
    assert projects[TRANSLATION_PROJECT].kind == "translation"
    users = get_user_model().objects
    reviewer, translator = users.get(username="anotator1"), users.get(username="anotator2")
    # Nothing waits for a translator until a reviewer sends a unit back.
    assert services.assignment_claim(project=projects[TRANSLATION_PROJECT], user=translator) is None
    review = services.assignment_claim(project=projects[REVIEW_PROJECT], user=reviewer)
    services.assignment_submit(
        token=review.token,
        user=reviewer,
        payload={"verdict": "reject", "error_categories": ["fluency"], "comment": "Kurang luwes."},
    )
    unit = TranslationUnit.objects.get(pk=review.task.translation_unit_id)
    assert unit.status == "revise"
    work = services.assignment_claim(project=projects[TRANSLATION_PROJECT], user=translator)
    assert work is not None and work.task.translation_unit_id == unit.pk
    services.assignment_submit(token=work.token, user=translator, payload={"translation": "Terjemahan baru."})
    unit.refresh_from_db()
    assert (unit.status, unit.translation_text) == ("to_review", "Terjemahan baru.")
