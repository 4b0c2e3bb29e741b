"""Seed the shipped judge templates (version 1 of each kind and language) from the domain defaults."""

from django.db import migrations

from evaluation.domain.judge_templates import DEFAULT_TEMPLATES


def seed(apps, schema_editor):
    JudgeTemplate = apps.get_model("evaluation", "JudgeTemplate")
    for template in DEFAULT_TEMPLATES.values():
        JudgeTemplate.objects.get_or_create(
            name=template.name,
            kind=template.kind,
            language=template.language,
            version=template.version,
            defaults={
                "system": template.system,
                "user": template.user,
                "output_schema": dict(template.output_schema),
            },
        )


def unseed(apps, schema_editor):
    JudgeTemplate = apps.get_model("evaluation", "JudgeTemplate")
    for template in DEFAULT_TEMPLATES.values():
        JudgeTemplate.objects.filter(
            name=template.name, kind=template.kind, language=template.language, version=template.version
        ).delete()


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0001_runs_judgments_benchmarks")]

    operations = [migrations.RunPython(seed, unseed)]
