from django.db import migrations


class Migration(migrations.Migration):
    """Export moved to the exports app; its table stays, under its old name."""

    dependencies = [
        ("datasets_app", "0004_export_corpus_kinds"),
        ("exports", "0001_export_moved_from_datasets_app"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[migrations.DeleteModel(name="Export")],
        ),
    ]
