import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard

from exports.domain.dataset_card import CardInput, counts_by, render_dataset_card
from exports.domain.preference_pairs import PairConfig, build_preference_pairs
from exports.domain.splits import split_pairs
from exports.writers import (
    infer_schema,
    render_transcript,
    to_trl_messages,
    to_trl_strings,
    write_hf_folder,
    write_long_format,
    write_parquet,
    zip_folder,
)

# datasets reads the offline switches when it is imported, so the load runs in a fresh interpreter.
LOAD_SCRIPT = """
import json, sys
import datasets
loaded = datasets.load_dataset(sys.argv[1])
print(json.dumps({name: {"columns": part.column_names, "rows": part.to_list()} for name, part in loaded.items()}))
"""


def load_offline(folder: Path, tmp_path: Path) -> dict:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf-home"),
    }
    done = subprocess.run(
        [sys.executable, "-c", LOAD_SCRIPT, str(folder)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def pairs():
    """Ten two-turn items in two categories, three responses each: r0 > r1 > r2 on both criteria."""
    items, responses, ratings = [], [], []
    for i in range(10):
        item = f"q{i}"
        items.append(
            {
                "item_id": item,
                "prompt": [{"role": "system", "content": "Pakai bahasa Sunda."}, f"Tanya {i}", f"Lanjut {i}"],
                "category": "Math" if i % 2 else "Culture",
                "language": "sun",
                "register": "lemes" if i % 2 else None,
                "dataset_id": 1,
                "project_id": 2,
            }
        )
        for k in range(3):
            responses.append((f"{item}-r{k}", item, f"model-{k}", [f"jawab {i}.{k}", f"lanjut {i}.{k}"]))
            for annotator in ("a", "b"):
                for criterion in ("relevance", "fluency"):
                    ratings.append((item, annotator, f"{item}-r{k}", criterion, 5 - k))
    result = build_preference_pairs(
        pd.DataFrame(items),
        pd.DataFrame(responses, columns=["response_id", "item_id", "model_name", "messages"]),
        ratings=pd.DataFrame(ratings, columns=["item_id", "annotator", "response_id", "criterion", "value"]),
        config=PairConfig(),
    )
    assert result.counts.pairs_out == 30  # three strictly ordered responses -> 3 pairs per item
    return result.pairs


def test_hf_folder_round_trips_through_load_dataset(pairs, tmp_path):
    splits, _ = split_pairs(pairs, seed=3, test_size=0.2)
    # 5 items per category, 0.2 * 5 = 1 test item each: 2 items x 3 pairs in test.
    assert {name: len(part) for name, part in splits.items()} == {"train": 24, "test": 6}
    card = render_dataset_card(
        CardInput(
            pretty_name="Round trip",
            license="cc-by-4.0",
            languages=["sun"],
            split_rows={name: len(part) for name, part in splits.items()},
            category_counts=counts_by(splits, "category"),
        )
    )
    folder = tmp_path / "export"
    rows = write_hf_folder(folder, splits, card, batch_rows=7)
    assert rows == {"train": 24, "test": 6}
    assert sorted(p.name for p in (folder / "data").iterdir()) == [
        "test-00000-of-00001.parquet",
        "train-00000-of-00001.parquet",
    ]
    # Streamed in batches of 7 rows: 24 rows -> 4 row groups.
    assert pq.ParquetFile(folder / "data" / "train-00000-of-00001.parquet").num_row_groups == 4

    loaded = load_offline(folder, tmp_path)
    assert set(loaded) == {"train", "test"}
    assert loaded["train"]["columns"] == list(pairs.columns)
    for name, part in splits.items():
        got = loaded[name]["rows"]
        assert [r["item_id"] for r in got] == part["item_id"].tolist()
        assert [r["prompt"] for r in got] == part["prompt"].tolist()
        assert [r["chosen"] for r in got] == part["chosen"].tolist()
        assert [r["rejected"] for r in got] == part["rejected"].tolist()
        assert [r["margin"] for r in got] == part["margin"].tolist()
        assert [r["register"] for r in got] == part["register"].tolist()
    first = loaded["train"]["rows"][0]
    assert first["chosen"][1] == {"role": "user", "content": first["chosen"][1]["content"]}
    assert first["chosen"][1]["content"].startswith("Lanjut ")

    data = DatasetCard((folder / "README.md").read_text(encoding="utf-8")).data
    assert data.license == "cc-by-4.0"
    assert data.size_categories == ["n<1K"]
    assert [f["split"] for f in data.to_dict()["configs"][0]["data_files"]] == ["train", "test"]


def test_hf_folder_refuses_to_clobber_empty_splits_and_bad_names(pairs, tmp_path):
    folder = tmp_path / "out"
    write_hf_folder(folder, {"train": pairs}, "card")
    with pytest.raises(FileExistsError):
        write_hf_folder(folder, {"train": pairs}, "card")
    write_hf_folder(folder, {"train": pairs.iloc[:2]}, "new card", overwrite=True)
    assert pq.read_metadata(folder / "data" / "train-00000-of-00001.parquet").num_rows == 2
    assert (folder / "README.md").read_text() == "new card"
    with pytest.raises(ValueError, match="no rows"):
        write_hf_folder(tmp_path / "empty", {"train": pairs, "test": pairs.iloc[:0]}, "card")
    assert not (tmp_path / "empty").exists()
    with pytest.raises(ValueError, match="split name"):
        write_hf_folder(tmp_path / "bad", {"train\n": pairs}, "card")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_hf_folder_takes_tables_and_batch_iterators_and_gives_every_split_the_first_schema(tmp_path):
    train = pd.DataFrame(
        {"item_id": ["a", "b", "c"], "register": ["krama", None, "ngoko"], "margin": [1.0, 0.5, 2.0]}
    )

    def test_batches():
        # Column order differs and register is all null (Arrow type null) in this split.
        table = pa.table({"margin": [3.0], "register": pa.nulls(1), "item_id": ["d"]})
        yield from table.to_batches()

    rows = write_hf_folder(
        tmp_path / "out", {"train": pa.Table.from_pandas(train), "test": test_batches()}, "c"
    )
    assert rows == {"train": 3, "test": 1}
    test = pq.read_table(tmp_path / "out" / "data" / "test-00000-of-00001.parquet")
    assert test.schema.names == ["item_id", "register", "margin"]
    assert test.schema.field("register").type == pa.string()
    assert test.to_pylist() == [{"item_id": "d", "register": None, "margin": 3.0}]


def test_streams_chunks_whose_first_chunk_has_only_missing_values(tmp_path):
    def chunks():
        yield pd.DataFrame({"id": [1, 2], "register": [None, None], "turns": [["a"], ["b", "c"]]})
        yield pa.RecordBatch.from_pandas(pd.DataFrame({"id": [3], "register": ["krama"], "turns": [["d"]]}))
        yield pd.DataFrame(
            {"id": [4, 5, 6], "register": ["ngoko", None, "loma"], "turns": [[], ["e"], ["f"]]}
        )

    path = tmp_path / "long.parquet"
    assert write_parquet(path, chunks(), batch_rows=2) == 6
    table = pq.read_table(path)
    assert table.schema.field("register").type == pa.string()
    assert table.column("register").to_pylist() == [None, None, "krama", "ngoko", None, "loma"]
    assert table.column("turns").to_pylist() == [["a"], ["b", "c"], ["d"], [], ["e"], ["f"]]
    # Chunks of 2, 1 and 3 rows with batch_rows=2 -> row groups of 2, 1, 2, 1.
    assert pq.ParquetFile(path).num_row_groups == 4


def test_infer_schema_types_nested_messages():
    frame = pd.DataFrame({"m": [None, [{"role": "user", "content": "x"}]], "n": [1.5, 2.0], "s": ["a", "b"]})
    schema = infer_schema(frame)
    assert schema.field("m").type == pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    assert schema.field("n").type == pa.float64()
    assert schema.field("s").type == pa.string()
    with pytest.raises(ValueError, match="mixes value types"):
        infer_schema(pd.DataFrame({"x": [1, "a"]}))


def test_trl_strings_render_a_two_turn_pair(pairs):
    out = to_trl_strings(pairs.iloc[:1], keep_columns=["item_id"])
    row = out.iloc[0]
    assert list(out.columns) == ["prompt", "chosen", "rejected", "item_id"]
    assert row["prompt"] == "System: Pakai bahasa Sunda.\n\nUser: Tanya 0\n\nAssistant:"
    assert row["chosen"] == " jawab 0.0\n\nUser: Lanjut 0\n\nAssistant: lanjut 0.0"
    assert row["rejected"] == " jawab 0.1\n\nUser: Lanjut 0\n\nAssistant: lanjut 0.1"
    first = pairs.iloc[0]
    assert row["prompt"] + row["chosen"] == render_transcript(first["prompt"] + first["chosen"])


def test_trl_messages_keep_the_conversational_layout(pairs):
    out = to_trl_messages(pairs)
    assert list(out.columns) == ["prompt", "chosen", "rejected"]
    assert out["prompt"].iloc[0][-1] == {"role": "user", "content": "Tanya 0"}
    assert [m["role"] for m in out["chosen"].iloc[0]] == ["assistant", "user", "assistant"]


@pytest.fixture
def annotation_chunks():
    stamp = pd.Timestamp("2026-03-01 08:30:00", tz="UTC")
    return [
        pd.DataFrame(
            {
                "annotator": ["ann-1", "ann-2"],
                "value": [4, 5],
                "shown_order": [[2, 0, 1], [0, 1, 2]],
                "submitted_at": [stamp, stamp + pd.Timedelta(seconds=90)],
            }
        ),
        pd.DataFrame(
            {"annotator": ["ann-3"], "value": [1], "shown_order": [[1, 2, 0]], "submitted_at": [stamp]}
        ),
    ]


def test_long_format_csv_writes_nested_cells_as_json(annotation_chunks, tmp_path):
    path = tmp_path / "raw.csv"
    assert write_long_format(path, iter(annotation_chunks), fmt="csv") == 3
    lines = path.read_text().splitlines()
    assert lines[0] == "annotator,value,shown_order,submitted_at"
    assert lines[1] == 'ann-1,4,"[2, 0, 1]",2026-03-01T08:30:00.000000+0000'
    assert len(lines) == 4 and lines[3].startswith("ann-3,1,")
    back = pd.read_csv(path)
    assert [json.loads(v) for v in back["shown_order"]] == [[2, 0, 1], [0, 1, 2], [1, 2, 0]]


def test_long_format_jsonl_and_parquet(annotation_chunks, tmp_path):
    jsonl = tmp_path / "raw.jsonl"
    assert write_long_format(jsonl, annotation_chunks, fmt="jsonl") == 3
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [r["shown_order"] for r in records] == [[2, 0, 1], [0, 1, 2], [1, 2, 0]]
    assert records[1]["submitted_at"].startswith("2026-03-01T08:31:30")
    parquet = tmp_path / "raw.parquet"
    assert write_long_format(parquet, annotation_chunks, fmt="parquet") == 3
    assert pq.read_table(parquet).column("value").to_pylist() == [4, 5, 1]
    with pytest.raises(ValueError, match="unknown format"):
        write_long_format(tmp_path / "raw.xml", annotation_chunks, fmt="xml")


def test_zip_folder_is_relative_sorted_and_reproducible(pairs, tmp_path):
    folder = tmp_path / "export"
    write_hf_folder(folder, {"train": pairs}, "card")
    first = zip_folder(folder)
    assert first == tmp_path / "export.zip"
    with zipfile.ZipFile(first) as archive:
        assert archive.namelist() == ["README.md", "data/train-00000-of-00001.parquet"]
        assert archive.read("README.md") == b"card"
        assert (
            archive.read("data/train-00000-of-00001.parquet")
            == (folder / "data" / "train-00000-of-00001.parquet").read_bytes()
        )
    second = zip_folder(folder, tmp_path / "again.zip")
    assert second.read_bytes() == first.read_bytes()
    with pytest.raises(ValueError, match="inside the folder"):
        zip_folder(folder, folder / "self.zip")
