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


@pytest.mark.parametrize("kind", ["translation", "translation_review", "mcq_answer"])
def test_translation_and_answering_work_takes_no_reviews(kind, make_user, job_project):
    worker, reviewer, author = make_user("annotator"), make_user("reviewer"), make_user("annotator")
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
    with pytest.raises(services.AnnotationError, match="answers are not reviewed"):
        services.review_create(assignment=assignment, reviewer=reviewer, verdict="accept")
