"""``manage.py leaderboard`` on public pairwise data: PandaLM's test set, 999 response pairs of five 7B models,
each judged by three people (2,997 votes: 1,255 for the first response, 1,416 for the second, 326 ties).

Ties as half wins are checked against ``analytics.domain.bradley_terry`` (Hunter's MM iteration, a separate
implementation), Davidson against the independent per-battle fit of the domain tests.
"""

from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command

from analytics.domain.bradley_terry import bradley_terry
from tests.analytics.domain.test_leaderboard import _independent_fit

REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference-data"
PANDALM = REFERENCE / "pandalm-testset"
WINNER = {0: "tie", 1: "model_a", 2: "model_b"}

pytestmark = pytest.mark.reference


@pytest.fixture(scope="module")
def battles() -> pd.DataFrame:
    if not PANDALM.is_dir():
        pytest.skip(f"reference data not found at {PANDALM}")
    items = json.loads((PANDALM / "testset-v1.json").read_text(encoding="utf-8"))
    rows = []
    for item in items:
        first, second = item["cmp_key"].split("_")
        for k in (1, 2, 3):
            rows.append((first, second, WINNER[item[f"annotator{k}"]], item["motivation_app"]))
    return pd.DataFrame(rows, columns=["model_a", "model_b", "winner", "category"])


def _run(battles: pd.DataFrame, tmp_path: Path, *args: str) -> dict:
    path = tmp_path / "pandalm.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(battles.columns)
        writer.writerows(battles.itertuples(index=False))
    out = StringIO()
    call_command("leaderboard", "--battles", str(path), *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_half_ties_equal_the_mm_bradley_terry_fit(battles, tmp_path):
    report = _run(battles, tmp_path, "--bootstrap", "200", "--seed", "1")
    assert report["n_battles"] == report["n_used"] == 2997
    votes = battles.assign(winner=battles.winner.map({"model_a": "A", "model_b": "B", "tie": "tie"}))
    reference = bradley_terry(votes, ties="half").ratings.set_index("model")
    assert len(report["models"]) == 5 and all(row["rated"] for row in report["models"])
    for row in report["models"]:
        assert row["rating"] == pytest.approx(reference.loc[row["model"], "rating"], abs=1e-6)
        assert row["battles"] == reference.loc[row["model"], "games"]
        best, worst = row["rank_range"]
        assert 1 <= best <= row["rank"] <= worst <= 5
        assert row["ci95"][0] < row["rating"] < row["ci95"][1]
    assert sum(sum(r) for r in report["pair_matrix"]["votes"]) == 2 * 2997
    assert len(report["breakdowns"]["category"]) == 50
    assert (
        report["vote_drop"]["votes_removed"] is None
        or report["vote_drop"]["new_top"] != report["models"][0]["model"]
    )


def test_davidson_equals_the_independent_fit(battles, tmp_path):
    report = _run(battles, tmp_path, "--ties", "davidson", "--bootstrap", "0", "--no-vote-drop")
    ratings, _, nu = _independent_fit(battles, "davidson", [])
    for row in report["models"]:
        assert row["rating"] == pytest.approx(ratings[row["model"]], abs=1e-6)
    assert report["davidson_nu"]["nu"] == pytest.approx(nu, abs=1e-6)
