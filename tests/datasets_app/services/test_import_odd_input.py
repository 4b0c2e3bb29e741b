"""NUL bytes and over-deep nesting in import files are line-numbered errors like any other, in JSONL, CSV
and Hugging Face folders; nothing is written. Messages name the file the user sent, not the stored upload."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from datasets_app.domain.untrusted_json import MAX_JSON_DEPTH
from datasets_app.models import Dataset, Prompt, Response
from datasets_app.services import ImportFailed, dataset_import
from datasets_app.uploads import store_upload
from tests.datasets_app.services.test_dataset_import import prompt_rows, write_jsonl

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000


def problems(caught) -> list[tuple[str, str, str]]:
    return [(e.location, e.field, e.message) for e in caught.value.errors]


def nothing_written() -> bool:
    return Dataset.objects.count() == Prompt.objects.count() == Response.objects.count() == 0


def test_jsonl_escaped_nul_in_a_field_names_line_and_field(tmp_path):
    rows = prompt_rows(4)
    rows[2]["prompt"] = "Berapa\x00 tiga?"
    rows[3]["responses"][1]["text"] = "\x00"
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=write_jsonl(tmp_path / "nul.jsonl", rows), name="nul")
    message = "holds a NUL character (\\u0000), which cannot be stored"
    assert problems(caught) == [("line 3", "prompt", message), ("line 4", "responses[1].text", message)]
    assert nothing_written()


def test_jsonl_raw_nul_byte_names_line_and_column(tmp_path):
    path = tmp_path / "raw.jsonl"
    lines = [json.dumps(r) for r in prompt_rows(2)]
    path.write_bytes(lines[0].encode() + b"\n" + b'{"id": "p2",\x00 "x": 1}\n')
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=path, name="raw")
    assert problems(caught) == [("line 2", "", "holds a NUL byte at column 13")]
    assert nothing_written()


def test_jsonl_nesting_past_the_decoders_limit_is_a_line_error(tmp_path):
    path = tmp_path / "deep.jsonl"
    lines = [json.dumps(r) for r in prompt_rows(2)]
    path.write_text(lines[0] + "\n" + DEEP + "\n" + lines[1] + "\n", encoding="utf-8")
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=path, name="deep")
    assert problems(caught) == [("line 2", "", f"is nested deeper than {MAX_JSON_DEPTH} levels")]
    assert nothing_written()


def test_jsonl_meta_nested_past_the_limit_names_the_field(tmp_path):
    rows = prompt_rows(1)
    meta: dict = {}
    inner = meta
    for _ in range(MAX_JSON_DEPTH + 5):
        inner["a"] = {}
        inner = inner["a"]
    rows[0]["meta"] = meta
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=write_jsonl(tmp_path / "meta.jsonl", rows), name="meta")
    assert problems(caught) == [("line 1", "meta", f"is nested deeper than {MAX_JSON_DEPTH} levels")]


def test_csv_nul_byte_in_a_cell_names_line_and_column(tmp_path):
    path = tmp_path / "nul.csv"
    path.write_bytes(b"id,category,language,prompt\nc1,math,ind,ok\nc2,math,ind,sat\x00u\n")
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=path, name="csv")
    assert problems(caught) == [("line 3", "prompt", "holds a NUL byte")]
    assert nothing_written()


def test_csv_json_cell_with_nul_or_deep_nesting_names_the_cell(tmp_path):
    path = tmp_path / "cells.csv"
    escaped_nul = json.dumps([{"model": "a", "text": "x\x00"}]).replace('"', '""')
    path.write_text(
        f'id,category,language,prompt,responses\nc1,math,ind,ok,"{escaped_nul}"\nc2,math,ind,ok,{DEEP}\n',
        encoding="utf-8",
    )
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=path, name="cells")
    assert problems(caught) == [
        ("line 2", "responses[0].text", "holds a NUL character (\\u0000), which cannot be stored"),
        ("line 3", "responses", f"is nested deeper than {MAX_JSON_DEPTH} levels"),
    ]
    assert nothing_written()


def test_hugging_face_row_with_nul_names_split_row_and_field(tmp_path):
    import datasets

    rows = prompt_rows(3)
    for row in rows:
        row["responses"] = json.dumps(row["responses"])
    rows[1]["category"] = "ma\x00th"
    folder = tmp_path / "hf"
    datasets.Dataset.from_list(rows).to_parquet(str(folder / "data" / "train-00000-of-00001.parquet"))
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=folder, name="hf")
    assert problems(caught) == [
        ("train row 2", "category", "holds a NUL character (\\u0000), which cannot be stored")
    ]
    assert nothing_written()


def test_a_damaged_hugging_face_data_file_is_an_error_not_a_crash(tmp_path):
    folder = tmp_path / "hf"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "train.jsonl").write_bytes(bytes(4096))
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=folder, name="hf", source="my-folder.zip")
    [error] = caught.value.errors
    assert error.field == "file"
    assert (
        error.message.startswith("my-folder.zip: ") and "not a readable Hugging Face dataset" in error.message
    )
    assert str(folder) not in error.message
    assert nothing_written()


def test_errors_name_the_file_the_user_sent_not_the_stored_upload(settings, tmp_path):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    upload = SimpleUploadedFile("prompts for review.txt", b'{"id": 1}\n')
    path, file_format = store_upload(upload, file_format=None)
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=path, name="x", file_format=file_format or None, source=upload.name)
    [error] = caught.value.errors
    assert error.message == (
        "prompts for review.txt: cannot tell the format from the extension; pass --format jsonl|csv|hf"
    )
    assert path.name not in caught.value.summary()
