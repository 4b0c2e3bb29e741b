"""``manage.py agreement`` end to end: JSON shape, numbers, and exit code 2 on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

REPO_ROOT = Path(__file__).resolve().parents[3]

# Krippendorff (2011), section C, as long rows; the fourth observer's last value is missing.
PAPER = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _paper_csv(path: Path, *, criterion: str | None = None, group: bool = False) -> Path:
    header = "unit,coder,value" + (",criterion" if criterion else "") + (",group" if group else "")
    lines = [header]
    for coder, row in enumerate(PAPER):
        for unit, value in enumerate(row):
            cells = [f"u{unit + 1}", f"c{coder + 1}", "" if value is None else str(value)]
            if criterion:
                cells.append(criterion)
            if group:
                cells.append("g1" if coder < 2 else "g2")
            lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(*args: str) -> dict:
    out = StringIO()
    call_command("agreement", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_json_report_for_the_paper_example(tmp_path):
    report = _run("--input", str(_paper_csv(tmp_path / "r.csv")), "--level", "interval", "--bootstrap", "200")
    assert round(report["alpha"], 3) == 0.849
    assert (report["n_units"], report["n_coders"], report["n_pairable_values"]) == (11, 4, 40)
    assert report["undefined_reason"] is None
    lo, hi = report["ci95"]
    assert lo <= report["alpha"] <= hi
    assert set(report["q_below"]) == {"0.667", "0.8"}
    assert report["bootstrap"] == {"draws": 200, "n_defined": 200, "seed": 0}
    assert report["ac1"] is None  # only at the nominal level
    # Four observers with a missing value: neither kappa's design holds, and the report says why.
    assert (report["cohen_kappa"], report["fleiss_kappa"]) == (None, None)
    assert report["kappa_undefined_reasons"] == {
        "cohen": "not two coders",
        "fleiss": "unequal numbers of ratings per unit",
    }
    assert [row["coder"] for row in report["leave_one_out"]] and report["between_groups"] is None


def test_nominal_adds_ac1_and_seed_makes_it_reproducible(tmp_path):
    path = str(_paper_csv(tmp_path / "r.csv"))
    args = ("--input", path, "--level", "nominal", "--bootstrap", "100", "--seed", "9", "--alpha-min", "0.5")
    first, second = _run(*args), _run(*args)
    assert first == second
    assert round(first["alpha"], 3) == 0.743
    assert first["ac1"] is not None and 0 < first["percent_agreement"] <= 1
    assert list(first["q_below"]) == ["0.5"]


def test_criterion_column_gives_one_report_per_criterion(tmp_path):
    relevance = _paper_csv(tmp_path / "a.csv", criterion="relevance").read_text().splitlines()
    fluency = _paper_csv(tmp_path / "b.csv", criterion="fluency").read_text().splitlines()[1:]
    path = tmp_path / "both.csv"
    path.write_text("\n".join(relevance + fluency) + "\n", encoding="utf-8")
    report = _run("--input", str(path), "--level", "ordinal", "--bootstrap", "0")
    assert sorted(report) == ["fluency", "relevance"]
    assert report["fluency"]["criterion"] == "fluency"
    assert round(report["relevance"]["alpha"], 3) == 0.815
    assert report["relevance"]["ci95"] is None


def test_group_column_gives_breakdown_and_between_groups(tmp_path):
    report = _run(
        "--input", str(_paper_csv(tmp_path / "g.csv", group=True)), "--level", "interval", "--bootstrap", "0"
    )
    assert [row["group"] for row in report["breakdowns"]["group"]] == ["g1", "g2"]
    between = report["between_groups"]
    assert between["groups"] == ["g1", "g2"] and between["n_shared_units"] == 10
    assert between["alpha_pooled"] == pytest.approx(report["alpha"])


def test_readable_table_without_json(tmp_path):
    out = StringIO()
    call_command("agreement", "--input", str(_paper_csv(tmp_path / "r.csv")), "--level", "ratio", stdout=out)
    text = out.getvalue()
    assert "alpha              0.797" in text and "95% CI" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("unit,value\nu1,3\n", "missing column 'coder'"),
        ("unit,coder,value\nu1,c1,3\nu1,c2,x\n", "line 3: column 'value': 'x' is not a number"),
    ],
)
def test_bad_input_is_a_command_error_with_code_2(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError, match=message) as caught:
        call_command("agreement", "--input", str(path), "--level", "interval", "--json", stdout=StringIO())
    assert caught.value.returncode == 2


def test_real_process_exits_2_with_one_line(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    command = [sys.executable, str(REPO_ROOT / "manage.py"), "agreement", "--level", "nominal", "--json"]
    missing = subprocess.run(
        [*command, "--input", str(tmp_path / "absent.csv")],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
    )
    assert missing.returncode == 2
    assert missing.stdout == ""
    assert missing.stderr.strip().splitlines() == [f"CommandError: {tmp_path / 'absent.csv'}: no such file"]
    no_input = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO_ROOT)
    assert no_input.returncode == 2
    assert len(no_input.stderr.strip().splitlines()) == 1 and "--input" in no_input.stderr
    ok = subprocess.run(
        [*command, "--input", str(_paper_csv(tmp_path / "r.csv")), "--bootstrap", "10"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
    )
    assert ok.returncode == 0, ok.stderr
    assert round(json.loads(ok.stdout)["alpha"], 3) == 0.743


def test_both_kappas_for_two_coders_on_every_unit(tmp_path):
    # Two coders, four units: (a, a), (a, b), (b, b), (b, b). p_o = 3/4; coder 1 a/b half each, coder 2
    # a 1/4 and b 3/4: Cohen's p_e = 1/2, kappa = 1/2. Fleiss: p = (3/8, 5/8), P_e = 34/64,
    # kappa = (3/4 - 34/64) / (30/64) = 7/15.
    rows = [
        "unit,coder,value",
        "u1,c1,a",
        "u1,c2,a",
        "u2,c1,a",
        "u2,c2,b",
        "u3,c1,b",
        "u3,c2,b",
        "u4,c1,b",
        "u4,c2,b",
    ]
    path = tmp_path / "two.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    report = _run("--input", str(path), "--level", "nominal", "--bootstrap", "0")
    assert report["cohen_kappa"] == pytest.approx(0.5)
    assert report["fleiss_kappa"] == pytest.approx(7 / 15)
    assert report["kappa_undefined_reasons"] == {"cohen": None, "fleiss": None}
    out = StringIO()
    call_command("agreement", "--input", str(path), "--level", "nominal", "--bootstrap", "0", stdout=out)
    assert "Cohen's kappa      0.500" in out.getvalue()
