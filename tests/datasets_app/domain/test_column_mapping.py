import pytest

from datasets_app.domain.column_mapping import (
    ROW_NUMBER,
    ColumnMapping,
    MappingInvalid,
    ResponseColumn,
    apply_mapping,
    mapping_from_dict,
    missing_columns,
    needs_mapping,
    suggest_mapping,
)
from datasets_app.domain.import_records import clean_prompt

ALPACA = ["instruction", "output_1", "generator_1", "output_2", "generator_2", "dataset"]


def test_suggestion_for_alpaca_eval_columns():
    mapping = suggest_mapping(ALPACA)
    assert mapping.columns == {"prompt": "instruction", "category": "dataset", "id": ROW_NUMBER}
    assert mapping.constants == {"language": "ind"}
    assert mapping.responses == (
        ResponseColumn("output_1", model_column="generator_1"),
        ResponseColumn("output_2", model_column="generator_2"),
    )


def test_suggestion_without_model_columns_names_the_model_after_the_column():
    mapping = suggest_mapping(["question", "response_a", "response_b"])
    assert [(r.text, r.model_name) for r in mapping.responses] == [
        ("response_a", "response_a"),
        ("response_b", "response_b"),
    ]


def test_applied_mapping_gives_a_record_our_checks_accept():
    mapping = suggest_mapping(ALPACA)
    row = {
        "instruction": "Apa ibu kota Jawa Barat?",
        "output_1": "Bandung.",
        "generator_1": "model-a",
        "output_2": "Kota Bandung.",
        "generator_2": "model-b",
        "dataset": "geografi",
    }
    record = apply_mapping(mapping, row, row_number=7)
    cleaned, problems = clean_prompt(record)
    assert problems == []
    assert cleaned.external_id == "7"
    assert cleaned.turns == ["Apa ibu kota Jawa Barat?"]
    assert cleaned.category == "geografi" and cleaned.language == "ind"
    assert cleaned.responses == [("model-a", ["Bandung."]), ("model-b", ["Kota Bandung."])]


def test_empty_response_cell_is_left_out_and_other_columns_go_to_meta():
    mapping = ColumnMapping(
        columns={"prompt": "q", "id": "key"},
        constants={"category": "umum", "language": "sun"},
        responses=(ResponseColumn("a", model_name="m1"), ResponseColumn("b", model_name="m2")),
    )
    record = apply_mapping(
        mapping, {"q": "Naon?", "key": "k1", "a": "Kitu.", "b": None, "x": "1"}, row_number=2
    )
    assert record == {
        "prompt": "Naon?",
        "id": "k1",
        "category": "umum",
        "language": "sun",
        "responses": [{"model": "m1", "text": "Kitu."}],
        "meta": {"x": "1"},
    }


def test_round_trip_through_plain_data():
    mapping = suggest_mapping(ALPACA)
    assert mapping_from_dict(mapping.as_dict()) == mapping


def test_malformed_mapping_names_every_problem():
    with pytest.raises(MappingInvalid) as caught:
        mapping_from_dict(
            {
                "columns": {"prompt": "instruction", "colour": "x", "category": ROW_NUMBER},
                "constants": {"prompt": "no"},
                "responses": [{"text": "output_1"}, {"text": "o", "model_name": "m", "model_column": "g"}],
            }
        )
    fields = [f for f, _ in caught.value.problems]
    assert fields == [
        "columns.colour",
        "columns.category",
        "constants.prompt",
        "responses[0]",
        "responses[1]",
    ]


def test_mapping_without_a_prompt_column_is_refused():
    with pytest.raises(MappingInvalid, match="columns.prompt: is required"):
        mapping_from_dict({"columns": {"id": "key"}})


def test_problem_fields_are_named_after_the_file_columns():
    mapping = suggest_mapping(ALPACA)
    assert mapping.source_of("prompt") == "instruction (prompt)"
    assert mapping.source_of("responses[1].model") == "generator_2 (responses[1].model)"
    assert mapping.source_of("responses[0].turns") == "output_1 (responses[0].turns)"
    assert mapping.source_of("language") == "language"


def test_missing_columns_and_needs_mapping():
    mapping = suggest_mapping(ALPACA)
    assert missing_columns(mapping, ["instruction", "output_1"]) == [
        "dataset",
        "generator_1",
        "generator_2",
        "output_2",
    ]
    assert needs_mapping(ALPACA)
    assert not needs_mapping(["id", "category", "language", "prompt", "responses"])
    assert not needs_mapping(["id", "question", "choices"])
