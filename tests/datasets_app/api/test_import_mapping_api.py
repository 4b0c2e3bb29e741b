import json

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile

from datasets_app.models import Dataset, DatasetImport, ImportMapping, Response
from tests.datasets_app.alpaca import MAPPING, alpaca_rows, write_alpaca_csv

pytestmark = pytest.mark.django_db
URL = "/api/v1/datasets/import"


def csv_upload(tmp_path, rows, name="pairs.csv"):
    return SimpleUploadedFile(name, write_alpaca_csv(tmp_path / name, rows).read_bytes(), "text/csv")


def test_mapping_saved_by_name_is_reused_by_the_next_import(api_client_for, tmp_path):
    api = api_client_for("researcher")
    first = api.post(
        URL,
        {
            "file": csv_upload(tmp_path, alpaca_rows(3)),
            "name": "round-1",
            "mapping": json.dumps(MAPPING),
            "save_mapping_as": "alpaca-eval",
        },
        format="multipart",
    )
    assert first.status_code == 201, first.content
    assert first.json()["responses"] == 6
    second = api.post(
        URL,
        {"file": csv_upload(tmp_path, alpaca_rows(2)), "name": "round-2", "mapping_name": "alpaca-eval"},
        format="multipart",
    )
    assert second.status_code == 201, second.content
    assert set(
        Response.objects.filter(prompt__dataset__name="round-2").values_list("model_name", flat=True)
    ) == {"sahabat-ai", "komodo-7b", "seallm-v3"}
    listed = api.get("/api/v1/datasets/import-mappings/").json()
    items = listed["results"] if isinstance(listed, dict) else listed
    assert [m["name"] for m in items] == ["alpaca-eval"]


def test_background_import_reuses_the_mapping_of_an_earlier_import(
    api_client_for, tmp_path, django_capture_on_commit_callbacks
):
    earlier = DatasetImport.objects.create(name="earlier", file_format="csv", mapping=MAPPING)
    api = api_client_for("project_manager")
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            URL,
            {
                "file": csv_upload(tmp_path, alpaca_rows(4)),
                "name": "again",
                "mapping_from_import": earlier.pk,
                "background": "true",
            },
            format="multipart",
        )
    assert response.status_code == 202, response.content
    detail = api.get(f"/api/v1/datasets/imports/{response.json()['id']}").json()
    assert detail["status"] == "succeeded" and detail["counts"] == {"prompts": 4, "responses": 8}
    assert detail["mapping"]["responses"][1] == {"text": "output_2", "model_column": "generator_2"}


def test_unknown_mapping_name_is_a_400_and_writes_nothing(api_client_for, tmp_path):
    api = api_client_for("researcher")
    response = api.post(
        URL,
        {"file": csv_upload(tmp_path, alpaca_rows(1)), "name": "x", "mapping_name": "nope"},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"location": "", "field": "mapping_name", "message": "no saved mapping is named 'nope'"}
    ]
    assert Dataset.objects.count() == 0 and ImportMapping.objects.count() == 0


def test_schema_shows_the_upload_as_a_binary_file_in_a_multipart_request(client):
    schema = yaml.safe_load(client.get("/api/schema/").content)
    body = schema["paths"]["/api/v1/datasets/import"]["post"]["requestBody"]["content"]
    assert list(body) == ["multipart/form-data"]
    component = schema["components"]["schemas"]["DatasetImportInput"]
    assert component["properties"]["file"] == {
        "type": "string",
        "format": "binary",
        "description": component["properties"]["file"]["description"],
    }
