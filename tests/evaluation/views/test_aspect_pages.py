"""The priority-aspects pages: SeaBench's categories listed, edited in both languages, reset, refused input."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from annotation.models import Project
from datasets_app.models import Dataset
from evaluation.domain.judge_templates import aspects_for
from evaluation.models import CategoryAspects
from evaluation.selectors import aspect_overrides, aspect_table
from evaluation.services import category_aspects_reset, category_aspects_set

pytestmark = pytest.mark.django_db


def test_the_list_shows_seabench_categories_with_their_shipped_aspects(role_client):
    page = role_client("project_manager").get("/evaluation/aspects/").content.decode()
    for label in ("Roleplay", "STEM", "Extraction", "Humanities", "Daily life", "Bermain peran", "Humaniora"):
        assert label in page
    assert "Lifelikeness: the assigned role is played convincingly and consistently" in page
    assert "Kesetiaan pada makna teks sumber, untuk soal penerjemahan" in page


def test_annotators_cannot_open_the_aspect_pages(role_client):
    assert role_client("annotator").get("/evaluation/aspects/roleplay/").status_code in (302, 403)


def test_a_manager_edits_a_category_in_both_languages_then_resets_it(role_client):
    client = role_client("researcher")
    form = client.get("/evaluation/aspects/roleplay/").content.decode()
    assert "Relevance of the information to the task</textarea>" in form
    response = client.post(
        "/evaluation/aspects/roleplay/",
        {
            "aspects_en": "Stays in role\n\n  Uses local idiom  \n",
            "aspects_id": "Tetap dalam peran\nMemakai ungkapan lokal",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/evaluation/aspects/"
    assert aspect_overrides() == {
        "roleplay": {
            "en": ["Stays in role", "Uses local idiom"],
            "id": ["Tetap dalam peran", "Memakai ungkapan lokal"],
        }
    }
    assert "Uses local idiom" in client.get("/evaluation/aspects/").content.decode()
    client.post("/evaluation/aspects/roleplay/", {"reset": "1"})
    assert not CategoryAspects.objects.exists()


def test_a_new_category_is_normalised_and_too_many_aspects_write_nothing(role_client):
    client = role_client("researcher")
    response = client.get("/evaluation/aspects/", {"category": "Local Cuisine"})
    assert response["Location"] == "/evaluation/aspects/local_cuisine/"
    many = "\n".join(f"aspect {n}" for n in range(13))
    page = client.post("/evaluation/aspects/local_cuisine/", {"aspects_en": many, "aspects_id": "Rasa"})
    assert page.status_code == 200
    assert "local_cuisine (en): at most 12 aspects, got 13" in page.content.decode()
    assert not CategoryAspects.objects.exists()


def test_a_bad_indonesian_list_keeps_the_english_one_unwritten_too(role_client):
    long_aspect = "x" * 301
    page = role_client("researcher").post(
        "/evaluation/aspects/life/",
        {"aspects_en": "Practical advice", "aspects_id": f"Saran praktis\n{long_aspect}"},
    )
    assert "life (id): aspect 2 is longer than 300 characters" in page.content.decode()
    assert not CategoryAspects.objects.exists()


def _project(name: str = "Ulasan kuliner", kind: str = "likert") -> Project:
    return Project.objects.create(name=name, kind=kind, dataset=Dataset.objects.create(name=f"{name} data"))


def _stored() -> set[tuple[int | None, str, tuple[str, ...]]]:
    """Every stored aspect row as (project id, language, aspects)."""
    return {
        (project_id, language, tuple(aspects))
        for project_id, language, aspects in CategoryAspects.objects.values_list(
            "project_id", "language", "aspects"
        )
    }


def test_project_aspects_override_shared_ones_which_override_shipped_ones():
    project, other = _project(), _project("Lain")
    shipped_id = list(aspects_for("roleplay", "id", {}))
    category_aspects_set(category="roleplay", language="en", aspects=["Shared: stays in role"])
    category_aspects_set(category="roleplay", language="id", aspects=["Bersama: tetap dalam peran"])
    category_aspects_set(category="roleplay", language="en", aspects=["Own: local idiom"], project=project)
    category_aspects_set(category="coding", language="id", aspects=["Sendiri: kode rapi"], project=project)
    category_aspects_set(category="coding", language="id", aspects=["Lain: uji dulu"], project=other)

    assert aspect_overrides() == {
        "roleplay": {"en": ["Shared: stays in role"], "id": ["Bersama: tetap dalam peran"]}
    }
    assert aspect_overrides(project_id=project.pk) == {
        "roleplay": {"en": ["Own: local idiom"], "id": ["Bersama: tetap dalam peran"]},
        "coding": {"id": ["Sendiri: kode rapi"]},
    }
    rows = {row["category"]: row for row in aspect_table(project_id=project.pk)}
    assert (rows["roleplay"]["en"], rows["roleplay"]["own_en"], rows["roleplay"]["own_id"]) == (
        ["Own: local idiom"],
        True,
        False,
    )
    assert rows["roleplay"]["id"] == ["Bersama: tetap dalam peran"]
    assert rows["coding"]["id"] == ["Sendiri: kode rapi"] and rows["coding"]["own"]
    shared = {row["category"]: row for row in aspect_table()}
    assert not any(row["own"] for row in shared.values())
    assert shared["coding"]["id"] == list(aspects_for("coding", "id", {}))
    # Without shared edits, a project with no own list of a category falls back to the shipped one.
    category_aspects_reset(category="roleplay")
    assert aspect_overrides(project_id=other.pk) == {"coding": {"id": ["Lain: uji dulu"]}}
    assert {row["category"]: row for row in aspect_table(project_id=other.pk)}["roleplay"]["id"] == shipped_id


def test_a_project_and_the_shared_table_each_hold_one_row_per_category_and_language():
    project = _project()
    category_aspects_set(category="roleplay", language="en", aspects=["Shared"])
    category_aspects_set(category="roleplay", language="en", aspects=["Own"], project=project)
    category_aspects_set(category="roleplay", language="en", aspects=["Own again"], project=project)
    assert _stored() == {(None, "en", ("Shared",)), (project.pk, "en", ("Own again",))}
    with pytest.raises(IntegrityError), transaction.atomic():
        CategoryAspects.objects.create(project=None, category="roleplay", language="en", aspects=["Twice"])
    with pytest.raises(IntegrityError), transaction.atomic():
        CategoryAspects.objects.create(project=project, category="roleplay", language="en", aspects=["Twice"])


def test_a_manager_edits_and_resets_a_projects_aspects_without_touching_the_shared_ones(role_client):
    project, other = _project(), _project("Lain")
    category_aspects_set(category="roleplay", language="en", aspects=["Shared: stays in role"])
    category_aspects_set(category="roleplay", language="en", aspects=["Other's own"], project=other)
    client = role_client("project_manager")
    url = f"/evaluation/aspects/roleplay/?project={project.pk}"

    form = client.get(url).content.decode()
    assert "Shared: stays in role</textarea>" in form and "Ulasan kuliner" in form
    response = client.post(url, {"aspects_en": "Own: local idiom", "aspects_id": "Sendiri: ungkapan lokal"})

    assert (
        response.status_code == 302 and response["Location"] == f"/evaluation/aspects/?project={project.pk}"
    )
    assert _stored() == {
        (None, "en", ("Shared: stays in role",)),
        (other.pk, "en", ("Other's own",)),
        (project.pk, "en", ("Own: local idiom",)),
        (project.pk, "id", ("Sendiri: ungkapan lokal",)),
    }
    listing = client.get(f"/evaluation/aspects/?project={project.pk}").content.decode()
    assert "Own: local idiom" in listing and "this project's aspects" in listing
    assert f"/evaluation/aspects/coding/?project={project.pk}" in listing
    shared_listing = client.get("/evaluation/aspects/").content.decode()
    assert "Own: local idiom" not in shared_listing and "Shared: stays in role" in shared_listing

    client.post(url, {"reset": "1"})
    assert _stored() == {(None, "en", ("Shared: stays in role",)), (other.pk, "en", ("Other's own",))}


def test_a_new_category_for_a_project_keeps_the_project_and_bad_aspects_write_nothing(role_client):
    project = _project()
    client = role_client("researcher")
    response = client.get("/evaluation/aspects/", {"category": "Local Cuisine", "project": project.pk})
    assert response["Location"] == f"/evaluation/aspects/local_cuisine/?project={project.pk}"
    page = client.post(
        response["Location"], {"aspects_en": "Taste", "aspects_id": "Rasa\n" + "x" * 301}
    ).content.decode()
    assert "local_cuisine (id): aspect 2 is longer than 300 characters" in page
    assert not CategoryAspects.objects.exists()


def test_an_unknown_or_malformed_project_is_not_found_and_writes_nothing(role_client):
    client = role_client("researcher")
    assert client.get("/evaluation/aspects/?project=999999").status_code == 404
    assert (
        client.post(
            "/evaluation/aspects/roleplay/?project=abc", {"aspects_en": "A", "aspects_id": "B"}
        ).status_code
        == 404
    )
    assert client.post("/evaluation/aspects/roleplay/?project=999999", {"reset": "1"}).status_code == 404
    assert not CategoryAspects.objects.exists()


def test_annotators_cannot_edit_a_projects_aspects(role_client):
    project = _project()
    response = role_client("annotator").post(
        f"/evaluation/aspects/roleplay/?project={project.pk}", {"aspects_en": "A", "aspects_id": "B"}
    )
    assert response.status_code in (302, 403)
    assert not CategoryAspects.objects.exists()


def test_a_rating_projects_manage_page_links_to_its_judge_aspects_and_a_translation_one_does_not(
    role_client,
):
    rating, translation = _project(), _project("Terjemahan", kind="translation")
    client = role_client("project_manager")
    page = client.get(reverse("annotation:manage_detail", args=[rating.pk])).content.decode()
    assert f'href="/evaluation/aspects/?project={rating.pk}"' in page
    page = client.get(reverse("annotation:manage_detail", args=[translation.pk])).content.decode()
    assert "/evaluation/aspects/" not in page


def test_refused_aspects_are_named_in_the_pages_language(role_client):
    client = role_client("project_manager")
    many = "\n".join(f"aspect {n}" for n in range(13))
    page = client.post(
        "/evaluation/aspects/local_cuisine/",
        {"aspects_en": many, "aspects_id": "Rasa"},
        HTTP_ACCEPT_LANGUAGE="id",
    ).content.decode()
    assert "local_cuisine (en): paling banyak 12 aspek, ada 13" in page
    page = client.post(
        "/evaluation/aspects/life/",
        {"aspects_en": "Practical advice", "aspects_id": "Saran praktis\n" + "x" * 301},
        HTTP_ACCEPT_LANGUAGE="id",
    ).content.decode()
    assert "life (id): aspek 2 lebih panjang dari 300 karakter" in page
    assert aspect_overrides() == {}
