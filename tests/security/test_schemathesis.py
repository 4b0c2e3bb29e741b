"""schemathesis over the whole OpenAPI schema, in-process through the WSGI app, as a staff user: no
operation answers 500 to any input the schema allows (or does not).

Ten derandomized examples per operation keep the run short and repeatable. Generated ids are mapped onto
real objects, so the bodies reach the code behind the lookups instead of stopping at a 404, and each
example runs in a savepoint that is rolled back, so one example's delete does not starve the next.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from django.db import transaction
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from annotation import services
from tests.security.conftest import World, connection_kept_open


def _openapi() -> dict:
    """The schema ``/api/schema/`` serves, generated in-process (no database needed)."""
    generated = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(generated))


schema = schemathesis.openapi.from_dict(_openapi())
schema.app = get_wsgi_application()

RUN_KINDS = ("generation", "judge", "benchmark")
# Which of the world's objects a generated value of each path parameter is mapped onto.
_OBJECTS = {
    "project_id": lambda w: [w.rating, w.other_rating, w.translation, w.authoring, w.mcq],
    "export_id": lambda w: [w.export],
    "import_id": lambda w: [w.dataset_import],
    "endpoint_id": lambda w: [w.endpoint],
    "run_id": lambda w: [w.judge_run, w.generation_run, w.benchmark_run, w.flag_recompute],
}


def _real_ids(case, world: World, admin_token: str) -> None:
    for name, value in list((case.path_parameters or {}).items()):
        if name in _OBJECTS and isinstance(value, int):
            choices = _OBJECTS[name](world)
            case.path_parameters[name] = choices[value % len(choices)].pk
        elif name == "token" and isinstance(value, str) and len(value) % 2 == 0:
            case.path_parameters[name] = admin_token
        elif name == "kind" and isinstance(value, str):
            case.path_parameters[name] = RUN_KINDS[len(value) % len(RUN_KINDS)]


@pytest.fixture
def admin_assignment(world: World) -> str:
    """The staff user annotates in the rating project too, so the task operations have a token of theirs."""
    admin = world.users["admin"]
    services.project_member_add(project=world.rating, user=admin, group=world.rating.groups.get())
    return services.assignment_claim(project=world.rating, user=admin).token


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=10,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_operation_answers_500(case, world, admin_assignment):
    _real_ids(case, world, admin_assignment)
    with transaction.atomic():
        try:
            with connection_kept_open():
                response = case.call(headers={"Authorization": f"Token {world.tokens['admin']}"})
        finally:
            transaction.set_rollback(True)
    case.validate_response(response, checks=[not_a_server_error])
