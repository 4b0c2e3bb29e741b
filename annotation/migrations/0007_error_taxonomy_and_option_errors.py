"""Projects get an editable error taxonomy (id-csqa's by default); question reviews keep option errors apart."""

from django.db import migrations, models


# The categories reviews were tagged with before id-csqa's taxonomy became the default.
PREVIOUS_TAXONOMY = [
    {
        "code": "fluency",
        "en": "Unnatural or ungrammatical language",
        "id": "Bahasa tidak wajar atau tidak gramatikal",
    },
    {"code": "multiple_answers", "en": "More than one correct option", "id": "Lebih dari satu pilihan benar"},
    {"code": "no_correct_answer", "en": "No correct option", "id": "Tidak ada pilihan yang benar"},
    {
        "code": "wrong_key",
        "en": "Answer key points to a wrong option",
        "id": "Kunci jawaban menunjuk pilihan yang salah",
    },
    {"code": "factual_error", "en": "Factually wrong content", "id": "Isi keliru secara fakta"},
    {
        "code": "concept_missing",
        "en": "Concept not used in the question",
        "id": "Konsep tidak dipakai dalam pertanyaan",
    },
    {"code": "not_cultural", "en": "Not culturally relevant", "id": "Tidak relevan secara budaya"},
    {"code": "answer_leak", "en": "Question gives the answer away", "id": "Pertanyaan membocorkan jawaban"},
]


def keep_previous_taxonomy(apps, schema_editor):
    """Projects whose questions were already reviewed keep the categories their reviews used."""
    Project = apps.get_model("annotation", "Project")
    QuestionErrorReview = apps.get_model("annotation", "QuestionErrorReview")
    reviewed = QuestionErrorReview.objects.values_list("project_id", flat=True).distinct()
    Project.objects.filter(pk__in=list(reviewed)).update(error_taxonomy=PREVIOUS_TAXONOMY)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_review_queue_and_quality_signals"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="error_taxonomy",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="Error categories for LLM-written questions ([{code, en, id, applies_to}]); empty: id-csqa's.",
            ),
        ),
        migrations.AddField(
            model_name="questionerrorreview",
            name="option_errors",
            field=models.JSONField(blank=True, default=list, help_text="Errors of its options."),
        ),
        migrations.AlterField(
            model_name="questionerrorreview",
            name="errors",
            field=models.JSONField(blank=True, default=list, help_text="Errors of the question itself."),
        ),
        migrations.RunPython(keep_previous_taxonomy, migrations.RunPython.noop),
    ]
