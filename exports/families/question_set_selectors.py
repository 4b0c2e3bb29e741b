"""Reads of a question set export: the accepted questions of a question project within the ambiguity limit,
with their answers counted, and who wrote, accepted and answered them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
from django.db.models import Count, Q, QuerySet, Sum

from annotation.models import Annotation, Project, QuestionRound, Task
from datasets_app.models import Question
from exports.selectors import (
    CHUNK_ROWS,
    keyset_pages,
    person_pseudonym,
    work_counts,
)

QUESTION_SET_COLUMNS = (
    "id",
    "concept",
    "category",
    "language",
    "question",
    "choice_a",
    "choice_b",
    "choice_c",
    "choice_d",
    "choice_e",
    "answer",
    "distractor",
    "creator",
    "origin",
    "n_answers",
    "accuracy",
    "n_ambiguous",
)
CHOICE_KEYS = ("A", "B", "C", "D", "E")


def project_questions(project: Project) -> QuerySet[Question]:
    """The questions of the project's tasks: written in an authoring project, answered in an answering one."""
    return Question.objects.filter(
        pk__in=Task.objects.filter(project_id=project.pk, question__isnull=False).values("question_id")
    )


def question_answers(project: Project) -> QuerySet[Annotation]:
    """Current answer rows counted for the project's questions: the answering project's own answers, or for
    an authoring project those of every answering project over its dataset."""
    rows = Annotation.objects.counted().filter(assignment__project__kind=Project.Kind.MCQ_ANSWER)
    if project.kind == Project.Kind.MCQ_ANSWER:
        return rows.filter(assignment__project_id=project.pk)
    return rows.filter(assignment__project__dataset_id=project.dataset_id)


def over_ambiguous(project: Project, max_ambiguous: int) -> QuerySet[Annotation]:
    """Ids (a subquery) of the questions flagged ambiguous in more than ``max_ambiguous`` answers."""
    return (
        question_answers(project)
        .filter(criterion="ambiguous", value_int=1)
        .order_by()
        .values("assignment__task__question_id")
        .annotate(n=Count("id"))
        .filter(n__gt=max_ambiguous)
        .values("assignment__task__question_id")
    )


def question_set_questions(project: Project, *, max_ambiguous: int) -> QuerySet[Question]:
    """The final question set: accepted (never excluded) questions within the ambiguity limit."""
    return (
        project_questions(project)
        .filter(status=Question.Status.ACCEPTED)
        .exclude(pk__in=over_ambiguous(project, max_ambiguous))
    )


def question_set_counts(project: Project, *, max_ambiguous: int) -> dict[str, Any]:
    """Questions kept per category and language, and how many were left out and why."""
    kept = question_set_questions(project, max_ambiguous=max_ambiguous)
    statuses = dict(project_questions(project).order_by().values_list("status").annotate(n=Count("id")))
    n_kept = kept.count()
    return {
        "rows": n_kept,
        "categories": dict(kept.order_by("category").values_list("category").annotate(n=Count("id"))),
        "languages": dict(kept.order_by("language").values_list("language").annotate(n=Count("id"))),
        "questions": sum(statuses.values()),
        "not_accepted": {s: n for s, n in sorted(statuses.items()) if s != Question.Status.ACCEPTED},
        "over_ambiguous": statuses.get(Question.Status.ACCEPTED, 0) - n_kept,
    }


def question_set_work(project: Project, *, max_ambiguous: int) -> dict[str, dict[str, int]]:
    """Who wrote the questions of the final set, who accepted them and who answered them (the answers
    ``n_answers`` counts), as ``work_counts`` each. Questions imported as accepted have no accepting
    verdict."""
    questions = question_set_questions(project, max_ambiguous=max_ambiguous)
    answers = question_answers(project).filter(criterion="choice", assignment__task__question__in=questions)
    accepting = QuestionRound.objects.filter(question__in=questions, verdict=QuestionRound.Verdict.ACCEPT)
    return {
        "questions": work_counts(questions, user="creator"),
        "accepting_verdicts": work_counts(accepting, user="reviewer", unit="question_id"),
        "answers": work_counts(answers, user="assignment__annotator"),
    }


def question_set_chunks(
    project: Project, *, max_ambiguous: int, chunk_rows: int = CHUNK_ROWS
) -> Iterator[pd.DataFrame]:
    """The final question set in question order, one DataFrame (``QUESTION_SET_COLUMNS``) per page.

    ``creator`` is ``person_pseudonym``; ``n_answers`` counts the answers (``question_answers``),
    ``accuracy`` is the share of scored answers that chose the key (missing without one), ``n_ambiguous``
    the answers that flagged the question.
    """
    fields = (
        "external_id",
        "concept",
        "category",
        "language",
        "text",
        "choices",
        "answer_key",
        "distractor",
        "creator_id",
        "creator_name",
        "origin",
    )
    pseudonyms: dict[tuple[int | None, str], str | None] = {}
    questions = question_set_questions(project, max_ambiguous=max_ambiguous)
    for rows in keyset_pages(questions, fields, chunk_rows=chunk_rows):
        ids = [row[0] for row in rows]
        is_choice = Q(criterion="choice")
        stats = {
            qid: (answers, scored, correct or 0, flagged)
            for qid, answers, scored, correct, flagged in question_answers(project)
            .filter(assignment__task__question_id__in=ids)
            .order_by()
            .values_list("assignment__task__question_id")
            .annotate(
                answers=Count("id", filter=is_choice),
                scored=Count("value_int", filter=is_choice),
                correct=Sum("value_int", filter=is_choice),
                flagged=Count("id", filter=Q(criterion="ambiguous", value_int=1)),
            )
        }
        out = []
        for (
            pk,
            external_id,
            concept,
            category,
            language,
            text,
            choices,
            key,
            distractor,
            uid,
            name,
            origin,
        ) in rows:
            who = (uid, "" if uid is not None else name)
            if who not in pseudonyms:
                pseudonyms[who] = person_pseudonym(project=project, user_id=who[0], name=who[1])
            answers, scored, correct, flagged = stats.get(pk, (0, 0, 0, 0))
            choices = choices or {}
            out.append(
                (
                    external_id,
                    concept,
                    category,
                    language,
                    text,
                    *(choices.get(label) for label in CHOICE_KEYS),
                    key,
                    distractor,
                    pseudonyms[who],
                    origin,
                    answers,
                    correct / scored if scored else None,
                    flagged,
                )
            )
        yield pd.DataFrame.from_records(out, columns=list(QUESTION_SET_COLUMNS))
