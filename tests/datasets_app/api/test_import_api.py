import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from datasets_app.models import Dataset, DatasetImport, Prompt
from tests.datasets_app.services.test_dataset_import import prompt_rows

pytestmark = pytest.mark.django_db
URL = "/api/v1/datasets/import"


def jsonl_upload(rows, name="data.jsonl"):
    body = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode()
    return SimpleUploadedFile(name, body, content_type="application/x-ndjson")


def test_import_returns_counts(api_client_for):
    api = api_client_for("project_manager")
    response = api.post(URL, {"file": jsonl_upload(prompt_rows(3)), "name": "api"}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json() == {
        "dataset": "api",
        "dataset_id": Dataset.objects.get().pk,
        "kind": "prompts",
        "prompts": 3,
        "responses": 6,
    }
    assert Dataset.objects.get().created_by == api.user


def test_bad_line_gives_400_with_every_error_and_writes_nothing(api_client_for):
    rows = prompt_rows(9)
    rows[6]["category"] = None
    rows[8]["language"] = "xx"
    api = api_client_for("researcher")
    response = api.post(URL, {"file": jsonl_upload(rows), "name": "bad"}, format="multipart")
    assert response.status_code == 400
    body = response.json()
    assert [(e["location"], e["field"]) for e in body["errors"]] == [
        ("line 7", "category"),
        ("line 9", "language"),
    ]
    assert body["n_errors"] == 2
    assert Dataset.objects.count() == 0 and Prompt.objects.count() == 0


def test_annotators_cannot_import(api_client_for):
    api = api_client_for("annotator")
    response = api.post(URL, {"file": jsonl_upload(prompt_rows(1)), "name": "x"}, format="multipart")
    assert response.status_code == 403
    assert Dataset.objects.count() == 0


def test_anonymous_gets_401_or_403(client):
    response = client.post(URL, {"name": "x"})
    assert response.status_code in (401, 403)


def test_zip_of_a_hugging_face_folder(api_client_for, tmp_path):
    import datasets

    folder = tmp_path / "hfdata"
    rows = prompt_rows(2)
    for row in rows:
        row["responses"] = json.dumps(row["responses"])
    datasets.Dataset.from_list(rows).to_parquet(str(folder / "data" / "train-00000-of-00001.parquet"))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for file in folder.rglob("*"):
            archive.write(file, file.relative_to(tmp_path))
    upload = SimpleUploadedFile("hfdata.zip", buffer.getvalue(), content_type="application/zip")
    response = api_client_for("project_manager").post(URL, {"file": upload, "name": "hf"}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["prompts"] == 2


def test_background_import_is_recorded_and_run(api_client_for, django_capture_on_commit_callbacks):
    api = api_client_for("project_manager")
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            URL, {"file": jsonl_upload(prompt_rows(4)), "name": "bg", "background": True}, format="multipart"
        )
    assert response.status_code == 202
    record = DatasetImport.objects.get(pk=response.json()["id"])
    assert record.status == "succeeded" and record.counts == {"prompts": 4, "responses": 8}
    detail = api.get(reverse("api-dataset-import-detail", args=[record.pk])).json()
    assert detail["status"] == "succeeded" and detail["dataset"] == Dataset.objects.get(name="bg").pk


def test_background_import_failure_keeps_errors(api_client_for, django_capture_on_commit_callbacks):
    rows = prompt_rows(3)
    rows[1]["id"] = ""
    api = api_client_for("project_manager")
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            URL, {"file": jsonl_upload(rows), "name": "bg", "background": True}, format="multipart"
        )
    record = DatasetImport.objects.get(pk=response.json()["id"])
    assert record.status == "failed"
    assert record.errors[0]["location"] == "line 2" and record.errors[0]["field"] == "id"
    assert not Dataset.objects.filter(name="bg").exists()


def test_dataset_list_api(api_client_for):
    api = api_client_for("project_manager")
    api.post(URL, {"file": jsonl_upload(prompt_rows(2)), "name": "listed"}, format="multipart")
    body = api.get("/api/v1/datasets/").json()
    assert (
        body["count"] == 1 and body["results"][0]["name"] == "listed" and body["results"][0]["n_prompts"] == 2
    )


def test_schema_is_served(api_client_for):
    response = api_client_for("researcher").get("/api/schema/")
    assert response.status_code == 200
    assert b"/api/v1/datasets/import" in response.content
