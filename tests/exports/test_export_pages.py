"""Export pages: options form, htmx preview of the counts, export, progress, zip download."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.urls import reverse

from exports.models import Export

pytestmark = pytest.mark.django_db

FORM = {
    "kind": "hf",
    "strategy": "",
    "weights": "",
    "ordering": "weighted",
    "min_margin": "0",
    "min_annotators": "1",
    "min_agreement": "",
    "test_size": "0",
    "seed": "",
    "provenance": "crowd",
    "license": "",
    "pretty_name": "",
    "push_to_hub": "",
}


def test_annotators_are_refused_and_anonymous_users_sent_to_login(client, role_client, likert_project):
    pages = [
        reverse("exports:export_list"),
        reverse("exports:export_new", args=[likert_project.pk]),
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    annotator = role_client("annotator")
    for url in pages:
        assert annotator.get(url).status_code == 403
    assert (
        annotator.post(reverse("exports:export_preview", args=[likert_project.pk]), FORM).status_code == 403
    )


def test_list_page_offers_every_rating_project(role_client, likert_project, django_assert_max_num_queries):
    client = role_client("researcher")
    with django_assert_max_num_queries(8):
        response = client.get(reverse("exports:export_list"))
    assert response.status_code == 200
    assert reverse("exports:export_new", args=[likert_project.pk]).encode() in response.content


def test_form_lists_the_project_facets(role_client, likert_project):
    response = role_client("project_manager").get(reverse("exports:export_new", args=[likert_project.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'value="analysis"' in html and 'value="sun"' in html
    assert "Preview counts" in html


def test_htmx_preview_returns_the_fragment_with_counts(role_client, likert_project, settings, tmp_path):
    settings.EXPORTS_DIR = tmp_path / "exports"
    client = role_client("researcher")
    url = reverse("exports:export_preview", args=[likert_project.pk])
    response = client.post(url, {**FORM, "min_margin": "2"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert 'id="preview"' in html and "4 pairs" in html
    # Without htmx the same post renders the whole page with the preview in it.
    full = client.post(url, {**FORM, "languages": ["sun"]}).content.decode()
    assert "<html" in full and "3 pairs" in full
    assert Export.objects.count() == 0 and not (tmp_path / "exports").exists()


def test_preview_shows_option_errors(role_client, pairwise_project):
    client = role_client("researcher")
    url = reverse("exports:export_preview", args=[pairwise_project.pk])
    html = client.post(url, {**FORM, "strategy": "scores"}, HTTP_HX_REQUEST="true").content.decode()
    assert "pairwise project exports with pairwise_majority, not scores" in html


def test_export_then_progress_then_download(
    role_client, likert_project, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.EXPORTS_DIR = tmp_path / "exports"
    client = role_client("researcher")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("exports:export_new", args=[likert_project.pk]), FORM)
    record = Export.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("exports:export_detail", args=[record.pk])
    assert record.created_by == client.user
    assert record.options["provenance"] == "crowd"  # stated on the form, written on the card
    page = client.get(response["Location"]).content.decode()
    assert "Succeeded" in page and reverse("exports:export_download", args=[record.pk]) in page
    fragment = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and 'id="export-progress"' in fragment
    listing = client.get(reverse("exports:export_list")).content.decode()
    assert reverse("exports:export_detail", args=[record.pk]) in listing and "train 6" in listing
    download = client.get(reverse("exports:export_download", args=[record.pk]))
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    assert "README.md" in archive.namelist()


def test_invalid_form_stays_on_the_page(role_client, likert_project):
    client = role_client("researcher")
    response = client.post(
        reverse("exports:export_new", args=[likert_project.pk]), {**FORM, "weights": "accuracy=2"}
    )
    assert response.status_code == 200
    assert "criteria not rated in this project: accuracy" in response.content.decode()
    assert Export.objects.count() == 0


def test_preview_names_the_strata_too_small_for_test(role_client, likert_project):
    client = role_client("researcher")
    url = reverse("exports:export_preview", args=[likert_project.pk])
    # Two prompts (analysis/ind, math/sun), half to test: one prompt goes, the other stratum gets none.
    form = {**FORM, "test_size": "0.5", "seed": "3"}
    html = client.post(url, form, HTTP_HX_REQUEST="true").content.decode()
    assert "train 3" in html and "test 3" in html
    assert "Too few prompts for a test prompt (these stay in train):" in html
    assert ("analysis / ind (1)" in html) != ("math / sun (1)" in html)
    html = client.post(url, form, HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "Prompt terlalu sedikit untuk masuk ke test (tetap di train):" in html


def test_option_refusals_read_in_the_pages_language(
    role_client, likert_project, pairwise_project, monkeypatch
):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr("exports.services.hub_token", lambda: None)
    client = role_client("researcher")
    for changed, said in [
        (
            {"weights": "accuracy=2", "push_to_hub": "timbang/prefs"},
            "kriteria yang tidak dinilai di proyek ini: accuracy; yang dinilai: relevance, fluency",
        ),
        (
            {"weights": "relevance=x"},
            "bobot &#x27;relevance=x&#x27; tidak valid: harus berbentuk kriteria=angka,...",
        ),
        ({"push_to_hub": "timbang/prefs"}, "tidak ada token Hugging Face: setel HF_TOKEN di server"),
    ]:
        page = client.post(
            reverse("exports:export_new", args=[likert_project.pk]),
            {**FORM, **changed},
            HTTP_ACCEPT_LANGUAGE="id",
        ).content.decode()
        assert said in page
        assert "criteria not rated" not in page and "expected criterion" not in page
    # The preview names the field by its label on the page, not by the option's code name.
    preview = client.post(
        reverse("exports:export_preview", args=[pairwise_project.pk]),
        {**FORM, "strategy": "scores", "min_annotators": "0"},
        HTTP_HX_REQUEST="true",
        HTTP_ACCEPT_LANGUAGE="id",
    ).content.decode()
    assert "min_annotators:" not in preview
    assert Export.objects.count() == 0


def test_a_strategy_the_project_cannot_use_is_named_in_indonesian_with_its_alternatives(
    role_client, likert_project, pairwise_project
):
    client = role_client("researcher")
    preview = client.post(
        reverse("exports:export_preview", args=[pairwise_project.pk]),
        {**FORM, "strategy": "scores"},
        HTTP_HX_REQUEST="true",
        HTTP_ACCEPT_LANGUAGE="id",
    ).content.decode()
    assert "proyek pairwise diekspor dengan pairwise_majority, bukan scores" in preview
    assert "strategy:" not in preview
    # Two strategies fit a likert project with a best pick: the page joins them with its own "or".
    preview = client.post(
        reverse("exports:export_preview", args=[likert_project.pk]),
        {**FORM, "strategy": "pairwise_majority"},
        HTTP_HX_REQUEST="true",
        HTTP_ACCEPT_LANGUAGE="id",
    ).content.decode()
    assert "proyek likert diekspor dengan scores atau best_vs_rest, bukan pairwise_majority" in preview
    english = client.post(
        reverse("exports:export_preview", args=[likert_project.pk]),
        {**FORM, "strategy": "pairwise_majority"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert "a likert project exports with scores or best_vs_rest, not pairwise_majority" in english
