"""API keys of model endpoints live only in the environment: refused as a value, never in the database
after runs that used one, never in an API answer; exports carry neither keys nor who annotated."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from annotation import services
from evaluation.models import ModelEndpoint
from evaluation.services import backend_cache_clear, generation_run_start, judge_run_start
from evaluation.services.endpoints import endpoint_create, endpoint_update
from exports.services import ExportOptions, export_create
from tests.evaluation.inference.openai_stub_server import Reply, StubOpenAIServer, completion_body
from tests.evaluation.services.builders import make_pair_dataset, make_prompt_dataset

pytestmark = pytest.mark.django_db

KEY_ENV = "TIMBANG_MODEL_KEY_SECURITY_PROBE"
KEY = "sk-probe-7f3c9a1e5b2d8046-do-not-store"
KEY_LIKE = [
    "sk-abc123def456ghi789",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "Bearer abcdef",
    "ghp_0123456789abcdefABCDEF",
    "a1b2c3d4e5f6a7b8c9d0e1f2",  # 24 mixed letters and digits, no separators: a token
]


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    stub = StubOpenAIServer().start()
    yield stub
    backend_cache_clear()
    stub.stop()


def _fields(server: StubOpenAIServer, slug: str, **extra) -> dict:
    return {
        "slug": slug,
        "base_url": server.base_url,
        "model_id": "stub-model",
        "backend_options": {"max_attempts": 1, "timeout_s": 10},
        **extra,
    }


@pytest.mark.parametrize("value", KEY_LIKE)
def test_a_key_pasted_as_the_variable_name_is_refused_everywhere(server, value, make_user):
    with pytest.raises(ValidationError):
        ModelEndpoint(**_fields(server, "model-check", api_key_env=value)).full_clean()
    with pytest.raises(ValidationError):
        endpoint_create(**_fields(server, "service", api_key_env=value))
    api = APIClient()
    api.force_authenticate(make_user("researcher"))
    created = api.post(
        "/api/v1/evaluation/endpoints/create", _fields(server, "via-api", api_key_env=value), format="json"
    )
    assert created.status_code == 400 and "api_key_env" in created.json()
    endpoint = endpoint_create(**_fields(server, "named", api_key_env="TIMBANG_MODEL_KEY_HOSTED"))
    with pytest.raises(ValidationError):
        endpoint_update(endpoint=endpoint, api_key_env=value)
    patched = api.patch(
        f"/api/v1/evaluation/endpoints/{endpoint.pk}/update", {"api_key_env": value}, format="json"
    )
    assert patched.status_code == 400
    endpoint.refresh_from_db()
    assert endpoint.api_key_env == "TIMBANG_MODEL_KEY_HOSTED"
    assert not ModelEndpoint.objects.filter(api_key_env=value).exists()


def _dump_database() -> str:
    out = io.StringIO()
    call_command("dumpdata", format="json", stdout=out)
    return out.getvalue()


def test_runs_that_used_a_key_leave_it_nowhere(
    server, monkeypatch, make_user, django_capture_on_commit_callbacks
):
    monkeypatch.setenv(KEY_ENV, KEY)
    endpoint = endpoint_create(**_fields(server, "keyed", api_key_env=KEY_ENV))
    with django_capture_on_commit_callbacks(execute=True):
        generation = generation_run_start(
            dataset=make_prompt_dataset(n_prompts=2, two_turn_first=False), endpoints=[endpoint]
        )
    server.responder = lambda body: Reply(
        body=completion_body(json.dumps({"explanation": "x", "score": "Response 1"}))
    )
    with django_capture_on_commit_callbacks(execute=True):
        judge = judge_run_start(
            judge_kind="pairwise", endpoint=endpoint, dataset=make_pair_dataset(n_prompts=2)
        )
    # A server refusing the key: the run fails and records the server's answer.
    server.responder = lambda body: Reply(status=401, body={"error": {"message": "invalid api key"}})
    with django_capture_on_commit_callbacks(execute=True):
        failed = generation_run_start(
            dataset=make_prompt_dataset(n_prompts=1, name="fails"), endpoints=[endpoint]
        )
    for run in (generation, judge, failed):
        run.refresh_from_db()
    assert (generation.status, judge.status) == ("succeeded", "succeeded")
    assert failed.status == "failed" and "401" in failed.error
    # The key was really sent: it was available to leak.
    assert {r.headers.get("Authorization") for r in server.requests} == {f"Bearer {KEY}"}

    dump = _dump_database()
    assert KEY_ENV in dump  # the variable's name is stored, and the dump covers the endpoint table
    assert KEY not in dump and KEY[3:] not in dump

    admin = make_user("admin")
    api = APIClient()
    api.force_authenticate(admin)
    pages = Client()
    pages.force_login(admin)
    urls = [
        "/api/v1/evaluation/endpoints/",
        f"/api/v1/evaluation/endpoints/{endpoint.pk}",
        "/api/v1/evaluation/generation-runs/",
        f"/api/v1/evaluation/generation-runs/{generation.pk}",
        f"/api/v1/evaluation/generation-runs/{failed.pk}",
        f"/api/v1/evaluation/judge-runs/{judge.pk}",
        f"/api/v1/evaluation/judge-runs/{judge.pk}/judgments",
        f"/api/v1/evaluation/judge-runs/{judge.pk}/judgments.csv",
        f"/api/v1/evaluation/judge-runs/{judge.pk}/verdicts.csv",
        "/evaluation/",
        "/evaluation/endpoints/",
        f"/evaluation/runs/judge/{judge.pk}/",
        f"/evaluation/runs/generation/{failed.pk}/",
    ]
    for url in urls:
        response = (api if url.startswith("/api/") else pages).get(url)
        assert response.status_code == 200, url
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert KEY not in body.decode(), url


def _annotated_project(make_user):
    """A likert project over two prompts and three models, rated by two annotators with telling names."""
    from tests.annotation.conftest import build_dataset

    dataset = build_dataset(n_prompts=2, n_models=3, name="secrets-data")
    project = services.project_create(
        dataset=dataset,
        name="secrets",
        kind="likert",
        criteria=["relevance"],
        best_pick="optional",
        groups=["G"],
        overlap=2,
        seed=1,
    )
    group = project.groups.get()
    people = [
        make_user("annotator", username="ratna.rahasia", email="ratna.rahasia@example.org"),
        make_user("annotator", username="joko.tersembunyi", email="joko.tersembunyi@example.org"),
    ]
    for user in people:
        services.project_member_add(project=project, user=user, group=group)
    services.project_activate(project=project)
    for index, user in enumerate(people):
        while (assignment := services.assignment_claim(project=project, user=user)) is not None:
            # Rated by the canonical response, not the shown position, so every prompt has a strict order
            # whatever the shuffle: two positions' means could otherwise tie on all three models.
            ratings = {
                str(i + 1): {"relevance": 1 + (canonical + index) % 5}
                for i, canonical in enumerate(assignment.permutation)
            }
            services.assignment_submit(
                token=assignment.token, user=user, payload={"ratings": ratings, "comment": "catatan"}
            )
    return project, people


def _files_text(record) -> dict[str, str]:
    texts = {}
    for path in Path(record.folder_path).rglob("*"):
        if path.is_file():
            texts[str(path)] = path.read_bytes().decode("utf-8", errors="replace")
    with zipfile.ZipFile(record.zip_path) as archive:
        for name in archive.namelist():
            texts[f"zip:{name}"] = archive.read(name).decode("utf-8", errors="replace")
    return texts


@pytest.mark.parametrize("kind", ["hf", "raw-jsonl", "raw-csv"])
def test_exports_carry_no_key_and_no_annotator_identity(
    kind, make_user, monkeypatch, settings, tmp_path, django_capture_on_commit_callbacks
):
    monkeypatch.setenv(KEY_ENV, KEY)
    settings.EXPORTS_DIR = tmp_path / "exports"
    project, people = _annotated_project(make_user)
    ModelEndpoint.objects.create(slug="keyed", model_id="m", api_key_env=KEY_ENV)
    with django_capture_on_commit_callbacks(execute=True):
        record = export_create(project=project, options=ExportOptions(kind=kind, bootstrap_draws=20))
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    texts = _files_text(record)
    assert any(name.startswith("zip:") for name in texts) and len(texts) >= 2
    forbidden = [KEY, KEY_ENV, *(u.get_username() for u in people), *(u.email for u in people)]
    for name, text in texts.items():
        leaked = [s for s in forbidden if s in text]
        assert not leaked, f"{name} contains {leaked}"
