"""Endpoint validation: never a key, only the name of the variable that holds it."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from evaluation.inference.openai_backend import OpenAIBackend
from evaluation.models import ModelEndpoint
from evaluation.services import backend_cache_clear, endpoint_backend, endpoint_create, endpoint_update

pytestmark = pytest.mark.django_db


def _create(**fields):
    base = {"slug": "e1", "backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model_id": "m"}
    return endpoint_create(**{**base, **fields})


@pytest.mark.parametrize(
    "value",
    [
        "sk-proj-abcdef1234567890",
        "hf_AbCdEfGhIjKlMnOp",
        "AKIAIOSFODNN7EXAMPLE",
        "Bearer xyz",
        "a1b2c3d4e5f6g7h8i9",
    ],
)
def test_a_pasted_key_is_refused(value):
    with pytest.raises(ValidationError) as caught:
        _create(api_key_env=value)
    assert "api_key_env" in caught.value.message_dict
    assert not ModelEndpoint.objects.exists()


@pytest.mark.parametrize("value", ["", "TIMBANG_MODEL_KEY_OPENAI", "TIMBANG_MODEL_KEY_JUDGE_2"])
def test_variable_names_are_accepted(value):
    assert _create(api_key_env=value).api_key_env == value


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"queue": "gpu"}, "queue"),
        ({"queue": "GPU.big"}, "queue"),
        ({"base_url": ""}, "base_url"),
        ({"sampling_defaults": {"temperature": -1}}, "sampling_defaults"),
        ({"backend_options": {"colour": "red"}}, "backend_options"),
        # A llama.cpp option is not an option of the openai backend.
        ({"backend_options": {"n_ctx": 2048}}, "backend_options"),
        ({"backend_options": {"extra_body": {"api_key": "abc"}}}, "backend_options"),
        ({"api_key_env": "lower_case"}, "api_key_env"),
    ],
)
def test_invalid_settings_are_refused(fields, field):
    with pytest.raises(ValidationError) as caught:
        _create(**fields)
    assert field in caught.value.message_dict


def test_a_gpu_queue_and_an_update_are_validated():
    endpoint = _create(queue="gpu.qwen-7b")
    with pytest.raises(ValidationError):
        endpoint_update(endpoint=endpoint, api_key_env="sk-live-0123456789abcdef")
    endpoint.refresh_from_db()
    assert endpoint.api_key_env == ""


def test_the_backend_reads_the_named_variable_and_is_rebuilt_after_an_edit(monkeypatch):
    monkeypatch.setenv("TIMBANG_MODEL_KEY_TEST", "secret-value")
    endpoint = _create(api_key_env="TIMBANG_MODEL_KEY_TEST", max_concurrency=3)
    backend = endpoint_backend(endpoint)
    try:
        assert isinstance(backend, OpenAIBackend)
        assert (backend.max_concurrency, backend.api_key_env) == (3, "TIMBANG_MODEL_KEY_TEST")
        assert endpoint_backend(endpoint) is backend  # reused while the settings are unchanged
        endpoint_update(endpoint=endpoint, max_concurrency=5)
        assert endpoint_backend(endpoint).max_concurrency == 5
    finally:
        backend_cache_clear()


@pytest.mark.parametrize(
    ("bound", "processes", "each"), [(32, 1, 32), (32, 2, 16), (64, 3, 21), (5, 2, 2), (1, 4, 1)]
)
def test_each_model_worker_process_keeps_its_share_of_the_bound(settings, bound, processes, each):
    """MODEL_WORKER_PROCESSES worker processes together keep at most the endpoint's bound in flight (and at
    least one request each)."""
    settings.MODEL_WORKER_PROCESSES = processes
    endpoint = _create(max_concurrency=bound)
    try:
        assert endpoint_backend(endpoint).max_concurrency == each
        assert each * processes <= bound or each == 1
    finally:
        backend_cache_clear()


def test_fewer_than_one_model_worker_process_is_refused_at_start(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "MODEL_WORKER_PROCESSES": "0",
            "TIMBANG_VAR_DIR": str(tmp_path),
            "PATH": "/usr/bin:/bin",
        },
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "MODEL_WORKER_PROCESSES must be at least 1, got 0" in done.stderr


def test_threads_wanting_a_backend_at_once_share_the_one_built(monkeypatch):
    """Three chunks starting together on a threads worker: one backend is built (weights load once) and all
    three get it."""
    import threading
    import time

    from evaluation.services import endpoints

    endpoint = _create(max_concurrency=4)
    built = []
    real = endpoints.create_backend

    def slow_create(*args, **kwargs):
        built.append(threading.get_ident())
        time.sleep(0.2)
        return real(*args, **kwargs)

    monkeypatch.setattr(endpoints, "create_backend", slow_create)
    got = []
    start = threading.Barrier(3)

    def want() -> None:
        start.wait()
        got.append(endpoint_backend(endpoint))

    threads = [threading.Thread(target=want) for _ in range(3)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=10)
        assert len(built) == 1
        assert len(got) == 3 and got[0] is got[1] is got[2]
        assert endpoints._backend_builds == {}
    finally:
        backend_cache_clear()


def test_a_backend_that_fails_to_build_is_built_again_by_the_next_caller(monkeypatch):
    from evaluation.services import endpoints

    endpoint = _create()
    real = endpoints.create_backend
    calls = []

    def failing_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the model server's library failed to load")
        return real(*args, **kwargs)

    monkeypatch.setattr(endpoints, "create_backend", failing_once)
    try:
        with pytest.raises(RuntimeError, match="failed to load"):
            endpoint_backend(endpoint)
        assert isinstance(endpoint_backend(endpoint), OpenAIBackend)
        assert len(calls) == 2 and endpoints._backend_builds == {}
    finally:
        backend_cache_clear()
