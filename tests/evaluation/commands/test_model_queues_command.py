"""``manage.py model_queues``: the -Q argument of a model worker, from the setting or the endpoints."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.models import ModelEndpoint

pytestmark = pytest.mark.django_db


def _endpoint(slug: str, queue: str, *, active: bool = True) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        slug=slug, base_url="http://127.0.0.1:9/v1", model_id="m", queue=queue, is_active=active
    )


def _run(*args: str) -> str:
    out = StringIO()
    call_command("model_queues", *args, stdout=out)
    return out.getvalue().strip()


def test_without_the_setting_it_lists_every_endpoints_model_queue_once(settings):
    settings.MODEL_QUEUES = []
    _endpoint("qwen", "gpu.qwen")
    _endpoint("qwen-again", "gpu.qwen")
    _endpoint("llama", "gpu.llama", active=False)  # chunks queued before it was switched off still run
    _endpoint("hosted", "default")  # the default worker's
    assert _run() == "gpu.llama,gpu.qwen"
    assert json.loads(_run("--json")) == {"queues": ["gpu.llama", "gpu.qwen"], "source": "endpoints"}


def test_a_new_endpoint_is_listed_at_the_next_start(settings):
    settings.MODEL_QUEUES = []
    _endpoint("qwen", "gpu.qwen")
    assert _run() == "gpu.qwen"
    _endpoint("gemma", "gpu.gemma")
    assert _run() == "gpu.gemma,gpu.qwen"


def test_the_setting_replaces_the_endpoints(settings):
    settings.MODEL_QUEUES = ["gpu.b", " gpu.a", "gpu.b", ""]
    _endpoint("qwen", "gpu.qwen")
    assert _run() == "gpu.a,gpu.b"
    assert json.loads(_run("--json"))["source"] == "setting"


@pytest.mark.parametrize("bad", ["default", "gpu.Big", "cpu.x", "gpu."])
def test_a_configured_name_that_is_not_a_model_queue_is_refused(settings, bad):
    settings.MODEL_QUEUES = ["gpu.ok", bad]
    with pytest.raises(CommandError, match="not a model queue") as caught:
        _run()
    assert caught.value.returncode == 2


def test_no_model_queue_prints_an_empty_line_or_fails_when_required(settings):
    settings.MODEL_QUEUES = []
    _endpoint("hosted", "default")
    assert _run() == ""
    assert json.loads(_run("--json")) == {"queues": [], "source": "endpoints"}
    with pytest.raises(CommandError, match="no model queue") as caught:
        _run("--required")
    assert caught.value.returncode == 2
