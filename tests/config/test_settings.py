import os
import subprocess
import sys

from tests.conftest import REPO_ROOT


def run_check(env_overrides: dict[str, str], *, settings: str) -> subprocess.CompletedProcess:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "ALLOWED_HOSTS")
    }
    env.update(env_overrides)
    env["DJANGO_SETTINGS_MODULE"] = settings
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_refuses_to_start_without_secrets(tmp_path):
    done = run_check(
        {"TIMBANG_VAR_DIR": str(tmp_path), "DATABASE_URL": "postgres://u@127.0.0.1/x"},
        settings="config.settings.production",
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "SECRET_KEY" in lines[0] and "REDIS_URL" in lines[0] and "ALLOWED_HOSTS" in lines[0]
    assert "DATABASE_URL" not in lines[0]


def test_production_starts_with_secrets(tmp_path):
    done = run_check(
        {
            "TIMBANG_VAR_DIR": str(tmp_path),
            "SECRET_KEY": "x" * 60,
            "DATABASE_URL": "postgres://u@127.0.0.1:5432/x",
            "REDIS_URL": "redis://127.0.0.1:6379/0",
            "ALLOWED_HOSTS": "timbang.example.org",
        },
        settings="config.settings.production",
    )
    assert done.returncode == 0, done.stderr


def test_embedded_default_needs_no_environment(tmp_path):
    env = {"TIMBANG_VAR_DIR": str(tmp_path)}
    code = (
        "import django; django.setup(); from django.conf import settings as s;"
        "print(s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL, s.CACHES['default']['BACKEND'])"
    )
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env={**clean, **env, "DJANGO_SETTINGS_MODULE": "config.settings.local"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    engine, broker, cache = done.stdout.split()
    assert (
        engine == "django.db.backends.sqlite3"
        and broker == "filesystem://"
        and cache.endswith("FileBasedCache")
    )
    assert (tmp_path / "broker" / "queue").is_dir()


def test_the_suite_writes_under_a_scratch_folder_not_the_checkouts_var(settings):
    """Running the tests never touches the var/ of a demo or deployment in the same checkout."""
    var = (REPO_ROOT / "var").resolve()
    for name in ("VAR_DIR", "EXPORTS_DIR", "UPLOADS_DIR", "MEDIA_ROOT", "BROKER_DIR"):
        path = getattr(settings, name).resolve()
        assert path != var and var not in path.parents, f"{name} = {path} lies in the checkout's var/"


def _settings_value(name: str, env_overrides: dict[str, str], tmp_path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"TIMBANG_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "config.settings.base"})
    env.update(env_overrides)
    code = f"import django; django.setup(); from django.conf import settings as s; print(repr(s.{name}))"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_endpoint_and_token_settings_are_read_from_the_environment(tmp_path):
    assert _settings_value("MODEL_KEY_ENV_PREFIX", {}, tmp_path).stdout.strip() == "'TIMBANG_MODEL_KEY_'"
    assert _settings_value("API_TOKEN_LIFETIME_DAYS", {}, tmp_path).stdout.strip() == "90"
    hosts = _settings_value(
        "MODEL_ENDPOINT_HOSTS", {"MODEL_ENDPOINT_HOSTS": "gpu-1.internal,.example.org"}, tmp_path
    )
    assert hosts.stdout.strip() == "['gpu-1.internal', '.example.org']"
    names = _settings_value("MODEL_KEY_ENV_NAMES", {"MODEL_KEY_ENV_NAMES": ""}, tmp_path)
    assert names.stdout.strip() == "[]"


def test_bad_endpoint_and_token_settings_stop_start_up_with_the_reason(tmp_path):
    negative = _settings_value("API_TOKEN_LIFETIME_DAYS", {"API_TOKEN_LIFETIME_DAYS": "-1"}, tmp_path)
    assert negative.returncode != 0 and "API_TOKEN_LIFETIME_DAYS must be 0 (never)" in negative.stderr
    lower = _settings_value("MODEL_KEY_ENV_PREFIX", {"MODEL_KEY_ENV_PREFIX": "timbang_"}, tmp_path)
    assert lower.returncode != 0 and "MODEL_KEY_ENV_PREFIX must be capital letters" in lower.stderr


def test_email_goes_to_the_console_embedded_and_to_smtp_from_email_url(tmp_path):
    embedded = _settings_value("EMAIL_BACKEND", {"EMAIL_URL": ""}, tmp_path)
    assert embedded.stdout.strip() == "'django.core.mail.backends.console.EmailBackend'"
    smtp = _settings_value(
        "EMAIL_BACKEND + ' ' + s.EMAIL_HOST + ' ' + str(s.EMAIL_PORT) + ' ' + str(s.EMAIL_USE_TLS)",
        {"EMAIL_URL": "smtp+tls://mailer:secret@smtp.example.org:587"},
        tmp_path,
    )
    assert smtp.stdout.strip() == "'django.core.mail.backends.smtp.EmailBackend smtp.example.org 587 True'"


_SUITE_PROCESS = """
import os, subprocess, sys
from django.conf import settings as s
print(s.CELERY_BROKER_URL, os.environ["REDIS_URL"], s.VAR_DIR)
# A Celery worker started by a test inherits this process's environment.
sys.stdout.flush()
subprocess.run([sys.executable, "-c", "from django.conf import settings as s; import os;"
                "print(s.CELERY_BROKER_URL, os.environ['REDIS_URL'], s.VAR_DIR)"], check=True)
"""


def _suite_process(worker: str, controller_var) -> list[list[str]]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "PYTEST_XDIST_WORKER", "TIMBANG_TEST_PROCESS")
    }
    # What pytest-xdist's processes inherit from the controlling one: its scratch folder and marker.
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.test",
        REDIS_URL="redis://127.0.0.1:6379/3",
        TIMBANG_VAR_DIR=str(controller_var),
        TIMBANG_TEST_PROCESS="",
        PYTEST_XDIST_WORKER=worker,
    )
    done = subprocess.run(
        [sys.executable, "-c", _SUITE_PROCESS],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [line.split() for line in done.stdout.splitlines()]


def test_parallel_suite_processes_get_their_own_redis_database_and_folder_and_pass_them_on(tmp_path):
    controller_var = tmp_path / "controller"
    first = _suite_process("gw0", controller_var)
    second = _suite_process("gw1", controller_var)
    # Each process: the databases after REDIS_URL's, a folder of its own; its child sees the same.
    assert first[0] == first[1] and second[0] == second[1]
    assert first[0][:2] == ["redis://127.0.0.1:6379/4", "redis://127.0.0.1:6379/4"]
    assert second[0][:2] == ["redis://127.0.0.1:6379/5", "redis://127.0.0.1:6379/5"]
    assert len({first[0][2], second[0][2], str(controller_var)}) == 3
