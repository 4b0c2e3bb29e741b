from django.core.management import call_command


def test_openapi_schema_generates_without_warnings_and_validates(tmp_path, db):
    out = tmp_path / "schema.yml"
    # --fail-on-warn turns every drf-spectacular warning or error (unguessable views, enum clashes) into a failure.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    assert "/api/v1/projects/{project_id}/next" in text
    assert "/api/v1/datasets/import" in text
    assert "/api/v1/auth/token/rotate" in text
