"""Start-up imports no heavy library: ``django.setup()``, the URL configuration with every view and API
module it includes, the system checks and the Celery app leave pandas, pyarrow, datasets, sacrebleu, torch
and the model libraries unimported. The functions that use them import them, so a ``manage.py`` command, a
web worker and a Celery worker do not pay for them when they start (docs/benchmarks.md, "Start-up").

Each case runs in a fresh interpreter: the test process itself has imported everything by now."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO_ROOT

HEAVY = (
    "pandas",
    "pyarrow",
    "datasets",
    "sacrebleu",
    "torch",
    "transformers",
    "vllm",
    "xllamacpp",
    "huggingface_hub",
)

# What every process of the site does before its first request or task; prints the heavy modules loaded.
START_UP = """
import json, sys
import django
django.setup()
from django.core.management import call_command
from django.urls import get_resolver, resolve
get_resolver().url_patterns
resolve("/")
call_command("check")
import config.celery
print(json.dumps(sorted(name for name in sys.argv[1:] if name in sys.modules)))
"""

# A worker's boot: Celery's autodiscovery imports every app's tasks module, which imports its services.
WORKER_BOOT = """
import json, sys
import django
django.setup()
from config.celery import app
app.loader.import_default_modules()
print(json.dumps(sorted({task.__module__ for name, task in app.tasks.items() if not name.startswith("celery.")})))
"""


def _run(script: str, *args: str) -> list[str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_start_up_imports_no_heavy_library():
    assert _run(START_UP, *HEAVY) == []


def test_the_export_views_load_on_their_first_request_and_the_schema_still_lists_their_operations(client):
    """The export URL modules name their views by path (accounts.lazy_views): resolving does not import
    them, a request does, and the API schema still describes the export operations."""
    from django.urls import resolve, reverse

    match = resolve(reverse("exports:export_list"))
    assert match.func.__module__ == "exports.views" and match.func.__name__ == "export_list"
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    text = schema.content.decode()
    assert "/api/v1/exports/create" in text and "/api/v1/exports/{export_id}/download" in text


def test_a_worker_boot_registers_the_tasks_of_every_app():
    modules = sorted(f"{path.parent.name}.tasks" for path in REPO_ROOT.glob("*/tasks.py"))
    assert modules and _run(WORKER_BOOT) == modules
