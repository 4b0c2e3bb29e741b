"""Acceptance tests on public multi-annotator data: the command-line tools against independent code.

SummEval (expert and crowd Likert ratings of 1,200 summaries on four criteria) is checked against the
krippendorff package; PandaLM (three human votes and two LLM judges on 999 pairs) against a plain loop
implementation of the FastChat agreement definitions written below.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from io import StringIO
from itertools import combinations
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command

REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference-data"
SUMMEVAL = REFERENCE / "summeval-abstractive12"
PANDALM = REFERENCE / "pandalm-testset"
CRITERIA = ("coherence", "consistency", "fluency", "relevance")

pytestmark = pytest.mark.reference


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> str:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return str(path)


def _command_json(name: str, *args: str) -> dict:
    out = StringIO()
    call_command(name, *args, "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def summeval() -> list[dict]:
    if not SUMMEVAL.is_dir():
        pytest.skip(f"reference data not found at {SUMMEVAL}")
    records = []
    for path in sorted(SUMMEVAL.glob("*_outputs_annotations.jsonl")):
        with path.open(encoding="utf-8") as handle:
            records += [json.loads(line) for line in handle if line.strip()]
    return records


@pytest.fixture(scope="module")
def pandalm() -> dict[str, list[dict]]:
    if not PANDALM.is_dir():
        pytest.skip(f"reference data not found at {PANDALM}")
    return {
        name: json.loads((PANDALM / f"{name}.json").read_text(encoding="utf-8"))
        for name in ("testset-v1", "gpt-3.5-turbo-testset-v1", "pandalm-7b-testset-v1")
    }


# -- SummEval: alpha per criterion ---------------------------------------------------------------------


@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_summeval_expert_alpha_per_criterion(summeval, tmp_path, level):
    rows = [
        [f"{r['model_id']}/{r['id']}", f"expert{k + 1}", criterion, ratings[criterion]]
        for r in summeval
        for k, ratings in enumerate(r["expert_annotations"])
        for criterion in CRITERIA
    ]
    path = _write_csv(tmp_path / "summeval.csv", ["unit", "coder", "criterion", "value"], rows)
    report = _command_json(
        "agreement", "--input", path, "--level", level, "--bootstrap", "200", "--seed", "1"
    )
    assert sorted(report) == sorted(CRITERIA)
    for criterion in CRITERIA:
        matrix = np.array(
            [[r["expert_annotations"][k][criterion] for r in summeval] for k in range(3)], float
        )
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
        result = report[criterion]
        assert result["alpha"] == pytest.approx(expected, abs=1e-9)
        assert (result["n_units"], result["n_coders"], result["n_pairable_values"]) == (1200, 3, 3600)
        lo, hi = result["ci95"]
        assert lo < result["alpha"] < hi and hi - lo < 0.15


def test_summeval_experts_versus_crowd(summeval, tmp_path):
    rows = []
    for r in summeval:
        unit = f"{r['model_id']}/{r['id']}"
        rows += [[unit, f"e{k}", "expert", a["relevance"]] for k, a in enumerate(r["expert_annotations"])]
        rows += [[unit, f"t{k}", "turker", a["relevance"]] for k, a in enumerate(r["turker_annotations"])]
    path = _write_csv(tmp_path / "groups.csv", ["unit", "coder", "group", "value"], rows)
    report = _command_json("agreement", "--input", path, "--level", "interval", "--bootstrap", "0")
    experts = np.array([[a["relevance"] for a in r["expert_annotations"]] for r in summeval], float)
    crowd = np.array([[a["relevance"] for a in r["turker_annotations"]] for r in summeval], float)
    means = np.vstack([experts.mean(axis=1), crowd.mean(axis=1)])
    between = report["between_groups"]
    assert between["groups"] == ["expert", "turker"] and between["n_shared_units"] == 1200
    assert between["alpha_means"] == pytest.approx(krippendorff.alpha(reliability_data=means), abs=1e-9)
    pooled = np.hstack([experts, crowd]).T
    assert between["alpha_pooled"] == pytest.approx(krippendorff.alpha(reliability_data=pooled), abs=1e-9)
    assert between["pearson_r"] == pytest.approx(np.corrcoef(means)[0, 1], abs=1e-12)
    assert between["mean_offset"] == pytest.approx(float(np.mean(means[0] - means[1])), abs=1e-12)
    by_group = {row["group"]: row["alpha"] for row in report["breakdowns"]["group"]}
    assert by_group["expert"] == pytest.approx(krippendorff.alpha(reliability_data=experts.T), abs=1e-9)


# -- PandaLM: human-judge agreement ----------------------------------------------------------------------

LABEL = {0: "tie", 1: "A", 2: "B", "0": "tie", "1": "A", "2": "B", "Tie": "tie"}


def _pandalm_files(pandalm: dict[str, list[dict]], tmp_path: Path) -> tuple[str, str, dict, dict]:
    humans = {r["idx"]: [LABEL[r[f"annotator{k}"]] for k in (1, 2, 3)] for r in pandalm["testset-v1"]}
    categories = {r["idx"]: r["motivation_app"] for r in pandalm["testset-v1"]}
    judges = {
        "gpt-3.5-turbo": {
            r["idx"]: LABEL.get(r["gpt_result"], "error") for r in pandalm["gpt-3.5-turbo-testset-v1"]
        },
        "pandalm-7b": {
            r["idx"]: LABEL.get(r["pandalm_result"], "error") for r in pandalm["pandalm-7b-testset-v1"]
        },
    }
    human_rows = [
        [item, f"annotator{k + 1}", vote, categories[item]]
        for item, votes in humans.items()
        for k, vote in enumerate(votes)
    ]
    judge_rows = [[item, name, vote] for name, verdicts in judges.items() for item, vote in verdicts.items()]
    human_path = _write_csv(tmp_path / "human.csv", ["item", "annotator", "vote", "category"], human_rows)
    judge_path = _write_csv(tmp_path / "judge.csv", ["item", "judge", "vote"], judge_rows)
    return human_path, judge_path, humans, {"judges": judges, "categories": categories}


def _loop_agreement(humans: dict, verdicts: dict) -> tuple[int, int, int, int]:
    """FastChat's judge-human loop: every human vote is a trial; ties banned in the second count."""
    agree = n = agree_no_tie = n_no_tie = 0
    for item, votes in humans.items():
        verdict = verdicts.get(item)
        if verdict is None or verdict == "error":
            continue
        for vote in votes:
            n += 1
            agree += vote == verdict
            if vote != "tie" and verdict != "tie":
                n_no_tie += 1
                agree_no_tie += vote == verdict
    return agree, n, agree_no_tie, n_no_tie


