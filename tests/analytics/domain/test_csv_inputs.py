"""CSV checking for the agreement commands: every problem is one line naming file, line and column."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from analytics.domain.csv_inputs import InputError, agreement_frame, human_votes_frame, judge_frame, read_csv


def _write(tmp_path: Path, text: str, name: str = "in.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_read_csv_strips_cells_and_lowercases_headers(tmp_path):
    frame = read_csv(_write(tmp_path, " Unit , CODER,Value\nu1 , c1, 3\n"))
    assert list(frame.columns) == ["unit", "coder", "value"]
    assert frame.iloc[0].tolist() == ["u1", "c1", "3"]


def test_read_csv_missing_or_empty_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_csv(tmp_path / "absent.csv")
    with pytest.raises(InputError, match="empty"):
        read_csv(_write(tmp_path, ""))


def test_agreement_frame_drops_empty_values_and_parses_numbers(tmp_path):
    raw = read_csv(_write(tmp_path, "unit,coder,value,criterion\nu1,c1,3,rel\nu1,c2,,rel\nu1,c2,4.5,flu\n"))
    frame = agreement_frame(raw, "interval")
    assert len(frame) == 2
    assert frame["value"].tolist() == [3.0, 4.5]
    assert frame["criterion"].tolist() == ["rel", "flu"]


def test_agreement_frame_names_line_and_column_of_a_bad_value(tmp_path):
    raw = read_csv(_write(tmp_path, "unit,coder,value\nu1,c1,3\nu1,c2,three\n"))
    with pytest.raises(InputError) as caught:
        agreement_frame(raw, "ordinal", source="r.csv")
    assert str(caught.value) == "r.csv: line 3: column 'value': 'three' is not a number"
    # The same value is a category at the nominal level.
    assert agreement_frame(raw, "nominal")["value"].tolist() == ["3", "three"]


def test_agreement_frame_missing_column_and_empty_ids(tmp_path):
    with pytest.raises(InputError, match="missing column 'coder'"):
        agreement_frame(read_csv(_write(tmp_path, "unit,value\nu1,3\n")), "nominal")
    with pytest.raises(InputError, match="line 2: column 'unit' is empty"):
        agreement_frame(read_csv(_write(tmp_path, "unit,coder,value\n,c1,3\n")), "nominal")


def test_agreement_frame_rejects_double_ratings_per_criterion(tmp_path):
    text = "unit,coder,value,criterion\nu1,c1,3,rel\nu1,c1,4,flu\nu1,c1,5,rel\n"
    with pytest.raises(
        InputError, match="line 4: the coder rated this unit on this criterion more than once"
    ):
        agreement_frame(read_csv(_write(tmp_path, text)), "interval")


def test_agreement_frame_rejects_infinite_values(tmp_path):
    with pytest.raises(InputError, match="'inf' is not a number"):
        agreement_frame(read_csv(_write(tmp_path, "unit,coder,value\nu1,c1,inf\n")), "interval")


def test_human_votes_are_case_insensitive_and_both_bad_is_a_tie(tmp_path):
    text = "item,annotator,vote,turn\ni1,h1,a,1\ni1,h2,TIE,1\ni1,h3,Both_Bad,1\ni1,h1,b,2\n"
    frame = human_votes_frame(read_csv(_write(tmp_path, text)))
    assert frame["vote"].tolist() == ["A", "tie", "tie", "B"]
    assert frame["turn"].tolist() == [1, 1, 1, 2]


def test_human_votes_reject_unknown_votes_and_repeats(tmp_path):
    with pytest.raises(InputError, match="line 3: column 'vote': 'C' is not one of A, B, tie, both_bad$"):
        human_votes_frame(read_csv(_write(tmp_path, "item,annotator,vote\ni1,h1,A\ni1,h2,C\n")))
    with pytest.raises(InputError, match="line 3: the annotator voted on this item more than once"):
        human_votes_frame(read_csv(_write(tmp_path, "item,annotator,vote\ni1,h1,A\ni1,h1,B\n")))
    with pytest.raises(InputError, match="column 'turn' must be a whole number"):
        human_votes_frame(read_csv(_write(tmp_path, "item,annotator,vote,turn\ni1,h1,A,1.5\n")))


def test_judge_votes_with_parse_errors(tmp_path):
    frame = judge_frame(
        read_csv(_write(tmp_path, "item,judge,vote\ni1,g,A\ni2,g,\ni3,g,Error\ni4,g,both bad\n"))
    )
    assert frame["vote"].tolist() == ["A", "error", "error", "tie"]


def test_judge_scores_with_missing_and_bad_values(tmp_path):
    frame = judge_frame(read_csv(_write(tmp_path, "item,judge,score_a,score_b\ni1,g,8,3\ni2,g,,7\n")))
    assert frame["score_a"].iloc[0] == 8.0 and math.isnan(frame["score_a"].iloc[1])
    with pytest.raises(InputError, match="line 2: column 'score_b': 'seven' is not a number"):
        judge_frame(read_csv(_write(tmp_path, "item,judge,score_a,score_b\ni1,g,8,seven\n")))


def test_judge_file_shape(tmp_path):
    with pytest.raises(InputError, match="either a 'vote' column or 'score_a' and 'score_b'"):
        judge_frame(read_csv(_write(tmp_path, "item,judge\ni1,g\n")))
    with pytest.raises(InputError, match="either a 'vote' column"):
        judge_frame(read_csv(_write(tmp_path, "item,judge,vote,score_a,score_b\ni1,g,A,1,2\n")))
    with pytest.raises(InputError, match="missing column 'score_b'"):
        judge_frame(read_csv(_write(tmp_path, "item,judge,score_a\ni1,g,1\n")))
    with pytest.raises(InputError, match="line 3: the judge has more than one output for this item"):
        judge_frame(read_csv(_write(tmp_path, "item,judge,vote\ni1,g,A\ni1,g,B\n")))
