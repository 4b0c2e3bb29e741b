"""Imports of finished studies: an id-csqa study becomes an active answering project with its answers."""

import pytest

from annotation import services
from annotation.models import Annotation, Assignment, Project, TaskSlot
from datasets_app.domain.idcsqa import IdCsqaAnswer, IdCsqaData, IdCsqaQuestion
from datasets_app.models import Question

pytestmark = pytest.mark.django_db

CHOICES = {"A": "opor ayam", "B": "es krim", "C": "roti", "D": "keju", "E": "sereal"}


def _question(qid: str) -> IdCsqaQuestion:
    return IdCsqaQuestion(
        question_id=qid,
        language="ind",
        creator="W1",
        index=0,
        category="food",
        concept="ketupat",
        text=f"Apa yang biasa dimakan bersama ketupat? ({qid})",
        choices=CHOICES,
        answer_key="A",
        majority_answer="A",
    )


def _answer(qid: str, answerer: str, choice: str, ambiguous: bool = False) -> IdCsqaAnswer:
    return IdCsqaAnswer(
        question_id=qid,
        creator="W1",
        answerer=answerer,
        choice=choice,
        answer_key="A",
        ambiguous=ambiguous,
        question_ambiguous=ambiguous,
        ambiguous_options=(),
        uncertain=None,
        comment="dua jawaban masuk akal" if ambiguous else "",
    )


def test_idcsqa_import_loads_questions_answers_and_exclusions(make_user):
    users = {name: make_user("annotator") for name in ("W1", "W2", "W3")}
    data = IdCsqaData(
        language="ind",
        questions=(_question("q1"), _question("q2")),
        answers=(
            _answer("q1", "W2", "A"),
            _answer("q1", "W3", "B"),
            _answer("q2", "W2", "A", ambiguous=True),
            _answer("q2", "W3", "C", ambiguous=True),
        ),
    )
    project = services.idcsqa_import(data=data, name="id-csqa mini", users=users, overlap=2, max_ambiguous=1)

    assert project.kind == Project.Kind.MCQ_ANSWER and project.status == Project.Status.ACTIVE
    assert project.n_tasks == 2
    assert Assignment.objects.filter(project=project, status="submitted").count() == 4
    correct = Annotation.objects.filter(assignment__project=project, criterion="choice", value_int=1)
    # Scored against the key: W2 got both right, W3 neither.
    assert sorted(correct.values_list("assignment__annotator__username", flat=True)) == sorted(
        [users["W2"].username] * 2
    )
    # Two ambiguous flags on q2 are more than max_ambiguous = 1: it is excluded; q1 stays.
    statuses = dict(Question.objects.filter(dataset=project.dataset).values_list("external_id", "status"))
    assert statuses == {"q1": "accepted", "q2": "excluded"}
    # Every answer took one of its group's k places.
    assert {(s.open_count, s.submitted_count) for s in TaskSlot.objects.filter(project=project)} == {(0, 2)}


def test_idcsqa_import_needs_an_account_for_every_worker(make_user):
    data = IdCsqaData(language="ind", questions=(_question("q1"),), answers=(_answer("q1", "W2", "A"),))
    with pytest.raises(services.ProjectInvalid, match="W2"):
        services.idcsqa_import(data=data, name="id-csqa", users={"W1": make_user("annotator")})
    assert not Project.objects.exists()
