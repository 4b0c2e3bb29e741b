import pandas as pd
import pytest
import yaml
from huggingface_hub import DatasetCard
from hypothesis import given, settings
from hypothesis import strategies as st

from exports.domain.dataset_card import (
    NOT_COMPUTED,
    AlphaFigure,
    CardInput,
    card_metadata,
    counts_by,
    render_dataset_card,
    render_yaml,
    size_category,
    work_lines,
)


def header_of(text):
    assert text.startswith("---\n")
    header, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(header), body


@pytest.fixture
def card():
    return CardInput(
        pretty_name="IndoPref pairs",
        license="cc-by-sa-4.0",
        languages=["sun", "ind", "jav", "ind"],
        split_rows={"train": 900, "test": 100},
        summary="Preference pairs from native-speaker ratings.",
        parameters={"strategy": "scores", "weights": {"relevance": 1.0, "fluency": 1.0}, "min_margin": 0.0},
        pair_counts={"items_in": 120, "ties_dropped": 17, "filtered_items": {"min_annotators": 3}},
        rubric_version=4,
        rubrics={
            "relevance": {"id": "Jawaban menjawab pertanyaan.", "en": "The answer addresses the question."}
        },
        guidelines="Rate each response on its own.",
        category_counts={"Math": {"train": 500, "test": 60}, "Safety": {"train": 400, "test": 40}},
        language_counts={"ind": {"train": 900, "test": 100}},
        alpha={
            "relevance": AlphaFigure(0.6123, (0.5511, 0.6702), "ordinal", 120),
            "fluency": AlphaFigure(None, None, "ordinal", 120),
            "safety": None,
        },
        judge_agreement={"qwen-1.5b": {"with_ties": 0.4321, "without_ties": 0.61, "n_with_ties": 300}},
    )


@pytest.mark.parametrize(
    ("n", "label"),
    [
        (0, "n<1K"),
        (999, "n<1K"),
        (1_000, "1K<n<10K"),
        (99_999, "10K<n<100K"),
        (451_501, "100K<n<1M"),
        (10**9, "n>1B"),
    ],
)
def test_size_category(n, label):
    assert size_category(n) == label


def test_header_reads_back_with_yaml(card):
    header, _ = header_of(render_dataset_card(card))
    assert header == card_metadata(card)
    assert header["language"] == ["ind", "jav", "sun"]
    assert header["multilinguality"] == "multilingual"
    assert header["size_categories"] == ["1K<n<10K"]  # 900 + 100 = 1,000
    assert header["configs"] == [
        {
            "config_name": "default",
            "data_files": [
                {"split": "train", "path": "data/train-*"},
                {"split": "test", "path": "data/test-*"},
            ],
        }
    ]


def test_huggingface_hub_parses_the_header(card):
    data = DatasetCard(render_dataset_card(card)).data
    assert data.license == "cc-by-sa-4.0"
    assert data.language == ["ind", "jav", "sun"]
    assert data.task_categories == ["text-generation"]
    assert data.size_categories == ["1K<n<10K"]
    assert data.pretty_name == "IndoPref pairs"
    assert data.to_dict()["configs"][0]["data_files"][1] == {"split": "test", "path": "data/test-*"}


def test_body_has_counts_tables_rubric_guidelines_and_agreement(card):
    _, body = header_of(render_dataset_card(card))
    assert "| category | train | test | total |" in body
    assert "| Math | 500 | 60 | 560 |" in body
    assert "| Safety | 400 | 40 | 440 |" in body
    assert "| ind | 900 | 100 | 1000 |" in body
    assert "Rubric version: 4" in body
    assert "Jawaban menjawab pertanyaan." in body and "The answer addresses the question." in body
    assert "Rate each response on its own." in body
    assert "| relevance | ordinal | 0.612 | [0.551, 0.670] | 120 |" in body
    assert "| fluency | ordinal | undefined (no variation) | not computed | 120 |" in body
    assert f"| safety |  | {NOT_COMPUTED} |  |  |" in body
    assert "| qwen-1.5b | 0.432 | 0.61 | 300 |" in body
    assert "| ties_dropped | 17 |" in body
    assert "| filtered_items: min_annotators | 3 |" in body
    assert "Conversion (`scores`)" in body


