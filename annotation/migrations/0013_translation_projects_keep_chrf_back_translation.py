"""The back-translation flag measures by sentence embedding by default now; translation projects that exist
already keep chrF++, the measure their stored flags and their threshold were set with."""

from django.db import migrations

TRANSLATION_KINDS = ("translation", "translation_review")


def keep_chrf(apps, schema_editor):
    Project = apps.get_model("annotation", "Project")
    for project in Project.objects.filter(kind__in=TRANSLATION_KINDS).only("id", "flag_settings"):
        settings = dict(project.flag_settings or {})
        if "back_translation_measure" in settings:
            continue
        settings["back_translation_measure"] = "chrf"
        Project.objects.filter(pk=project.pk).update(flag_settings=settings)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0012_question_error_review_primary_error"),
    ]

    operations = [
        migrations.RunPython(keep_chrf, migrations.RunPython.noop),
    ]
