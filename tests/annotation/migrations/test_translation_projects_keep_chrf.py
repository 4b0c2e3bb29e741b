"""Translation projects that exist when the back-translation flag moves to sentence embeddings keep chrF++,
the measure their stored flags and thresholds were set with; others are left alone."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("annotation", "0012_question_error_review_primary_error")
AFTER = ("annotation", "0013_translation_projects_keep_chrf_back_translation")


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


def test_existing_translation_projects_keep_chrf(before):
    apps = before
    Dataset = apps.get_model("datasets_app", "Dataset")
    Project = apps.get_model("annotation", "Project")
    units = Dataset.objects.create(name="Terjemahan lama", kind="translations")
    prompts = Dataset.objects.create(name="Prompt lama", kind="prompts")
    made = {
        "plain": Project.objects.create(name="plain", kind="translation_review", dataset=units),
        "tuned": Project.objects.create(
            name="tuned",
            kind="translation",
            dataset=units,
            flag_settings={"back_translation_threshold": 0.4, "length_z_threshold": 3.0},
        ),
        "chosen": Project.objects.create(
            name="chosen",
            kind="translation_review",
            dataset=units,
            flag_settings={"back_translation_measure": "embedding"},
        ),
        "rating": Project.objects.create(name="rating", kind="likert", dataset=prompts),
    }

    migrate([AFTER])

    from annotation.models import Project as Today

    # Only the column this migration writes: later migrations add columns the table has not got yet here.
    settings = {name: Today.objects.only("id", "flag_settings").get(pk=p.pk).flag_settings for name, p in made.items()}
    assert settings == {
        "plain": {"back_translation_measure": "chrf"},
        "tuned": {"back_translation_threshold": 0.4, "length_z_threshold": 3.0, "back_translation_measure": "chrf"},
        "chosen": {"back_translation_measure": "embedding"},
        "rating": {},
    }
