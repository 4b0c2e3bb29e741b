import pytest
from django.urls import reverse

from tests.factories import DatasetFactory, PromptFactory, ResponseFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset():
    ds = DatasetFactory(name="Sampel")
    for i in range(30):
        prompt = PromptFactory(
            dataset=ds,
            external_id=f"id-{i:02d}",
            category="math" if i < 12 else "safety",
            language="ind" if i % 3 else "sun",
        )
        ResponseFactory(prompt=prompt, model_name="secret-model-x")
    return ds


@pytest.mark.parametrize("role", ["project_manager", "researcher", "admin"])
def test_browser_pages_render_for_data_roles(role_client, dataset, role):
    client = role_client(role)
    assert client.get(reverse("datasets:list")).status_code == 200
    page = client.get(reverse("datasets:detail", args=[dataset.pk]))
    assert page.status_code == 200
    assert b"30 prompts" in page.content
    prompt = dataset.prompts.first()
    detail = client.get(reverse("datasets:prompt", args=[dataset.pk, prompt.pk]))
    assert detail.status_code == 200 and b"secret-model-x" in detail.content


@pytest.mark.parametrize("role", ["annotator", "reviewer"])
def test_annotators_and_reviewers_get_403(role_client, dataset, role):
    client = role_client(role)
    prompt = dataset.prompts.first()
    for url in (
        reverse("datasets:list"),
        reverse("datasets:detail", args=[dataset.pk]),
        reverse("datasets:prompt", args=[dataset.pk, prompt.pk]),
    ):
        response = client.get(url)
        assert response.status_code == 403
        assert b"secret-model-x" not in response.content


def test_anonymous_is_sent_to_login(client, dataset):
    response = client.get(reverse("datasets:list"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_filters_and_pagination(role_client, dataset):
    client = role_client("project_manager")
    url = reverse("datasets:detail", args=[dataset.pk])
    math = client.get(url, {"category": "math"})
    assert b"12 prompts" in math.content
    sun = client.get(url, {"language": "sun"})
    assert b"10 prompts" in sun.content
    page2 = client.get(url, {"page": 2})
    assert b"id-29" in page2.content and b"id-00" not in page2.content


def test_htmx_request_gets_only_the_table_fragment(role_client, dataset):
    client = role_client("researcher")
    response = client.get(
        reverse("datasets:detail", args=[dataset.pk]), {"category": "safety"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    text = response.content.decode()
    assert text.lstrip().startswith('<div id="prompt-table">')
    assert "<html" not in text and "18 prompts" in text


def test_two_turn_prompt_shows_references(role_client):
    prompt = PromptFactory(turns=["Satu", "Dua"], references=["Ref satu", "Ref dua"])
    client = role_client("researcher")
    page = client.get(reverse("datasets:prompt", args=[prompt.dataset_id, prompt.pk]))
    assert b"Ref dua" in page.content and b"Turn 2" in page.content


def test_prompt_of_another_dataset_is_404(role_client, dataset):
    other = PromptFactory()
    client = role_client("researcher")
    assert client.get(reverse("datasets:prompt", args=[dataset.pk, other.pk])).status_code == 404
