"""The client's operations are checked against ``/api/schema/``: any call whose path, method, path
parameters, query parameters or body fields the schema does not have fails; API operations the client
does not call yet are listed (printed and warned), not failed."""

import warnings
from dataclasses import replace

import pytest
from timbang_client.operations import OPERATIONS

from tests.clients.schema_check import operation_problems, uncovered


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    from django.test import Client

    with django_db_blocker.unblock():
        answer = Client().get("/api/schema/", {"format": "json"})
    assert answer.status_code == 200
    return answer.json()


def test_every_client_operation_agrees_with_the_schema(schema):
    assert operation_problems(schema, OPERATIONS) == []


def test_operations_the_client_does_not_call_are_listed_not_failed(schema):
    missing = uncovered(schema, OPERATIONS)
    if missing:
        print("API operations the client does not call:", *missing, sep="\n  ")
        warnings.warn(
            f"{len(missing)} API operation(s) not in the client: {', '.join(missing)}", stacklevel=1
        )
    # The parts the client is meant to cover are covered.
    for needed in (
        "POST /api/v1/datasets/import",
        "GET /api/v1/projects/{project_id}/next",
        "POST /api/v1/exports/create",
    ):
        assert needed not in missing


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"path": "/api/v1/projects/{project_id}/nxt"}, "is not in the schema"),
        ({"method": "PUT"}, "the schema has no PUT"),
        ({"path": "/api/v1/projects/{id}/next"}, "is not in the schema"),
        ({"query": frozenset({"limit"})}, "query parameter 'limit'"),
    ],
)
def test_a_wrong_path_method_or_parameter_is_caught(schema, change, says):
    broken = {"annotation.next": replace(OPERATIONS["annotation.next"], **change)}
    problems = operation_problems(schema, broken)
    assert problems and says in problems[0]


def test_a_wrong_or_missing_field_and_a_wrong_content_type_are_caught(schema):
    submit = OPERATIONS["annotation.submit"]
    assert (
        "field 'answers' is not in the schema"
        in operation_problems(schema, {"x": replace(submit, body=submit.body | {"answers"})})[0]
    )
    assert (
        "requires 'answer'"
        in operation_problems(schema, {"x": replace(submit, body=frozenset({"seconds"}))})[0]
    )
    upload = OPERATIONS["datasets.upload"]
    assert "sends application/json" in operation_problems(schema, {"x": replace(upload, content="json")})[0]
