"""Graded judgments keep a decimal score as given (7.5); judge templates state their sampling.

The shipped templates (every version of each, edited ones included) get the sampling of their preset, as
written in ``evaluation.domain.judge_templates`` when this migration was made: IndoPref's pairwise judge
temperature 0.6, top-p 0.95, top-k 20; MT-bench's with-tie judge temperature 0; the SeaBench single-answer
grade temperature 0 (the paper does not state its judge's; Timbang's default); the factual judge
temperature 0. A template whose sampling is already set keeps it.
"""

from django.db import migrations, models

import evaluation.models

INDOPREF = {"temperature": 0.6, "top_p": 0.95, "top_k": 20}
GREEDY = {"temperature": 0.0}
PRESET_SAMPLING = {
    ("default", "pairwise"): INDOPREF,
    ("with_tie", "pairwise"): GREEDY,
    ("default", "single_grade"): GREEDY,
    ("default", "factual"): GREEDY,
}


def state_preset_sampling(apps, schema_editor):
    JudgeTemplate = apps.get_model("evaluation", "JudgeTemplate")
    for (name, kind), sampling in PRESET_SAMPLING.items():
        JudgeTemplate.objects.filter(name=name, kind=kind, language__in=["en", "id"], sampling={}).update(
            sampling=sampling
        )


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0007_run_chunk_worker_stopped_at")]

    operations = [
        migrations.AddField(
            model_name="judgetemplate",
            name="sampling",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text='Sampling that judge runs with this template take unless the run sets it, e.g. '
                '{"temperature": 0}: temperature, top_p, top_k, max_tokens. What it leaves out comes from the '
                "endpoint's defaults.",
                validators=[evaluation.models.validate_template_sampling],
            ),
        ),
        migrations.AlterField(
            model_name="judgment",
            name="score",
            field=models.FloatField(
                blank=True,
                help_text="Graded judges: the score as given, whole or decimal (7 or 7.5).",
                null=True,
            ),
        ),
        migrations.RunPython(state_preset_sampling, migrations.RunPython.noop),
    ]
