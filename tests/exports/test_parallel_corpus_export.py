"""The final parallel corpus of a translation project as a recorded export: rows, card, zip, pseudonyms,
offline loading, reproduction from the stored options, and the page and API that create it."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.urls import reverse
from huggingface_hub import DatasetCard

from annotation import services
from datasets_app.models import TranslationUnit
from exports.models import Export
from exports.selectors import annotator_pseudonym, person_pseudonym
from exports.services import ExportInvalid, ExportOptions, export_create, export_preview
from tests.annotation.conftest import build_translation_dataset
from tests.exports.conftest import exported_text, load_offline

pytestmark = pytest.mark.django_db

TRANSLATOR = ("siti.penerjemah", "siti.penerjemah@example.org")
REVIEWER = ("budi.pemeriksa", "budi.pemeriksa@example.org")
IMPORTED_NAME = "dewi.impor.rahasia"
# u00 keeps a number flag ("lima" is missing); u04 is fixed by the reviewer.
TEXTS = {
    "u00": ("Saya makan lima ketupat.", "Kula nedha ketupat."),
    "u01": (None, "Ibu tindak peken."),
    "u04": (None, "Kula sami ngentosi bis."),
}
REVISED = "Ibu tindak dhateng peken enjing menika."
FIXED = "Kula sami ngentosi bis wonten ing halte."


def _submit(project, user, payload) -> None:
    work = services.assignment_claim(project=project, user=user)
    services.assignment_submit(token=work.token, user=user, payload=payload(work))


@pytest.fixture
def corpus_project(make_user):
    """Five units ind -> jav. u00 accepted with a flag, u01 rejected then accepted (2 rounds), u02 skipped
    by the translator (never translated: not in the corpus), u03 imported as accepted (0 rounds, a name
    and no user, register ngoko), u04 fixed by the reviewer. Returns the review project."""
    dataset = build_translation_dataset(n_units=5)
    dataset.license = "CC-BY-SA-4.0"
    dataset.save()
    units = {u.external_id: u for u in TranslationUnit.objects.filter(dataset=dataset)}
    units["u00"].source_text = TEXTS["u00"][0]
    units["u00"].save()
    TranslationUnit.objects.filter(pk=units["u03"].pk).update(
        status="accepted",
        translation_text="Adhik sinau maca.",
        translator_name=IMPORTED_NAME,
        register="ngoko",
    )
    translator = make_user("annotator", username=TRANSLATOR[0], email=TRANSLATOR[1])
    reviewer = make_user("annotator", username=REVIEWER[0], email=REVIEWER[1])
    translate = services.project_create(
        dataset=dataset, name="Terjemah", kind="translation", overlap=1, seed=5
    )
    review = services.project_create(
        dataset=dataset, name="Periksa terjemahan", kind="translation_review", overlap=1, seed=5
    )
    for project, user in ((translate, translator), (review, reviewer)):
        services.project_member_add(project=project, user=user, group=project.groups.get())
        services.project_activate(project=project)

    while (work := services.assignment_claim(project=translate, user=translator)) is not None:
        unit = work.task.translation_unit.external_id
        if unit == "u02":
            services.assignment_skip(token=work.token, user=translator, reason="tidak tahu")
        else:
            services.assignment_submit(
                token=work.token, user=translator, payload={"translation": TEXTS[unit][1]}
            )
    verdicts = {
        "u00": {"verdict": "accept"},
        "u01": {"verdict": "reject", "error_categories": ["fluency"], "comment": "Kurang lengkap."},
        "u04": {"verdict": "fix", "fixed_text": FIXED},
    }
    while (check := services.assignment_claim(project=review, user=reviewer)) is not None:
        unit = check.task.translation_unit.external_id
        services.assignment_submit(token=check.token, user=reviewer, payload=verdicts[unit])
    _submit(translate, translator, lambda w: {"translation": REVISED})
    _submit(review, reviewer, lambda w: {"verdict": "accept"})
    review.refresh_from_db()
    review.people = (translator, reviewer)
    return review


def _run(project, settings, tmp_path, capture, **options) -> Export:
    settings.EXPORTS_DIR = tmp_path / "exports"
    with capture(execute=True):
        record = export_create(project=project, options=ExportOptions(kind="", **options))
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    return record


def test_parallel_corpus_rows_card_zip_and_offline_load(
    corpus_project, settings, tmp_path, django_capture_on_commit_callbacks
):
    translator, _ = corpus_project.people
    record = _run(corpus_project, settings, tmp_path, django_capture_on_commit_callbacks)
    assert record.kind == "parallel-corpus" and record.strategy == ""
    folder = Path(record.folder_path)
    loaded = load_offline(folder, tmp_path)
    assert list(loaded) == ["train"]
    assert loaded["train"]["columns"] == [
        "id",
        "source",
        "target",
        "source_language",
        "target_language",
        "register",
        "translator",
        "n_rounds",
        "fixed_by_reviewer",
        "flags",
    ]
    rows = {r["id"]: r for r in loaded["train"]["rows"]}
    # u02 was never translated; the other four are accepted.
    assert sorted(rows) == ["u00", "u01", "u03", "u04"]
    user_name = annotator_pseudonym(project=corpus_project, user_id=translator.pk)
    imported = person_pseudonym(project=corpus_project, name=IMPORTED_NAME)
    assert imported != user_name and imported.startswith("ann-")
    summary = {
        k: (r["target"], r["register"], r["translator"], r["n_rounds"], r["fixed_by_reviewer"], r["flags"])
        for k, r in rows.items()
    }
    assert summary == {
        "u00": ("Kula nedha ketupat.", "krama", user_name, 1, False, ["number_mismatch"]),
        "u01": (REVISED, "krama", user_name, 2, False, []),
        "u03": ("Adhik sinau maca.", "ngoko", imported, 0, False, []),
        "u04": (FIXED, "krama", user_name, 1, True, []),
    }
    assert (rows["u00"]["source"], rows["u00"]["source_language"], rows["u00"]["target_language"]) == (
        "Saya makan lima ketupat.",
        "ind",
        "jav",
    )

    card = DatasetCard.load(folder / "README.md")
    assert card.data.language == ["ind", "jav"]
    assert card.data.license == "cc-by-sa-4.0"
    assert card.data.task_categories == ["translation"]
    # 3 krama units (u00, u01, u04) and 1 ngoko unit (u03).
    assert "| ind | jav | krama | 3 |" in card.text and "| ind | jav | ngoko | 1 |" in card.text
    assert "| jav | 4 |" in card.text
    assert record.counts["rows"] == 4 and record.counts["language_pairs"] == {"ind-jav": 4}

    with zipfile.ZipFile(record.zip_path) as archive:
        assert sorted(archive.namelist()) == ["README.md", "data/train-00000-of-00001.parquet"]


def test_no_username_email_or_imported_name_in_any_exported_file(
    corpus_project, settings, tmp_path, django_capture_on_commit_callbacks
):
    record = _run(corpus_project, settings, tmp_path, django_capture_on_commit_callbacks)
    texts = exported_text(Path(record.folder_path))
    with zipfile.ZipFile(record.zip_path) as archive:
        texts["zip"] = b"".join(archive.read(n) for n in archive.namelist()).decode("latin-1")
    assert len(texts) == 3
    for secret in (*TRANSLATOR, *REVIEWER, IMPORTED_NAME):
        assert not [path for path, text in texts.items() if secret in text], secret


def test_stored_options_reproduce_the_same_rows(
    corpus_project, settings, tmp_path, django_capture_on_commit_callbacks
):
    first = _run(corpus_project, settings, tmp_path, django_capture_on_commit_callbacks, pretty_name="Korpus")
    assert first.options["kind"] == "parallel-corpus" and first.options["pretty_name"] == "Korpus"
    again = _run(
        corpus_project,
        settings,
        tmp_path,
        django_capture_on_commit_callbacks,
        **{k: v for k, v in first.options.items() if k != "kind"},
    )
    assert again.options == first.options
    name = "data/train-00000-of-00001.parquet"
    tables = [pq.read_table(Path(r.folder_path) / name) for r in (first, again)]
    assert tables[0].equals(tables[1])
    card = (Path(again.folder_path) / "README.md").read_text()
    assert card == (Path(first.folder_path) / "README.md").read_text()


def test_options_that_do_not_apply_are_refused(corpus_project):
    preview = export_preview(project=corpus_project, options=ExportOptions(kind=""))
    assert (preview["format"], preview["rows"]) == ("parallel-corpus", 4)
    bad = [
        ({"kind": "hf"}, "format"),
        ({"kind": "question-set"}, "format"),
        ({"kind": "", "test_size": 0.1}, "split"),
        ({"kind": "", "languages": ["jav"]}, "languages"),
        ({"kind": "", "max_ambiguous": 2}, "max_ambiguous"),
    ]
    for options, key in bad:
        with pytest.raises(ExportInvalid) as caught:
            export_create(project=corpus_project, options=ExportOptions(**options))
        assert key in caught.value.errors, options
    assert not Export.objects.exists()


def test_export_page_and_api_offer_the_corpus(
    corpus_project, role_client, api_client_for, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.EXPORTS_DIR = tmp_path / "exports"
    client = role_client("project_manager")
    listing = client.get(reverse("exports:export_list")).content.decode()
    assert reverse("exports:export_new", args=[corpus_project.pk]) in listing
    page = client.get(reverse("exports:export_new", args=[corpus_project.pk])).content.decode()
    assert 'value="parallel-corpus"' in page and 'value="hf"' not in page and 'name="strategy"' not in page
    form = {"kind": "parallel-corpus", "license": "", "pretty_name": "", "push_to_hub": ""}
    preview = client.post(
        reverse("exports:export_preview", args=[corpus_project.pk]), form, HTTP_HX_REQUEST="true"
    )
    assert "4 accepted translations" in preview.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("exports:export_new", args=[corpus_project.pk]), form)
    record = Export.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/{record.pk}/")
    detail = client.get(reverse("exports:export_detail", args=[record.pk])).content.decode()
    assert "4 accepted translations" in detail and "ind-jav 4" in detail
    download = client.get(reverse("exports:export_download", args=[record.pk]))
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"

    api = api_client_for("researcher")
    refused = api.post(
        "/api/v1/exports/create", {"project": corpus_project.pk, "format": "hf"}, format="json"
    )
    assert refused.status_code == 400 and "format" in refused.json()["errors"]
    with django_capture_on_commit_callbacks(execute=True):
        created = api.post("/api/v1/exports/create", {"project": corpus_project.pk}, format="json")
    assert created.status_code == 202 and created.json()["format"] == "parallel-corpus"
    status = api.get(f"/api/v1/exports/{created.json()['id']}").json()
    assert status["status"] == "succeeded" and status["counts"]["rows"] == 4


def test_command_exports_the_corpus_by_default(corpus_project, tmp_path, capsys):
    call_command(
        "export_preferences", "--project", str(corpus_project.pk), "--out", str(tmp_path / "out"), "--json"
    )
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (result["format"], result["counts"]["rows"], result["zip"]) == ("parallel-corpus", 4, None)
    assert result["files"] == ["README.md", "data/train-00000-of-00001.parquet"]
    assert Export.objects.get().options["kind"] == "parallel-corpus"
