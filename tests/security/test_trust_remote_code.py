"""An endpoint may ask a local backend to run its model repository's own code only for models the deployment
lists in TRUST_REMOTE_CODE_MODELS.

The probe: a researcher creates a ``transformers`` endpoint with ``trust_remote_code: true`` and any model id;
a worker loading it would import that repository's Python code, with the server's secrets in its environment.
Here the "repository" is a folder whose code writes a marker file when it is imported.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client
from rest_framework.test import APIClient

from evaluation.inference.base import BackendConfigError
from evaluation.inference.transformers_backend import TransformersBackend
from evaluation.models import GenerationRun, ModelEndpoint
from evaluation.selectors import endpoint_policy_errors
from evaluation.services import backend_cache_clear, generation_run_start
from evaluation.services.endpoints import EndpointNotAllowed, endpoint_backend, endpoint_create
from tests.evaluation.services.builders import make_prompt_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def repository(tmp_path: Path) -> tuple[Path, Path]:
    """A model folder whose configuration names code of its own; importing that code writes ``marker``."""
    folder = tmp_path / "remote-code-model"
    folder.mkdir()
    marker = tmp_path / "remote-code-ran"
    auto_map = {"AutoConfig": "probe.ProbeConfig", "AutoModelForCausalLM": "probe.ProbeModel"}
    (folder / "config.json").write_text(json.dumps({"model_type": "timbang-probe", "auto_map": auto_map}))
    (folder / "probe.py").write_text(
        "from pathlib import Path\n"
        "from transformers import PretrainedConfig\n"
        f"Path({str(marker)!r}).write_text('ran')\n"
        "class ProbeConfig(PretrainedConfig):\n"
        "    model_type = 'timbang-probe'\n"
        "class ProbeModel:\n"
        "    pass\n"
    )
    yield folder, marker
    backend_cache_clear()


def _body(model_id: str, slug: str = "remote-code", backend: str = "transformers") -> dict:
    return {
        "slug": slug,
        "backend": backend,
        "model_id": model_id,
        "queue": "default",
        "backend_options": {"trust_remote_code": True},
    }


def _page_post(model_id: str, slug: str, backend: str) -> dict:
    body = _body(model_id, slug, backend)
    return {**body, "max_concurrency": "1", "backend_options": json.dumps(body["backend_options"])}


def test_the_probe_is_real_a_listed_model_runs_its_code(repository, settings):
    folder, marker = repository
    settings.TRUST_REMOTE_CODE_MODELS = [str(folder)]
    endpoint = endpoint_create(**_body(str(folder)))
    with pytest.raises(Exception):  # noqa: B017, PT011 - the probe's code is no real model; it ran first
        endpoint_backend(endpoint)
    assert marker.exists()


def test_the_backend_refuses_an_unlisted_model_before_loading_anything(repository):
    folder, marker = repository
    with pytest.raises(BackendConfigError, match="TRUST_REMOTE_CODE_MODELS"):
        TransformersBackend(model=folder, trust_remote_code=True, local_files_only=True)
    with pytest.raises(BackendConfigError, match="TRUST_REMOTE_CODE_MODELS"):
        TransformersBackend(
            model=folder, trust_remote_code=True, local_files_only=True, remote_code_models=["other/model"]
        )
    assert not marker.exists()


@pytest.mark.parametrize("backend", ["transformers", "vllm"])
def test_every_way_in_refuses_trust_remote_code_for_an_unlisted_model(
    backend, repository, role_client, make_user, django_user_model
):
    folder, marker = repository
    api = APIClient()
    api.force_authenticate(make_user("researcher"))
    created = api.post(
        "/api/v1/evaluation/endpoints/create", _body(str(folder), backend=backend), format="json"
    )
    assert created.status_code == 400
    message = " ".join(created.json()["backend_options"])
    assert "trust_remote_code" in message and "TRUST_REMOTE_CODE_MODELS" in message and str(folder) in message

    plain = endpoint_create(slug="plain", backend=backend, model_id=str(folder))
    patched = api.patch(
        f"/api/v1/evaluation/endpoints/{plain.pk}/update",
        {"backend_options": {"trust_remote_code": True}},
        format="json",
    )
    assert patched.status_code == 400 and "trust_remote_code" in " ".join(patched.json()["backend_options"])

    page = role_client("researcher").post(
        "/evaluation/endpoints/new/", _page_post(str(folder), "via-page", backend)
    )
    assert page.status_code == 200
    errors = " ".join(page.context["form"].errors["backend_options"])
    assert "trust_remote_code" in errors and "TRUST_REMOTE_CODE_MODELS" in errors

    admin = django_user_model.objects.create_superuser("probe-admin", "admin@example.org", "pw-admin-probe")
    client = Client()
    client.force_login(admin)
    added = client.post(
        "/admin/evaluation/modelendpoint/add/",
        {**_page_post(str(folder), "via-admin", backend), "sampling_defaults": "{}"},
    )
    assert added.status_code == 200
    assert "trust_remote_code" in " ".join(added.context["adminform"].form.errors["backend_options"])

    assert list(ModelEndpoint.objects.values_list("slug", flat=True)) == ["plain"]
    assert not marker.exists()


def test_a_listed_model_may_trust_its_code(repository, settings):
    folder, _ = repository
    settings.TRUST_REMOTE_CODE_MODELS = [str(folder)]
    endpoint = endpoint_create(**_body(str(folder)))
    assert endpoint.backend_options["trust_remote_code"] is True
    assert endpoint_policy_errors(endpoint) == []


def test_a_stored_endpoint_fails_its_run_without_loading_the_code(
    repository, django_capture_on_commit_callbacks
):
    folder, marker = repository
    # Stored directly, as rows made before the rule were.
    endpoint = ModelEndpoint.objects.create(**_body(str(folder)))
    assert any("trust_remote_code" in error for error in endpoint_policy_errors(endpoint))
    with pytest.raises(EndpointNotAllowed, match="trust_remote_code"):
        endpoint_backend(endpoint)
    with django_capture_on_commit_callbacks(execute=True):
        run = generation_run_start(dataset=make_prompt_dataset(n_prompts=1), endpoints=[endpoint])
    run = GenerationRun.objects.get(pk=run.pk)
    assert run.status == "failed" and "trust_remote_code" in run.error and "no request sent" in run.error
    assert not marker.exists()
