"""The home page says the demo model is still starting until the demo's judge run exists.

`make demo` loads the demo with ``--no-judge`` and starts the web server before the model answers; the judge
run is queued by ``--judge-only`` once it does. The real SmolLM2 server (``llamacpp_server``) answers here.
"""

import pytest
from django.core.management import call_command
from django.urls import reverse

from demo.selectors import demo_model_starting
from evaluation.models import JudgeRun, ModelEndpoint

pytestmark = pytest.mark.django_db

NOTICE_EN = "The demo model is starting; the judge run begins when it answers."
NOTICE_ID = "Model demo sedang dimuat; penilaian oleh juri dimulai begitu model menjawab."


def _home(client, language: str) -> str:
    client.post(reverse("set_language"), {"language": language, "next": reverse("home")})
    return client.get(reverse("home")).content.decode()


def test_the_notice_shows_until_the_judge_run_is_queued(client, llamacpp_server, llamacpp_model_id, capsys):
    call_command(
        "demo",
        "--password",
        "demo-pass",
        "--no-simulated",
        "--prompts",
        "1",
        "--model-url",
        llamacpp_server,
        "--model-id",
        llamacpp_model_id,
        "--no-judge",
        "--max-concurrency",
        "4",
    )
    endpoint = ModelEndpoint.objects.get(slug="demo-llm")
    assert endpoint.max_concurrency == 4  # as many requests at once as the model server has slots
    assert not JudgeRun.objects.exists()
    assert demo_model_starting()
    assert client.login(username="peneliti", password="demo-pass")
    assert NOTICE_EN in _home(client, "en")
    assert NOTICE_ID in _home(client, "id")

    call_command("demo", "--judge-only", "--wait-model", "30", "--judge-orders", "random")

    assert "queued" in capsys.readouterr().out
    assert JudgeRun.objects.filter(endpoint=endpoint).count() == 1
    assert not demo_model_starting()
    assert NOTICE_EN not in _home(client, "en")
    assert NOTICE_ID not in _home(client, "id")


def test_no_notice_without_a_demo_model(client, capsys):
    call_command("demo", "--password", "demo-pass", "--no-simulated", "--prompts", "1", "--no-model")
    assert not demo_model_starting()
    assert client.login(username="peneliti", password="demo-pass")
    assert NOTICE_EN not in _home(client, "en")


def test_max_concurrency_below_one_is_refused():
    with pytest.raises(Exception, match="--max-concurrency must be at least 1"):
        call_command("demo", "--no-model", "--max-concurrency", "0")
