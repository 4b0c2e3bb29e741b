"""The rubric designer's writes: checked input, versions when a started project rates the criterion."""

import pytest

from annotation import services
from annotation.models import Annotation, Rubric
from tests.annotation.scaled import YES_NO, seven_point_and_yes_no

pytestmark = pytest.mark.django_db


def test_new_criteria_store_their_scale_and_level_texts():
    seven_point_and_yes_no()
    helpfulness = Rubric.objects.get(criterion="helpfulness")
    assert (helpfulness.version, helpfulness.scale) == (1, {"points": 7})
    assert helpfulness.levels == {
        "id": {"1": "Sama sekali tidak membantu"},
        "en": {"1": "Not helpful at all", "7": "Very helpful"},
    }
    assert Rubric.objects.get(criterion="safe").scale == YES_NO


def test_bad_rubric_names_every_field_and_writes_nothing():
    with pytest.raises(services.RubricInvalid) as exc:
        services.rubric_save(
            criterion="Helpful-ness",
            label={"id": "", "en": "Helpfulness"},
            question={},
            scale={"points": 11},
            levels={"en": {"12": "?"}},
            overrides={"safety": {"en": {"0": "?"}}},
            new=True,
        )
    assert exc.value.errors == {
        "criterion": "Use 1 to 40 lower-case letters or '_', starting with a letter.",
        "label.id": "Give the label in Indonesian.",
        "scale.points": "A scale has 2 to 10 points; got 11.",
        "levels.en.12": "'12' is not on the scale (a whole number from 1 to 5).",
        "overrides.safety.levels.en.0": "'0' is not on the scale (a whole number from 1 to 5).",
    }
    assert not Rubric.objects.exists()


def test_editing_a_criterion_of_an_active_project_makes_a_new_version(make_project):
    seven_point_and_yes_no()
    project = make_project(n_prompts=1, n_models=2, per_group=1, criteria=["helpfulness", "safe"])
    assert project.rubric_versions == {"helpfulness": 1, "safe": 1}
    user = project.annotators[0]
    assignment = services.assignment_claim(project=project, user=user)
    services.assignment_submit(
        token=assignment.token,
        user=user,
        payload={"ratings": {"1": {"helpfulness": 7, "safe": "no"}, "2": {"helpfulness": 1, "safe": "yes"}}},
    )
    edit = dict(
        criterion="helpfulness",
        label={"id": "Kebermanfaatan", "en": "Helpfulness"},
        question={},
        scale={"points": 5},
        levels={},
    )
    assert services.rubric_save(**edit) == ("helpfulness", 2, True)
    project.refresh_from_db()
    assert project.rubric_versions["helpfulness"] == 1  # the running study keeps its 1-7 scale
    assert Rubric.objects.get(criterion="helpfulness", version=1).scale == {"points": 7}
    stored = Annotation.objects.filter(criterion="helpfulness").order_by("value_int")
    assert [(a.value_int, a.rubric_version) for a in stored] == [(1, 1), (7, 1)]
    assert sorted(Annotation.objects.filter(criterion="safe").values_list("choice", flat=True)) == [
        "no",
        "yes",
    ]
    # Nobody started on version 2 yet: a second edit rewrites it in place.
    assert services.rubric_save(**{**edit, "scale": {"points": 4}}) == ("helpfulness", 2, False)
    assert Rubric.objects.get(criterion="helpfulness", version=2).scale == {"points": 4}


def test_a_rubric_of_a_draft_project_is_edited_in_place(make_project):
    seven_point_and_yes_no()
    make_project(n_prompts=1, n_models=2, per_group=1, criteria=["safe"], activate=False)
    result = services.rubric_save(
        criterion="safe", label={"id": "Aman", "en": "Safe"}, question={}, scale=YES_NO, levels={}
    )
    assert result == ("safe", 1, False)
    assert Rubric.objects.filter(criterion="safe").count() == 1
