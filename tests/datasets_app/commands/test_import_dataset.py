import json
import os
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from datasets_app.models import Dataset, Prompt, Response
from tests.conftest import REPO_ROOT
from tests.datasets_app.services.test_dataset_import import prompt_rows, write_jsonl

pytestmark = pytest.mark.django_db


def test_json_output_on_a_good_file(tmp_path, capsys):
    path = write_jsonl(tmp_path / "good.jsonl", prompt_rows(7))
    call_command("import_dataset", str(path), "--name", "good", "--json")
    out = json.loads(capsys.readouterr().out)
    assert out["dataset"] == "good" and out["prompts"] == 7 and out["responses"] == 14
    assert out["dataset_id"] == Dataset.objects.get(name="good").pk


def test_bad_line_seven_exits_2_names_line_and_field(tmp_path, capsys):
    rows = prompt_rows(9)
    rows[6]["language"] = 42
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(CommandError) as caught:
        call_command("import_dataset", str(path), "--name", "bad", "--json")
    assert caught.value.returncode == 2
    assert "line 7" in str(caught.value) and "language" in str(caught.value)
    payload = json.loads(capsys.readouterr().out)
    assert payload["errors"] == [
        {"location": "line 7", "field": "language", "message": payload["errors"][0]["message"]}
    ]
    assert Prompt.objects.count() == 0 and Response.objects.count() == 0 and Dataset.objects.count() == 0


def test_process_exit_code_and_one_line_reason(tmp_path):
    """Run the real command in a child process on a throwaway SQLite database."""
    rows = prompt_rows(8)
    rows[6]["prompt"] = ""
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    env = {
        **os.environ,
        "TIMBANG_VAR_DIR": str(tmp_path / "var"),
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
    }
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    manage = [sys.executable, str(REPO_ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=REPO_ROOT)
    done = subprocess.run(
        [*manage, "import_dataset", str(path), "--name", "x"],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert "line 7" in last and "prompt" in last and "nothing written" in last
