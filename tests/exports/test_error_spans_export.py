"""The error spans of an MQM project as a recorded export: the MQM TSV (byte-stable against the imported
file), the Hugging Face dataset with its card (scores, agreement, what became of suggested spans), loaded
offline, and a project annotated in Timbang."""

from __future__ import annotations

import io
import zipfile
from io import StringIO
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation import services
from annotation.models import SpanSuggestion
from datasets_app.models import Dataset, TranslationUnit
from exports.families import kinds_for
from exports.models import Export
from exports.services import ExportOptions, export_create, export_preview
from tests.exports.conftest import load_offline

pytestmark = pytest.mark.django_db

HAND = Path(__file__).resolve().parents[1] / "annotation" / "domain" / "data" / "mqm_hand.tsv"
SUGGESTED = (
    "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment\torigin\toutcome\n"
    "A\td\t1\t1\tr1\tfive cats\t<v>empat</v> kucing\tAccuracy/Mistranslation\tMajor\tangka\tflags\taccepted\n"
    "A\td\t1\t1\tr1\tfive cats\tempat <v>kucing</v>\tStyle\tMinor\t\tllm\tremoved\n"
    "A\td\t1\t1\tr2\tfive cats\t<v>empat kucing</v>\tAccuracy/Mistranslation\tMinor\t\tflags\tedited\n"
)


@pytest.fixture
def raters(make_user):
    return {name: make_user("annotator", username=f"penilai-{name}") for name in ("r1", "r2")}


def _import(raters, text, name="WMT kecil"):
    return services.mqm_tsv_import(
        text=text, name=name, source_language="eng", target_language="ind", users=raters
    ).project


def _export(project, kind, tmp_path, settings, capture):
    settings.EXPORTS_DIR = tmp_path / "exports"
    with capture(execute=True):
        record = export_create(project=project, options=ExportOptions(kind=kind, license="CC-BY-4.0"))
    record.refresh_from_db()
    assert record.status == Export.Status.SUCCEEDED, record.error
    return record, Path(record.folder_path)


def test_the_tsv_export_gives_back_the_imported_file(
    raters, tmp_path, settings, django_capture_on_commit_callbacks
):
    project = _import(raters, HAND.read_text(encoding="utf-8"))
    assert kinds_for(project) == ("error-spans", "mqm-tsv")
    record, folder = _export(project, "mqm-tsv", tmp_path, settings, django_capture_on_commit_callbacks)
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "mqm.tsv"]
    written = (folder / "mqm.tsv").read_bytes()
    original = HAND.read_bytes()
    assert written.split(b"\n")[0] == original.split(b"\n")[0]
    assert sorted(written.split(b"\n")[1:]) == sorted(original.split(b"\n")[1:])
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "| 1 | sysA | 2.775 |" in card and "| 2 | sysB | 7.750 |" in card
    assert "character F1 0.282" in card and "No span was suggested" in card
    assert record.counts["rows"] == 8 and record.counts["spans"] == 8
    assert [s["system"] for s in record.counts["scores"]] == ["sysA", "sysB"]


def test_the_dataset_export_records_suggestions_and_loads_offline(
    raters, tmp_path, settings, django_capture_on_commit_callbacks
):
    project = _import(raters, SUGGESTED)
    assert export_preview(project=project, options=ExportOptions(kind="error-spans"))["suggestions"] == {
        "flags:accepted": 1,
        "flags:edited": 1,
        "llm:removed": 1,
    }
    record, folder = _export(project, "error-spans", tmp_path, settings, django_capture_on_commit_callbacks)
    rows = pq.read_table(folder / "data" / "train-00000-of-00001.parquet").to_pylist()
    by_rater = {row["rater"]: row for row in rows}
    r1 = by_rater["r1"]
    assert r1["mqm_points"] == 5.0  # the removed suggestion counts in no score
    assert [(s["text"], s["origin"], s["outcome"], s["comment"]) for s in r1["spans"]] == [
        ("empat", "flags", "accepted", "angka"),
        ("kucing", "llm", "removed", ""),
    ]
    assert by_rater["r2"]["spans"][0]["outcome"] == "edited" and by_rater["r2"]["mqm_points"] == 1.0
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "| llm | removed | 1 |" in card and "| 1 | A | 3.000 |" in card
    loaded = load_offline(folder, tmp_path)
    assert len(loaded["train"]["rows"]) == 2 and "spans" in loaded["train"]["columns"]
    loaded_r1 = next(row for row in loaded["train"]["rows"] if row["rater"] == "r1")
    assert [s["outcome"] for s in loaded_r1["spans"]] == ["accepted", "removed"]


