"""A llama.cpp OpenAI-compatible server process for one GGUF model, on a free loopback port.

Tests, ``make demo`` and the benches need a real OpenAI-compatible endpoint without a GPU or a network:
llama.cpp's own HTTP server, from the prebuilt ``xllamacpp`` wheel, over a small GGUF model is one, up in a
second or two. It runs ``n_parallel`` slots with continuous batching: requests sent at once are decoded
together, each in its own slot of ``n_ctx / n_parallel`` tokens of context.

:func:`serve` runs the server in this process until it is stopped (what ``python -m`` of this module does,
and what ``scripts/model-server`` runs). :class:`LlamaCppServer` starts that as a child process, waits until
``GET /v1/models`` answers, and stops it (the whole process group) on exit. Its output goes to a log file
whose tail is quoted when start-up fails.

Run by hand: ``python -m evaluation.inference.llamacpp_server --model smollm2-135m-instruct --port 8081``.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from evaluation.inference.gguf_models import locate_gguf
from evaluation.inference.llamacpp_backend import import_xllamacpp

_LOG_TAIL_CHARS = 3000


class LlamaCppServerError(RuntimeError):
    """The server process did not start or did not answer in time."""


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the OS picks it); the caller binds it soon after."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class LlamaCppServer:
    """:func:`serve` for ``model`` (a known model name or a GGUF path) in a child process.

    ``alias`` is the model id clients send. ``n_ctx`` (the whole context, shared by the slots) and
    ``n_threads`` default to what a 2-core CI machine handles; ``n_parallel`` is the number of slots, how
    many requests are decoded at once; ``extra_args`` are passed to the command line unchanged.
    """

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        alias: str = "local",
        n_ctx: int = 2048,
        n_threads: int = 2,
        n_parallel: int = 1,
        host: str = "127.0.0.1",
        port: int | None = None,
        python: str = sys.executable,
        startup_timeout_s: float = 90.0,
        extra_args: Sequence[str] = (),
        log_path: Path | None = None,
    ) -> None:
        self.model_path = locate_gguf(model)
        self.alias = alias
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.n_parallel = n_parallel
        self.host = host
        self.port = port
        self.python = python
        self.startup_timeout_s = startup_timeout_s
        self.extra_args = tuple(extra_args)
        self.log_path = log_path
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """``http://host:port/v1``, what :class:`~evaluation.inference.openai_backend.OpenAIBackend` takes."""
        if self.port is None:
            raise LlamaCppServerError("the server has not been started")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        """The server process's id (also its process group's), while it runs."""
        return self._process.pid if self.running else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def command(self) -> list[str]:
        return [
            self.python,
            "-m",
            "evaluation.inference.llamacpp_server",
            "--model",
            str(self.model_path),
            "--alias",
            self.alias,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--n-ctx",
            str(self.n_ctx),
            "--n-threads",
            str(self.n_threads),
            "--n-parallel",
            str(self.n_parallel),
            *self.extra_args,
        ]

    def start(self) -> LlamaCppServer:
        """Start the process and return once it answers; raises :class:`LlamaCppServerError` otherwise.

        A port picked here could be taken by someone else before the server binds it; the start is then
        tried again on a new port (twice at most) unless a port was given.
        """
        if self.running:
            return self
        fixed_port = self.port is not None
        attempts = 1 if fixed_port else 3
        for attempt in range(1, attempts + 1):
            if not fixed_port:
                self.port = free_port(self.host)
            try:
                self._launch()
                return self
            except LlamaCppServerError:
                self.stop()
                if attempt == attempts or "address already in use" not in self.log_tail().lower():
                    raise
        return self

    def _launch(self) -> None:
        if self.log_path is None:
            descriptor, name = tempfile.mkstemp(prefix="llamacpp-server-", suffix=".log")
            os.close(descriptor)
            self.log_path = Path(name)
        with open(self.log_path, "wb") as log:
            self._process = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + self.startup_timeout_s
        with httpx.Client(timeout=2.0) as client:
            while time.monotonic() < deadline:
                if self._process.poll() is not None:
                    raise LlamaCppServerError(
                        f"llama.cpp server exited with code {self._process.returncode} while starting:\n"
                        f"{self.log_tail()}"
                    )
                try:
                    if client.get(f"{self.base_url}/models").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
        raise LlamaCppServerError(
            f"llama.cpp server did not answer on {self.base_url} within {self.startup_timeout_s:g}s:\n"
            f"{self.log_tail()}"
        )

    def log_tail(self) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-_LOG_TAIL_CHARS:]

    def stop(self, timeout_s: float = 10.0) -> None:
        """Terminate the server's process group, killing it if it does not exit within ``timeout_s``."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=timeout_s)

    def __enter__(self) -> LlamaCppServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def serve(
    model: str | os.PathLike[str],
    *,
    alias: str = "local",
    host: str = "127.0.0.1",
    port: int = 8081,
    n_ctx: int = 2048,
    n_threads: int = 2,
    n_parallel: int = 1,
) -> Any:
    """Start llama.cpp's HTTP server over ``model`` in this process and return the ``xllamacpp.Server``.

    The server answers on ``http://host:port/v1`` from its own threads as long as the returned object lives.
    """
    xllamacpp = import_xllamacpp()
    params = xllamacpp.CommonParams()
    params.model.path = str(locate_gguf(model))
    params.model_alias = {alias}
    params.n_ctx = n_ctx
    params.n_parallel = n_parallel
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    params.hostnames = [host]
    params.port = port
    return xllamacpp.Server(params)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a GGUF model on an OpenAI-compatible endpoint.")
    parser.add_argument("--model", default="smollm2-135m-instruct", help="known model name or GGUF path")
    parser.add_argument("--alias", default="local", help="model id clients send")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=None, help="default: a free port")
    parser.add_argument("--n-ctx", type=int, default=2048, help="context of all slots together")
    parser.add_argument("--n-threads", type=int, default=2)
    parser.add_argument("--n-parallel", type=int, default=1, help="slots: requests decoded at once")
    args = parser.parse_args(argv)
    port = args.port if args.port is not None else free_port(args.host)
    stop = threading.Event()
    # SIGTERM (from a process manager or LlamaCppServer.stop) ends the loop below; the server goes with it.
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server = serve(
        args.model,
        alias=args.alias,
        host=args.host,
        port=port,
        n_ctx=args.n_ctx,
        n_threads=args.n_threads,
        n_parallel=args.n_parallel,
    )
    print(
        f"serving {locate_gguf(args.model)} as {args.alias!r} on {server.listening_address}/v1 "
        f"with {args.n_parallel} slots",
        flush=True,
    )
    try:
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    # Leave without running the server's destructor: it waits for llama.cpp's loop, which can wait for this
    # thread while requests are in flight. The process's memory and sockets go with it.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())
