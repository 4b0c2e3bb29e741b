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
        ("exports", "0001_export_moved_from_datasets_app"),
    ]

    operations = [
        migrations.AddField(
            model_name="export",
            name="attempts",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="export",
            name="task_id",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddField(
            model_name="export",
            name="cancel_requested",
            field=models.BooleanField(default=False),
        ),
        migrations.AlterField(
            model_name="export",
            name="status",
            field=models.CharField(choices=STATUS_CHOICES, default="queued", max_length=20),
        ),
    ]
