import html
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app.models import Dataset, DatasetImport, ImportMapping, Response
from datasets_app.services import import_progress_store
from tests.datasets_app.alpaca import alpaca_rows, write_alpaca_csv

pytestmark = pytest.mark.django_db


def upload(client, tmp_path, rows, name="pairs.csv", dataset="pairs"):
    body = write_alpaca_csv(tmp_path / name, rows).read_bytes()
    return client.post(
        reverse("datasets:import_upload"),
        {"file": SimpleUploadedFile(name, body, "text/csv"), "name": dataset},
    )


def mapping_post(**extra):
    data = {
        "use_mapping": "on",
        "col-id": "#row",
        "col-prompt": "instruction",
        "col-category": "dataset",
        "const-language": "ind",
        "resp-0-text": "output_1",
        "resp-0-model_column": "generator_1",
        "resp-1-text": "output_2",
        "resp-1-model_column": "generator_2",
        "keep_other_columns": "on",
    }
    return data | extra


def test_upload_shows_preview_with_suggested_mapping_then_imports(
    role_client, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    client = role_client("project_manager")
    response = upload(client, tmp_path, alpaca_rows(3))
    assert response.status_code == 302
    preview_url = response["Location"]
    page = client.get(preview_url).content.decode()
    assert "Jelaskan peribahasa nomor 0." in page and "generator_2" in page
    # The suggestion: prompt from instruction, the models from generator_1 / generator_2.
    assert re.search(r'name="col-prompt".*?<option value="instruction" selected', page, re.S)
    assert re.search(r'name="resp-1-model_column".*?<option value="generator_2" selected', page, re.S)
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(preview_url, mapping_post(save_mapping_as="alpaca"))
    assert done.status_code == 302
    record = DatasetImport.objects.get()
    assert done["Location"] == reverse("datasets:import_detail", args=[record.pk])
    status_page = client.get(done["Location"]).content.decode()
    assert "3 prompts, 6 responses" in status_page
    assert set(Response.objects.values_list("model_name", flat=True)) == {
        "sahabat-ai",
        "komodo-7b",
        "seallm-v3",
    }
    assert ImportMapping.objects.get(name="alpaca").mapping == record.mapping
    # The upload was consumed: its preview link is gone.
    assert client.get(preview_url).status_code == 404


def test_failed_import_lists_line_numbered_errors_and_writes_nothing(
    role_client, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    rows = alpaca_rows(6)
    rows[4]["instruction"] = ""
    client = role_client("researcher")
    preview_url = upload(client, tmp_path, rows)["Location"]
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(preview_url, mapping_post())
    page = client.get(done["Location"]).content.decode()
    assert "The import found 1 problem; nothing was written." in page
    assert "<td>line 6</td><td>instruction (prompt)</td><td>is required (or turns" in page
    assert Dataset.objects.count() == 0


def test_failed_import_page_in_indonesian_names_line_and_column_in_indonesian(
    role_client, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    rows = alpaca_rows(6)
    rows[4]["instruction"] = ""
    client = role_client("researcher")
    preview_url = upload(client, tmp_path, rows)["Location"]
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(preview_url, mapping_post())
    client.cookies["django_language"] = "id"
    page = client.get(done["Location"], HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert (
        "<td>baris 6</td><td>instruction (prompt)</td><td>wajib diisi (atau turns, daftar pesan pengguna)</td>"
        in page
    )
    assert "is required" not in page
    record = DatasetImport.objects.get()
    assert record.errors[0]["message"].startswith("is required (or turns")  # stored and API words unchanged


def test_running_import_shows_a_progress_bar_polled_by_htmx(role_client):
    record = DatasetImport.objects.create(name="big", file_format="csv", status="running")
    import_progress_store(import_id=record.pk, done=50_000, total=200_000)
    client = role_client("project_manager")
    fragment = client.get(reverse("datasets:import_detail", args=[record.pk]), headers={"HX-Request": "true"})
    html = fragment.content.decode()
    assert html.lstrip().startswith('<section id="import-status"')
    assert '<progress max="100" value="25"' in html and "50,000 records read / 200,000" in html
    assert 'hx-trigger="every 1s"' in html


def test_mapping_of_a_missing_column_is_refused_on_the_page(role_client, tmp_path, settings):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    client = role_client("project_manager")
    preview_url = upload(client, tmp_path, alpaca_rows(2))["Location"]
    response = client.post(preview_url, mapping_post(**{"col-prompt": "", "resp-0-text": "output_1"}))
    assert response.status_code == 400
    assert "columns.prompt: is required" in response.content.decode()
    assert DatasetImport.objects.count() == 0


def test_a_file_of_unknown_type_is_refused_at_upload(role_client, tmp_path, settings):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    client = role_client("project_manager")
    response = client.post(
        reverse("datasets:import_upload"),
        {"file": SimpleUploadedFile("notes.txt", b"hello"), "name": "x"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    # The page's advice is the page's (the command line's --format means nothing here).
    assert "notes.txt: cannot tell the format from the extension; use .jsonl, .csv or a .zip" in page
    assert "--format" not in page
    assert list((tmp_path / "uploads").iterdir()) == []
    client.cookies["django_language"] = "id"
    for name, content, said in (
        ("notes.txt", b"hello", "notes.txt: format tidak dapat dikenali dari ekstensinya"),
        ("ganda.csv", b"prompt,prompt\na,b\n", "ganda.csv: baris 1: nama kolom harus unik dan tidak kosong"),
    ):
        response = client.post(
            reverse("datasets:import_upload"),
            {"file": SimpleUploadedFile(name, content), "name": "x"},
            follow=True,  # a bad header shows when the preview reads the stored file
        )
        assert response.status_code == 400 and said in response.content.decode()
    assert list((tmp_path / "uploads").iterdir()) == []


def test_annotators_cannot_upload(role_client, tmp_path):
    client = role_client("annotator")
    assert upload(client, tmp_path, alpaca_rows(1)).status_code == 403


def test_hub_form_queues_a_hub_import_with_a_saved_mapping(
    role_client, tmp_path, settings, django_capture_on_commit_callbacks
):
    from datasets_app.domain.column_mapping import mapping_from_dict
    from datasets_app.services import import_mapping_save
    from tests.datasets_app.alpaca import MAPPING
    from tests.datasets_app.services.test_mapped_import import write_hub_stand_in

    write_hub_stand_in(tmp_path / "hub")
    settings.IMPORT_HUB_LOCAL_ROOT = str(tmp_path / "hub")
    import_mapping_save(name="alpaca-eval", mapping=mapping_from_dict(MAPPING))
    client = role_client("researcher")
    assert "alpaca-eval" in client.get(reverse("datasets:list")).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("datasets:import_hub"),
            {
                "dataset": "timbang-lab/pairs-regional",
                "config": "jav",
                "split": "train",
                "name": "jav-hub",
                "mapping_name": "alpaca-eval",
            },
        )
    record = DatasetImport.objects.get()
    assert response["Location"] == reverse("datasets:import_detail", args=[record.pk])
    page = client.get(response["Location"]).content.decode()
    assert "3 prompts, 6 responses" in page and "timbang-lab/pairs-regional" in page
    assert record.mapping == MAPPING | {"keep_other_columns": True}


def test_preview_shows_nested_fields_as_json_not_python(role_client, tmp_path, settings):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    client = role_client("project_manager")
    record = {
        "id": "p1",
        "category": "budaya",
        "language": "ind",
        "turns": ["Apa itu ketupat?", "Kapan disajikan?"],
        "responses": [{"model": "m1", "turns": ["Makanan dari beras.", "Saat Lebaran."]}],
        "meta": {"sumber": "uji", "sulit": True, "skor": None},
    }
    body = (json.dumps(record, ensure_ascii=False) + "\n").encode()
    response = client.post(
        reverse("datasets:import_upload"),
        {"file": SimpleUploadedFile("nested.jsonl", body, "application/jsonl"), "name": "nested"},
    )
    page = html.unescape(client.get(response["Location"]).content.decode())
    table = page[page.index('data-testid="preview"') : page.index("</table>")]
    assert '<td>["Apa itu ketupat?", "Kapan disajikan?"]</td>' in table
    assert '{"sumber": "uji", "sulit": true, "skor": null}' in table
    assert '[{"model": "m1", "turns": ["Makanan dari beras.", "Saat Lebaran."]}]' in table
    assert "{'" not in table and "['" not in table and "True" not in table and "None" not in table


def test_failed_import_page_links_back_to_the_upload_form(role_client):
    record = DatasetImport.objects.create(
        name="rusak",
        file_format="csv",
        status="failed",
        errors=[{"location": "line 2", "field": "prompt", "message": "is required"}],
    )
    client = role_client("project_manager")
    for lang, text in (("en", "Upload a corrected file"), ("id", "Unggah berkas yang sudah diperbaiki")):
        client.cookies["django_language"] = lang
        page = client.get(reverse("datasets:import_detail", args=[record.pk])).content.decode()
        link = re.search(r'<a href="([^"]+)" data-testid="import-again">([^<]+)</a>', page)
        assert link is not None, lang
        assert link.group(1) == reverse("datasets:list") + "#import" and link.group(2) == text
    # A running or finished import has nothing to upload again.
    record.status = "succeeded"
    record.save(update_fields=["status"])
    client.cookies["django_language"] = "en"
    page = client.get(reverse("datasets:import_detail", args=[record.pk])).content.decode()
    assert 'data-testid="import-again"' not in page
