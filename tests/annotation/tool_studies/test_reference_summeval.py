"""Acceptance on public data: SummEval's expert ratings (100 summaries of one system, 3 experts, 4
criteria on 1-5), written out as a Label Studio export and as an Argilla dataset, imported, and the
project's alpha compared with the krippendorff package on the same values."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from analytics.services import project_alpha
from annotation import services
from annotation.domain.tool_studies import argilla, label_studio
from annotation.domain.tool_studies.label_studio import FieldMapping

REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference-data"
SUMMEVAL = REFERENCE / "summeval-abstractive12" / "M8_outputs_annotations.jsonl"
CRITERIA = ("coherence", "consistency", "fluency", "relevance")

pytestmark = [pytest.mark.reference, pytest.mark.django_db]


def _records() -> list[dict]:
    if not SUMMEVAL.is_file():
        pytest.skip(f"reference data not found at {SUMMEVAL}")
    return [json.loads(line) for line in SUMMEVAL.read_text(encoding="utf-8").splitlines() if line.strip()]


def _label_studio(records):
    tasks = []
    for n, r in enumerate(records, start=1):
        annotations = [
            {
                "id": n * 10 + i,
                "completed_by": f"expert-{i}",
                "result": [
                    {"from_name": c, "to_name": "summary", "type": "rating", "value": {"rating": a[c]}}
                    for c in CRITERIA
                ],
            }
            for i, a in enumerate(r["expert_annotations"], start=1)
        ]
        tasks.append(
            {"id": n, "data": {"item": r["id"], "summary": r["decoded"]}, "annotations": annotations}
        )
    return label_studio.parse(tasks, file="summeval.json", mapping=FieldMapping("", ("summary",), "item"))


def _argilla(records):
    settings = {
        "fields": [{"name": "summary"}],
        "questions": [
            {"name": c, "settings": {"type": "rating", "options": [{"value": v} for v in range(1, 6)]}}
            for c in CRITERIA
        ],
    }
    rows = []
    for r in records:
        row = {"id": r["id"], "summary": r["decoded"]}
        for c in CRITERIA:
            row[f"{c}.responses"] = [a[c] for a in r["expert_annotations"]]
            row[f"{c}.responses.users"] = [f"expert-{i}" for i in range(1, len(r["expert_annotations"]) + 1)]
            row[f"{c}.responses.status"] = ["submitted"] * len(r["expert_annotations"])
        rows.append(row)
    return argilla.parse(rows, settings=settings, file="summeval")


@pytest.mark.parametrize("reader", [_label_studio, _argilla], ids=["label_studio", "argilla"])
def test_summeval_expert_alpha_survives_the_import(reader):
    records = _records()
    study = reader(records)
    assert len(study.items) == 100 and study.annotators == ["expert-1", "expert-2", "expert-3"]
    project = services.tool_study_import(study=study, name=f"SummEval M8 {reader.__name__}").project
    rows = {r["criterion"]: r for r in project_alpha(project=project, level="interval", draws=0)}
    for c in CRITERIA:
        matrix = np.array([[r["expert_annotations"][i][c] for r in records] for i in range(3)], dtype=float)
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
        assert rows[c]["alpha"] == pytest.approx(expected, abs=1e-9), c
        assert rows[c]["n_units"] == 100
