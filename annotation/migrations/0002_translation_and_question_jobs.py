# Translation and question jobs: new project kinds, tasks over units, concept pairs and questions, round tables.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0001_rating_jobs'),
        ('datasets_app', '0001_initial_datasets'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='project',
            name='flag_settings',
            field=models.JSONField(blank=True, default=dict, help_text="Translation flags: thresholds and register word lists ({'register_markers': {...}})."),
        ),
        migrations.AddField(
            model_name='project',
            name='max_ambiguous',
            field=models.PositiveSmallIntegerField(default=3, help_text='mcq_answer: a question with more ambiguous flags than this is excluded.'),
        ),
        migrations.AddField(
            model_name='task',
            name='question',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='annotation_tasks', to='datasets_app.question'),
        ),
        migrations.AddField(
            model_name='task',
            name='translation_unit',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='annotation_tasks', to='datasets_app.translationunit'),
        ),
        migrations.AlterField(
            model_name='project',
            name='kind',
            field=models.CharField(choices=[('likert', 'Likert rating'), ('best_of_n', 'Best of N'), ('pairwise', 'Pairwise A/B'), ('translation', 'Translation'), ('translation_review', 'Translation review'), ('question_authoring', 'Question authoring'), ('mcq_answer', 'Multiple-choice answering')], max_length=20),
        ),
        migrations.AlterField(
            model_name='task',
            name='prompt',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='annotation_tasks', to='datasets_app.prompt'),
        ),
        migrations.AlterField(
            model_name='task',
            name='response_ids',
            field=models.JSONField(blank=True, default=list, help_text="Canonical order of the task's responses."),
        ),
        migrations.CreateModel(
            name='ConceptPair',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('category', models.CharField(max_length=100)),
                ('concept', models.CharField(max_length=200)),
                ('language', models.CharField(default='ind', max_length=3)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='concept_pairs', to='annotation.project')),
            ],
            options={
                'ordering': ['project', 'id'],
            },
        ),
        migrations.AddField(
            model_name='task',
            name='concept_pair',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='tasks', to='annotation.conceptpair'),
        ),
        migrations.CreateModel(
            name='FlagRecompute',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed')], default='queued', max_length=10)),
                ('total', models.PositiveIntegerField(default=0)),
                ('done', models.PositiveIntegerField(default=0)),
                ('n_flagged', models.PositiveIntegerField(default=0)),
                ('error', models.TextField(blank=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('started_at', models.DateTimeField(blank=True, null=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='flag_recomputes', to='annotation.project')),
            ],
            options={
                'ordering': ['-created_at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='QuestionErrorReview',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('errors', models.JSONField(blank=True, default=list)),
                ('comment', models.TextField(blank=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='question_error_reviews', to='annotation.project')),
                ('question', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='error_reviews', to='datasets_app.question')),
                ('reviewer', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['project', 'question', 'id'],
            },
        ),
        migrations.CreateModel(
            name='QuestionRound',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('round', models.PositiveSmallIntegerField()),
                ('text', models.TextField()),
                ('choices', models.JSONField()),
                ('answer_key', models.CharField(max_length=1)),
                ('distractor', models.CharField(blank=True, max_length=1)),
                ('concept_override', models.BooleanField(default=False)),
                ('override_comment', models.TextField(blank=True)),
                ('submitted_at', models.DateTimeField()),
                ('verdict', models.CharField(blank=True, choices=[('accept', 'Accept'), ('return', 'Return to author')], max_length=10)),
                ('comment', models.TextField(blank=True)),
                ('reviewed_at', models.DateTimeField(blank=True, null=True)),
                ('assignment', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='annotation.assignment')),
                ('author', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('question', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='rounds', to='datasets_app.question')),
                ('reviewer', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['question', 'round'],
            },
        ),
        migrations.CreateModel(
            name='TranslationRound',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('round', models.PositiveSmallIntegerField()),
                ('translation_text', models.TextField(blank=True)),
                ('translator_name', models.CharField(blank=True, max_length=200)),
                ('flags', models.JSONField(blank=True, default=list, help_text='Automatic flags of the submitted text.')),
                ('submitted_at', models.DateTimeField(blank=True, null=True)),
                ('verdict', models.CharField(blank=True, choices=[('accept', 'Accept'), ('fix', 'Fix'), ('reject', 'Reject')], max_length=10)),
                ('error_categories', models.JSONField(blank=True, default=list)),
                ('comment', models.TextField(blank=True)),
                ('fixed_text', models.TextField(blank=True)),
                ('reviewed_at', models.DateTimeField(blank=True, null=True)),
                ('review_assignment', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='annotation.assignment')),
                ('reviewer', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('translation_assignment', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='annotation.assignment')),
                ('translator', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('unit', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='rounds', to='datasets_app.translationunit')),
            ],
            options={
                'ordering': ['unit', 'round'],
            },
        ),
        migrations.AddConstraint(
            model_name='conceptpair',
            constraint=models.UniqueConstraint(fields=('project', 'category', 'concept', 'language'), name='uniq_concept_pair_per_project'),
        ),
        migrations.AddConstraint(
            model_name='questionerrorreview',
            constraint=models.UniqueConstraint(fields=('project', 'question', 'reviewer'), name='uniq_question_error_review'),
        ),
        migrations.AddConstraint(
            model_name='questionround',
            constraint=models.UniqueConstraint(fields=('question', 'round'), name='uniq_question_round'),
        ),
        migrations.AddConstraint(
            model_name='translationround',
            constraint=models.UniqueConstraint(fields=('unit', 'round'), name='uniq_translation_round'),
        ),
    ]
