# Shared priority aspects stay one per category and language; an annotation project may have its own.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0007_error_taxonomy_and_option_errors"),
        ("evaluation", "0005_benchmark_run_mode"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="categoryaspects",
            name="uniq_aspects_per_category_language",
        ),
        migrations.AddField(
            model_name="categoryaspects",
            name="project",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="category_aspects",
                to="annotation.project",
            ),
        ),
        migrations.AddConstraint(
            model_name="categoryaspects",
            constraint=models.UniqueConstraint(
                condition=models.Q(("project__isnull", True)),
                fields=("category", "language"),
                name="uniq_shared_aspects_per_category_language",
            ),
        ),
        migrations.AddConstraint(
            model_name="categoryaspects",
            constraint=models.UniqueConstraint(
                condition=models.Q(("project__isnull", False)),
                fields=("project", "category", "language"),
                name="uniq_project_aspects_per_category_language",
            ),
        ),
    ]
