"""The priority-aspects pages: SeaBench's categories listed, edited in both languages, reset, refused input."""

from __future__ import annotations

import pytest

from evaluation.models import CategoryAspects
from evaluation.selectors import aspect_overrides

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
