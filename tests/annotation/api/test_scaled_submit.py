"""A value outside a criterion's scale is refused, naming the criterion and its allowed values (JSON API
and the annotator page); values on a 1-7 or yes/no scale are stored as given."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import services
from annotation.models import Annotation
from tests.annotation.scaled import seven_point_and_yes_no

pytestmark = pytest.mark.django_db


@pytest.fixture
def scaled_project(make_project):
    seven_point_and_yes_no()
    return make_project(n_prompts=1, n_models=2, per_group=1, criteria=["helpfulness", "safe"])


def test_api_refuses_values_off_the_scale_and_stores_those_on_it(scaled_project):
    api = APIClient()
    api.force_authenticate(scaled_project.annotators[0])
    body = api.get(f"/api/v1/projects/{scaled_project.pk}/next").json()
    assert [(c["key"], c["scale"]) for c in body["criteria"]] == [
        ("helpfulness", {"points": 7}),
        (
            "safe",
            {
                "categories": [
                    {"value": "yes", "label": {"id": "Ya", "en": "Yes"}},
                    {"value": "no", "label": {"id": "Tidak", "en": "No"}},
                ]
            },
        ),
    ]
    url = f"/api/v1/tasks/{body['task']}/annotations"
    bad = api.post(
        url,
        {
            "answer": {
                "ratings": {"1": {"helpfulness": 8, "safe": "maybe"}, "2": {"helpfulness": 7, "safe": "no"}}
            }
        },
        format="json",
    )
    assert bad.status_code == 400
    assert bad.json()["errors"] == {
        "ratings.1.helpfulness": ['"helpfulness" takes a whole number from 1 to 7; got 8.'],
        "ratings.1.safe": ["\"safe\" takes one of yes, no; got 'maybe'."],
    }
    assert not Annotation.objects.exists()
    good = api.post(
        url,
        {
            "answer": {
                "ratings": {"1": {"helpfulness": 6, "safe": "yes"}, "2": {"helpfulness": 7, "safe": "no"}}
            }
        },
        format="json",
    )
    assert good.status_code == 201
    rows = Annotation.objects.order_by("criterion", "value_int", "choice")
    assert [(a.criterion, a.value_int, a.choice) for a in rows] == [
        ("helpfulness", 6, ""),
        ("helpfulness", 7, ""),
        ("safe", None, "no"),
        ("safe", None, "yes"),
    ]


def test_page_refuses_a_value_off_the_scale_with_the_criterion_and_allowed_values(client, scaled_project):
    user = scaled_project.annotators[0]
    client.force_login(user)
    assignment = services.assignment_claim(project=scaled_project, user=user)
    page = client.get(reverse("annotation:task", args=[assignment.token])).content.decode()
    # Seven radios with keys 1-7 per response for the points, the labels with keys for yes/no.
    assert page.count('name="r-1-helpfulness"') == 7
    assert 'name="r-1-safe" value="no"  data-key="2"' in page and "<kbd>2</kbd> No" in page
    form = {"r-1-helpfulness": "9", "r-1-safe": "yes", "r-2-helpfulness": "7", "r-2-safe": "perhaps"}
    body = client.post(
        reverse("annotation:submit", args=[assignment.token]), form, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert (
        "Response 1 · Helpfulness: &quot;helpfulness&quot; takes a whole number from 1 to 7; got &#x27;9&#x27;."
        in body
    )
    assert "Response 2 · Safe: &quot;safe&quot; takes one of yes, no; got &#x27;perhaps&#x27;." in body
    assert not Annotation.objects.exists()
