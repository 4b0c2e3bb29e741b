"""``manage.py import_study`` on each tool's files, with ``--json``; a bad file exits 2 and writes nothing."""

from __future__ import annotations

import json
import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotation, Project
from tests.annotation.tool_studies import files

pytestmark = pytest.mark.django_db


def _run(*args) -> dict:
    out = StringIO()
    call_command("import_study", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_label_studio_file_with_json_output(tmp_path):
    path = files.write_json(tmp_path / "export.json", files.label_studio_rating_tasks())
    out = _run(str(path), "--tool", "label_studio", "--name", "Studi LS")
    assert out["kind"] == "likert" and out["tool_version"].startswith("Label Studio 1.13")
    assert out["counts"] == {"items": 4, "responses": 4, "annotators": 3, "answers": 11, "values": 19}
    assert out["criteria"] == {"quality": "quality", "correct": "correct"}
    assert Project.objects.get(pk=out["project"]).name == "Studi LS"


def test_zipped_potato_folder_and_dry_run(tmp_path):
    folder = files.write_potato(tmp_path / "annotation_output")
    archive = shutil.make_archive(str(tmp_path / "potato"), "zip", tmp_path, "annotation_output")
    dry = _run(archive, "--tool", "potato", "--name", "P", "--dry-run")
    assert dry["dry_run"] is True and dry["n_answers"] == 11 and dry["n_annotators"] == 3
    assert not Project.objects.exists()
    out = _run(str(folder), "--tool", "potato", "--name", "P")
    assert out["counts"]["answers"] == 11


def test_argilla_folder_with_chosen_fields(tmp_path):
    folder = files.write_argilla(tmp_path / "ds")
    out = _run(
        str(folder),
        "--tool",
        "argilla",
        "--name",
        "A",
        "--prompt-field",
        "prompt",
        "--response-field",
        "answer",
        "--item-id-field",
        "id",
    )
    assert out["counts"]["items"] == 4


def test_bad_file_exits_2_with_every_problem_and_writes_nothing(tmp_path, capsys):
    tasks = files.label_studio_rating_tasks()
    tasks[0]["annotations"][0]["result"][0]["value"]["rating"] = 0
    tasks[2]["data"]["answer"] = 7
    path = files.write_json(tmp_path / "export.json", tasks)
    with pytest.raises(CommandError) as caught:
        call_command("import_study", str(path), "--tool", "label_studio", "--name", "X", "--json")
    assert caught.value.returncode == 2
    printed = json.loads(capsys.readouterr().out)
    assert printed["n_errors"] == 2
    assert printed["errors"] == [
        {
            "file": "export.json",
            "record": "task 3",
            "field": "data.answer",
            "message": "Missing, or not text.",
        },
        {
            "file": "export.json",
            "record": "task 1 annotation 111",
            "field": "result[0].value.rating",
            "message": "Expected a whole number from 1; got 0.",
        },
    ]
    assert not Project.objects.exists() and not Annotation.objects.exists()
    bad_json = tmp_path / "broken.json"
    bad_json.write_text("[{]", encoding="utf-8")
    with pytest.raises(CommandError, match="broken.json: line 1: Not valid JSON"):
        call_command("import_study", str(bad_json), "--tool", "label_studio", "--name", "X")
