"""The MQM import page: a manager uploads a WMT/Anthea TSV file and lands on the new project; a bad file
lists its problems by line and column and writes nothing. In English and Indonesian."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import ErrorSpan, Project

pytestmark = pytest.mark.django_db

HAND = Path(__file__).resolve().parents[1] / "domain" / "data" / "mqm_hand.tsv"


def _form(content: bytes, name: str = "WMT kecil") -> dict:
    return {
        "file": SimpleUploadedFile("mqm.tsv", content, content_type="text/tab-separated-values"),
        "name": name,
        "source_language": "eng",
        "target_language": "ind",
        "protocol": "translation_mqm",
        "rater_prefix": "",
    }


@pytest.mark.parametrize(
    ("language", "words"),
    [
        (
            "en",
            ("Import an MQM file", "Imported 8 ratings with 8 spans on 4 segments.", "A tab-separated file"),
        ),
        (
            "id",
            (
                "Impor berkas MQM",
                "Mengimpor 8 penilaian dengan 8 rentang pada 4 segmen.",
                "Berkas dengan pemisah tab",
            ),
        ),
    ],
)
def test_a_manager_imports_a_file_from_the_page(role_client, language, words):
    client = role_client("project_manager")
    headers = {"HTTP_ACCEPT_LANGUAGE": language}
    listing = client.get(reverse("annotation:manage_list"), **headers).content.decode()
    assert reverse("annotation:manage_mqm_import") in listing and words[0] in listing
    page = client.get(reverse("annotation:manage_mqm_import"), **headers).content.decode()
    assert words[0] in page and words[2] in page and 'name="file"' in page
    response = client.post(
        reverse("annotation:manage_mqm_import"), _form(HAND.read_bytes()), follow=True, **headers
    )
    project = Project.objects.get()
    assert response.redirect_chain[-1][0] == reverse("annotation:manage_detail", args=[project.pk])
    assert words[1] in response.content.decode()
    assert project.kind == "translation_mqm" and project.created_by == client.user
    assert ErrorSpan.objects.filter(assignment__project=project).count() == 8
    scores = client.get(
        reverse("annotation:manage_span_scores", args=[project.pk]), **headers
    ).content.decode()
    assert "sysA" in scores and "sysB" in scores


@pytest.mark.parametrize(
    ("language", "heading"), [("en", "The file was not imported"), ("id", "Berkas tidak diimpor")]
)
def test_a_bad_file_lists_its_problems_and_writes_nothing(role_client, language, heading):
    client = role_client("project_manager")
    bad = (
        HAND.read_text(encoding="utf-8")
        .replace("pukul <v>sepuluh</v>", "pukul <v>sepuluh")
        .replace("\tMinor\t\n", "\tCritical\t\n", 1)
    )
    response = client.post(
        reverse("annotation:manage_mqm_import"), _form(bad.encode()), HTTP_ACCEPT_LANGUAGE=language
    )
    html = response.content.decode()
    assert response.status_code == 400 and heading in html
    assert "line 2, column target: needs exactly one &lt;v&gt; and one &lt;/v&gt;" in html
    assert not Project.objects.exists()


def test_a_file_that_is_not_utf8_is_refused(role_client):
    client = role_client("project_manager")
    response = client.post(reverse("annotation:manage_mqm_import"), _form("caf\xe9".encode("latin-1")))
    assert response.status_code == 400 and "not UTF-8" in response.content.decode()
    assert not Project.objects.exists()
