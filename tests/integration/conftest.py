"""A real Celery worker process against the real broker and the test database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import REPO_ROOT


def test_database_url() -> str:
    s = connection.settings_dict
    auth = quote(s["USER"] or "")
    if s.get("PASSWORD"):
        auth += ":" + quote(s["PASSWORD"])
    host = s["HOST"] or "127.0.0.1"
    port = f":{s['PORT']}" if s.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{s['NAME']}"


class WorkerProcess:
    def __init__(
        self,
        *,
        queues: str = "default",
        concurrency: int = 1,
        pool: str = "prefork",
        extra_env: dict | None = None,
        name: str | None = None,
        prefetch_multiplier: int | None = None,
        beat_schedule: str | None = None,
    ):
        """``name``, ``prefetch_multiplier`` and ``beat_schedule`` (embeds the beat scheduler) add the
        options scripts/serve gives its workers."""
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "DATABASE_URL": test_database_url(),
            **(extra_env or {}),
        }
        options: list[str] = []
        if name:
            options += ["-n", name]
        if prefetch_multiplier is not None:
            options += ["--prefetch-multiplier", str(prefetch_multiplier)]
        if beat_schedule:
            options += ["-B", "--schedule", beat_schedule]
        log_name = f"test-worker-{os.getpid()}{'-' + name.split('@')[0] if name else ''}.log"
        self.log = open(Path(settings.VAR_DIR) / log_name, "w+")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-Q",
                queues,
                "--concurrency",
                str(concurrency),
                "--pool",
                pool,
                "-l",
                "INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                *options,
            ],
            cwd=REPO_ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.log.seek(0)
            if "ready." in self.log.read():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        self.log.seek(0)
        raise RuntimeError("worker did not start:\n" + self.log.read()[-3000:])

    def kill(self, sig=signal.SIGKILL) -> None:
        """Kill the whole process group (main process and pool children)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


@pytest.fixture
def celery_worker_process(transactional_db):
    started: list[WorkerProcess] = []

    def start(**kwargs) -> WorkerProcess:
        worker = WorkerProcess(**kwargs)
        started.append(worker)
        worker.wait_ready()
        return worker

    yield start
    for worker in started:
        worker.stop()


def wait_for(predicate, *, timeout: float = 60, interval: float = 0.2, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")
