"""id-csqa Human_Gen (Indonesian) imported through the adapter into questions and answer annotations;
the study's figures come back out of the database.

Expected figures were counted on raw_ind.json (sha256 in its SOURCE.md) by plain loops in
tests/datasets_app/domain/test_idcsqa_reference.py: 1,500 questions, 7,500 answers, ambiguous-flag
distribution {0: 1387, 1: 102, 2: 10, 3: 1}, nothing above 3 flags, 243 answers differing from the key.
"""

from collections import Counter

import pytest
from django.db.models import F

from annotation import selectors, services
from annotation.models import Annotation, Assignment, TaskSlot
from datasets_app.domain.idcsqa import load_raw
from datasets_app.models import Question
from tests.conftest import REFERENCE_DATA

RAW = REFERENCE_DATA / "id-csqa-v2-human" / "raw_ind.json"
WORKERS = ["W1", "W2", "W3", "W4", "W5", "W6"]

pytestmark = [
    pytest.mark.reference,
    pytest.mark.django_db,
    pytest.mark.skipif(not RAW.is_file(), reason=f"reference data not found at {RAW}"),
]


@pytest.fixture
def imported(make_user):
    users = {worker: make_user("annotator", username=worker) for worker in WORKERS}
    data = load_raw(RAW)
    project = services.idcsqa_import(data=data, name="id-csqa ind", users=users, overlap=5, max_ambiguous=3)
    return project, data


def test_questions_answers_flags_exclusions_and_conflicts_come_back_from_the_database(imported):
    project, data = imported
    assert Question.objects.filter(dataset=project.dataset).count() == 1500
    assert Assignment.objects.filter(project=project, status="submitted").count() == 7500
    assert Annotation.objects.filter(assignment__project=project, criterion="choice").count() == 7500
    # Every question got exactly its k = 5 answers, none from its creator.
    assert set(TaskSlot.objects.filter(project=project).values_list("submitted_count", "open_count")) == {
        (5, 0)
    }
    assert not Annotation.objects.filter(
        assignment__project=project, assignment__annotator_id=F("assignment__task__question__creator_id")
    ).exists()

    counts = selectors.ambiguous_counts(project=project)
    expected_counts = Counter()
    for answer in data.answers:
        expected_counts[answer.question_id] += int(answer.ambiguous)
    assert counts == {q.question_id: expected_counts[q.question_id] for q in data.questions}
    assert dict(sorted(Counter(counts.values()).items())) == {0: 1387, 1: 102, 2: 10, 3: 1}

    # More than 3 flags: none in the Indonesian file, so nothing is excluded.
    assert Question.objects.filter(dataset=project.dataset, status="excluded").count() == 0
    report = selectors.mcq_report(project=project)
    assert report.excluded == [] and report.n_answers == 7500

    matrix = selectors.conflict_matrix(project=project)
    assert matrix.total_conflicts == 243 and matrix.total_answers == 7500
    assert matrix.wide().loc[WORKERS, WORKERS].to_numpy().tolist() == [
        [0, 11, 5, 10, 7, 48],
        [2, 0, 2, 10, 6, 29],
        [4, 7, 0, 7, 5, 30],
        [0, 3, 2, 0, 0, 22],
        [1, 2, 3, 2, 0, 15],
        [1, 1, 1, 4, 3, 0],
    ]
    csv = selectors.conflict_matrix_csv(project=project).splitlines()
    assert csv[0] == "creator,W1,W2,W3,W4,W5,W6" and csv[1] == "W1,0,11,5,10,7,48"

    # With at most 2 flags allowed, the one question flagged 3 times goes.
    services.project_update(project=project, max_ambiguous=2)
    question_ids = Question.objects.filter(dataset=project.dataset).values_list("pk", flat=True)
    services.ambiguity_apply(project=project, question_ids=question_ids)
    excluded = Question.objects.filter(dataset=project.dataset, status="excluded")
    assert list(excluded.values_list("external_id", flat=True)) == ["ind-W6-051"]
