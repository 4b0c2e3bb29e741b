"""A rating project exported as a Label Studio project reads back, through the Label Studio import, as the
same answers (under pseudonyms), so nobody is locked in."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotation import services
from annotation.domain.tool_studies import label_studio
from annotation.tool_files import read_study
from exports.families import kinds_for
from exports.services import ExportOptions, export_create
from tests.annotation.tool_studies import files

pytestmark = pytest.mark.django_db


def _export(project, tmp_path, settings, capture):
    settings.EXPORTS_DIR = tmp_path / "exports"
    with capture(execute=True):
        record = export_create(project=project, options=ExportOptions(kind="label-studio"))
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    return record


def _canonical(study):
    """Rows keyed without the annotator's name (the export pseudonymises them): sorted value lists."""
    by = {}
    for unit, _coder, criterion, value in study.long_rows():
        by.setdefault((unit, criterion), []).append(value)
    return {k: sorted(v, key=str) for k, v in by.items()}


def test_likert_project_round_trips(tmp_path, settings, django_capture_on_commit_callbacks):
    source = read_study(
        "label_studio", files.write_json(tmp_path / "in.json", files.label_studio_rating_tasks())
    )
    project = services.tool_study_import(study=source, name="Bolak-balik").project
    assert "label-studio" in kinds_for(project)
    record = _export(project, tmp_path, settings, django_capture_on_commit_callbacks)
    assert record.counts["rows"] == 4 and record.counts["annotations"] == 11
    tasks = json.loads(next((tmp_path / "exports").glob("**/tasks.json")).read_text())
    text = json.dumps(tasks)
    assert "@example.org" not in text and "ls-" not in text  # pseudonyms of this export only
    back = label_studio.parse(tasks, file="tasks.json")
    assert back.kind == "likert" and [c.name for c in back.criteria] == ["quality", "correct"]
    # Item ids and values come back; Label Studio user ids become this export's pseudonyms.
    assert _canonical(back) == {
        (f"{unit.split('/')[0]}/0", criterion): values
        for (unit, criterion), values in _canonical(source).items()
    }
    config = next((tmp_path / "exports").glob("**/label_config.xml")).read_text()
    assert '<Rating name="quality" toName="response_1" maxRating="5"/>' in config
    assert '<Choice value="Benar"/>' in config


def test_pairwise_project_round_trips(tmp_path, settings, django_capture_on_commit_callbacks):
    source = read_study(
        "label_studio", files.write_json(tmp_path / "pw.json", files.label_studio_pairwise_tasks())
    )
    project = services.tool_study_import(study=source, name="Pasangan").project
    _export(project, tmp_path, settings, django_capture_on_commit_callbacks)
    tasks = json.loads(next((tmp_path / "exports").glob("**/tasks.json")).read_text())
    assert all(t["meta"]["models"] == ["answer1", "answer2"] for t in tasks)
    back = label_studio.parse(tasks, file="tasks.json")
    votes = sorted((a.item_id.split("#")[0], a.vote) for a in back.answers)
    assert votes == sorted((a.item_id, a.vote) for a in source.answers)


def test_export_page_offers_and_previews_the_label_studio_format(role_client, tmp_path, settings):
    settings.EXPORTS_DIR = tmp_path / "exports"
    source = read_study(
        "label_studio", files.write_json(tmp_path / "in.json", files.label_studio_rating_tasks())
    )
    project = services.tool_study_import(study=source, name="Halaman ekspor").project
    client = role_client("researcher")
    page = client.get(reverse("exports:export_new", args=[project.pk])).content.decode()
    assert 'value="label-studio"' in page
    form = {
        "kind": "label-studio",
        "ordering": "weighted",
        "min_margin": "0",
        "min_annotators": "1",
        "test_size": "0",
    }
    form |= {
        "provenance": "crowd",
        "strategy": "",
        "weights": "",
        "min_agreement": "",
        "seed": "",
        "license": "",
    }
    form |= {"pretty_name": "", "push_to_hub": ""}
    html = client.post(reverse("exports:export_preview", args=[project.pk]), form, HTTP_HX_REQUEST="true")
    assert "4 Label Studio tasks" in html.content.decode() and "11 annotations" in html.content.decode()
    indonesian = client.post(
        reverse("exports:export_preview", args=[project.pk]),
        form,
        HTTP_HX_REQUEST="true",
        HTTP_ACCEPT_LANGUAGE="id",
    ).content.decode()
    assert "4 tugas Label Studio" in indonesian
