"""`scripts/demo`, what `make demo` runs after installing and migrating, on the embedded default.

A real run in a scratch folder (``TIMBANG_VAR_DIR``): SQLite, the filesystem broker, llama.cpp's server over
SmolLM2 from PyPI, runserver and a Celery worker. It must print the users, serve the login page, and the
worker must finish the demo's judge run through the filesystem broker; the export is on disk. One sample
prompt (3 pairs, one order each) keeps it to about a minute on two cores.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from evaluation.inference.llamacpp_server import free_port
from tests.conftest import REPO_ROOT

# The embedded default: no database or broker URLs, the project's own default settings.
_DROP = ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "CELERY_TASK_ALWAYS_EAGER")


def _wait(check, timeout: float, what: str, log: Path):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(1.0)
    pytest.fail(f"{what} within {timeout:.0f} s; scripts/demo said:\n{log.read_text()[-4000:]}")


def _query(db: Path, sql: str):
    if not db.exists():
        return None
    with sqlite3.connect(db, timeout=5) as conn:
        try:
            return conn.execute(sql).fetchone()
        except sqlite3.OperationalError:  # tables not there yet, or the writer holds the lock
            return None


def _login_page(url: str) -> bool:
    try:
        return httpx.get(url, timeout=3).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.mark.timeout(900)
def test_scripts_demo_serves_the_login_page_and_the_worker_judges_the_pairwise_project(
    tmp_path, smollm2_gguf
):
    pytest.importorskip("xllamacpp", reason="xllamacpp is not installed (`make install` installs it)")
    var = tmp_path / "var"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in _DROP}
    env.update(
        TIMBANG_VAR_DIR=str(var),
        DEMO_MODEL="smollm2-135m-instruct",
        DEMO_PASSWORD="demo-e2e-pass",
        DEMO_ARGS="--prompts 1 --judge-orders random --max-tokens 120",
        MODEL_PORT=str(free_port()),
        PORT=str(port),
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO_ROOT, env=env, check=True
    )
    log = tmp_path / "demo.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            ["./scripts/demo"],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    db = var / "timbang.sqlite3"
    try:
        _wait(lambda: _login_page(f"http://127.0.0.1:{port}/accounts/login/"), 300, "no login page", log)
        # The login page answers while the demo data is still loading; the users are printed after it.
        _wait(lambda: "anotator1" in log.read_text(), 300, "the demo users were not printed", log)
        printed = log.read_text()
        assert "demo-e2e-pass" in printed, printed[-3000:]
        # The printed login address is the one the web server listens on, not a fixed 8000.
        assert f"log in at http://127.0.0.1:{port}/accounts/login/" in printed, printed[-3000:]
        # The web server does not wait for the model; the judge run is queued once the model answers.
        _wait(lambda: "queued" in log.read_text(), 300, "the judge run was not queued", log)
        printed = log.read_text()
        assert "Judge run" in printed, printed[-3000:]

        def judged():
            row = _query(
                db, "SELECT status, n_done, n_total FROM evaluation_judgerun ORDER BY id DESC LIMIT 1"
            )
            return row if row and row[0] in ("succeeded", "failed", "cancelled") else None

        status, n_done, n_total = _wait(judged, 600, "the worker did not finish the judge run", log)
        assert (status, n_done, n_total) == ("succeeded", 3, 3)
        verdicts = _query(db, "SELECT COUNT(*) FROM evaluation_pairverdict")
        assert verdicts == (3,)
        export = _query(db, "SELECT status, zip_path FROM datasets_app_export ORDER BY id DESC LIMIT 1")
        assert export[0] == "succeeded" and Path(export[1]).is_file()
    finally:
        _stop_group(proc)


def _stop_group(proc: subprocess.Popen) -> None:
    """Stop scripts/demo and everything it started (one process group): politely, then for sure, so no
    worker or server outlives the test."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        proc.poll()  # reap the script itself, or the group never looks empty
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.5)
    else:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=10)
