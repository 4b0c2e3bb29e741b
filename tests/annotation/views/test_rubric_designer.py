"""The rubric designer pages: reachable from the managers' navigation, create, edit, errors."""

import pytest
from django.urls import reverse

from annotation import selectors
from annotation.forms import RubricForm
from annotation.models import Rubric
from tests.annotation.scaled import seven_point_and_yes_no

pytestmark = pytest.mark.django_db


def base_form(**extra):
    return {
        "criterion": "helpfulness",
        "label_id": "Kebermanfaatan",
        "label_en": "Helpfulness",
        "question_id": "",
        "question_en": "How helpful is it?",
        "scale_kind": "points",
        "points": "7",
        "overrides": "",
        **extra,
    }


def test_list_shows_the_ready_rubrics_and_the_nav_links_to_it(role_client):
    client = role_client("project_manager")
    page = client.get(reverse("annotation:rubric_list")).content.decode()
    assert f'href="{reverse("annotation:rubric_list")}"' in page  # the main navigation
    assert 'data-criterion="relevance"' in page and 'data-criterion="fluency"' in page
    assert "Relevansi / Relevance" in page and "1–5" in page


def test_annotators_cannot_open_the_designer(role_client):
    client = role_client("annotator")
    assert client.get(reverse("annotation:rubric_list")).status_code == 403


def test_create_a_seven_point_criterion_with_levels_in_both_languages(role_client):
    client = role_client("project_manager")
    form = base_form(
        level_id_1="Tidak membantu", level_en_1="Not helpful", level_en_7="Very helpful", level_en_8="ignored"
    )
    response = client.post(reverse("annotation:rubric_create"), form)
    assert response.status_code == 302
    rubric = Rubric.objects.get(criterion="helpfulness")
    assert rubric.scale == {"points": 7}
    # Rows beyond the scale's seven points are not part of it.
    assert rubric.levels == {"id": {"1": "Tidak membantu"}, "en": {"1": "Not helpful", "7": "Very helpful"}}
    edit = client.get(reverse("annotation:rubric_edit", args=["helpfulness"])).content.decode()
    assert 'value="Very helpful"' in edit and 'name="points" value="7"' in edit


def test_create_categories_with_a_category_wording(role_client):
    client = role_client("project_manager")
    form = base_form(
        criterion="safe",
        scale_kind="categories",
        points="",
        cat_value_1="yes",
        cat_id_1="Ya",
        cat_en_1="Yes",
        cat_value_2="no",
        cat_id_2="Tidak",
        cat_en_2="No",
        level_en_2="Could hurt someone.",
        overrides="math | en | no | Teaches a wrong method.",
    )
    assert client.post(reverse("annotation:rubric_create"), form).status_code == 302
    general = Rubric.objects.get(criterion="safe", category="")
    assert general.scale["categories"][1] == {"value": "no", "label": {"id": "Tidak", "en": "No"}}
    assert general.levels["en"] == {"no": "Could hurt someone."}
    assert Rubric.objects.get(criterion="safe", category="math").levels["en"] == {
        "no": "Teaches a wrong method."
    }


def test_bad_input_is_shown_and_nothing_is_written(role_client):
    client = role_client("project_manager")
    form = base_form(
        scale_kind="categories",
        cat_value_1="yes",
        cat_id_1="Ya",
        cat_en_1="Yes",
        cat_value_2="yes",
        cat_id_2="Ya",
        cat_en_2="",
        overrides="math | fr | 1 | x",
    )
    page = client.post(reverse("annotation:rubric_create"), form).content.decode()
    assert "Line 1: expected category | id or en | value | text." in page
    form["overrides"] = ""
    page = client.post(reverse("annotation:rubric_create"), form).content.decode()
    assert "scale.categories.2.value: &#x27;yes&#x27; is used twice." in page
    assert "scale.categories.2.label.en: Give the label of &#x27;yes&#x27; in &#x27;en&#x27;." in page
    assert not Rubric.objects.filter(criterion="helpfulness").exists()


def test_designer_speaks_indonesian(role_client):
    client = role_client("project_manager")
    client.cookies["django_language"] = "id"
    page = client.get(reverse("annotation:rubric_create")).content.decode()
    assert (
        "Kriteria baru" in page and "Teks tingkat (bahasa Indonesia)" in page and "Kategori bernama" in page
    )
    listing = client.get(reverse("annotation:rubric_list")).content.decode()
    assert ">Rubrik</a>" in listing


def test_project_form_offers_the_designed_criteria_with_their_scales(role_client):
    seven_point_and_yes_no()
    client = role_client("project_manager")
    page = client.get(reverse("annotation:manage_create"), {"kind": "likert"}).content.decode()
    assert 'value="helpfulness"' in page and "Helpfulness (1-7)" in page
    assert 'value="safe"' in page and "Safe (Yes / No)" in page
    assert page.index('value="relevance"') < page.index('value="fluency"') < page.index('value="helpfulness"')


def test_saving_the_ready_relevance_rubric_unchanged_keeps_every_text(role_client):
    client = role_client("project_manager")
    client.get(reverse("annotation:rubric_list"))  # the ready rubrics are made on first visit
    before = {r.category: (r.levels, r.scale, r.label) for r in Rubric.objects.filter(criterion="relevance")}
    assert set(before) == {"", "safety", "math", "coding"}
    form = RubricForm.initial_for(selectors.rubric_detail("relevance"))
    response = client.post(reverse("annotation:rubric_edit", args=["relevance"]), form)
    assert response.status_code == 302
    after = {r.category: (r.levels, r.scale, r.label) for r in Rubric.objects.filter(criterion="relevance")}
    assert after == before
