"""Dispatch by kind: every kind has a handler, and the entry points route through it."""

import pytest

from annotation import services
from annotation.models import Project
from annotation.services.kinds import KIND_HANDLERS
from tests.annotation.conftest import build_dataset, build_question_dataset, build_translation_dataset

pytestmark = pytest.mark.django_db


def test_every_project_kind_has_one_handler():
    assert set(KIND_HANDLERS) == set(Project.Kind.values)


@pytest.mark.parametrize("kind", ["translation", "mcq_answer"])
def test_job_answers_must_be_objects(kind, make_user, job_project):
    user, author = make_user("annotator"), make_user("annotator")
    dataset = (
        build_translation_dataset(n_units=2)
        if kind == "translation"
        else build_question_dataset(creators=[author], n_per_creator=1)
    )
    project = job_project(kind=kind, dataset=dataset, members=[user])
    assignment = services.assignment_claim(project=project, user=user)
    with pytest.raises(services.AnnotationError, match="must be an object"):
        services.assignment_submit(token=assignment.token, user=user, payload=["A"])


def test_unknown_kind_is_reported_with_the_settings():
    with pytest.raises(services.ProjectInvalid) as err:
        services.project_create(dataset=build_dataset(n_prompts=1), name="x", kind="essay", overlap=0)
    assert {"kind", "overlap"} <= set(err.value.errors)
    assert not Project.objects.exists()


def _job_work(kind, make_user, job_project):
    worker, author = make_user("annotator"), make_user("annotator")
    if kind == "mcq_answer":
        dataset = build_question_dataset(creators=[author], n_per_creator=1)
        payload = {"choice": "A"}
    elif kind == "translation":
        dataset = build_translation_dataset(n_units=1)
        payload = {"translation": "Selamat pagi."}
    else:
        dataset = build_translation_dataset(n_units=1, translated=True)
        payload = {"verdict": "accept"}
    project = job_project(kind=kind, dataset=dataset, members=[worker])
    assignment = services.assignment_claim(project=project, user=worker)
    services.assignment_submit(token=assignment.token, user=worker, payload=payload)
    return assignment


@pytest.mark.parametrize("kind", ["translation", "translation_review", "mcq_answer"])
def test_translation_and_answering_work_can_be_accepted(kind, make_user, job_project):
    assignment = _job_work(kind, make_user, job_project)
    review = services.review_create(assignment=assignment, reviewer=make_user("reviewer"), verdict="accept")
    assert (review.verdict, review.round, review.assignment_id) == ("accept", 1, assignment.pk)


@pytest.mark.parametrize("kind", ["translation", "translation_review"])
def test_translation_work_is_sent_back_in_its_review_job_not_from_the_queue(kind, make_user, job_project):
    assignment = _job_work(kind, make_user, job_project)
    with pytest.raises(services.AnnotationError, match="sent back in the translation review job"):
        services.review_create(
            assignment=assignment, reviewer=make_user("reviewer"), verdict="reject", comment="Kurang tepat."
        )
    assignment.refresh_from_db()
    assert (assignment.status, assignment.round, assignment.reviews.count()) == ("submitted", 1, 0)


def test_a_rejected_answer_reopens_as_a_new_round_and_keeps_the_old(make_user, job_project):
    assignment = _job_work("mcq_answer", make_user, job_project)
    services.review_create(
        assignment=assignment, reviewer=make_user("reviewer"), verdict="reject", comment="Baca lagi soalnya."
    )
    assignment.refresh_from_db()
    assert (assignment.status, assignment.round) == ("assigned", 2)
    services.assignment_submit(token=assignment.token, user=assignment.annotator, payload={"choice": "B"})
    rows = sorted(assignment.annotations.filter(criterion="choice").values_list("round", "choice"))
    assert rows == [(1, "A"), (2, "B")]
