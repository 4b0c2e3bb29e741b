"""Export reads: chunked streams, reads by id (ranges and IN lists), JSON columns, pseudonyms."""

from __future__ import annotations

import numpy as np
import pytest

from datasets_app.models import Dataset, Prompt
from exports.selectors import annotator_pseudonym, json_value, json_values, rows_by_ids, stream_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def prompts():
    dataset = Dataset.objects.create(name="selector-data")
    return Prompt.objects.bulk_create(
        [Prompt(dataset=dataset, external_id=f"s{i:03d}", language="ind", turns=[f"t{i}"]) for i in range(40)]
    )


def test_stream_rows_yields_every_row_in_chunks(prompts):
    chunks = list(stream_rows(Prompt.objects.all(), ("pk", "external_id"), chunk_rows=15))
    assert [len(c) for c in chunks] == [15, 15, 10]
    assert [row[1] for chunk in chunks for row in chunk] == [f"s{i:03d}" for i in range(40)]
    assert list(stream_rows(Prompt.objects.filter(pk__in=[]), ("pk",))) == []


def test_rows_by_ids_reads_dense_ids_as_ranges_and_scattered_ids_as_lists(prompts, django_assert_num_queries):
    pks = np.array([p.pk for p in prompts], dtype=np.int64)
    dense = np.delete(pks[:20], [3, 7])  # 18 ids spanning 20: one range query, two rows dropped
    with django_assert_num_queries(1):
        got = [row for chunk in rows_by_ids(Prompt.objects.all(), dense, ("external_id",)) for row in chunk]
    assert [row[0] for row in got] == dense.tolist()
    scattered = pks[::10]  # 4 ids spanning 31: read by IN list
    got = [row for chunk in rows_by_ids(Prompt.objects.all(), scattered, ("external_id",)) for row in chunk]
    assert [row[1] for row in got] == ["s000", "s010", "s020", "s030"]
    # Chunks of 5 ids: 8 blocks of consecutive ids, each one range query.
    with django_assert_num_queries(8):
        got = [
            row for chunk in rows_by_ids(Prompt.objects.all(), pks, ("pk",), chunk_rows=5) for row in chunk
        ]
    assert len(got) == 40


def test_pseudonyms_are_stable_per_project_and_differ_across_projects(settings):
    class FakeProject:
        def __init__(self, pk: int, seed: int) -> None:
            self.pk, self.seed = pk, seed

    one, other = FakeProject(1, 7), FakeProject(2, 7)
    assert annotator_pseudonym(project=one, user_id=5) == annotator_pseudonym(project=one, user_id=5)
    assert annotator_pseudonym(project=one, user_id=5) != annotator_pseudonym(project=one, user_id=6)
    assert annotator_pseudonym(project=one, user_id=5) != annotator_pseudonym(project=other, user_id=5)
    before = annotator_pseudonym(project=one, user_id=5)
    settings.SECRET_KEY = "another-site-secret-key-for-this-test-0123456789"
    assert annotator_pseudonym(project=one, user_id=5) != before


def test_json_values_parse_texts_at_once_as_json_value_does_one_by_one():
    # SQLite's driver gives texts (bytes are possible), PostgreSQL's decoded values, kept as they are.
    values = [
        '[{"role": "assistant", "content": "a, b"}]',
        b'["x"]',
        ["already", "decoded"],
        None,
        "null",
        "3",
    ]
    assert json_values(values) == [json_value(v) for v in values]
    assert json_values(['"one"']) == ["one"] and json_values([]) == []


def test_json_values_of_a_text_that_is_not_one_document_fail_as_json_value_does():
    with pytest.raises(ValueError):
        json_value("[1, 2")
    for values in (["[1", "2]"], ["1, 2", "3"], ["[1]", ""]):
        with pytest.raises(ValueError):
            json_values(values)
