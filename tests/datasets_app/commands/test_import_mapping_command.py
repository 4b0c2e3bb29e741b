import json

import pytest
from django.core.management import CommandError, call_command

from datasets_app.models import Dataset, DatasetImport, Response
from tests.datasets_app.alpaca import MAPPING, alpaca_rows, write_alpaca_csv

pytestmark = pytest.mark.django_db


def test_mapping_file_saved_then_reused_by_name(tmp_path, capsys):
    mapping_file = tmp_path / "alpaca.json"
    mapping_file.write_text(json.dumps(MAPPING), encoding="utf-8")
    first = write_alpaca_csv(tmp_path / "a.csv", alpaca_rows(3))
    call_command(
        "import_dataset", str(first), "--name", "a", "--mapping", str(mapping_file),
        "--save-mapping-as", "alpaca-eval", "--json",
    )  # fmt: skip
    assert json.loads(capsys.readouterr().out)["responses"] == 6
    second = write_alpaca_csv(tmp_path / "b.csv", alpaca_rows(2))
    call_command("import_dataset", str(second), "--name", "b", "--mapping-name", "alpaca-eval", "--json")
    assert json.loads(capsys.readouterr().out)["prompts"] == 2
    assert sorted(
        Response.objects.filter(prompt__dataset__name="b").values_list("model_name", flat=True)
    ) == ["komodo-7b", "sahabat-ai", "sahabat-ai", "seallm-v3"]


def test_mapping_of_an_import_made_on_the_page_is_reused(tmp_path, capsys):
    earlier = DatasetImport.objects.create(name="page", file_format="csv", mapping=MAPPING)
    path = write_alpaca_csv(tmp_path / "c.csv", alpaca_rows(2))
    call_command("import_dataset", str(path), "--name", "c", "--mapping-from-import", str(earlier.pk))
    assert Dataset.objects.get(name="c").prompts.count() == 2


def test_hub_dataset_from_the_command_line(tmp_path, settings, capsys):
    from tests.datasets_app.services.test_mapped_import import write_hub_stand_in

    write_hub_stand_in(tmp_path / "hub")
    settings.IMPORT_HUB_LOCAL_ROOT = str(tmp_path / "hub")
    mapping_file = tmp_path / "m.json"
    mapping_file.write_text(json.dumps(MAPPING), encoding="utf-8")
    call_command(
        "import_dataset", "--hub", "timbang-lab/pairs-regional", "--hub-config", "jav", "--hub-split", "train",
        "--name", "hub", "--mapping", str(mapping_file), "--json",
    )  # fmt: skip
    assert json.loads(capsys.readouterr().out)["prompts"] == 3


def test_mapping_that_reads_a_missing_column_exits_2(tmp_path, capsys):
    path = tmp_path / "other.csv"
    path.write_text("question,answer\nApa?,Ya.\n", encoding="utf-8")
    mapping_file = tmp_path / "m.json"
    mapping_file.write_text(json.dumps(MAPPING), encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        call_command("import_dataset", str(path), "--name", "x", "--mapping", str(mapping_file))
    assert caught.value.returncode == 2
    assert "line 2: mapping: reads column(s) dataset, generator_1, generator_2, instruction" in str(
        caught.value
    )
    assert Dataset.objects.count() == 0
