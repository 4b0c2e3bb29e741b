"""The compose file: validated by docker-compose when installed, and its services checked here."""

import shutil
import subprocess

import pytest
import yaml

from tests.conftest import REPO_ROOT

COMPOSE = REPO_ROOT / "docker-compose.yml"


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load(COMPOSE.read_text())


def test_services_and_health_checks(compose):
    services = compose["services"]
    assert set(services) >= {"postgres", "redis", "web", "worker", "beat", "gpu-worker"}
    for name in ("postgres", "redis", "web"):
        assert "healthcheck" in services[name], name
    for name in ("web", "worker", "beat", "gpu-worker"):
        depends = services[name]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"


def test_commands(compose):
    services = compose["services"]
    assert "gunicorn" in " ".join(services["web"]["command"]) and "config.wsgi" in " ".join(
        services["web"]["command"]
    )
    worker = " ".join(services["worker"]["command"])
    assert "celery" in worker and "-Q default" in worker
    # Only beat schedules periodic tasks, so workers can be scaled.
    assert "-B" not in services["worker"]["command"] and "beat" in services["beat"]["command"]
    assert services["gpu-worker"]["build"]["args"]["EXTRAS"] == "[gpu,llamacpp]"
    assert services["gpu-worker"]["build"]["args"]["XLLAMACPP_INDEX"].startswith(
        "${XLLAMACPP_INDEX:-https://xorbitsai.github.io/xllamacpp/whl/cu"
    )
    gpu = " ".join(services["gpu-worker"]["command"])
    assert "celery" in gpu and "--prefetch-multiplier 1" in gpu
    assert "--pool threads" in gpu and "--concurrency 3" in gpu
    assert "-B" not in gpu.split() and "-Q default" not in gpu


def test_the_gpu_worker_consumes_the_model_queues_the_command_prints(compose):
    """As docs/deployment.md says: `manage.py model_queues --required` at start, MODEL_QUEUES passed on."""
    command = compose["services"]["gpu-worker"]["command"]
    assert command[:2] == ["sh", "-c"]
    # Compose turns $$ into $ before the shell sees it.
    script = command[2].replace("$$", "$")
    assert script.startswith(
        "queues=$(python manage.py model_queues --required) && MODEL_QUEUES_FOLLOW=1 exec celery "
    )
    assert '-Q "$queues"' in script and "-n models@%h" in script
    assert compose["services"]["gpu-worker"]["environment"]["MODEL_QUEUES"] == "${MODEL_QUEUES:-}"
    assert "\nMODEL_QUEUES=" in (REPO_ROOT / ".env.example").read_text()
    deployment = (REPO_ROOT / "docs" / "deployment.md").read_text()
    assert "python manage.py model_queues --required" in deployment and "`MODEL_QUEUES`" in deployment


def test_gpu_worker_reserves_an_nvidia_device(compose):
    devices = compose["services"]["gpu-worker"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]


def test_production_settings_and_env_file(compose):
    env_example = (REPO_ROOT / ".env.example").read_text()
    for name in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS"):
        assert f"{name}=" in env_example
    for name in ("web", "worker", "gpu-worker"):
        service = compose["services"][name]
        environment = service["environment"]
        assert environment["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
        # Required secrets are substituted with ${VAR:?message}, so compose stops when one is missing.
        assert ":?" in environment["SECRET_KEY"] and ":?" in environment["ALLOWED_HOSTS"]
        assert environment["DATABASE_URL"].startswith("postgres://") and environment["REDIS_URL"].startswith(
            "redis://"
        )


@pytest.mark.skipif(
    shutil.which("docker-compose") is None, reason="docker-compose (v1) not installed; .ci/run installs it"
)
def test_docker_compose_config_is_valid(tmp_path):
    """Validates with .env.example's values, then fails when a required secret is missing."""
    env_file = tmp_path / ".env"
    env_file.write_text((REPO_ROOT / ".env.example").read_text())
    done = subprocess.run(
        [
            "docker-compose",
            "-f",
            str(COMPOSE),
            "--project-directory",
            str(REPO_ROOT),
            "--env-file",
            str(env_file),
            "config",
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    env_file.write_text("ALLOWED_HOSTS=x\nPOSTGRES_PASSWORD=y\n")
    missing = subprocess.run(
        [
            "docker-compose",
            "-f",
            str(COMPOSE),
            "--project-directory",
            str(REPO_ROOT),
            "--env-file",
            str(env_file),
            "config",
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode != 0 and "SECRET_KEY" in missing.stderr


def test_endpoint_and_token_settings_reach_web_and_workers(compose):
    env_example = (REPO_ROOT / ".env.example").read_text()
    names = ("MODEL_KEY_ENV_PREFIX", "MODEL_KEY_ENV_NAMES", "MODEL_ENDPOINT_HOSTS", "API_TOKEN_LIFETIME_DAYS")
    for name in names:
        assert f"\n{name}=" in env_example, name
    # The web server checks endpoints on create and edit, the workers before every run: the same values.
    for service in ("web", "worker", "gpu-worker"):
        environment = compose["services"][service]["environment"]
        assert [environment[name].split(":-")[0] for name in names] == [f"${{{name}" for name in names]
    assert compose["services"]["web"]["environment"]["MODEL_KEY_ENV_PREFIX"].endswith(":-TIMBANG_MODEL_KEY_}")
