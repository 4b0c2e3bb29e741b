"""A model endpoint may only name an API key variable the deployment allows, and talk to allowed hosts.

The probe: a researcher creates an endpoint with ``api_key_env: SECRET_KEY`` pointing at a listener of
theirs and starts a judge run; the worker would send ``Authorization: Bearer <SECRET_KEY>`` there. It is
refused on every way in (API, page form, admin), and a row stored before the rule existed fails its run
before any connection is made.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import translation
from rest_framework.test import APIClient

from evaluation.models import GenerationRun, JudgeRun, ModelEndpoint, validate_api_key_env
from evaluation.services import (
    backend_cache_clear,
    benchmark_run_start,
    generation_run_start,
    judge_run_start,
)
from evaluation.services.endpoints import endpoint_create
from tests.evaluation.inference.openai_stub_server import Reply, StubOpenAIServer, completion_body
from tests.evaluation.services.builders import make_pair_dataset, make_prompt_dataset

pytestmark = pytest.mark.django_db

STOLEN = "probe-django-secret-key-0f1e2d3c4b5a"
ALLOWED_ENV = "TIMBANG_MODEL_KEY_PROBE_JUDGE"
ALLOWED_KEY = "probe-model-key-9a8b7c6d"
# Short and without retries, so that a regression fails fast instead of waiting on the listener.
FAST = {"max_attempts": 1, "timeout_s": 2}


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A real TCP socket listening on 127.0.0.1; connections wait in its backlog until counted."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.setblocking(False)
    yield sock
    backend_cache_clear()
    sock.close()


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()
    return f"http://{host}:{port}/v1"


def _connections(sock: socket.socket) -> int:
    """How many connections reached the listener since the last count."""
    count = 0
    while True:
        try:
            conn, _ = sock.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


def _body(url: str, slug: str, api_key_env: str) -> dict:
    return {
        "slug": slug,
        "backend": "openai",
        "base_url": url,
        "model_id": "judge",
        "backend_options": FAST,
        "api_key_env": api_key_env,
    }


def _page_post(url: str, slug: str, api_key_env: str) -> dict:
    return {
        **_body(url, slug, api_key_env),
        "queue": "default",
        "max_concurrency": "1",
        "backend_options": json.dumps(FAST),
        "is_active": "on",
    }


def _admin_client(django_user_model) -> Client:
    admin = django_user_model.objects.create_superuser("probe-admin", "admin@example.org", "pw-admin-probe")
    client = Client()
    client.force_login(admin)
    return client


def _admin_post(url: str, slug: str, api_key_env: str) -> dict:
    return {
        **_page_post(url, slug, api_key_env),
        "sampling_defaults": "{}",
    }


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "AWS_SECRET_ACCESS_KEY"])
def test_the_exfiltration_attempt_is_refused_on_every_way_in(
    name, listener, role_client, make_user, django_user_model
):
    url = _url(listener)
    api = APIClient()
    api.force_authenticate(make_user("researcher"))
    created = api.post("/api/v1/evaluation/endpoints/create", _body(url, "via-api", name), format="json")
    assert created.status_code == 400
    message = " ".join(created.json()["api_key_env"])
    assert name in message and "api_key_env" in message and "TIMBANG_MODEL_KEY_" in message

    allowed = endpoint_create(**_body(url, "allowed", ALLOWED_ENV))
    patched = api.patch(
        f"/api/v1/evaluation/endpoints/{allowed.pk}/update", {"api_key_env": name}, format="json"
    )
    assert patched.status_code == 400 and name in " ".join(patched.json()["api_key_env"])

    page = role_client("researcher").post("/evaluation/endpoints/new/", _page_post(url, "via-page", name))
    assert page.status_code == 200
    errors = " ".join(page.context["form"].errors["api_key_env"])
    assert name in errors and "TIMBANG_MODEL_KEY_" in errors
    edited = role_client("researcher").post(
        f"/evaluation/endpoints/{allowed.pk}/edit/", _page_post(url, "allowed", name)
    )
    assert edited.status_code == 200 and "api_key_env" in edited.context["form"].errors

    admin = _admin_client(django_user_model)
    added = admin.post("/admin/evaluation/modelendpoint/add/", _admin_post(url, "via-admin", name))
    assert added.status_code == 200
    assert name in " ".join(added.context["adminform"].form.errors["api_key_env"])

    assert list(ModelEndpoint.objects.values_list("slug", "api_key_env")) == [("allowed", ALLOWED_ENV)]
    assert _connections(listener) == 0


def _start(kind: str, endpoint: ModelEndpoint, capture) -> GenerationRun | JudgeRun:
    with capture(execute=True):
        if kind == "judge":
            return judge_run_start(
                judge_kind="pairwise", endpoint=endpoint, dataset=make_pair_dataset(n_prompts=2)
            )
        return generation_run_start(dataset=make_prompt_dataset(n_prompts=2), endpoints=[endpoint])


@pytest.mark.parametrize("kind", ["judge", "generation"])
def test_a_stored_endpoint_naming_secret_key_fails_its_run_without_a_connection(
    kind, listener, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setenv("SECRET_KEY", STOLEN)
    # Stored directly, as rows made before the allow-list existed were.
    endpoint = ModelEndpoint.objects.create(
        slug="exfiltrate",
        base_url=_url(listener),
        model_id="judge",
        api_key_env="SECRET_KEY",
        backend_options=FAST,
    )
    run = _start(kind, endpoint, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    assert run.status == "failed"
    assert "SECRET_KEY" in run.error and "no request sent" in run.error
    assert "Timbang's own secrets" in run.error
    assert STOLEN not in run.error
    assert run.n_done == 0
    assert _connections(listener) == 0
    # The count is real: a connection made now is seen.
    socket.create_connection(listener.getsockname(), timeout=2).close()
    assert _connections(listener) == 1


def test_a_benchmark_whose_judge_names_secret_key_sends_nothing_to_either_model(
    listener, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setenv("SECRET_KEY", STOLEN)
    monkeypatch.setenv(ALLOWED_ENV, ALLOWED_KEY)
    server = StubOpenAIServer().start()
    try:
        model = endpoint_create(**_body(server.base_url, "qa-model", ALLOWED_ENV))
        judge = ModelEndpoint.objects.create(
            slug="qa-judge",
            base_url=_url(listener),
            model_id="judge",
            api_key_env="SECRET_KEY",
            backend_options=FAST,
        )
        with django_capture_on_commit_callbacks(execute=True):
            run = benchmark_run_start(
                task="open_qa",
                endpoint=model,
                judge_endpoint=judge,
                dataset=make_prompt_dataset(n_prompts=2, two_turn_first=False),
                options={"scoring": "judge"},
            )
        run.refresh_from_db()
        assert run.status == "failed" and "'qa-judge' refused" in run.error and "SECRET_KEY" in run.error
        assert server.requests == [] and _connections(listener) == 0
    finally:
        server.stop()


def test_a_stored_endpoint_on_a_host_outside_the_list_fails_without_a_connection(
    listener, monkeypatch, settings, django_capture_on_commit_callbacks
):
    monkeypatch.setenv(ALLOWED_ENV, ALLOWED_KEY)
    endpoint = ModelEndpoint.objects.create(
        slug="elsewhere",
        base_url=_url(listener),
        model_id="judge",
        api_key_env=ALLOWED_ENV,
        backend_options=FAST,
    )
    settings.MODEL_ENDPOINT_HOSTS = ["gpu-1.internal"]
    run = _start("judge", endpoint, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    assert run.status == "failed" and "host" in run.error and "gpu-1.internal" in run.error
    assert _connections(listener) == 0


def test_the_host_list_is_checked_on_create_and_edit(listener, settings, make_user, role_client):
    settings.MODEL_ENDPOINT_HOSTS = ["gpu-1.internal", "127.0.0.1:8081"]
    api = APIClient()
    api.force_authenticate(make_user("researcher"))
    created = api.post(
        "/api/v1/evaluation/endpoints/create", _body(_url(listener), "listener", ALLOWED_ENV), format="json"
    )
    assert created.status_code == 400
    message = " ".join(created.json()["base_url"])
    assert _url(listener) in message and "gpu-1.internal" in message and "MODEL_ENDPOINT_HOSTS" in message
    page = role_client("researcher").post(
        "/evaluation/endpoints/new/", _page_post("http://u@127.0.0.1:8081/v1", "sneaky", ALLOWED_ENV)
    )
    assert page.status_code == 200 and "base_url" in page.context["form"].errors
    ok = api.post(
        "/api/v1/evaluation/endpoints/create",
        _body("http://127.0.0.1:8081/v1", "local", ALLOWED_ENV),
        format="json",
    )
    assert ok.status_code == 201, ok.content
    assert list(ModelEndpoint.objects.values_list("slug", flat=True)) == ["local"]


def test_an_allowed_variable_reaches_a_real_listener_as_the_bearer_token(
    monkeypatch, settings, django_capture_on_commit_callbacks
):
    monkeypatch.setenv(ALLOWED_ENV, ALLOWED_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "listed-key-5e6f")
    server = StubOpenAIServer().start()
    try:
        server.responder = lambda body: Reply(
            body=completion_body(json.dumps({"explanation": "x", "score": "Response 1"}))
        )
        endpoint = endpoint_create(**_body(server.base_url, "allowed", ALLOWED_ENV))
        judge = _start("judge", endpoint, django_capture_on_commit_callbacks)
        judge.refresh_from_db()
        assert judge.status == "succeeded", judge.error
        assert server.requests
        assert {r.headers.get("Authorization") for r in server.requests} == {f"Bearer {ALLOWED_KEY}"}

        # A name the deployment lists explicitly works too, on a listed host.
        settings.MODEL_KEY_ENV_NAMES = ["OPENAI_API_KEY"]
        settings.MODEL_ENDPOINT_HOSTS = ["127.0.0.1"]
        listed = endpoint_create(**_body(server.base_url, "listed", "OPENAI_API_KEY"))
        server.requests.clear()
        run = _start("generation", listed, django_capture_on_commit_callbacks)
        run.refresh_from_db()
        assert run.status == "succeeded", run.error
        assert {r.headers.get("Authorization") for r in server.requests} == {"Bearer listed-key-5e6f"}
    finally:
        backend_cache_clear()
        server.stop()


def test_the_refusal_is_translated_with_the_rule_in_the_same_language(settings):
    settings.MODEL_KEY_ENV_NAMES = ["OPENAI_API_KEY"]
    with pytest.raises(ValidationError) as caught:
        validate_api_key_env("GROQ_API_KEY")
    # Message and rule are both rendered in the language active when the error is shown.
    with translation.override("id"):
        (message,) = caught.value.messages
    assert "GROQ_API_KEY tidak diizinkan" in message
    assert "nama yang diawali TIMBANG_MODEL_KEY_ atau salah satu dari OPENAI_API_KEY" in message
    (english,) = caught.value.messages
    assert "names that start with TIMBANG_MODEL_KEY_ or one of OPENAI_API_KEY" in english


def test_the_endpoints_page_names_stored_endpoints_whose_runs_would_fail(role_client, settings):
    ModelEndpoint.objects.create(
        slug="old-row", base_url="http://10.1.2.3/v1", model_id="m", api_key_env="SECRET_KEY"
    )
    ModelEndpoint.objects.create(
        slug="fine", base_url="http://gpu-1.internal/v1", model_id="m", api_key_env=ALLOWED_ENV
    )
    settings.MODEL_ENDPOINT_HOSTS = ["gpu-1.internal"]
    page = role_client("researcher").get("/evaluation/endpoints/")
    rows = {e.slug: e.policy_errors for e in page.context["endpoints"]}
    assert rows["fine"] == []
    assert len(rows["old-row"]) == 2
    assert "SECRET_KEY" in rows["old-row"][0] and "http://10.1.2.3/v1" in rows["old-row"][1]
    html = page.content.decode()
    assert "Runs on this endpoint fail until it is edited:" in html and html.count('class="error"') == 1
