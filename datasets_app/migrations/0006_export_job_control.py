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
        ("datasets_app", "0005_dataset_import_job_control"),
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
