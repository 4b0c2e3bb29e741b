"""``manage.py taxonomy_shares`` on small label files whose shares are derived by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

LABELS = """question_id,label
q1,fluency
q2,context
q3,no_error
q4,fluency
q5,typo
q5,no_error
q6,invalid_options
q7,no_error
"""


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "labels.csv"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _run(path: str, *extra: str) -> dict:
    out = StringIO()
    call_command("taxonomy_shares", "--input", path, *extra, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_shares_of_one_label_per_question(tmp_path):
    report = _run(_file(tmp_path, LABELS))
    # 7 questions (q5 has two lines, typo and no error: a tie, the error wins): fluency 2, context 1,
    # typo 1, invalid options 1, no error 2. In tenths of a percent 2/7 = 285.71 and 1/7 = 142.86; cut to
    # 285 * 2 + 142 * 3 = 996, the 4 missing tenths go to the largest remainders: the three 1/7 rows, then
    # fluency (before no error in the taxonomy).
    rows = {row["label"]: (row["count"], row["percent"]) for row in report["rows"]}
    assert [row["label"] for row in report["rows"]] == [
        "translation",
        "wrong_language",
        "structure",
        "fluency",
        "context",
        "subjectivity",
        "typo",
        "invalid_options",
        "no_error",
    ]
    assert rows["fluency"] == (2, 28.6) and rows["no_error"] == (2, 28.5)
    assert rows["context"] == rows["typo"] == rows["invalid_options"] == (1, 14.3)
    assert rows["translation"] == (0, 0.0)
    assert sum(round(row["percent"] * 10) for row in report["rows"]) == 1000
    assert (report["n_questions"], report["n_reviews"], report["n_split"]) == (7, 8, 1)
    assert (report["rounding"], report["decimals"]) == ("largest_remainder", 1)


def test_categories_of_an_edited_taxonomy_and_the_text_table(tmp_path):
    path = _file(tmp_path, "question_id,label\nq1,bias\nq2,bias\nq3,no_error\n")
    report = _run(path, "--categories", "typo,bias")
    assert [(r["label"], r["count"], r["percent"]) for r in report["rows"]] == [
        ("typo", 0, 0.0),
        ("bias", 2, 66.7),
        ("no_error", 1, 33.3),
    ]
    out = StringIO()
    call_command("taxonomy_shares", "--input", path, "--categories", "typo,bias", stdout=out)
    assert out.getvalue().splitlines() == [
        "typo           0    0.0%",
        "bias           2   66.7%",
        "no_error       1   33.3%",
        "total          3  100.0%",
    ]


@pytest.mark.parametrize(
    ("text", "extra", "message"),
    [
        ("question_id,label\nq1,fluency\nq2,bias\n", (), "line 3: column 'label': 'bias' is not one of"),
        ("question_id,label\nq1,\n", (), "line 2: column 'label' is empty"),
        ("question,label\nq1,typo\n", (), "missing column 'question_id'"),
        ("question_id,label\n", (), "no reviewed question"),
        ("question_id,label\nq1,typo\n", ("--categories", "typo,,bias"), "--categories: an empty category"),
        ("question_id,label\nq1,typo\n", ("--categories", "typo,no_error"), "not a category name"),
    ],
)
def test_bad_input_is_refused_with_a_reason(tmp_path, text, extra, message):
    with pytest.raises(CommandError, match=message) as caught:
        call_command("taxonomy_shares", "--input", _file(tmp_path, text), *extra, "--json", stdout=StringIO())
    assert caught.value.returncode == 2


def test_bad_input_exits_2_from_the_command_line(tmp_path):
    result = subprocess.run(
        [sys.executable, "manage.py", "taxonomy_shares", "--input", str(tmp_path / "missing.csv"), "--json"],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2 and "no such file" in result.stderr