def test_missing_figures_are_written_as_not_computed():
    card = CardInput(pretty_name="x", license="cc-by-4.0", languages=["ind"], split_rows={"train": 3})
    header, body = header_of(render_dataset_card(card))
    assert "Krippendorff's alpha: not computed." in body
    # No rubric and no guidelines: neither section, no version line, and nothing promises them.
    assert "Rubric" not in body and "guidelines" not in body
    assert "LLM judges" not in body
    assert header["multilinguality"] == "monolingual"


def test_table_cells_escape_pipes_and_newlines():
    card = CardInput(
        pretty_name="x",
        license="cc-by-4.0",
        languages=["ind"],
        split_rows={"train": 3},
        category_counts={"Math | Logic\nHard": {"train": 3}},
    )
    assert "| Math \\| Logic Hard | 3 | 3 |" in render_dataset_card(card)


def test_counts_by_splits():
    splits = {
        "train": pd.DataFrame({"language": ["ind", "ind", "jav", None]}),
        "test": pd.DataFrame({"language": ["jav"]}),
    }
    assert counts_by(splits, "language") == {
        "": {"train": 1},
        "ind": {"train": 2},
        "jav": {"train": 1, "test": 1},
    }


def test_render_yaml_quotes_what_plain_yaml_would_misread():
    data = {
        "yes": "no",
        "key: with colon": "# not a comment",
        "n": [True, None, 1, 2.5, "null", "1.0", " padded ", "a\nb", "tab\there", "\x7f\u2028"],
        "empty": [],
        "nested": {"list": [{"a": 1, "b": [1, [2, 3]]}], "none": {}},
    }
    assert yaml.safe_load(render_yaml(data)) == data


def test_render_yaml_refuses_what_it_cannot_write():
    with pytest.raises(ValueError, match="finite"):
        render_yaml({"x": float("nan")})
    with pytest.raises(TypeError, match="set"):
        render_yaml({"x": {1, 2}})


scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",)), max_size=8), values, max_size=4))
def test_render_yaml_round_trips(data):
    assert yaml.safe_load(render_yaml(data)) == (data or None)


def small_card(**kwargs):
    return CardInput(
        pretty_name="x", license="cc-by-4.0", languages=["ind"], split_rows={"train": 3}, **kwargs
    )


def test_simulated_answers_are_declared_in_header_and_text():
    header, body = header_of(render_dataset_card(small_card(provenance="simulated")))
    assert header["annotations_creators"] == ["machine-generated"]
    assert "The judgements are simulated" in body
    assert "Native speakers judged" not in body


def test_stated_provenance_and_a_share_of_simulated_annotators():
    header, body = header_of(render_dataset_card(small_card(provenance="crowd")))
    assert header["annotations_creators"] == ["crowdsourced"]
    assert "Crowd workers judged" in body
    header, body = header_of(
        render_dataset_card(small_card(provenance="expert", n_annotators=5, n_simulated_annotators=2))
    )
    assert header["annotations_creators"] == ["expert-generated", "machine-generated"]
    assert "Native speakers judged" in body
    assert "Of the 5 annotators, 2 were simulated" in body
    with pytest.raises(ValueError, match="provenance"):
        render_dataset_card(small_card(provenance="robots"))


def test_numbers_are_printed_plainly():
    _, body = header_of(render_dataset_card(small_card(parameters={"seed": 2024, "min_margin": 0.25})))
    assert "| seed | 2024 |" in body
    assert "2,024" not in body
    assert "| min_margin | 0.25 |" in body


