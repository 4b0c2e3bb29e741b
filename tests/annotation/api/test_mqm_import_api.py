"""``POST /api/v1/projects/import-mqm``: the MQM TSV import for scripts, as text (JSON) or as a file
(multipart); a bad file answers 400 with every problem by line and column and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import ErrorSpan, Project

pytestmark = pytest.mark.django_db

HAND = Path(__file__).resolve().parents[1] / "domain" / "data" / "mqm_hand.tsv"
FIELDS = {"name": "WMT kecil", "source_language": "eng", "target_language": "ind"}


@pytest.fixture
def manager_api(make_user):
    api = APIClient()
    api.force_authenticate(make_user("project_manager"))
    return api


def test_import_as_json_text(manager_api):
    response = manager_api.post(
        reverse("api-mqm-import"), {"text": HAND.read_text(encoding="utf-8"), **FIELDS}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["units"], body["ratings"], body["spans"]) == (4, 8, 8)
    assert body["raters"] == {"r1": "wmt-kecil-r1", "r2": "wmt-kecil-r2"}
    assert ErrorSpan.objects.filter(assignment__project_id=body["project"]).count() == 8


def test_import_as_a_file(manager_api):
    upload = SimpleUploadedFile("mqm.tsv", HAND.read_bytes())
    response = manager_api.post(reverse("api-mqm-import"), {"file": upload, **FIELDS, "protocol": "mqm"})
    assert response.status_code == 201, response.content
    assert Project.objects.get().kind == "translation_mqm"


def test_a_bad_file_answers_400_and_writes_nothing(manager_api):
    bad = HAND.read_text(encoding="utf-8").replace("pukul <v>sepuluh</v>", "pukul <v>sepuluh")
    response = manager_api.post(reverse("api-mqm-import"), {"text": bad, **FIELDS}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0].startswith("line 2, column target: needs exactly one <v>")
    assert not Project.objects.exists()
    neither = manager_api.post(reverse("api-mqm-import"), FIELDS, format="json")
    assert neither.status_code == 400 and "text" in neither.json()
