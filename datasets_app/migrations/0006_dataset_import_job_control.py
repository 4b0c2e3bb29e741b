from django.db import migrations, models

STATUS_CHOICES = [
    ("queued", "Queued"),
    ("running", "Running"),
    ("succeeded", "Succeeded"),
    ("failed", "Failed"),
    ("cancelled", "Cancelled"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("datasets_app", "0005_export_moved_to_exports"),
    ]

    operations = [
        migrations.AddField(
            model_name="datasetimport",
            name="attempts",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="datasetimport",
            name="task_id",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddField(
            model_name="datasetimport",
            name="cancel_requested",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="datasetimport",
            name="started_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="datasetimport",
            name="status",
            field=models.CharField(choices=STATUS_CHOICES, default="queued", max_length=20),
        ),
    ]
