"""The home page says the demo model is still starting until the demo's judge run exists, and says so when the
model server never answered.

`make demo` loads the demo with ``--no-judge`` and starts the web server before the model answers; the judge
run is queued by ``--judge-only`` once it does. The real SmolLM2 server (``llamacpp_server``) answers here.
"""

import socket

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command
from django.urls import reverse

from demo.selectors import demo_model_state
from evaluation.models import JudgeRun, ModelEndpoint

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_state_left_in_the_cache():
    cache.clear()
    yield
    cache.clear()


NOTICE_EN = "The demo model is starting; the judge run begins when it answers."
NOTICE_ID = "Model demo sedang dimuat; penilaian oleh juri dimulai begitu model menjawab."


def _home(client, language: str) -> str:
    client.post(reverse("set_language"), {"language": language, "next": reverse("home")})
    return client.get(reverse("home")).content.decode()


def _load_demo_without_judge(model_url: str, model_id: str, *more: str) -> None:
    """The demo as `make demo` loads it before the model answers: `--no-judge`, one sample prompt."""
    call_command(
        "demo",
        *("--password", "demo-pass", "--no-simulated", "--prompts", "1"),
        *("--model-url", model_url, "--model-id", model_id, "--no-judge", *more),
    )


def test_the_notice_shows_until_the_judge_run_is_queued(client, llamacpp_server, llamacpp_model_id, capsys):
    _load_demo_without_judge(llamacpp_server, llamacpp_model_id, "--max-concurrency", "4")
    endpoint = ModelEndpoint.objects.get(slug="demo-llm")
    assert endpoint.max_concurrency == 4  # as many requests at once as the model server has slots
    assert not JudgeRun.objects.exists()
    assert demo_model_state() == {"state": "starting"}
    assert client.login(username="peneliti", password="demo-pass")
    assert NOTICE_EN in _home(client, "en")
    assert NOTICE_ID in _home(client, "id")

    call_command("demo", "--judge-only", "--wait-model", "30", "--judge-orders", "random")

    assert "queued" in capsys.readouterr().out
    assert JudgeRun.objects.filter(endpoint=endpoint).count() == 1
    assert demo_model_state() is None
    assert NOTICE_EN not in _home(client, "en")
    assert NOTICE_ID not in _home(client, "id")


def test_no_notice_without_a_demo_model(client, capsys):
    call_command("demo", "--password", "demo-pass", "--no-simulated", "--prompts", "1", "--no-model")
    assert demo_model_state() is None
    assert client.login(username="peneliti", password="demo-pass")
    assert NOTICE_EN not in _home(client, "en")


def test_max_concurrency_below_one_is_refused():
    with pytest.raises(Exception, match="--max-concurrency must be at least 1"):
        call_command("demo", "--no-model", "--max-concurrency", "0")


@pytest.fixture
def unused_tcp_port_url() -> str:
    """An address on this host where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


UNREACHABLE_EN = "The demo model did not answer within 2 s, so the demo goes on without the judge run."
UNREACHABLE_ID = "Model demo tidak menjawab dalam 2 detik, jadi demo berjalan tanpa penilaian oleh juri."


def test_a_model_that_never_answers_is_said_so_and_the_notice_clears_once_it_does(
    client, llamacpp_server, llamacpp_model_id, unused_tcp_port_url, capsys
):
    _load_demo_without_judge(unused_tcp_port_url, llamacpp_model_id)
    with pytest.raises(Exception, match="No model server answers at"):
        call_command("demo", "--judge-only", "--wait-model", "2", "--judge-orders", "random")
    assert not JudgeRun.objects.exists()
    assert demo_model_state() == {"state": "unreachable", "waited_s": 2}
    assert client.login(username="peneliti", password="demo-pass")
    english = _home(client, "en")
    assert UNREACHABLE_EN in english and NOTICE_EN not in english
    assert "python manage.py demo --judge-only" in english
    assert UNREACHABLE_ID in _home(client, "id")

    # The model server comes up at another address; the run starts and the notice is gone.
    ModelEndpoint.objects.filter(slug="demo-llm").update(base_url=llamacpp_server)
    call_command("demo", "--judge-only", "--wait-model", "30", "--judge-orders", "random")
    assert JudgeRun.objects.count() == 1
    assert demo_model_state() is None
    assert UNREACHABLE_EN not in _home(client, "en")


def test_loading_the_demo_again_forgets_a_model_that_failed_before(
    client, llamacpp_model_id, unused_tcp_port_url
):
    """`make demo` run again after a model server that never answered: while the new one starts, the home
    page says it is starting, not that it failed."""
    _load_demo_without_judge(unused_tcp_port_url, llamacpp_model_id)
    with pytest.raises(Exception, match="No model server answers at"):
        call_command("demo", "--judge-only", "--wait-model", "1", "--judge-orders", "random")
    assert demo_model_state()["state"] == "unreachable"

    _load_demo_without_judge(unused_tcp_port_url, llamacpp_model_id)
    assert demo_model_state() == {"state": "starting"}
    assert client.login(username="peneliti", password="demo-pass")
    assert NOTICE_EN in _home(client, "en")


def test_judge_samples_queue_a_sampled_run_for_the_judge_lab(llamacpp_server, llamacpp_model_id, capsys):
    _load_demo_without_judge(llamacpp_server, llamacpp_model_id)
    call_command(
        "demo", "--judge-only", "--wait-model", "30", "--judge-orders", "random", "--judge-samples", "3"
    )
    run = JudgeRun.objects.get()
    assert run.config["samples"] == 3 and run.config["sampling"]["temperature"] == 0.6
    assert run.n_total % 3 == 0  # every pair three times


def test_judge_samples_out_of_range_are_refused():
    with pytest.raises(CommandError, match="--judge-samples must be from 1 to 10"):
        call_command("demo", "--no-model", "--judge-samples", "0")
