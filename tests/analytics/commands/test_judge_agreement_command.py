"""``manage.py judge_agreement`` end to end on small files whose figures are derived by hand."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

HUMAN = """item,annotator,vote,category
i1,h1,A,math
i1,h2,a,math
i1,h3,tie,math
i2,h1,B,code
i2,h2,both_bad,code
i3,h1,B,code
i3,h2,B,code
"""

SCORES = """item,judge,score_a,score_b
i1,g,8,3
i2,g,5,5
i3,g,2,9
i1,q,,
i2,q,2,9
i3,q,9,1
"""


def _files(tmp_path: Path, human: str = HUMAN, judge: str = SCORES) -> tuple[str, str]:
    (tmp_path / "human.csv").write_text(human, encoding="utf-8")
    (tmp_path / "judge.csv").write_text(judge, encoding="utf-8")
    return str(tmp_path / "human.csv"), str(tmp_path / "judge.csv")


def _run(human: str, judge: str, *extra: str) -> dict:
    out = StringIO()
    call_command("judge_agreement", "--human", human, "--judge", judge, *extra, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_score_judges_with_default_threshold(tmp_path):
    report = _run(*_files(tmp_path))
    # g: i1 8-3 -> A, i2 5-5 -> tie, i3 2-9 -> B.
    # With ties: i1 A vs (A, A, tie) 2/3; i2 tie vs (B, tie) 1/2; i3 B vs (B, B) 2/2 -> 5/7.
    # Without ties: i1 2/2 (tie vote dropped); i2 dropped (judge tie); i3 2/2 -> 4/4.
    g = report["judges"]["g"]
    assert (g["with_ties"], g["n_with_ties"]) == (pytest.approx(5 / 7), 7)
    assert (g["without_ties"], g["n_without_ties"]) == (1.0, 4)
    # Human majority: i1 A, i2 tie (B/tie split), i3 B. Accuracy on i1 and i3: both right.
    assert (g["accuracy"], g["accuracy_raw"], g["n_human_ties_excluded"]) == (1.0, 1.0, 1)
    assert g["accuracy_by_category"] == {
        "code": {"accuracy": 1.0, "accuracy_raw": 1.0, "n": 1, "n_valid": 1},
        "math": {"accuracy": 1.0, "accuracy_raw": 1.0, "n": 1, "n_valid": 1},
    }
    # Majority variant, one trial per item: i1 A=A, i2 tie=tie, i3 B=B -> 3/3; without ties 2/2.
    assert (g["majority_with_ties"], g["majority_n_with_ties"]) == (1.0, 3)
    assert (g["majority_without_ties"], g["majority_n_without_ties"]) == (1.0, 2)
    # q: i1 unparsed, i2 2-9 -> B, i3 9-1 -> A.
    # With ties: i2 B vs (B, tie) 1/2; i3 A vs (B, B) 0/2 -> 1/4. Without: i2 1/1, i3 0/2 -> 1/3.
    q = report["judges"]["q"]
    assert (q["with_ties"], q["n_with_ties"], q["n_judge_errors"]) == (0.25, 4, 1)
    assert (q["without_ties"], q["n_without_ties"]) == (pytest.approx(1 / 3), 3)
    # Accuracy: i1 unparsed, i3 wrong -> valid-only 0/1, raw 0/2; i2 excluded (human tie).
    assert (q["accuracy"], q["accuracy_raw"], q["n_parse_errors"]) == (0.0, 0.0, 1)
    # Humans: i1 (A, A, tie) 1 of 3 pairs, i2 (B, tie) 0 of 1, i3 (B, B) 1 of 1 -> 2/5;
    # without ties: i1 (A, A) 1/1, i3 1/1 -> 2/2.
    hh = report["human_human"]
    assert (hh["with_ties"], hh["n_with_ties"], hh["without_ties"], hh["n_without_ties"]) == (0.4, 5, 1.0, 2)
    assert report["random_baseline"] == {"with_ties": pytest.approx(1 / 3), "without_ties": 0.5}


def test_tie_threshold_and_majority_headline(tmp_path):
    human, judge = _files(tmp_path)
    report = _run(human, judge, "--tie-threshold", "0", "--human-aggregate", "majority")
    g = report["judges"]["g"]
    assert report["human_aggregate"] == "majority" and g["human_aggregate"] == "majority"
    # Headline now equals the majority variant: i1 A=A, i2 tie=tie (5-5 is still a tie), i3 B=B.
    assert (
        (g["with_ties"], g["n_with_ties"]) == (g["majority_with_ties"], g["majority_n_with_ties"]) == (1.0, 3)
    )


def test_ensemble_averages_scores(tmp_path):
    report = _run(*_files(tmp_path), "--ensemble", "--ensemble-rule", "any_parsed")
    ensemble = report["judges"]["ensemble"]
    # i1: only g parsed -> (8, 3) A; i2: (3.5, 7) -> B; i3: (5.5, 5) -> tie.
    # With ties: i1 2/3, i2 B vs (B, tie) 1/2, i3 tie vs (B, B) 0/2 -> 3/7.
    assert (ensemble["with_ties"], ensemble["n_with_ties"]) == (pytest.approx(3 / 7), 7)
    assert ensemble["n_left_out"] == 1 and ensemble["members"] == ["g", "q"]
    assert (ensemble["rule"], ensemble["n_items_excluded"], ensemble["n_items_used"]) == ("any_parsed", 0, 3)


def test_ensemble_by_default_counts_only_items_every_judge_scored(tmp_path):
    ensemble = _run(*_files(tmp_path), "--ensemble")["judges"]["ensemble"]
    # SeaBench's rule: q did not parse i1, so i1 is left out. i2 B vs (B, tie) 1/2, i3 tie vs (B, B) 0/2.
    assert (ensemble["with_ties"], ensemble["n_with_ties"]) == (0.25, 4)
    assert (ensemble["rule"], ensemble["n_items_excluded"], ensemble["n_items_used"]) == ("all_judges", 1, 2)


def test_vote_judges_and_turns(tmp_path):
    human = "item,turn,annotator,vote\nx,1,h1,A\nx,1,h2,B\nx,2,h1,B\n"
    judge = "item,turn,judge,vote\nx,1,j,A\nx,2,j,error\n"
    report = _run(*_files(tmp_path, human, judge))
    j = report["judges"]["j"]
    # Turn 1: A vs (A, B) 1/2; turn 2 unparsed.
    assert (j["with_ties"], j["n_with_ties"], j["n_judge_errors"]) == (0.5, 2, 1)
    assert report["tie_threshold"] is None


@pytest.mark.parametrize(
    ("human", "judge", "message"),
    [
        ("item,annotator\ni1,h1\n", SCORES, "missing column 'vote'"),
        ("item,annotator,vote\ni1,h1,X\n", SCORES, "line 2: column 'vote': 'X' is not one of"),
        (HUMAN, "item,judge,vote\ni1,g,maybe\n", "'maybe' is not one of A, B, tie, both_bad, error or empty"),
        ("item,turn,annotator,vote\ni1,1,h1,A\n", SCORES, "'turn' column must be in both files"),
        (HUMAN, "item,judge,vote\ni1,g,A\n", None),
    ],
)
def test_bad_input_exits_with_code_2(tmp_path, human, judge, message):
    paths = _files(tmp_path, human, judge)
    if message is None:  # --ensemble on vote judges
        with pytest.raises(CommandError, match="--ensemble needs") as caught:
            _run(*paths, "--ensemble")
    else:
        with pytest.raises(CommandError, match=message) as caught:
            _run(*paths)
    assert caught.value.returncode == 2
    assert "\n" not in str(caught.value)


def test_readable_table(tmp_path):
    human, judge = _files(tmp_path)
    out = StringIO()
    call_command("judge_agreement", "--human", human, "--judge", judge, stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].split()[:3] == ["judge", "w/", "ties"]
    assert lines[1].split()[:3] == ["g", "71.4%", "7"]


LANGUAGE_HUMAN = """item,annotator,vote,language,register
i1,h1,A,ind,
i1,h2,A,ind,
i2,h1,B,ind,
i2,h2,B,ind,
i5,h1,A,ind,
i3,h1,A,jav,krama
i3,h2,A,jav,krama
i4,h1,B,jav,ngoko
"""

LANGUAGE_VOTES = """item,judge,vote
i1,p,A
i2,p,A
i5,p,A
i3,p,A
i4,p,B
i1,q,A
i2,q,B
i5,q,A
i3,q,B
i4,q,error
"""


def test_accuracy_by_language_with_languages_as_columns_and_the_macro_avg(tmp_path):
    report = _run(*_files(tmp_path, LANGUAGE_HUMAN, LANGUAGE_VOTES))
    p, q = report["judges"]["p"], report["judges"]["q"]
    # p: ind 2 of 3 (i2 wrong), jav 2 of 2. Avg over languages (2/3 + 1)/2 = 5/6; over items 4/5.
    assert p["accuracy_by_language"]["ind"]["accuracy"] == pytest.approx(2 / 3)
    assert p["accuracy_by_language"]["jav"] == {"accuracy": 1.0, "accuracy_raw": 1.0, "n": 2, "n_valid": 2}
    assert set(p["accuracy_by_language_register"]) == {"ind", "jav / krama", "jav / ngoko"}
    # q: ind 3 of 3; jav: i3 wrong, i4 unreadable -> 0 of 1 parsed (raw 0 of 2).
    assert q["accuracy_by_language_register"]["jav / ngoko"] == {
        "accuracy": None,
        "accuracy_raw": 0.0,
        "n": 1,
        "n_valid": 0,
    }
    assert "accuracy_by_category" in p  # the existing breakdown stays
    table = report["by_language"]
    assert table["languages"] == ["ind", "jav"] and table["average"] == "macro over languages"
    rows = {row["judge"]: row for row in table["rows"]}
    assert (rows["p"]["ind"], rows["p"]["jav"]) == (pytest.approx(2 / 3), 1.0)
    assert rows["p"]["avg"] == pytest.approx(5 / 6) and rows["p"]["overall"] == pytest.approx(4 / 5)
    # q: Avg (1 + 0)/2 = 0.5; over its parsed verdicts 3 of 4.
    assert rows["q"]["avg"] == pytest.approx(0.5) and rows["q"]["overall"] == pytest.approx(3 / 4)
    assert report["language_avg"] == {"p": pytest.approx(5 / 6), "q": pytest.approx(0.5)}


def test_the_language_can_come_from_the_judge_file_and_must_be_one_per_item(tmp_path):
    votes = "item,judge,vote,language\ni1,p,A,ind\ni3,p,B,jav\n"
    report = _run(
        *_files(tmp_path, HUMAN.replace(",category", "").replace(",math", "").replace(",code", ""), votes)
    )
    assert report["by_language"]["languages"] == ["ind", "jav"]
    assert "by_language" not in _run(*_files(tmp_path))  # no language column: no table
    twice = "item,annotator,vote,language\ni1,h1,A,ind\ni1,h2,A,jav\n"
    with pytest.raises(CommandError, match="more than one 'language'") as caught:
        _run(*_files(tmp_path, twice, "item,judge,vote\ni1,p,A\n"))
    assert caught.value.returncode == 2
