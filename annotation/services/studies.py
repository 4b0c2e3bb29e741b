"""Imports of finished studies: a whole study loaded as a project with its people and answers.

Above ``kinds`` because an import creates its project through ``project_create``.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.models import Project
from annotation.services.kinds import project_create
from annotation.services.loop import ProjectInvalid
from annotation.services.projects import project_activate, project_member_add
from annotation.services.questions import ImportedAnswer, mcq_answers_import
from datasets_app.domain.idcsqa import IdCsqaData
from datasets_app.models import Dataset, Question

__all__ = ["idcsqa_import"]


@transaction.atomic
def idcsqa_import(
    *,
    data: IdCsqaData,
    name: str,
    users: Mapping[str, AbstractBaseUser],
    overlap: int = 5,
    max_ambiguous: int = 3,
    created_by: AbstractBaseUser | None = None,
) -> Project:
    """Load an id-csqa study (``datasets_app.domain.idcsqa``): its questions into a new dataset, and an
    active answering project over them holding every worker's answers. ``users`` maps the study's worker
    names (W1..W6) to accounts; creators and answerers are those accounts."""
    missing = sorted(({q.creator for q in data.questions} | {a.answerer for a in data.answers}) - set(users))
    if missing:
        raise ProjectInvalid({"users": f"No account given for {', '.join(missing)}."})
    if Dataset.objects.filter(name=name).exists():
        raise ProjectInvalid({"name": f"A dataset named {name!r} exists already."})
    dataset = Dataset.objects.create(
        name=name,
        kind=Dataset.Kind.QUESTIONS,
        source="id-csqa Human_Gen",
        license="CC BY-NC 4.0",
        created_by=created_by,
    )
    questions = Question.objects.bulk_create(
        [
            Question(
                dataset=dataset,
                external_id=q.question_id,
                concept=q.concept,
                category=q.category,
                language=q.language,
                text=q.text,
                choices=dict(q.choices),
                answer_key=q.answer_key,
                distractor=q.distractor or "",
                creator=users[q.creator],
                creator_name=q.creator,
                origin=Question.Origin.HUMAN,
                status=Question.Status.ACCEPTED,
                meta={"majority_answer": q.majority_answer},
            )
            for q in data.questions
        ],
        batch_size=2000,
    )
    project = project_create(
        dataset=dataset,
        name=name,
        kind=Project.Kind.MCQ_ANSWER,
        overlap=overlap,
        max_ambiguous=max_ambiguous,
        groups=["A"],
        created_by=created_by,
    )
    group = project.groups.get()
    for worker in sorted(users):
        project_member_add(project=project, user=users[worker], group=group)
    project_activate(project=project)
    by_external = {q.external_id: q for q in questions}
    mcq_answers_import(
        project=project,
        answers=(
            ImportedAnswer(by_external[a.question_id], users[a.answerer], a.choice, a.ambiguous, a.comment)
            for a in data.answers
        ),
    )
    project.refresh_from_db()
    return project
