"""scripts/serve starts the workers docs/deployment.md describes: a default worker with the beat scheduler
and a model worker on the queues `manage.py model_queues` prints, one task at a time."""

from __future__ import annotations

import shlex

from tests.conftest import REPO_ROOT

SERVE = REPO_ROOT / "scripts" / "serve"


def _celery_commands() -> list[list[str]]:
    text = SERVE.read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [shlex.split(line.rstrip("&")) for line in lines if '"$BIN/celery"' in line.split(" -A")[0]]


def _option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_a_default_worker_and_a_model_worker():
    default, model = _celery_commands()
    assert _option(default, "-Q") == "default" and _option(default, "-n") == "default@%h"
    assert _option(model, "-Q") == "${QUEUES:-models.idle}" and _option(model, "-n") == "models$n@%h"
    # The model workers follow the queues of endpoints added later; the default worker does not.
    assert model[0] == "MODEL_QUEUES_FOLLOW=1" and default[0] == "$BIN/celery"
    # MODEL_WORKER_PROCESSES of them (default 1), each process told how many share the bound.
    text = SERVE.read_text()
    assert 'export MODEL_WORKER_PROCESSES="${MODEL_WORKER_PROCESSES:-1}"' in text
    assert 'for n in $(seq "$MODEL_WORKER_PROCESSES"); do' in text
    assert _option(model, "--prefetch-multiplier") == "1"
    # Several chunks at once on threads, sharing each endpoint's bound of requests in flight.
    assert _option(model, "--pool") == "threads"
    assert _option(model, "--concurrency") == "${MODEL_CONCURRENCY:-3}"
    # The beat scheduler runs in exactly one process.
    assert "-B" in default and "-B" not in model
    assert 'QUEUES="$("$BIN/python" manage.py model_queues)"' in SERVE.read_text()


def test_the_demo_starts_serve_and_the_docs_name_the_same_workers():
    assert "./scripts/serve" in (REPO_ROOT / "scripts" / "demo").read_text()
    deployment = (REPO_ROOT / "docs" / "deployment.md").read_text()
    for words in (
        "`-n default@%h -Q default -B`",
        "`-n models1@%h`",
        "`MODEL_WORKER_PROCESSES`",
        "`--prefetch-multiplier 1`",
        "`gpu.demo-llm`",
    ):
        assert words in deployment, words
    assert "python manage.py model_queues" in (REPO_ROOT / "README.md").read_text()


def test_the_demo_leaves_the_model_queues_to_the_following_model_worker():
    """scripts/demo starts the workers before the demo endpoint exists: the model worker starts on the idle
    queue and follows the endpoint's queue once the demo data creates it."""
    from demo.services import DEMO_ENDPOINT_QUEUE

    demo = (SERVE.parent / "demo").read_text()
    assert "export MODEL_QUEUES" not in demo
    assert DEMO_ENDPOINT_QUEUE.startswith("gpu.")
    assert "models.idle" in SERVE.read_text()