def test_column_table_lists_exactly_the_written_columns():
    columns = [
        ("item_id", "int64"),
        ("chosen_score_relevance", "double"),
        ("rejected_score_relevance", "double"),
        ("custom_extra", "string"),
    ]
    _, body = header_of(render_dataset_card(small_card(columns=columns)))
    section = body.split("## Columns", 1)[1].split("\n\n")[1]
    rows = section.splitlines()[2:]
    assert [r.split(" | ")[0].strip("| `") for r in rows] == [name for name, _ in columns]
    assert "| `chosen_score_relevance` | `double` | Mean rating of the chosen response" in body
    assert "criterion `relevance`" in body
    assert "| `custom_extra` | `string` | (no description) |" in body
    assert "chosen_score_<criterion>" not in body


def test_split_section_names_the_strata_too_small_for_test():
    card = small_card(test_size=0.1, too_small_strata=[("Coding / ind", 1), ("Law / sun", 4)])
    _, body = header_of(render_dataset_card(card))
    assert "## Splits" in body
    assert (
        "These category / language strata are too small for a test share of 0.1 and have no prompt in test: "
        "Coding / ind (1 prompt), Law / sun (4 prompts)."
    ) in body
    _, plain = header_of(render_dataset_card(small_card()))
    assert "## Splits" not in plain


def test_how_to_load_names_load_dataset_and_warns_off_load_from_disk():
    _, body = header_of(render_dataset_card(small_card(folder_name="export-12", hub_repo_id="org/indopref")))
    assert 'dataset = load_dataset("export-12")' in body
    assert 'dataset = load_dataset("org/indopref")' in body
    assert "`datasets.load_from_disk` does not read it" in body


@pytest.mark.parametrize(
    ("given", "phrase"),
    [
        ({"rubric_version": 2, "guidelines": "Baca dulu."}, ", following the rubric and guidelines below."),
        ({"rubrics": {"relevance": "Relevan."}}, ", following the rubric below."),
        ({"guidelines": "Baca dulu."}, ", following the guidelines below."),
        ({}, "each annotator. "),
    ],
)
def test_the_card_promises_only_the_rubric_and_guidelines_it_shows(given, phrase):
    _, body = header_of(render_dataset_card(small_card(provenance="crowd", **given)))
    assert phrase in body
    assert ("## Rubric" in body) == bool(given.get("rubric_version") or given.get("rubrics"))
    assert ("## Annotation guidelines" in body) == ("guidelines" in given)
    assert "Rubric version: not computed" not in body


def test_unstated_provenance_is_the_default_and_says_what_is_known():
    header, body = header_of(render_dataset_card(small_card(n_annotators=3)))
    assert header["annotations_creators"] == ["other"]
    assert "3 annotators judged the responses" in body
    assert "Who they were (native speakers, experts or crowd workers) was not stated" in body


def test_criteria_left_out_of_a_score_are_named_only_for_scores():
    left_out = {"safe": "rated on named categories (yes, no)"}
    weights = {"strategy": "scores", "weights": {"relevance": 2.0}}
    _, body = header_of(render_dataset_card(small_card(parameters=weights, left_out_criteria=left_out)))
    assert "Criteria in the score: `relevance` (weight 2)." in body
    assert "Rated criteria left out of the score: `safe`: rated on named categories (yes, no)." in body
    votes = {"strategy": "pairwise_majority", "weights": {"relevance": 1.0}}
    _, body = header_of(render_dataset_card(small_card(parameters=votes, left_out_criteria=left_out)))
    assert "Criteria in the score" not in body and "left out of the score" not in body


def test_work_lines_count_people_and_simulated_annotators_apart():
    counts = {"rows": 10, "simulated_rows": 4, "unrecorded_rows": 1, "people": 2, "simulated": 1}
    lines = work_lines([("answers", counts)])
    assert "| answers | 10 | 5 (2 people) | 4 (1 simulated annotator) | 1 |" in lines
    assert any(line.startswith("A simulated annotator is a program") for line in lines)
    none = {"rows": 3, "simulated_rows": 0, "unrecorded_rows": 0, "people": 1, "simulated": 0}
    lines = work_lines([("answers", none)])
    assert "| answers | 3 | 3 (1 person) | 0 | 0 |" in lines
    assert not any("program" in line for line in lines)
