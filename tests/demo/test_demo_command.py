import json

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from datasets_app.models import Dataset, Prompt
from evaluation.inference.llamacpp_server import free_port
from evaluation.models import JudgeRun, ModelEndpoint

pytestmark = pytest.mark.django_db


def test_demo_loads_users_and_sample_datasets(capsys):
    call_command("demo", "--json", "--no-model", "--no-simulated")
    payload = json.loads(capsys.readouterr().out)
    users = {u["username"]: u for u in payload["users"]}
    assert {"admin", "manajer", "peneliti", "reviewer", "anotator1"} <= set(users)
    for user in users.values():
        assert authenticate(username=user["username"], password=user["password"]) is not None
    assert users["anotator1"]["roles"] == ["annotator"]
    dataset = Dataset.objects.get(pk=payload["dataset"]["dataset_id"])
    assert payload["dataset"]["prompts"] >= 28
    languages = set(Prompt.objects.filter(dataset=dataset).values_list("language", flat=True))
    assert languages == {"ind", "sun", "jav"}
    kinds = {d["dataset"]: d["kind"] for d in payload["datasets"]}
    assert sorted(kinds.values()) == ["prompts", "questions", "translations"]
    assert payload["endpoint"] is None and payload["judge_run"] is None and payload["export"] is None


def test_demo_prints_the_login_address_it_was_given(capsys):
    call_command(
        "demo", "--password", "x", "--no-model", "--no-simulated", "--site-url", "http://127.0.0.1:8123/"
    )
    out = capsys.readouterr().out
    assert "Demo users (log in at http://127.0.0.1:8123/accounts/login/):" in out and ":8000" not in out


def test_demo_runs_twice_and_prints_passwords(capsys):
    call_command("demo", "--password", "rahasia-demo-1", "--no-model", "--no-simulated")
    call_command("demo", "--password", "rahasia-demo-2", "--no-model", "--no-simulated")
    out = capsys.readouterr().out
    assert "rahasia-demo-2" in out and "anotator1" in out
    assert Dataset.objects.count() == 3
    assert authenticate(username="manajer", password="rahasia-demo-2") is not None


def test_simulated_annotators_cannot_log_in_and_say_what_they_are():
    call_command("demo", "--password", "x", "--no-model", "--no-simulated", stdout=open("/dev/null", "w"))  # noqa: SIM115
    simulated = get_user_model().objects.get(username="simulasi1")
    assert not simulated.has_usable_password()
    assert simulated.get_full_name() == "Simulated annotator (demo data)"


def test_without_a_model_server_the_demo_loads_and_says_how_to_judge_later(capsys):
    url = f"http://127.0.0.1:{free_port()}/v1"
    call_command("demo", "--password", "x", "--prompts", "2", "--model-url", url)
    out = capsys.readouterr().out
    assert f"No model server answers at {url}" in out
    assert "manage.py demo --judge-only" in out
    endpoint = ModelEndpoint.objects.get(slug="demo-llm")
    assert endpoint.base_url == url
    # Its own model queue, which `manage.py model_queues` lists for scripts/serve's model worker.
    assert endpoint.queue == "gpu.demo-llm"
    assert not JudgeRun.objects.exists()
    assert "anotator1" in out  # the users are still printed


def test_judge_only_without_a_loaded_demo_is_a_clear_error():
    with pytest.raises(CommandError, match="The demo is not loaded"):
        call_command("demo", "--judge-only")


def test_prompts_must_be_positive():
    with pytest.raises(CommandError, match="--prompts must be at least 1"):
        call_command("demo", "--prompts", "0")


def test_simulated_answers_are_shared_out_and_take_time(capsys):
    """The three simulated annotators share the k places of every task, and their answers carry times on
    task (the progress page's median) spread over the hours before the demo was loaded."""
    from annotation.models import Assignment, Project
    from annotation.selectors import progress_report
    from demo.services import PAIRWISE_PROJECT, RATING_PROJECT, SIMULATED_GROUP

    call_command("demo", "--password", "x", "--prompts", "6", "--no-model")
    capsys.readouterr()
    for name in (RATING_PROJECT, PAIRWISE_PROJECT):
        project = Project.objects.get(name=name)
        answered = Assignment.objects.filter(project=project, status="submitted")
        per_user = {
            u: answered.filter(annotator__username=u).count() for u in ("simulasi1", "simulasi2", "simulasi3")
        }
        assert sum(per_user.values()) == 2 * project.n_tasks
        assert min(per_user.values()) > 0, per_user
        group = next(g for g in progress_report(project=project).groups if g["group"] == SIMULATED_GROUP)
        assert 25 <= group["median_seconds"] <= 140
        first = answered.order_by("submitted_at").first()
        assert first.submitted_at > first.started_at


def test_the_demo_restores_missing_role_groups(capsys):
    from django.contrib.auth.models import Group

    from accounts.roles import has_role

    Group.objects.all().delete()
    call_command("demo", "--password", "x", "--no-model", "--no-simulated")
    capsys.readouterr()
    assert has_role(get_user_model().objects.get(username="peneliti"), "researcher")
