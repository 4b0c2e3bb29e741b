"""Stored multiple-choice results recorded under the four old ``ambiguous_*`` rule names read ``ambiguous``
after the migration, the old name kept beside it; other results are left alone."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("evaluation", "0009_prompt_templates")
AFTER = ("evaluation", "0010_benchmark_results_one_ambiguous_rule")


def migrate(targets):
    MigrationExecutor(connection).migrate(targets)


@pytest.fixture
def before():
    """The database before the migration; migrated forward again whatever the test does."""
    executor = MigrationExecutor(connection)
    try:
        migrate([BEFORE])
        yield MigrationExecutor(connection).loader.project_state([BEFORE]).apps
    finally:
        migrate(executor.loader.graph.leaf_nodes())


def test_old_ambiguous_rules_become_one(before):
    apps = before
    Dataset = apps.get_model("datasets_app", "Dataset")
    ModelEndpoint = apps.get_model("evaluation", "ModelEndpoint")
    BenchmarkRun = apps.get_model("evaluation", "BenchmarkRun")
    BenchmarkResult = apps.get_model("evaluation", "BenchmarkResult")
    run = BenchmarkRun.objects.create(
        task="mcq",
        endpoint=ModelEndpoint.objects.create(slug="old", backend="openai", base_url="http://x", model_id="m"),
        dataset=Dataset.objects.create(name="Soal lama", kind="questions"),
    )
    rules = ["ambiguous_answer_phrase", "ambiguous_letters", "answer_phrase", "refusal", None]
    for index, rule in enumerate(rules):
        raw = {"output": f"jawaban {index}"} | ({"rule": rule} if rule else {})
        BenchmarkResult.objects.create(benchmark_run=run, item_key=f"i{index}", raw=raw)

    migrate([AFTER])

    from evaluation.models import BenchmarkResult as Today

    raws = {r.item_key: r.raw for r in Today.objects.filter(benchmark_run_id=run.pk)}
    assert raws == {
        "i0": {"output": "jawaban 0", "rule": "ambiguous", "ambiguous_rule": "ambiguous_answer_phrase"},
        "i1": {"output": "jawaban 1", "rule": "ambiguous", "ambiguous_rule": "ambiguous_letters"},
        "i2": {"output": "jawaban 2", "rule": "answer_phrase"},
        "i3": {"output": "jawaban 3", "rule": "refusal"},
        "i4": {"output": "jawaban 4"},
    }
