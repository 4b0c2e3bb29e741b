"""Rubrics get a scale: points 2-10 or named categories. Every existing rubric row was rated 1-5."""

from django.db import migrations, models

import annotation.models


def existing_rubrics_five_points(apps, schema_editor):
    Rubric = apps.get_model("annotation", "Rubric")
    Rubric.objects.all().update(scale={"points": 5})


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0004_slot_open_order_with_task"),
    ]

    operations = [
        migrations.AddField(
            model_name="rubric",
            name="scale",
            field=models.JSONField(
                default=annotation.models.default_scale,
                help_text='{"points": 7} or {"categories": [...]}.',
            ),
        ),
        migrations.AlterField(
            model_name="project",
            name="criteria",
            field=models.JSONField(
                blank=True, default=list, help_text="Criteria rated on their scales (likert)."
            ),
        ),
        migrations.RunPython(existing_rubrics_five_points, migrations.RunPython.noop),
    ]
