"""LlamaCppServer: start-up failures are reported with the server's own output, and stop ends the process."""

from __future__ import annotations

import concurrent.futures
import importlib.util

import httpx
import pytest

from evaluation.inference.llamacpp_server import LlamaCppServer, LlamaCppServerError, free_port

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None,
    reason="xllamacpp is not installed (`make install` installs it)",
)


def test_a_file_that_is_not_a_model_fails_with_the_servers_log(tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"this is not a GGUF file")
    server = LlamaCppServer(broken, startup_timeout_s=60)
    with pytest.raises(LlamaCppServerError, match="exited with code") as error:
        server.start()
    assert "invalid magic characters" in str(error.value)  # llama.cpp's own words, from the log tail
    assert not server.running


def test_start_answers_and_stop_frees_the_port(smollm2_gguf):
    server = LlamaCppServer(smollm2_gguf, alias="tiny", n_ctx=256, n_threads=1, port=free_port())
    with server:
        assert server.running
        assert server.command()[1:3] == ["-m", "evaluation.inference.llamacpp_server"]
        assert httpx.get(f"{server.base_url}/models", timeout=5).json()["data"][0]["id"] == "tiny"
        url = server.base_url
    assert not server.running
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/models", timeout=2)


def test_a_port_in_the_environment_does_not_move_the_server(smollm2_gguf, monkeypatch):
    """A web server's PORT, HOST ... beside the model server must not pull it onto that port."""
    monkeypatch.setenv("PORT", str(free_port()))
    monkeypatch.setenv("HOST", "0.0.0.0")
    monkeypatch.setenv("N_CTX", "64")
    port = free_port()
    with LlamaCppServer(
        smollm2_gguf, alias="tiny", n_ctx=256, n_threads=1, port=port, startup_timeout_s=60
    ) as server:
        assert server.base_url == f"http://127.0.0.1:{port}/v1"
        assert httpx.get(f"{server.base_url}/models", timeout=5).status_code == 200


def test_the_server_runs_n_parallel_slots_sharing_the_context(smollm2_gguf):
    """Two slots of 512 tokens each out of 1,024; two requests sent at once are both answered."""
    with LlamaCppServer(
        smollm2_gguf, alias="tiny", n_ctx=1024, n_threads=1, n_parallel=2, startup_timeout_s=60
    ) as server:
        root = server.base_url.removesuffix("/v1")
        props = httpx.get(f"{root}/props", timeout=5).json()
        assert props["total_slots"] == 2
        assert props["default_generation_settings"]["n_ctx"] == 512  # 1024 shared by two slots

        def ask(word: str) -> dict:
            body = {"model": "tiny", "messages": [{"role": "user", "content": word}], "max_tokens": 24}
            return httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=120).json()

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            first, second = pool.map(ask, ["Name a colour.", "Name a fruit."])
        assert first["choices"][0]["message"]["content"] and second["choices"][0]["message"]["content"]
        metrics = httpx.get(f"{root}/slots", timeout=5).json()
        assert len(metrics) == 2 and all(slot["n_ctx"] == 512 for slot in metrics)
