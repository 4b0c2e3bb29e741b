"""``manage.py mqm_scores`` end to end on a TSV written for the test with hand-checked numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

REPO_ROOT = Path(__file__).resolve().parents[3]
HAND = REPO_ROOT / "tests" / "annotation" / "domain" / "data" / "mqm_hand.tsv"


def _run(*args: str) -> dict:
    out = StringIO()
    call_command("mqm_scores", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_hand_checked_scores():
    report = _run("--input", str(HAND), "--bootstrap", "0")
    a, b = report["systems"]
    # sysA: segment 1 = (5 major + 0.1 minor punctuation + 1 minor grammar) / 2 raters = 3.05;
    # segment 2 = (no error + 5 major punctuation) / 2 = 2.5; mean 2.775.
    assert (a["rank"], a["system"], a["mqm"]) == (1, "sysA", pytest.approx(2.775))
    assert a["by_category"] == pytest.approx(
        {"Accuracy/Mistranslation": 1.25, "Fluency/Grammar": 0.25, "Fluency/Punctuation": 1.275}
    )
    assert a["by_severity"] == pytest.approx({"major": 2.5, "minor": 0.275})
    # sysB: segment 1 = (25 non-translation + 5 omission + 0 neutral) / 2 = 15; segment 2 = 1 / 2; 7.75.
    assert (b["rank"], b["system"], b["mqm"]) == (2, "sysB", pytest.approx(7.75))
    assert b["by_category"]["Non-translation!"] == pytest.approx(6.25)
    assert (a["segments"], a["ratings"], a["errors"], a["ci95"]) == (2, 4, 4, None)
    assert report["weights"]["name"] == "wmt21"
    assert (report["n_lines"], report["n_ratings"], report["n_segments"], report["n_raters"]) == (10, 8, 2, 2)
    assert report["esa"] is None


def test_span_agreement_and_segment_alpha():
    agreement = _run("--input", str(HAND), "--bootstrap", "0")["agreement"]
    # Characters marked per rater pair and segment (target, then source):
    # sysA 1: 9 and 13, 7 shared; sysA 2: 0 and 1; sysB 1: 29 and 3, 3 shared, source 0 and 7; sysB 2: 9 and 0.
    assert agreement["char_f1"] == pytest.approx(2 * 10 / 71)
    # Severity weights: only sysA 1 shares weight (7 characters, min(5, 1)); sums 37 + 13, 5, 145 + 0, 35, 9.
    assert agreement["severity_weighted"] == pytest.approx(2 * 7 / 244)
    assert agreement["span_match"] == pytest.approx(0.5)
    points = np.array([[5.1, 0.0, 25.0, 1.0], [1.0, 5.0, 5.0, 0.0]])
    expected = krippendorff.alpha(reliability_data=points, level_of_measurement="interval")
    assert agreement["segment_alpha"]["alpha"] == pytest.approx(expected)


def test_character_alpha_on_a_hand_computed_example(tmp_path):
    # One 4-character target, two raters: r1 marks characters 0-1 (major), r2 character 1 (minor).
    # Error / no error per character: r1 1 1 0 0, r2 0 1 0 0. Eight values, three 1s: observed disagreement
    # 2 / 8, expected 2 * 3 * 5 / (8 * 7): nominal alpha 1 - 0.25 / (30 / 56) = 8 / 15.
    path = tmp_path / "chars.tsv"
    header = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"
    path.write_text(
        "\n".join(
            [
                header,
                "A\td\t1\t1\tr1\t\t<v>ab</v>cd\tAccuracy\tMajor",
                "A\td\t1\t1\tr2\t\ta<v>b</v>cd\tStyle\tMinor",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    assert _run("--input", str(path), "--bootstrap", "0")["agreement"]["character_alpha"] is None
    chars = _run("--input", str(path), "--bootstrap", "0", "--character-alpha")["agreement"][
        "character_alpha"
    ]
    assert chars["n_characters"] == 4
    assert chars["error"]["alpha"] == pytest.approx(8 / 15)
    severity = krippendorff.alpha(
        reliability_data=np.array([[5, 5, 0, 0], [0, 1, 0, 0]]), level_of_measurement="ordinal"
    )
    assert chars["severity"]["alpha"] == pytest.approx(severity)


def test_bootstrap_is_seeded():
    args = ("--input", str(HAND), "--bootstrap", "300", "--seed", "5")
    first, second = _run(*args), _run(*args)
    assert first == second
    lo, hi = first["systems"][0]["ci95"]
    assert 2.5 <= lo <= 2.775 <= hi <= 3.05
    assert first["bootstrap"] == {"draws": 300, "seed": 5}


def test_weights_from_a_json_file(tmp_path):
    weights = tmp_path / "heavy.json"
    weights.write_text(json.dumps({"severity": {"major": 10, "minor": 1, "neutral": 0}}), encoding="utf-8")
    report = _run("--input", str(HAND), "--weights", str(weights), "--bootstrap", "0")
    # sysA without the punctuation rule: ((10 + 1 + 1) / 2 + (0 + 10) / 2) / 2 = 5.5;
    # sysB without the non-translation rule: ((10 + 10 + 0) / 2 + 1 / 2) / 2 = 5.25, now ranked first.
    scores = {s["system"]: (s["rank"], s["mqm"]) for s in report["systems"]}
    assert scores == {"sysB": (1, pytest.approx(5.25)), "sysA": (2, pytest.approx(5.5))}
    assert report["weights"]["name"] == "heavy"


def test_esa_when_the_file_has_a_score_column(tmp_path):
    lines = HAND.read_text(encoding="utf-8").splitlines()
    scores = ["score", "40", "40", "70", "100", "80", "0", "50", "50", "90", "100"]
    path = tmp_path / "esa.tsv"
    path.write_text(
        "\n".join(f"{line}\t{s}" for line, s in zip(lines, scores, strict=True)) + "\n", encoding="utf-8"
    )
    esa = _run("--input", str(path), "--bootstrap", "0")["esa"]
    # sysA: (40 + 70) / 2 = 55, (100 + 80) / 2 = 90 -> 72.5; sysB: (0 + 50) / 2 = 25, (90 + 100) / 2 = 95 -> 60
    assert [(s["system"], s["esa"]) for s in esa["systems"]] == [("sysA", 72.5), ("sysB", 60.0)]


def test_table_without_json():
    out = StringIO()
    call_command("mqm_scores", "--input", str(HAND), "--bootstrap", "0", stdout=out)
    assert "1. sysA" in out.getvalue() and "2.775" in out.getvalue()


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (None, (), "no such file"),
        ("system\tdoc\n", (), "missing column 'doc_id'"),
        (
            HAND.read_text(encoding="utf-8").replace("pukul <v>sepuluh</v>", "pukul <v>sepuluh"),
            (),
            "line 2, column target",
        ),
        (
            HAND.read_text(encoding="utf-8").replace("Minor\t\n", "Critical\t\n", 1),
            (),
            "line 3, column severity",
        ),
        (HAND.read_text(encoding="utf-8"), ("--weights", "nope"), "neither a preset"),
    ],
)
def test_bad_input_is_a_command_error_with_code_2(tmp_path, content, extra, message):
    path = tmp_path / "bad.tsv"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError, match=message) as caught:
        call_command("mqm_scores", "--input", str(path), *extra, "--json", stdout=StringIO())
    assert caught.value.returncode == 2


def test_exit_code_2_and_one_line_from_the_shell(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text(
        "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\nA\n", encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "mqm_scores", "--input", str(path), "--json"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "line 2: 1 columns, the header has 9" in done.stderr


def test_attention_checks_from_a_file_of_injected_errors(tmp_path):
    checks = tmp_path / "injected.tsv"
    checks.write_text(
        "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
        "sysA\trapat\t1\t1\tinjector\t-\tRapat dimulai pukul <v>sepuluh</v> .\tnumber\tMajor\n"
        "sysA\trapat\t1\t2\tinjector\t-\tBawa cangkir sendiri<v>,</v> ya.\tpunctuation\tMajor\n",
        encoding="utf-8",
    )
    report = _run("--input", str(HAND), "--bootstrap", "0", "--attention", str(checks))
    # r1 marked "sepuluh" but found no error in segment 2; r2's "pukul sepuluh" overlaps the first and r2
    # marked the comma.
    assert report["attention"] == [
        {"rater": "r1", "checked": 2, "found": 1, "share": 0.5},
        {"rater": "r2", "checked": 2, "found": 2, "share": 1.0},
    ]
    assert _run("--input", str(HAND), "--bootstrap", "0")["attention"] is None
    with pytest.raises(CommandError, match="--attention: .*no such file") as caught:
        call_command(
            "mqm_scores", "--input", str(HAND), "--attention", str(tmp_path / "x.tsv"), stdout=StringIO()
        )
    assert caught.value.returncode == 2
