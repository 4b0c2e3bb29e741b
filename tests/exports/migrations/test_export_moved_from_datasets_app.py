"""Moving ``Export`` from datasets_app to exports keeps its table and every row.

The data is written through the models as they were before the move (the historical state of the
migrations), then the database is migrated forward and read back through today's models.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

# The last migration of each app the data touches, as they stood before the move.
BEFORE_MOVE = [
    ("auth", "0012_alter_user_first_name_max_length"),
    ("datasets_app", "0004_export_corpus_kinds"),
    ("annotation", "0002_translation_and_question_jobs"),
    ("evaluation", "0003_chunk_queued_and_started_times"),
]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)


def state_before_move():
    migrate([*BEFORE_MOVE, ("exports", None)])
    return MigrationExecutor(connection).loader.project_state(BEFORE_MOVE).apps


def leaf_nodes():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


def write_before_move(apps) -> dict[str, int]:
    user = apps.get_model("auth", "User").objects.create(username="pm-before-move")
    dataset = apps.get_model("datasets_app", "Dataset").objects.create(name="Before the move")
    prompt = apps.get_model("datasets_app", "Prompt").objects.create(
        dataset=dataset, external_id="p1", category="Umum", language="ind", turns=["Halo?"]
    )
    Response = apps.get_model("datasets_app", "Response")
    first = Response.objects.create(prompt=prompt, model_name="zeta-7b", turns=["Halo juga."])
    second = Response.objects.create(prompt=prompt, model_name="omega-13b", turns=["Hai."])
    project = apps.get_model("annotation", "Project").objects.create(
        name="Rated before the move", kind="likert", dataset=dataset, criteria=["relevance"]
    )
    group = apps.get_model("annotation", "AnnotatorGroup").objects.create(project=project, name="Kelompok A")
    task = apps.get_model("annotation", "Task").objects.create(
        project=project, prompt=prompt, response_ids=[first.pk, second.pk]
    )
    assignment = apps.get_model("annotation", "Assignment").objects.create(
        project=project,
        task=task,
        group=group,
        annotator=user,
        token="before-move-token",
        permutation=[1, 0],
        started_at="2026-11-01T08:00:00Z",
        status="submitted",
    )
    Annotation = apps.get_model("annotation", "Annotation")
    Annotation.objects.create(assignment=assignment, response=first, criterion="relevance", value_int=4)
    Annotation.objects.create(assignment=assignment, response=second, criterion="relevance", value_int=2)
    export = apps.get_model("datasets_app", "Export").objects.create(
        project=project,
        kind="raw-csv",
        options={"kind": "raw-csv", "seed": 7},
        counts={"rows": 2},
        status="succeeded",
        progress=100,
        zip_path="/srv/timbang/var/exports/export-1.zip",
        created_by=user,
    )
    endpoint = apps.get_model("evaluation", "ModelEndpoint").objects.create(
        slug="judge-before-move", backend="openai", base_url="http://127.0.0.1:9/v1", model_id="judge"
    )
    template = apps.get_model("evaluation", "JudgeTemplate").objects.create(
        name="pairwise before the move", kind="pairwise", language="en", user="Which answer is better?"
    )
    run = apps.get_model("evaluation", "JudgeRun").objects.create(
        name="Judged before the move",
        judge_kind="pairwise",
        endpoint=endpoint,
        template=template,
        source="annotation_project",
        annotation_project=project,
        status="succeeded",
    )
    return {"export": export.pk, "project": project.pk, "run": run.pk, "user": user.pk}


@pytest.fixture
def before_move():
    """The database as it was before the move; migrated forward again whatever the test does."""
    try:
        yield state_before_move()
    finally:
        migrate(leaf_nodes())


def test_rows_written_before_the_move_read_back_after_it(before_move):
    apps = before_move
    with pytest.raises(LookupError):
        apps.get_model("exports", "Export")
    ids = write_before_move(apps)

    migrate(leaf_nodes())

    from annotation.models import Annotation, Project
    from evaluation.models import JudgeRun
    from exports.models import Export

    export = Export.objects.get(pk=ids["export"])
    assert (export.kind, export.status, export.progress, export.counts) == (
        "raw-csv",
        "succeeded",
        100,
        {"rows": 2},
    )
    assert export.options == {"kind": "raw-csv", "seed": 7}
    assert export.zip_path == "/srv/timbang/var/exports/export-1.zip"
    assert export.project_id == ids["project"] and export.created_by_id == ids["user"]
    project = Project.objects.get(pk=ids["project"])
    assert list(project.exports.values_list("pk", flat=True)) == [ids["export"]]
    values = sorted(
        Annotation.objects.current().filter(assignment__project=project).values_list("value_int", flat=True)
    )
    assert values == [2, 4]
    run = JudgeRun.objects.get(pk=ids["run"])
    assert (run.name, run.annotation_project_id, run.status) == (
        "Judged before the move",
        ids["project"],
        "succeeded",
    )
    # The table kept its name, so a deployment's backups and raw SQL still find it.
    assert Export._meta.db_table == "datasets_app_export"
    assert "datasets_app_export" in connection.introspection.table_names()