def _majority(votes: list[str]) -> str:
    counts = Counter(votes).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return "tie"
    return counts[0][0]


def test_pandalm_judge_agreement_equals_loop_implementation(pandalm, tmp_path):
    human_path, judge_path, humans, extra = _pandalm_files(pandalm, tmp_path)
    report = _command_json("judge_agreement", "--human", human_path, "--judge", judge_path)
    categories = extra["categories"]
    for name, verdicts in extra["judges"].items():
        got = report["judges"][name]
        agree, n, agree_no_tie, n_no_tie = _loop_agreement(humans, verdicts)
        assert (got["n_with_ties"], got["n_without_ties"]) == (n, n_no_tie)
        assert got["with_ties"] == pytest.approx(agree / n)
        assert got["without_ties"] == pytest.approx(agree_no_tie / n_no_tie)
        majorities = {item: [_majority(votes)] for item, votes in humans.items()}
        m_agree, m_n, m_agree_no_tie, m_n_no_tie = _loop_agreement(majorities, verdicts)
        assert (got["majority_n_with_ties"], got["majority_n_without_ties"]) == (m_n, m_n_no_tie)
        assert got["majority_with_ties"] == pytest.approx(m_agree / m_n)
        assert got["majority_without_ties"] == pytest.approx(m_agree_no_tie / m_n_no_tie)
        # Accuracy against the human majority on items where the humans prefer a side.
        per_category: dict[str, list[int]] = {}
        correct = valid = errors = ties = 0
        for item, votes in humans.items():
            label = _majority(votes)
            if label == "tie":
                ties += 1
                continue
            counts = per_category.setdefault(categories[item], [0, 0, 0])  # correct, valid, all
            counts[2] += 1
            if verdicts[item] == "error":
                errors += 1
                continue
            valid += 1
            counts[1] += 1
            hit = verdicts[item] == label
            correct += hit
            counts[0] += hit
        assert got["n_human_ties_excluded"] == ties and got["n_parse_errors"] == errors
        assert got["accuracy"] == pytest.approx(correct / valid)
        assert got["accuracy_raw"] == pytest.approx(correct / (valid + errors))
        macro = np.mean([c / v for c, v, _ in per_category.values() if v])
        macro_raw = np.mean([c / a for c, _, a in per_category.values()])
        assert got["macro_accuracy"] == pytest.approx(macro)
        assert got["macro_accuracy_raw"] == pytest.approx(macro_raw)
    pairs = [(a, b) for votes in humans.values() for a, b in combinations(votes, 2)]
    no_tie = [(a, b) for a, b in pairs if "tie" not in (a, b)]
    human_human = report["human_human"]
    assert (human_human["n_with_ties"], human_human["n_without_ties"]) == (len(pairs), len(no_tie))
    assert human_human["with_ties"] == pytest.approx(sum(a == b for a, b in pairs) / len(pairs))
    assert human_human["without_ties"] == pytest.approx(sum(a == b for a, b in no_tie) / len(no_tie))


def test_pandalm_human_votes_nominal_alpha(pandalm, tmp_path):
    records = pandalm["testset-v1"]
    rows = [[r["idx"], f"annotator{k}", r[f"annotator{k}"]] for r in records for k in (1, 2, 3)]
    path = _write_csv(tmp_path / "votes.csv", ["unit", "coder", "value"], rows)
    report = _command_json("agreement", "--input", path, "--level", "nominal", "--bootstrap", "200")
    matrix = np.array([[r[f"annotator{k}"] for r in records] for k in (1, 2, 3)], float)
    assert report["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"), abs=1e-9
    )
    pairs = [(a, b) for column in matrix.T for a, b in combinations(column, 2)]
    assert report["percent_agreement"] == pytest.approx(sum(a == b for a, b in pairs) / len(pairs))
