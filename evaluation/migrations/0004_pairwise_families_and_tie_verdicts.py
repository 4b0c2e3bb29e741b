"""Pairwise judge families (with and without a tie): the run's choice, tie verdicts on judgments, and the
shipped templates of both families (the no-tie defaults at version 2 ask about one turn through {{focus}};
the with-tie family is new)."""

from django.db import migrations, models

from evaluation.domain.judge_templates import SHIPPED_TEMPLATES


def seed(apps, schema_editor):
    JudgeTemplate = apps.get_model("evaluation", "JudgeTemplate")
    for template in SHIPPED_TEMPLATES.values():
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
    for template in SHIPPED_TEMPLATES.values():
        if template.version > 1 or template.name != "default":
            unused = JudgeTemplate.objects.filter(
                name=template.name,
                kind=template.kind,
                language=template.language,
                version=template.version,
                judge_runs=None,
            ).values_list("pk", flat=True)
            # A plain DELETE of rows nothing points at: the cascade collector of a historical model may meet
            # related models rendered from another state while migrating backwards.
            JudgeTemplate.objects.filter(pk__in=list(unused))._raw_delete(schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0003_chunk_queued_and_started_times")]

    operations = [
        migrations.AddField(
            model_name="judgerun",
            name="pairwise_family",
            field=models.CharField(
                choices=[
                    ("no_tie", "No tie: Response 1 or Response 2 (IndoPref)"),
                    ("with_tie", "With a tie: A, B or tie (MT-bench)"),
                ],
                default="no_tie",
                help_text="Pairwise judges: whether the judge may answer that neither response is better.",
                max_length=10,
            ),
        ),
        migrations.AlterField(
            model_name="judgment",
            name="verdict",
            field=models.CharField(blank=True, help_text="Canonical A, B or tie (pairwise).", max_length=3),
        ),
        migrations.AlterField(
            model_name="judgment",
            name="shown_verdict",
            field=models.CharField(
                blank=True, help_text='"Response 1", "Response 2" or "tie", as shown.', max_length=12
            ),
        ),
        migrations.RunPython(seed, unseed),
    ]
