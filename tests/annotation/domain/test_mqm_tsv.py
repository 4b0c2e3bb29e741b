"""The WMT/Anthea MQM TSV: reading, checking with line and column, and writing back byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.domain.error_spans import WMT21, mqm_report
from annotation.domain.mqm_tsv import (
    TsvError,
    ratings_from_rows,
    read_mqm_tsv,
    rows_sorted,
    segment_texts,
    write_mqm_tsv,
)

HAND = Path(__file__).parent / "data" / "mqm_hand.tsv"
HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"


def _tsv(*lines: str, header: str = HEADER) -> str:
    return "\n".join([header, *lines]) + "\n"


def test_reads_spans_on_target_and_source():
    table = read_mqm_tsv(HAND.read_text(encoding="utf-8"))
    assert len(table.rows) == 10 and table.extra == ("comment",)
    first = table.rows[0]
    assert first.target == "Rapat dimulai pukul sepuluh ."
    assert first.target[first.span.start : first.span.end] == "sepuluh"
    assert (first.span.side, first.span.category, first.span.severity) == (
        "target",
        "Accuracy/Mistranslation",
        "Major",
    )
    assert table.extra_value(first, "comment") == "angka salah"
    omission = table.rows[6]
    assert omission.span.side == "source"
    assert omission.source[omission.span.start : omission.span.end] == "o'clock"
    assert table.rows[3].no_error and table.rows[3].span is None


def test_round_trip_is_byte_stable_apart_from_ordering():
    text = HAND.read_text(encoding="utf-8")
    table = read_mqm_tsv(text)
    again = write_mqm_tsv(table)
    assert again == text  # same order in, same order out
    shuffled = type(table)(header=table.header, rows=tuple(reversed(rows_sorted(table.rows))))
    written = write_mqm_tsv(shuffled).splitlines()
    assert written[0] == text.splitlines()[0]
    assert sorted(written[1:]) == sorted(text.splitlines()[1:])


def test_ratings_group_lines_per_rater_and_segment():
    table = read_mqm_tsv(HAND.read_text(encoding="utf-8"))
    ratings = ratings_from_rows(table, WMT21)
    assert len(ratings) == 8
    report = mqm_report(ratings, draws=0)
    assert [(s.system, round(s.score, 6)) for s in report.systems] == [("sysA", 2.775), ("sysB", 7.75)]
    texts = segment_texts(table)
    assert texts[("sysB", "rapat\t1\t1")] == (
        "The meeting starts at nine o'clock.",
        "Pertemuan mulai jam sembilan.",
    )


def test_language_register_and_esa_score_columns():
    header = HEADER + "\tlp\tregister\tscore"
    text = _tsv(
        "A\td\t1\t1\tr1\tsrc\t<v>x</v>y\tAccuracy\tMajor\ten-jav\tkrama\t40",
        "A\td\t1\t1\tr1\tsrc\tx<v>y</v>\tStyle\tMinor\ten-jav\tkrama\t40",
        "A\td\t1\t2\tr1\tsrc\txy\tNo-error\tNo-error\ten-sun\t\t100",
        header=header,
    )
    ratings = ratings_from_rows(read_mqm_tsv(text))
    by_segment = {r.segment: r for r in ratings}
    assert by_segment["d\t1\t1"].language == "en-jav" and by_segment["d\t1\t1"].register == "krama"
    assert by_segment["d\t1\t1"].score == 40.0 and len(by_segment["d\t1\t1"].spans) == 2
    assert by_segment["d\t1\t2"].score == 100.0 and by_segment["d\t1\t2"].register == ""


def test_origin_and_outcome_columns():
    header = HEADER + "\torigin\toutcome"
    text = _tsv("A\td\t1\t1\tr1\tsrc\t<v>x</v>y\tAccuracy\tMajor\tllm\tedited", header=header)
    span = read_mqm_tsv(text).rows[0].span
    assert (span.origin, span.outcome) == ("llm", "edited")
    assert write_mqm_tsv(read_mqm_tsv(text)) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "line 1: the file is empty"),
        ("system\tdoc\n", "line 1: missing column 'doc_id'"),
        (_tsv(), "line 2: the file has a header but no rating"),
        (_tsv("A\td\t1\t1\tr1\tsrc\ttgt\tAccuracy"), "line 2: 8 columns, the header has 9"),
        (_tsv("A\td\t1\t1\t\tsrc\ttgt\tAccuracy\tMajor"), "line 2, column rater: empty"),
        (
            _tsv("A\td\t1\t1\tr1\tsrc\t<v>tgt\tAccuracy\tMajor"),
            "line 2, column target: needs exactly one <v>",
        ),
        (
            _tsv("A\td\t1\t1\tr1\tsrc\tt</v>g<v>t\tAccuracy\tMajor"),
            "line 2, column target: </v> comes before",
        ),
        (
            _tsv("A\td\t1\t1\tr1\t<v>s</v>\t<v>t</v>\tAccuracy\tMajor"),
            "line 2, column source: a line marks one",
        ),
        (_tsv("A\td\t1\t1\tr1\tsrc\ttgt\tNo-error\tMajor"), "line 2, column severity: a No-error line"),
        (
            _tsv("A\td\t1\t1\tr1\tsrc\t<v>t</v>\tNo-error\tNo-error"),
            "line 2, column target: a No-error line marks",
        ),
    ],
)
def test_bad_files_name_line_and_column(text, message):
    with pytest.raises(TsvError) as caught:
        read_mqm_tsv(text)
    assert str(caught.value).startswith(message)


def test_every_bad_line_is_listed():
    text = _tsv("A\td\t1\t1\t\tsrc\ttgt\tAccuracy\tMajor", "ok", "A\td\t1\t1\tr1\tsrc\ttgt\tAccuracy\tMajor")
    with pytest.raises(TsvError) as caught:
        read_mqm_tsv(text)
    assert caught.value.errors == ["line 2, column rater: empty", "line 3: 1 columns, the header has 9"]
    assert str(caught.value).endswith("(and 1 more problem)")


def test_unknown_severity_and_bad_score_name_the_line():
    with pytest.raises(TsvError, match="line 3, column severity: 'Critical' has no weight"):
        ratings_from_rows(
            read_mqm_tsv(_tsv("A\td\t1\t1\tr1\ts\tt\tStyle\tMinor", "A\td\t1\t2\tr1\ts\tt\tStyle\tCritical")),
            WMT21,
        )
    with pytest.raises(TsvError, match="line 2, column score: 'lots' is not a number from 0 to 100"):
        ratings_from_rows(
            read_mqm_tsv(_tsv("A\td\t1\t1\tr1\ts\tt\tStyle\tMinor\tlots", header=HEADER + "\tscore"))
        )


def test_texts_that_differ_within_a_segment_are_named():
    text = _tsv("A\td\t1\t1\tr1\ts\t<v>t</v>x\tStyle\tMinor", "A\td\t1\t1\tr2\ts\ttY\tStyle\tMinor")
    with pytest.raises(TsvError, match="line 3, column target: differs from line 2"):
        segment_texts(read_mqm_tsv(text))


def test_crlf_and_bom_are_read():
    text = "\ufeff" + _tsv("A\td\t1\t1\tr1\ts\t<v>t</v>\tStyle\tMinor").replace("\n", "\r\n")
    row = read_mqm_tsv(text).rows[0]
    assert (row.target, row.severity) == ("t", "Minor")
