"""``manage.py check --deploy`` is clean under the production settings with real-looking secrets."""

from __future__ import annotations

import os
import secrets
import string
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KEY_ALPHABET = string.ascii_letters + string.digits + "!@#%^&*(-_=+)"


def _check(tmp_path: Path, **overrides: str) -> subprocess.CompletedProcess:
    env = {
        key: value
        for key, value in os.environ.items()
        if key
        not in (
            "DJANGO_SETTINGS_MODULE",
            "SECRET_KEY",
            "DEBUG",
            "SECURE_SSL_REDIRECT",
            "SECURE_HSTS_SECONDS",
            "DJANGO_ALLOW_ASYNC_UNSAFE",
        )
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        SECRET_KEY="".join(secrets.choice(KEY_ALPHABET) for _ in range(60)),
        DATABASE_URL="postgres://timbang:pw@127.0.0.1:5432/timbang",
        REDIS_URL="redis://127.0.0.1:6379/0",
        ALLOWED_HOSTS="timbang.example.org",
        TIMBANG_VAR_DIR=str(tmp_path / "var"),
    )
    env.update(overrides)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_deploy_check_is_clean_in_production(tmp_path):
    done = _check(tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "System check identified no issues (0 silenced)." in output


def test_deploy_check_catches_a_weak_key(tmp_path):
    """The same command fails on a short key, so the clean run above is a real check."""
    done = _check(tmp_path, SECRET_KEY="short-key")
    assert done.returncode != 0
    assert "security.W009" in done.stdout + done.stderr
