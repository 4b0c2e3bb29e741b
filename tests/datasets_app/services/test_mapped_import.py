"""Imports through a column mapping, saved mappings, progress, and Hub datasets read by the worker."""

import json

import pytest

from datasets_app.domain.column_mapping import mapping_from_dict
from datasets_app.models import Dataset, DatasetImport, ImportMapping, Prompt, Response
from datasets_app.readers import HubSource
from datasets_app.services import (
    ImportFailed,
    count_records,
    dataset_import,
    dataset_import_queue,
    import_mapping_resolve,
    import_mapping_save,
    import_progress_get,
)
from tests.datasets_app.alpaca import MAPPING, alpaca_rows, write_alpaca_csv

pytestmark = pytest.mark.django_db


def test_mapped_csv_gives_prompts_with_both_models(tmp_path):
    path = write_alpaca_csv(tmp_path / "pairs.csv", alpaca_rows(4))
    result = dataset_import(path=path, name="pairs", mapping=mapping_from_dict(MAPPING))
    assert result.counts == {"prompts": 4, "responses": 8}
    first = Prompt.objects.get(dataset=result.dataset, external_id="2")  # the first row, line 2
    assert first.turns == ["Jelaskan peribahasa nomor 0."] and first.language == "ind"
    assert first.category == "peribahasa"
    assert sorted(first.responses.values_list("model_name", "turns")) == [
        ("sahabat-ai", ["Penjelasan pertama 0."]),
        ("seallm-v3", ["Penjelasan kedua 0."]),
    ]


def test_problems_name_the_file_columns_and_nothing_is_written(tmp_path):
    rows = alpaca_rows(5)
    rows[2]["instruction"] = ""
    rows[3]["generator_2"] = ""
    path = write_alpaca_csv(tmp_path / "bad.csv", rows)
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=path, name="bad", mapping=mapping_from_dict(MAPPING))
    assert [(e.location, e.field) for e in caught.value.errors] == [
        ("line 4", "instruction (prompt)"),
        ("line 5", "generator_2 (responses[1].model)"),
    ]
    assert Dataset.objects.count() == 0 and Response.objects.count() == 0


def test_a_column_the_file_lacks_is_named_once(tmp_path):
    path = tmp_path / "short.csv"
    path.write_text("instruction,output_1\nHalo?,Halo!\n", encoding="utf-8")
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=path, name="short", mapping=mapping_from_dict(MAPPING))
    (error,) = caught.value.errors
    assert error.location == "line 2" and error.field == "mapping"
    assert "dataset, generator_1, generator_2, output_2" in error.message
    assert Dataset.objects.count() == 0


def test_saved_mapping_is_found_by_name_and_from_an_earlier_import(tmp_path):
    import_mapping_save(name="alpaca", mapping=mapping_from_dict(MAPPING))
    assert import_mapping_resolve(mapping_name="alpaca") == mapping_from_dict(MAPPING)
    earlier = DatasetImport.objects.create(name="x", file_format="csv", mapping=MAPPING)
    assert import_mapping_resolve(from_import=earlier.pk) == mapping_from_dict(MAPPING)
    with pytest.raises(ImportFailed, match="no saved mapping is named 'nope'"):
        import_mapping_resolve(mapping_name="nope")
    with pytest.raises(ImportFailed, match="mapping.columns.prompt"):
        import_mapping_resolve(mapping={"columns": {"id": "x"}})
    assert ImportMapping.objects.get().mapping == mapping_from_dict(MAPPING).as_dict()


def test_background_import_keeps_its_mapping_and_reports_progress(
    tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.IMPORT_HUB_LOCAL_ROOT = ""
    path = write_alpaca_csv(tmp_path / "big.csv", alpaca_rows(1500))
    assert count_records(path, "csv") == 1500
    with django_capture_on_commit_callbacks(execute=True):
        record = dataset_import_queue(
            upload_path=path,
            name="big",
            file_format="csv",
            kind=None,
            replace=False,
            user=None,
            mapping=mapping_from_dict(MAPPING),
        )
    record.refresh_from_db()
    assert record.status == "succeeded", record.errors
    assert record.counts == {"prompts": 1500, "responses": 3000}
    assert record.mapping == mapping_from_dict(MAPPING).as_dict()
    assert import_progress_get(import_id=record.pk) == {"done": 1000, "total": 1500}
    assert not path.exists()


def write_hub_stand_in(root):
    """A dataset folder laid out like a Hub repo (two configs of two splits each, chosen by the README's
    YAML), at <root>/<owner>/<name>: what ``load_dataset`` is pointed at instead of the Hub."""
    repo = root / "timbang-lab" / "pairs-regional"
    for config in ("jav", "sun"):
        for split, n in (("train", 3), ("test", 2)):
            folder = repo / config
            folder.mkdir(parents=True, exist_ok=True)
            rows = [
                {
                    "instruction": f"{config} {split} {i}",
                    "output_1": "a",
                    "generator_1": "m1",
                    "output_2": "b",
                    "generator_2": "m2",
                    "dataset": split,
                }
                for i in range(n)
            ]
            (folder / f"{split}.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (repo / "README.md").write_text(
        "---\nconfigs:\n"
        + "".join(
            f"- config_name: {c}\n  data_files:\n  - split: train\n    path: {c}/train.jsonl\n"
            f"  - split: test\n    path: {c}/test.jsonl\n"
            for c in ("jav", "sun")
        )
        + "---\n",
        encoding="utf-8",
    )
    return repo


def test_hub_dataset_is_read_by_the_worker_with_config_and_split(
    tmp_path, settings, django_capture_on_commit_callbacks
):
    write_hub_stand_in(tmp_path / "hub")
    settings.IMPORT_HUB_LOCAL_ROOT = str(tmp_path / "hub")
    mapping = mapping_from_dict({**MAPPING, "constants": {"language": "sun"}})
    with django_capture_on_commit_callbacks(execute=True):
        record = dataset_import_queue(
            hub=HubSource("timbang-lab/pairs-regional", config="sun", split="test", revision="main"),
            name="from-hub",
            kind=None,
            replace=False,
            user=None,
            mapping=mapping,
        )
    record.refresh_from_db()
    assert record.status == "succeeded", record.errors
    assert record.hub == {
        "dataset": "timbang-lab/pairs-regional",
        "config": "sun",
        "split": "test",
        "revision": "main",
    }
    dataset = Dataset.objects.get(name="from-hub")
    assert dataset.source == "hf://datasets/timbang-lab/pairs-regional config=sun split=test revision=main"
    assert sorted(dataset.prompts.values_list("turns", flat=True)) == [["sun test 0"], ["sun test 1"]]
    assert Response.objects.filter(prompt__dataset=dataset).count() == 4


def test_unknown_hub_dataset_fails_with_its_name_and_writes_nothing(
    tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.IMPORT_HUB_LOCAL_ROOT = str(tmp_path / "hub")
    with django_capture_on_commit_callbacks(execute=True):
        record = dataset_import_queue(
            hub=HubSource("timbang-lab/missing"), name="none", kind=None, replace=False, user=None
        )
    record.refresh_from_db()
    assert record.status == "failed"
    assert "timbang-lab/missing: cannot be read from the Hugging Face Hub" in record.errors[0]["message"]
    assert Dataset.objects.count() == 0
