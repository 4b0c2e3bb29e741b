"""``manage.py export_preferences``: JSON output, files, exit codes (2 bad input, 1 failed export)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from exports.models import Export

# The rated likert and pairwise projects of the export tests (see that conftest for the plans).
from tests.exports import conftest as rated

pytestmark = pytest.mark.django_db

annotators = rated.annotators
make_rating_project = rated.make_rating_project
likert_project = rated.likert_project
pairwise_project = rated.pairwise_project


def export(*args: str) -> tuple[dict, str]:
    out, err = StringIO(), StringIO()
    call_command("export_preferences", *args, "--bootstrap-draws", "50", stdout=out, stderr=err)
    return (json.loads(out.getvalue()) if "--json" in args else {}), out.getvalue()


def refused(*args: str) -> CommandError:
    with pytest.raises(CommandError) as caught:
        export(*args)
    return caught.value


def test_json_output_lists_counts_and_files(likert_project, tmp_path):
    out = tmp_path / "likert"
    result, _ = export(
        "--project", str(likert_project.pk), "--out", str(out), "--min-margin", "2", "--json", "--zip"
    )
    assert result["status"] == "succeeded" and result["error"] is None
    assert result["format"] == "hf" and result["strategy"] == "scores"
    assert result["folder"] == str(out.resolve())
    assert result["files"] == ["README.md", "data/train-00000-of-00001.parquet"]
    assert result["zip"] == str(out.resolve()) + ".zip"
    # Per prompt zeta>omega has margin 1.5 < 2: 2 of the 6 pairs dropped.
    assert result["counts"]["pairs"]["pairs_out"] == 4
    assert result["counts"]["pairs"]["below_margin_dropped"] == 2
    assert result["options"]["min_margin"] == 2.0 and result["options"]["seed"] == likert_project.seed
    assert result["hub"] is None
    record = Export.objects.get(pk=result["export_id"])
    assert record.status == "succeeded" and record.created_by is None


def test_strategy_weights_and_split_options(likert_project, tmp_path):
    result, _ = export(
        "--project", str(likert_project.pk), "--out", str(tmp_path / "a"), "--json",
        "--weights", "fluency=1", "--split", "test=0.1", "--seed", "9", "--license", "cc0-1.0",
    )  # fmt: skip
    assert result["counts"]["pairs"]["ties_dropped"] == 2  # zeta = omega on fluency, per prompt
    assert result["options"]["weights"] == {"fluency": 1.0} and result["options"]["test_size"] == 0.1
    assert 'license: "cc0-1.0"' in (tmp_path / "a" / "README.md").read_text(encoding="utf-8")
    result, _ = export(
        "--project",
        str(likert_project.pk),
        "--out",
        str(tmp_path / "b"),
        "--json",
        "--strategy",
        "best_vs_rest",
    )
    assert result["counts"]["pairs"]["pairs_out"] == 2


def test_raw_format(pairwise_project, tmp_path):
    result, _ = export(
        "--project",
        str(pairwise_project.pk),
        "--out",
        str(tmp_path / "raw"),
        "--format",
        "raw-jsonl",
        "--json",
    )
    assert result["files"] == ["README.md", "annotations.jsonl"]
    # 3 annotators x 6 pair tasks, each a vote and a rationale.
    assert result["counts"]["rows"] == 36


def test_plain_output_is_a_summary(pairwise_project, tmp_path):
    _, text = export(
        "--project", str(pairwise_project.pk), "--out", str(tmp_path / "p"), "--provenance", "crowd"
    )
    assert text.startswith("Export ") and "3 pairs (train 3)" in text
    card = (tmp_path / "p" / "README.md").read_text(encoding="utf-8")
    assert 'annotations_creators:\n- "crowdsourced"' in card and "Crowd workers judged" in card


def test_unknown_project_exits_2(tmp_path):
    error = refused("--project", "987654", "--out", str(tmp_path / "x"))
    assert error.returncode == 2 and str(error) == "no project with id 987654"


def test_bad_split_exits_2_with_one_line(likert_project, tmp_path):
    error = refused("--project", str(likert_project.pk), "--out", str(tmp_path / "x"), "--split", "test=1.5")
    assert error.returncode == 2
    assert str(error) == "split: bad split spec 'test=1.5': the test share must lie in [0, 1)"
    assert "\n" not in str(error)
    error = refused("--project", str(likert_project.pk), "--out", str(tmp_path / "x"), "--split", "half")
    assert error.returncode == 2 and "expected test=FRACTION" in str(error)
    assert Export.objects.count() == 0


def test_bad_input_with_json_prints_the_errors(pairwise_project, tmp_path):
    out = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command(
            "export_preferences", "--project", str(pairwise_project.pk), "--out", str(tmp_path / "x"),
            "--strategy", "scores", "--json", stdout=out,
        )  # fmt: skip
    assert caught.value.returncode == 2
    printed = json.loads(out.getvalue())
    assert printed["errors"] == {"strategy": "a pairwise project exports with pairwise_majority, not scores"}


def test_occupied_folder_exits_2_unless_it_is_an_export_and_overwrite_is_given(likert_project, tmp_path):
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("keep me")
    error = refused("--project", str(likert_project.pk), "--out", str(occupied), "--overwrite")
    assert error.returncode == 2 and "exists and is not empty" in str(error)
    assert (occupied / "notes.txt").read_text() == "keep me"

    target = tmp_path / "export"
    export("--project", str(likert_project.pk), "--out", str(target))
    assert refused("--project", str(likert_project.pk), "--out", str(target)).returncode == 2
    result, _ = export(
        "--project",
        str(likert_project.pk),
        "--out",
        str(target),
        "--overwrite",
        "--json",
        "--min-margin",
        "4",
    )
    assert result["counts"]["split_rows"] == {"train": 2}


def test_failed_export_exits_1_and_reports(likert_project, tmp_path):
    out = StringIO()
    with pytest.raises(CommandError) as caught:
        call_command(
            "export_preferences", "--project", str(likert_project.pk), "--out", str(tmp_path / "x"),
            "--min-agreement", "0.9", "--json", stdout=out,
        )  # fmt: skip
    assert caught.value.returncode == 1
    printed = json.loads(out.getvalue())
    assert printed["status"] == "failed" and printed["error"].startswith("no preference pairs came out")
    assert not (tmp_path / "x").exists()
