"""Multiple-choice results whose answer named two or more letters were recorded under four rule names, one
per extraction rule that noticed it; they are now all ``ambiguous``, the one reason counted (``n_ambiguous``)
and shown on the run page."""

from django.db import migrations

OLD_AMBIGUOUS_RULES = (
    "ambiguous_answer_phrase",
    "ambiguous_leading_letters",
    "ambiguous_letters",
    "ambiguous_option_text",
)


def one_ambiguous_rule(apps, schema_editor):
    BenchmarkResult = apps.get_model("evaluation", "BenchmarkResult")
    results = BenchmarkResult.objects.filter(raw__rule__in=OLD_AMBIGUOUS_RULES).only("pk", "raw")
    changed = []
    for result in results.iterator(chunk_size=500):
        result.raw = {**result.raw, "rule": "ambiguous", "ambiguous_rule": result.raw["rule"]}
        changed.append(result)
        if len(changed) == 500:
            BenchmarkResult.objects.bulk_update(changed, ["raw"])
            changed = []
    BenchmarkResult.objects.bulk_update(changed, ["raw"])


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0009_prompt_templates"),
    ]

    operations = [
        migrations.RunPython(one_ambiguous_rule, migrations.RunPython.noop),
    ]
