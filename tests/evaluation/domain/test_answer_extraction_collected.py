"""Answer extraction on what the shipped GGUF models really wrote, against labels a person gave by reading.

``data/mcq_outputs.jsonl`` was written by ``bench/collect_mcq_outputs.py`` (its docstring says how: the models,
their sha256, the templates, the sampling and the date), then each record was given ``expected`` by hand: the
letter the output commits to, ``"ambiguous"`` when it names two or more letters as its answer, or ``"none"``
when it gives no answer (rambling, a made-up option list, the question repeated). The labels were written
from the outputs alone, before the extractor was run on them.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from evaluation.domain.answer_extraction import AMBIGUOUS_RULE, RULES, extract_choice_with_rule

DATA = Path(__file__).parent / "data" / "mcq_outputs.jsonl"
RECORDS = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]

# Outputs the rules read differently from the label, each with why no rule was added for it.
DISAGREEMENTS = {
    ("smollm2-135m-instruct", "greedy", "id-3", "q-02"): (
        "the instruction echoed, then '\"Bakso\" (B' cut off by max_tokens: option A's text is the only one "
        "contained, so option_text_contained reads A; a reader sees no answer. Telling the two apart needs "
        "the prompt or the finish reason, which the extractor does not get"
    ),
}


def _key(record: dict) -> tuple[str, str, str, str]:
    return (record["model"], record["sampling"], record["template"], record["question_id"])


def _agrees(record: dict) -> bool:
    letter, rule = extract_choice_with_rule(record["output"], record["choices"])
    expected = record["expected"]
    if expected == AMBIGUOUS_RULE:
        return (letter, rule) == (None, AMBIGUOUS_RULE)
    if expected == "none":
        return letter is None and rule != AMBIGUOUS_RULE
    return letter == expected


def test_the_collection_is_what_its_docstring_says():
    assert len(RECORDS) == 256
    per = Counter((r["model"], r["sampling"], r["language"]) for r in RECORDS)
    assert set(per.values()) == {32}  # 8 questions x 4 templates per model, sampling and prompt language
    assert {r["template"] for r in RECORDS} == {f"{lang}-{i}" for lang in ("id", "en") for i in range(1, 5)}
    for record in RECORDS:
        assert record["expected"] in {"none", AMBIGUOUS_RULE, *record["choices"]}


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(record, marks=pytest.mark.xfail(reason=DISAGREEMENTS[_key(record)], strict=True))
        if _key(record) in DISAGREEMENTS
        else record
        for record in RECORDS
    ],
    ids=["-".join(_key(record)) for record in RECORDS],
)
def test_every_collected_output_reads_as_labelled(record):
    letter, rule = extract_choice_with_rule(record["output"], record["choices"])
    assert rule in RULES
    assert _agrees(record), (
        f"labelled {record['expected']!r}, read {letter!r} by {rule!r}: {record['output']!r}"
    )


def test_agreement_with_the_hand_labels():
    disagreeing = {_key(record) for record in RECORDS if not _agrees(record)}
    assert disagreeing == set(DISAGREEMENTS)
    assert len(RECORDS) - len(disagreeing) == 255  # of 256
