import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("datasets_app", "0004_export_corpus_kinds"),
        ("annotation", "0002_translation_and_question_jobs"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    # The table ``datasets_app_export`` exists already (made by datasets_app 0003/0004): this migration only
    # tells Django's state that the model now belongs to exports; the data stays where it is.
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="Export",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("hf", "Hugging Face dataset (preference pairs)"),
                                    ("trl-strings", "TRL prompt/chosen/rejected as text"),
                                    ("trl-messages", "TRL prompt/chosen/rejected as messages"),
                                    ("raw-parquet", "Raw annotations (Parquet)"),
                                    ("raw-csv", "Raw annotations (CSV)"),
                                    ("raw-jsonl", "Raw annotations (JSON Lines)"),
                                    ("parallel-corpus", "Parallel corpus (Hugging Face dataset)"),
                                    ("question-set", "Question set (Hugging Face dataset)"),
                                ],
                                default="hf",
                                max_length=20,
                            ),
                        ),
                        (
                            "strategy",
                            models.CharField(
                                blank=True, help_text="Pair strategy; empty for raw exports.", max_length=30
                            ),
                        ),
                        ("options", models.JSONField(blank=True, default=dict)),
                        ("filters", models.JSONField(blank=True, default=dict)),
                        ("counts", models.JSONField(blank=True, default=dict)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("queued", "Queued"),
                                    ("running", "Running"),
                                    ("succeeded", "Succeeded"),
                                    ("failed", "Failed"),
                                ],
                                default="queued",
                                max_length=20,
                            ),
                        ),
                        ("progress", models.PositiveSmallIntegerField(default=0, help_text="Percent done.")),
                        ("stage", models.CharField(blank=True, max_length=100)),
                        (
                            "folder_path",
                            models.CharField(
                                blank=True, help_text="Folder the files were written to.", max_length=500
                            ),
                        ),
                        ("zip_path", models.CharField(blank=True, max_length=500)),
                        ("hub_repo_id", models.CharField(blank=True, max_length=200)),
                        ("hub_private", models.BooleanField(default=True)),
                        (
                            "hub_revision",
                            models.CharField(
                                blank=True, help_text="Commit sha returned by the Hub.", max_length=64
                            ),
                        ),
                        ("hub_url", models.CharField(blank=True, max_length=500)),
                        ("error", models.TextField(blank=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "created_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="exports",
                                to="annotation.project",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "datasets_app_export",
                        "ordering": ["-created_at", "-id"],
                        "indexes": [
                            models.Index(fields=["project", "-created_at"], name="export_project_created")
                        ],
                    },
                ),
            ],
        ),
    ]
