import json

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from datasets_app.models import Dataset, Prompt

pytestmark = pytest.mark.django_db


def test_demo_loads_users_and_sample_dataset(capsys):
    call_command("demo", "--json")
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


def test_demo_runs_twice_and_prints_passwords(capsys):
    call_command("demo", "--password", "rahasia-demo-1")
    call_command("demo", "--password", "rahasia-demo-2")
    out = capsys.readouterr().out
    assert "rahasia-demo-2" in out and "anotator1" in out
    assert Dataset.objects.count() == 1
    assert authenticate(username="manajer", password="rahasia-demo-2") is not None