def test_a_project_annotated_in_timbang(make_user, tmp_path, settings, django_capture_on_commit_callbacks):
    dataset = Dataset.objects.create(name="jawa", kind=Dataset.Kind.TRANSLATIONS)
    for ext, system, target in (
        ("u1", "model-a", "Aku tuku lima pelem."),
        ("u2", "model-b", "Kula tumbas pelem."),
    ):
        TranslationUnit.objects.create(
            dataset=dataset,
            external_id=ext,
            source_text="Saya membeli lima mangga.",
            source_language="ind",
            target_language="jav",
            register="krama",
            translation_text=target,
            translator_name=system,
            status="accepted",
        )
    project = services.project_create(
        dataset=dataset, name="MQM jawa", kind="translation_mqm", overlap=1, seed=3
    )
    person = make_user("annotator")
    services.project_member_add(project=project, user=person, group=project.groups.get())
    services.project_activate(project=project)
    while (work := services.assignment_claim(project=project, user=person)) is not None:
        if work.task.translation_unit.translator_name == "model-a":
            payload = {"spans": [{"start": 0, "end": 3, "category": "fluency/register", "severity": "major"}]}
        else:
            payload = {"no_error": True}
        services.assignment_submit(token=work.token, user=person, payload=payload)
    assert not SpanSuggestion.objects.exists()
    record, folder = _export(project, "mqm-tsv", tmp_path, settings, django_capture_on_commit_callbacks)
    lines = (folder / "mqm.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t")[9:] == ["comment", "lp", "register", "origin", "outcome"]
    body = sorted(line.split("\t") for line in lines[1:])
    assert [(b[0], b[1], b[3], b[6], b[7], b[8], b[10], b[11]) for b in body] == [
        (
            "model-a",
            "jawa",
            "1",
            "<v>Aku</v> tuku lima pelem.",
            "Fluency/Register",
            "Major",
            "ind-jav",
            "krama",
        ),
        ("model-b", "jawa", "1", "Kula tumbas pelem.", "No-error", "No-error", "ind-jav", "krama"),
    ]
    assert body[0][4] == body[1][4] and body[0][4] not in (str(person.pk), person.username)  # a pseudonym
    assert [s["system"] for s in record.counts["scores"]] == ["model-b", "model-a"]


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", ("8 answers", "8 error spans", "Error spans (MQM TSV file)", "2.775")),
        ("id", ("8 jawaban", "8 rentang kesalahan", "Rentang kesalahan (berkas TSV MQM)", "2,775")),
    ],
)
def test_from_the_page_in_both_languages(
    raters, role_client, tmp_path, settings, django_capture_on_commit_callbacks, language, words
):
    settings.EXPORTS_DIR = tmp_path / "exports"
    project = _import(raters, HAND.read_text(encoding="utf-8"))
    client = role_client("researcher")
    headers = {"HTTP_ACCEPT_LANGUAGE": language}
    listing = client.get(reverse("exports:export_list"), **headers).content.decode()
    assert reverse("exports:export_new", args=[project.pk]) in listing
    form_page = client.get(reverse("exports:export_new", args=[project.pk]), **headers).content.decode()
    assert 'value="mqm-tsv"' in form_page and words[2] in form_page
    form = {"kind": "mqm-tsv", "license": "", "pretty_name": "", "push_to_hub": ""}
    preview = client.post(
        reverse("exports:export_preview", args=[project.pk]), form, HTTP_HX_REQUEST="true", **headers
    ).content.decode()
    assert words[0] in preview and words[1] in preview
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("exports:export_new", args=[project.pk]), form, **headers)
    record = Export.objects.get()
    assert response.status_code == 302 and record.kind == "mqm-tsv"
    page = client.get(response["Location"], **headers).content.decode()
    assert 'data-testid="system-scores"' in page and words[3] in page
    download = client.get(reverse("exports:export_download", args=[record.pk]))
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    assert sorted(archive.namelist()) == ["README.md", "mqm.tsv"]


def test_from_the_command_line(raters, tmp_path, settings):
    settings.EXPORTS_DIR = tmp_path / "exports"
    project = _import(raters, HAND.read_text(encoding="utf-8"))
    out = tmp_path / "out"
    call_command(
        "export_preferences",
        "--project",
        str(project.pk),
        "--out",
        str(out),
        "--format",
        "mqm-tsv",
        stdout=StringIO(),
    )
    written = (out / "mqm.tsv").read_text(encoding="utf-8").splitlines()
    assert sorted(written[1:]) == sorted(HAND.read_text(encoding="utf-8").splitlines()[1:])
