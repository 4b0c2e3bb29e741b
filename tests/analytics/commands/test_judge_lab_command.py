"""``manage.py judge_lab`` end to end on small files whose figures are derived by hand."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

HUMAN = """item,annotator,vote,category,language,register,model_a,model_b,length_a,length_b
i1,h1,A,math,jav,krama,m1,m2,30,10
i1,h2,A,math,jav,krama,m1,m2,30,10
i2,h1,B,code,ind,,m2,m1,10,30
i2,h2,B,code,ind,,m2,m1,10,30
i3,h1,A,math,jav,ngoko,m1,m2,20,20
i3,h2,tie,math,jav,ngoko,m1,m2,20,20
i3,h3,A,math,jav,ngoko,m1,m2,20,20
i4,h1,B,code,ind,,m1,m2,40,10
i4,h2,A,code,ind,,m1,m2,40,10
"""

# g: three samples per item; q: one. i5 and i6 were judged but nobody voted on them.
JUDGE = """item,judge,vote,sample,model_a,model_b,length_a,length_b
i1,g,A,0,,,,
i1,g,A,1,,,,
i1,g,A,2,,,,
i2,g,B,0,,,,
i2,g,B,1,,,,
i2,g,A,2,,,,
i3,g,B,0,,,,
i3,g,B,1,,,,
i3,g,B,2,,,,
i4,g,B,0,,,,
i4,g,B,1,,,,
i4,g,A,2,,,,
i5,g,A,0,m1,m2,10,10
i5,g,A,1,m1,m2,10,10
i5,g,A,2,m1,m2,10,10
i6,g,A,0,m1,m2,10,12
i6,g,A,1,m1,m2,10,12
i6,g,B,2,m1,m2,10,12
i1,q,B,0,,,,
i2,q,B,0,,,,
i3,q,B,0,,,,
i4,q,A,0,,,,
i5,q,A,0,m1,m2,10,10
i6,q,error,0,m1,m2,10,12
"""

FAMILIES = """name,family
g,gpt
m1,gpt
m2,llama
"""


def _files(tmp_path: Path, human: str = HUMAN, judge: str = JUDGE, families: str = FAMILIES) -> list[str]:
    for name, text in (("human", human), ("judge", judge), ("families", families)):
        (tmp_path / f"{name}.csv").write_text(text, encoding="utf-8")
    return [
        "--human",
        str(tmp_path / "human.csv"),
        "--judge",
        str(tmp_path / "judge.csv"),
        "--families",
        str(tmp_path / "families.csv"),
    ]


def _run(*args: str) -> dict:
    out = StringIO()
    call_command("judge_lab", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_every_figure_on_a_hand_checked_example(tmp_path):
    report = _run(*_files(tmp_path), "--baseline", "m2")
    g, q = report["judges"]["g"], report["judges"]["q"]
    # Human majority: i1 A, i2 B, i3 A (A, tie, A), i4 tie (A + B). g's modal verdicts: i1 A, i2 B, i3 B,
    # i4 B, i5 A, i6 A: right on i1 and i2 of the three items with a preference.
    assert (g["accuracy"]["n_correct"], g["accuracy"]["n"]) == (2, 3)
    assert (q["accuracy"]["n_correct"], q["accuracy"]["n"]) == (1, 3)
    # All outputs shown A first: g picked A in 3 + 1 + 0 + 1 + 3 + 2 = 10 of its 18 decisive outputs.
    assert g["position"]["first_position_rate"] == pytest.approx(10 / 18)
    assert g["position"]["consistency"] is None
    # Calibration of g over i1 (conf 1, right), i2 (2/3, right), i3 (1, wrong); i4 is a human tie.
    # Bins 9: conf 1, accuracy 1/2; 6: conf 2/3, accuracy 1. ECE = 2/3 * 1/2 + 1/3 * 1/3 = 4/9;
    # Brier = (0 + 1/9 + 1) / 3 = 10/27.
    cal = g["calibration"]
    assert cal["ece"] == pytest.approx(4 / 9) and cal["brier"] == pytest.approx(10 / 27)
    assert (cal["n"], cal["n_human_ties"], cal["samples"]) == (3, 1, [3, 3])
    assert q["calibration"] is None
    # Self-preference: m1 (gpt) is on one side of every item. g picks it on i1, i2, i5 and i6 (not on i3, i4):
    # 4 of 6 decisive; people on i1, i2, i3 (i4 a tie): 3 of 3.
    sp = g["self_preference"]
    assert (sp["judge_rate"], sp["human_rate"], sp["n"]) == (pytest.approx(4 / 6), 1.0, 6)
    assert q["self_preference"] is None  # q has no family
    # Length: g's verdicts on items with unequal lengths: i1 A longer, A won; i2 B longer, B won; i4 A
    # longer, B won; i6 B longer, A won. The longer answer won 2 of 4.
    assert (g["length"]["longer_win_rate"], g["length"]["n_unequal"]) == (0.5, 4)
    assert report["human_length"]["n"] == 3  # human decisive majorities on i1, i2, i3
    # Length-controlled against m2: g's raw win rate of m1 = i1 win, i2 win, i3 loss, i4 loss, i5 win,
    # i6 win = 4/6.
    rows = {(r["source"], r["model"]): r for r in report["length_controlled"]["rows"]}
    assert report["length_controlled"]["baseline"] == "m2"
    assert rows["g", "m1"]["raw"] == pytest.approx(4 / 6) and rows["g", "m1"]["n"] == 6
    assert rows["human", "m1"]["raw"] == pytest.approx(3.5 / 4)  # i1, i2, i3 wins, i4 a tie
    # PPI of m1 over m2 with g: Y = (1, 1, 5/6, 1/2) on i1-i4 (share of people preferring m1, ties half),
    # f = (1, 1, 0, 0); unlabelled i5, i6: (1, 1). cov(Y, f) = (1/3) / 3 = 1/9; var(f) over the six labels =
    # (12/9) / 5 = 4/15; lambda = (1/9) / ((1 + 4/2) 4/15) = 5/36; PPI = 5/6 + 5/36 (1 - 1/2) = 65/72.
    (ppi,) = [r for r in report["ppi"] if r["judge"] == "g"]
    assert (ppi["model_x"], ppi["model_y"], ppi["n_labeled"], ppi["n_unlabeled"]) == ("m1", "m2", 4, 2)
    assert ppi["lambda"] == pytest.approx(5 / 36)
    assert ppi["ppi"]["estimate"] == pytest.approx(65 / 72)
    assert ppi["human_only"]["estimate"] == pytest.approx(5 / 6)
    # Judge choice per language: ind has i2 only (i4 a human tie): both right; jav: g 1/2 (i1), q 1/2 (i3).
    by_language = {(r["slice"], r["judge"]): r for r in report["judge_choice"]["language"]}
    assert by_language["ind", "g"]["accuracy"] == 1.0 and by_language["ind", "q"]["accuracy"] == 1.0
    registers = {r["slice"] for r in report["judge_choice"]["language_register"]}
    assert registers == {"ind", "jav / krama", "jav / ngoko"}
    (best,) = [r for r in report["judge_choice"]["all"] if r["best"]]
    assert best["judge"] == "g"


def test_lengths_file_and_orders(tmp_path):
    human = "item,annotator,vote\ni1,h1,A\ni2,h1,B\ni3,h1,A\n"
    judge = "item,judge,vote,order\ni1,j,A,ab\ni1,j,B,ba\ni2,j,A,ab\ni2,j,A,ba\ni3,j,A,ab\ni3,j,tie,ba\n"
    (tmp_path / "lengths.csv").write_text(
        "item,length_a,length_b\ni1,5,1\ni2,1,5\ni3,3,3\n", encoding="utf-8"
    )
    args = _files(tmp_path, human=human, judge=judge)[:4]
    report = _run(*args, "--lengths", str(tmp_path / "lengths.csv"))
    j = report["judges"]["j"]
    # i1: A first / B first -> picked the first both times (biased first); i2: A both times (consistent);
    # i3: A first, tie -> biased first. First-position share of decisive outputs: i1 2, i2 1 of 2, i3 1 -> 4/5.
    assert j["position"]["first_position_rate"] == pytest.approx(4 / 5)
    assert j["position"]["consistency"]["biased_first"] == pytest.approx(2 / 3)
    assert j["position"]["n_both_orders"] == 3
    # Verdict per item over both orders: i1 A/B -> tie, i2 A, i3 A/tie -> tie; lengths came from the file.
    assert j["length"]["n"] == 1 and j["length"]["n_ties"] == 2
    assert report["length_controlled"] is None  # no model names
    assert [r["model_x"] for r in report["ppi"]] == ["A"]


def test_ppi_human_share_keeps_a_seeded_subset(tmp_path):
    rows = "\n".join(f"i{k},h1,{'A' if k % 2 else 'B'}" for k in range(40))
    judge = "\n".join(f"i{k},j,{'A' if k % 2 else 'B'}" for k in range(40))
    args = _files(
        tmp_path, human="item,annotator,vote\n" + rows + "\n", judge="item,judge,vote\n" + judge + "\n"
    )[:4]
    first = _run(*args, "--ppi-human-share", "0.25", "--seed", "3")
    again = _run(*args, "--ppi-human-share", "0.25", "--seed", "3")
    (row,) = first["ppi"]
    assert (row["n_labeled"], row["n_unlabeled"]) == (10, 30)
    assert row == again["ppi"][0]
    assert row["human_all"]["n"] == 40
    # Seed 3 keeps i1, i10, i11, i13, i14, i16, i29, i31, i34, i38: five A, five B. The judge agrees with
    # everyone: lambda = var_n(Y) / ((1 + 10/30) var(f)) = (10/36) / ((4/3) (10/39)) = 13/16, and the 30 other
    # items split 15/15, so the estimate is 1/2 with a narrower interval than the ten people alone.
    assert row["lambda"] == pytest.approx(13 / 16)
    assert row["ppi"]["estimate"] == pytest.approx(0.5)
    assert row["ppi"]["se"] < row["human_only"]["se"] and not row["wider_than_human_only"]
    assert row["effective_n"] > 10


@pytest.mark.parametrize(
    ("judge", "extra", "message"),
    [
        ("item,vote\ni1,A\n", [], "missing column 'judge'"),
        ("item,judge,vote,order\ni1,g,A,up\n", [], "line 2: column 'order': 'up' is not ab or ba"),
        ("item,judge,vote,sample\ni1,g,A,0\ni1,g,B,0\n", [], "line 3: the judge has more than one output"),
        ("item,judge,vote,sample\ni1,g,A,1.5\n", [], "column 'sample' must be a whole number"),
        ("item,judge,vote,length_a,length_b\ni1,g,A,-1,3\n", [], "column 'length_a' must be >= 0"),
        ("item,judge,vote\ni1,g,maybe\n", [], "'maybe' is not one of"),
        ("item,judge,vote\ni1,g,A\n", ["--ppi-human-share", "2"], "--ppi-human-share"),
        (
            "item,judge,vote\ni1,g,A\n",
            ["--baseline", "nobody"],
            "baseline model 'nobody' is in no comparison",
        ),
    ],
)
def test_bad_input_exits_with_code_2_and_one_line(tmp_path, judge, extra, message):
    with pytest.raises(CommandError) as caught:
        _run(*_files(tmp_path, judge=judge), *extra)
    assert caught.value.returncode == 2
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_readable_summary(tmp_path):
    out = StringIO()
    call_command("judge_lab", *_files(tmp_path), stdout=out)
    text = out.getvalue()
    assert "g " in text and "PPI g: m1 over m2" in text
