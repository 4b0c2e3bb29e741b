"""``manage.py leaderboard`` end to end: JSON shape, hand-checked numbers, style columns, exit code 2."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from analytics.domain.leaderboard import leaderboard_fit
from tests.analytics.domain.test_leaderboard import _independent_fit, _synthetic

REPO_ROOT = Path(__file__).resolve().parents[3]

# x beats y 3 of 4 in Indonesian (one of them a tie plus a both-bad: 2 + 1/2 + 1/2 = 3 half wins),
# y beats x 2 of 2 in Javanese; z never lost (listed, not rated).
BATTLES = """model_a,model_b,winner,language,category
x,y,model_a,ind,math
y,x,model_b,ind,math
x,y,tie,ind,code
y,x,Tie (bothbad),ind,code
y,x,model_a,jav,code
x,y,model_b,jav,code
z,x,model_a,jav,math
"""


def _write(tmp_path: Path, text: str, name: str = "battles.csv") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _run(path: str, *extra: str) -> dict:
    out = StringIO()
    call_command("leaderboard", "--battles", path, *extra, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_json_output_on_a_hand_checked_file(tmp_path):
    report = _run(_write(tmp_path, BATTLES), "--bootstrap", "50", "--seed", "3")
    by = {row["model"]: row for row in report["models"]}
    # Overall x vs y: x has 2 wins + 2 half wins of 6 = 3 of 6: equal ratings.
    assert by["x"]["rating"] == pytest.approx(1000.0, abs=1e-6) and by["y"]["rating"] == pytest.approx(1000.0)
    assert by["z"]["rated"] is False and by["z"]["battles"] == 1 and by["z"]["rating"] is None
    assert (by["x"]["battles"], by["x"]["ties"], by["x"]["both_bad"]) == (7, 2, 1)
    assert report["n_battles"] == 7 and report["n_used"] == 6
    assert report["bootstrap"] == {"draws": 50, "failed": report["bootstrap"]["failed"], "seed": 3}
    for row in (by["x"], by["y"]):
        assert len(row["ci95"]) == 2 and row["ci95"][0] <= row["rating"] <= row["ci95"][1]
        assert row["rank_range"] == [1, 2]
    assert report["style"] == {"features": [], "coefficients": []}
    assert report["pair_matrix"]["models"] == [row["model"] for row in report["models"]]
    ind = {row["model"]: row for row in report["breakdowns"]["language"]["ind"]["models"]}
    assert ind["x"]["rating"] - ind["y"]["rating"] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert "nothing to rate" in report["breakdowns"]["language"]["jav"]
    assert set(report["breakdowns"]["category"]) == {"code", "math"}


def test_style_control_and_davidson_equal_the_independent_fit(tmp_path):
    battles = _synthetic(n=2000, seed=4, style=True)
    path = tmp_path / "synthetic.csv"
    battles.to_csv(path, index=False)
    report = _run(
        str(path),
        "--ties",
        "davidson",
        "--style-control",
        "length,bold",
        "--bootstrap",
        "0",
        "--no-vote-drop",
    )
    ratings, gamma, nu = _independent_fit(battles, "davidson", ["length", "bold"])
    for row in report["models"]:
        assert row["rating"] == pytest.approx(ratings[row["model"]], abs=1e-6)
    assert [c["gamma"] for c in report["style"]["coefficients"]] == pytest.approx(list(gamma), abs=1e-6)
    assert report["davidson_nu"]["nu"] == pytest.approx(nu, abs=1e-6)
    # The command and the domain function agree exactly (one computation).
    direct = leaderboard_fit(
        battles, ties="davidson", style_features=["length", "bold"], bootstrap=0, vote_drop=False
    ).to_dict()
    assert report["models"] == direct["models"]


def test_tsv_input(tmp_path):
    path = _write(tmp_path, BATTLES.replace(",", "\t"), "battles.tsv")
    assert _run(path, "--bootstrap", "0")["n_battles"] == 7


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (None, (), "no such file"),
        ("model_a,winner\nx,model_a\n", (), "missing column 'model_b'"),
        ("model_a,model_b,winner\nx,y,model_a\nx,y,A\n", (), "line 3: column 'winner': 'A' is not model_a"),
        ("model_a,model_b,winner\nx,y,model_a\nx,x,tie\n", (), "line 3: model_a and model_b are both 'x'"),
        ("model_a,model_b,winner\nx,,tie\n", (), "line 2: column 'model_b' is empty"),
        (
            "model_a,model_b,winner,length_a\nx,y,model_a,3\n",
            ("--style-control", "length"),
            "style feature 'length' needs columns length_a and length_b",
        ),
        (
            "model_a,model_b,winner,length_a,length_b\nx,y,model_a,3,4\ny,x,model_a,long,4\n",
            ("--style-control", "length"),
            "line 3: column 'length_a': 'long' is not a number",
        ),
        (
            "model_a,model_b,winner,length_a,length_b\nx,y,model_a,3,-4\n",
            ("--style-control", "length"),
            "line 2: column 'length_b' is below 0",
        ),
        ("model_a,model_b,winner\nx,y,model_a\n", (), "nothing to rate"),
        (
            "model_a,model_b,winner\nx,y,model_a\ny,x,model_a\n",
            ("--ties", "davidson"),
            "needs at least one tie",
        ),
        ("model_a,model_b,winner\nx,y,model_a\n", ("--style-control", "Len gth"), "not a feature name"),
        ("model_a,model_b,winner\nx,y,model_a\n", ("--bootstrap", "-1"), "--bootstrap must be 0 or more"),
    ],
)
def test_bad_input_is_a_command_error_with_code_2(tmp_path, content, extra, message):
    path = tmp_path / "bad.csv"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError, match=message) as caught:
        call_command("leaderboard", "--battles", str(path), *extra, "--json", stdout=StringIO())
    assert caught.value.returncode == 2
    assert "\n" not in str(caught.value)


def test_real_process_exits_2_with_one_line_and_0_with_json(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    command = [sys.executable, str(REPO_ROOT / "manage.py"), "leaderboard", "--json"]
    bad = _write(tmp_path, "model_a,model_b,winner\nx,y,maybe\n", "bad.csv")
    failed = subprocess.run(
        [*command, "--battles", bad], capture_output=True, text=True, env=env, cwd=REPO_ROOT
    )
    assert failed.returncode == 2 and failed.stdout == ""
    assert failed.stderr.strip().splitlines() == [
        f"CommandError: {bad}: line 2: column 'winner': 'maybe' is not model_a, model_b, tie or tie (bothbad)"
    ]
    wrong_ties = subprocess.run(
        [*command, "--battles", bad, "--ties", "drop"], capture_output=True, text=True, env=env, cwd=REPO_ROOT
    )
    assert wrong_ties.returncode == 2 and len(wrong_ties.stderr.strip().splitlines()) == 1
    ok = subprocess.run(
        [*command, "--battles", _write(tmp_path, BATTLES), "--bootstrap", "20"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
    )
    assert ok.returncode == 0, ok.stderr
    assert {row["model"] for row in json.loads(ok.stdout)["models"]} == {"x", "y", "z"}


def test_table_output(tmp_path):
    out = StringIO()
    call_command("leaderboard", "--battles", _write(tmp_path, BATTLES), "--bootstrap", "0", stdout=out)
    text = out.getvalue()
    assert "never lost or tied" in text and "7 battles, 6 in the fit" in text
