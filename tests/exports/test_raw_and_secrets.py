"""Raw long-format annotation exports, and what never leaves the database in any export."""

from __future__ import annotations

import json
import re
import zipfile

import pandas as pd
import pyarrow.parquet as pq
import pytest

from exports.selectors import RAW_COLUMNS, annotator_pseudonym
from exports.services import ExportOptions, export_create
from tests.exports.conftest import MODELS, exported_text

pytestmark = pytest.mark.django_db


def run(project, kind, tmp_path, settings, capture):
    settings.EXPORTS_DIR = tmp_path / "exports"
    with capture(execute=True):
        record = export_create(project=project, options=ExportOptions(kind=kind, bootstrap_draws=50))
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    return record


def test_raw_parquet_rows_pseudonyms_and_shown_order(
    likert_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    record = run(likert_project, "raw-parquet", tmp_path, settings, django_capture_on_commit_callbacks)
    frame = pq.read_table(f"{record.folder_path}/annotations.parquet").to_pandas()
    # 2 annotators x 2 prompts; each answer: 3 responses x 2 criteria + best pick + comment = 8 rows.
    assert len(frame) == record.counts["rows"] == 32
    assert list(frame.columns) == list(RAW_COLUMNS)
    expected = {annotator_pseudonym(project=likert_project, user_id=u.pk) for u in likert_project.annotators}
    assert set(frame["annotator"]) == expected
    assert all(re.fullmatch(r"ann-[0-9a-f]{12}", name) for name in expected)
    assert frame["criterion"].value_counts().to_dict() == {
        "relevance": 12,
        "fluency": 12,
        "best": 4,
        "comment": 4,
    }
    rated = frame[frame["response_id"].notna()]
    for row in rated.itertuples():
        assert list(row.shown_order)[row.shown_position - 1] == row.response_id
    assert set(rated["model_name"]) == set(MODELS)
    ratings = frame[frame["criterion"] == "relevance"]
    assert set(ratings["rubric_version"]) == {1}
    # The browser's 12.5 s, capped by the time since the claim (a few milliseconds in a test).
    assert ((ratings["seconds_on_task"] > 0) & (ratings["seconds_on_task"] <= 12.5)).all()
    assert set(frame[frame["criterion"] == "comment"]["comment"]) == {"catatan 0", "catatan 1"}


def test_raw_csv_and_jsonl_match_parquet(
    likert_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    parquet = run(likert_project, "raw-parquet", tmp_path, settings, django_capture_on_commit_callbacks)
    csv = run(likert_project, "raw-csv", tmp_path, settings, django_capture_on_commit_callbacks)
    jsonl = run(likert_project, "raw-jsonl", tmp_path, settings, django_capture_on_commit_callbacks)
    base = pq.read_table(f"{parquet.folder_path}/annotations.parquet").to_pandas()
    from_csv = pd.read_csv(f"{csv.folder_path}/annotations.csv")
    lines = open(f"{jsonl.folder_path}/annotations.jsonl", encoding="utf-8").read().splitlines()
    from_jsonl = [json.loads(line) for line in lines]
    assert len(from_csv) == len(from_jsonl) == len(base) == 32
    # Pseudonyms are stable per project: three exports, the same names.
    assert set(from_csv["annotator"]) == set(base["annotator"]) == {r["annotator"] for r in from_jsonl}
    assert [json.loads(v) for v in from_csv["shown_order"]] == [list(v) for v in base["shown_order"]]
    assert [r["shown_order"] for r in from_jsonl] == [list(v) for v in base["shown_order"]]


@pytest.mark.parametrize("kind", ["hf", "trl-strings", "trl-messages", "raw-parquet", "raw-csv", "raw-jsonl"])
def test_no_identity_or_secret_in_any_exported_file(
    kind, likert_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    record = run(likert_project, kind, tmp_path, settings, django_capture_on_commit_callbacks)
    texts = exported_text(tmp_path / "exports" / f"export-{record.pk}")
    with zipfile.ZipFile(record.zip_path) as archive:
        for name in archive.namelist():
            data = archive.read(name)
            if name.endswith(".parquet"):
                (tmp_path / "check.parquet").write_bytes(data)
                texts[f"zip:{name}"] = json.dumps(
                    pq.read_table(tmp_path / "check.parquet").to_pylist(), default=str
                )
            else:
                texts[f"zip:{name}"] = data.decode("utf-8")
    forbidden = ["sk-response-meta-secret", "prompt-meta-secret"]
    for user in likert_project.annotators:
        forbidden += [user.username, user.email]
    assert len(texts) >= 4
    for where, text in texts.items():
        for secret in forbidden:
            assert secret not in text, f"{secret!r} found in {where}"
    # The exports do hold the data itself (raw rows name responses by id and model, no text).
    sample = "zeta-7b" if kind.startswith("raw-") else "Jawaban zeta-7b untuk 0 giliran 1"
    assert any(sample in text for text in texts.values())
