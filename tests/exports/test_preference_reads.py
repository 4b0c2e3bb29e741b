"""The preferences export reads its ratings from the answers the card's alpha is computed from: the same
rows as its own ratings read, and the same pairs."""

from __future__ import annotations

import pandas as pd
import pytest

from analytics.selectors import annotation_frame
from exports.families import preferences, preferences_selectors
from exports.options import ExportOptions

pytestmark = pytest.mark.django_db

COLUMNS = ["item_id", "annotator", "response_id", "criterion", "value"]


def in_one_order(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.assign(criterion=frame["criterion"].astype(str))
    return frame.sort_values(COLUMNS[:4]).reset_index(drop=True)


def test_ratings_from_the_answers_are_the_ratings_read(likert_project):
    answers = annotation_frame(project=likert_project, agreement_only=True)
    derived = preferences_selectors.ratings_from_answers(likert_project, answers)
    read = preferences_selectors.ratings_frame(likert_project)
    assert list(derived.columns) == COLUMNS and len(derived) == len(read) == 24
    assert derived.dtypes.astype(str).tolist() == read.dtypes.astype(str).tolist()
    pd.testing.assert_frame_equal(in_one_order(derived), in_one_order(read))


def test_the_export_builds_the_same_pairs_from_either_read(likert_project):
    options = preferences.resolve(project=likert_project, options=ExportOptions())
    data = preferences.read(project=likert_project, options=options, step=lambda percent, stage: None)
    alone = preferences.read_frames(project=likert_project, options=options)
    pairs = preferences.pairs_build(data=data, options=options).pairs
    pd.testing.assert_frame_equal(pairs, preferences.pairs_build(data=alone, options=options).pairs)
    assert len(pairs) and data.alpha
