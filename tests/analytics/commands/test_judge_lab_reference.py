"""The judge lab on PandaLM (999 pairs, three human votes each, two LLM judges), checked against plain loops
written here and against the ``judge_agreement`` command."""

from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

PANDALM = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference-data" / "pandalm-testset"
LABELS = {0: "tie", 1: "A", 2: "B"}
JUDGES = {
    "gpt-3.5-turbo": ("gpt-3.5-turbo-testset-v1", "gpt_result"),
    "pandalm-7b": ("pandalm-7b-testset-v1", "pandalm_result"),
}

pytestmark = pytest.mark.reference


def _label(value: object) -> str:
    try:
        return LABELS[int(value)]
    except (TypeError, ValueError, KeyError):
        return "error"


@pytest.fixture(scope="module")
def pandalm(tmp_path_factory) -> dict:
    if not PANDALM.is_dir():
        pytest.skip(f"reference data not found at {PANDALM}")
    pairs = json.loads((PANDALM / "testset-v1.json").read_text(encoding="utf-8"))
    judged = {
        name: {
            r["idx"]: _label(r[field])
            for r in json.loads((PANDALM / f"{file}.json").read_text(encoding="utf-8"))
        }
        for name, (file, field) in JUDGES.items()
    }
    folder = tmp_path_factory.mktemp("pandalm")
    with (folder / "human.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["item", "annotator", "vote", "category", "model_a", "model_b", "length_a", "length_b"]
        )
        for r in pairs:
            model_a, model_b = r["cmp_key"].split("_", 1)
            for k in (1, 2, 3):
                writer.writerow(
                    [
                        r["idx"],
                        f"annotator{k}",
                        LABELS[r[f"annotator{k}"]],
                        r["motivation_app"],
                        model_a,
                        model_b,
                        len(str(r["response1"])),
                        len(str(r["response2"])),
                    ]
                )
    with (folder / "judge.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item", "judge", "vote"])
        for name, verdicts in judged.items():
            writer.writerows([idx, name, vote] for idx, vote in verdicts.items())
    return {
        "pairs": pairs,
        "judged": judged,
        "human": str(folder / "human.csv"),
        "judge": str(folder / "judge.csv"),
    }


def _json(name: str, *args: str) -> dict:
    out = StringIO()
    call_command(name, *args, "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def report(pandalm) -> dict:
    return _json(
        "judge_lab",
        "--human",
        pandalm["human"],
        "--judge",
        pandalm["judge"],
        "--ppi-human-share",
        "0.2",
        "--seed",
        "7",
        "--baseline",
        "llama-7b",
    )


def _majority(r: dict) -> str:
    votes = [LABELS[r[f"annotator{k}"]] for k in (1, 2, 3)]
    top = max(votes.count(v) for v in set(votes))
    winners = {v for v in votes if votes.count(v) == top}
    return winners.pop() if len(winners) == 1 else "tie"


def test_accuracy_matches_judge_agreement(pandalm, report):
    agreement = _json("judge_agreement", "--human", pandalm["human"], "--judge", pandalm["judge"])
    for name in JUDGES:
        assert report["judges"][name]["accuracy"]["accuracy"] == pytest.approx(
            agreement["judges"][name]["accuracy"]
        )


def test_position_and_length_figures_match_plain_loops(pandalm, report):
    for name, verdicts in pandalm["judged"].items():
        decisive = [v for v in verdicts.values() if v in ("A", "B")]
        assert report["judges"][name]["position"]["first_position_rate"] == pytest.approx(
            decisive.count("A") / len(decisive)
        )
        longer = total = 0
        for r in pandalm["pairs"]:
            la, lb, vote = len(str(r["response1"])), len(str(r["response2"])), verdicts[r["idx"]]
            if la != lb and vote in ("A", "B"):
                total += 1
                longer += (vote == "A") == (la > lb)
        length = report["judges"][name]["length"]
        assert (length["longer_win_rate"], length["n_unequal"]) == (pytest.approx(longer / total), total)
        assert length["slope"] > 0  # both judges prefer the longer answer
    # People prefer it too, on the same items: the human majority's slope is positive as well.
    human = report["human_length"]
    assert human["slope"] > 0 and human["slope_ci95"][0] > 0


def test_length_controlled_rates_beside_raw(report):
    rows = report["length_controlled"]["rows"]
    assert {r["source"] for r in rows} == {"human", *JUDGES}
    assert {r["model"] for r in rows} == {"bloom-7b", "cerebras-gpt-6.7B", "opt-7b", "pythia-6.9b"}
    for row in rows:
        assert 0 <= row["raw"] <= 1 and 0 <= row["length_controlled"] <= 1
        assert row["lc_ci95"][0] <= row["length_controlled"] <= row["lc_ci95"][1]


def test_ppi_with_a_fifth_of_the_people(pandalm, report):
    rows = [r for r in report["ppi"] if r["judge"] == "gpt-3.5-turbo"]
    assert len(rows) == 10  # every pair of the five models
    covered = sum(r["ppi"]["ci95"][0] <= r["human_all"]["estimate"] <= r["ppi"]["ci95"][1] for r in rows)
    assert covered >= 9
    # The better judge narrows the intervals: on average it is worth more human labels than were used.
    assert sum(r["ppi"]["se"] for r in rows) < sum(r["human_only"]["se"] for r in rows)
    assert sum(r["effective_n"] for r in rows) > sum(r["n_labeled"] for r in rows)
    # Calibration needs sampled verdicts; PandaLM has one per pair, and the report says so.
    assert report["judges"]["gpt-3.5-turbo"]["calibration"] is None
    assert any("calibration" in note for note in report["notes"])


def test_prediction_powered_ratings_with_a_fifth_of_the_people(pandalm, report):
    for entry in report["ppi_ratings"]:
        rows = entry["rows"]
        assert len(rows) == 5 and rows[0]["model"] == "llama-7b"  # people and both judges rank it first
        assert entry["n_labeled"] + entry["n_unlabeled"] == len(pandalm["judged"][entry["judge"]]) - sum(
            v == "error" for v in pandalm["judged"][entry["judge"]].values()
        )

        def width(row, key):
            return row[f"{key}_ci95"][1] - row[f"{key}_ci95"][0]

        assert sum(width(r, "ppi") for r in rows) < sum(width(r, "human_only") for r in rows)
