"""Benchmark runs name how multiple-choice questions are asked: chat, completion, letter log-prob or cloze."""

from django.db import migrations, models


def mode_from_scoring(apps, schema_editor):
    """Runs scored by option log-probability before the mode existed keep saying so."""
    BenchmarkRun = apps.get_model("evaluation", "BenchmarkRun")
    BenchmarkRun.objects.filter(config__scoring="logprob").update(mode="logprob")


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0004_pairwise_families_and_tie_verdicts"),
    ]

    operations = [
        migrations.AddField(
            model_name="benchmarkrun",
            name="mode",
            field=models.CharField(
                choices=[
                    ("chat", "Chat: the prompt as a message, the answer letter read from the reply"),
                    (
                        "completion",
                        "Completion (base models): the k-shot prompt continued, the answer read from the first line",
                    ),
                    ("logprob", "Log-probability of each option letter"),
                    ("cloze", "Cloze: log-probability of each option's text, per token"),
                ],
                default="chat",
                help_text="Multiple choice: how questions are asked and answers read.",
                max_length=12,
            ),
        ),
        migrations.RunPython(mode_from_scoring, migrations.RunPython.noop),
    ]
