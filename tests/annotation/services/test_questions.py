"""Question authoring with its review loop, and multiple-choice answering with the ambiguity rule."""

import pytest

from annotation import services
from annotation.models import Annotation, QuestionErrorReview, QuestionRound, Task
from datasets_app.domain.questions import taxonomy_from_data, taxonomy_from_text
from datasets_app.models import Dataset, Question
from tests.annotation.conftest import build_question_dataset

pytestmark = pytest.mark.django_db

GOOD = {
    "question": "Makanan apa yang biasa disajikan bersama ketupat saat Lebaran?",
    "choices": {"A": "opor ayam", "B": "rendang", "C": "es krim", "D": "roti bakar", "E": "sereal"},
    "answer": "A",
    "distractor": "B",
}


@pytest.fixture
def authoring(make_user, job_project):
    author = make_user("annotator")
    project = job_project(kind="question_authoring", dataset=None, members=[author])
    services.concept_pairs_add(
        project=project, records=[("line 1", {"category": "food", "concept": "ketupat"})]
    )
    return project, author


def test_pairs_upload_reports_line_and_field_and_writes_nothing(authoring):
    project, _ = authoring
    records = [
        ("line 1", {"category": "food", "concept": "rendang"}),
        ("line 2", {"category": "", "concept": "batik"}),
        ("line 3", {"category": "place", "concept": "pura", "language": "xx"}),
    ]
    with pytest.raises(services.PairsInvalid) as caught:
        services.concept_pairs_add(project=project, records=records)
    assert [(loc, field) for loc, field, _ in caught.value.errors] == [
        ("line 2", "category"),
        ("line 3", "language"),
    ]
    assert project.concept_pairs.count() == 1
    counts = services.concept_pairs_add(
        project=project,
        records=[
            ("line 1", {"category": "food", "concept": "ketupat"}),
            ("line 2", {"category": "food", "concept": "rendang"}),
        ],
    )
    assert counts == {"added": 1, "skipped": 1}
    project.refresh_from_db()
    assert project.n_tasks == 2 == Task.objects.filter(project=project).count()


def test_pairs_from_a_csv_file(authoring, tmp_path):
    project, _ = authoring
    path = tmp_path / "pairs.csv"
    path.write_text("category,concept,language\nplace,pura,ind\nfood,surabi,sun\n", encoding="utf-8")
    counts = services.concept_pairs_add(project=project, records=services.concept_pairs_read(path))
    assert counts == {"added": 2, "skipped": 0}
    assert sorted(project.concept_pairs.values_list("concept", "language")) == [
        ("ketupat", "ind"),
        ("pura", "ind"),
        ("surabi", "sun"),
    ]


def test_the_question_must_contain_the_concept_unless_overridden_with_a_comment(authoring):
    project, author = authoring
    work = services.assignment_claim(project=project, user=author)
    without = {**GOOD, "question": "Makanan apa yang disajikan saat Lebaran?"}
    with pytest.raises(services.SubmissionInvalid) as caught:
        services.assignment_submit(token=work.token, user=author, payload=without)
    assert list(caught.value.errors) == ["text"]
    with pytest.raises(services.SubmissionInvalid) as caught:
        services.assignment_submit(
            token=work.token, user=author, payload={**without, "concept_override": True}
        )
    assert list(caught.value.errors) == ["concept"]
    variant = {**GOOD, "question": "Apa lauk untuk berketupat saat Lebaran?", "concept_override": True}
    services.assignment_submit(
        token=work.token, user=author, payload={**variant, "override_comment": "Bentuk kerja."}
    )
    question = Question.objects.get()
    assert (question.status, question.meta["concept_override"], question.meta["override_comment"]) == (
        "in_review",
        True,
        "Bentuk kerja.",
    )


def test_review_loop_keeps_rounds_and_accepted_questions_feed_answering(authoring, make_user, job_project):
    project, author = authoring
    reviewer = make_user("reviewer")
    answerer = make_user("annotator")
    answering = job_project(kind="mcq_answer", dataset=project.dataset, members=[answerer, author], overlap=2)
    assert answering.n_tasks == 0

    work = services.assignment_claim(project=project, user=author)
    services.assignment_submit(token=work.token, user=author, payload={**GOOD, "distractor": "C"})
    question = Question.objects.get()
    assert (question.creator_id, question.concept, question.category) == (author.pk, "ketupat", "food")
    services.review_create(
        assignment=work, reviewer=reviewer, verdict="reject", comment="Rendang is the better distractor."
    )
    question.refresh_from_db()
    work.refresh_from_db()
    assert (question.status, work.status, work.round) == ("returned", "assigned", 2)

    assert services.assignment_claim(project=project, user=author).pk == work.pk
    services.assignment_submit(token=work.token, user=author, payload=GOOD)
    work.refresh_from_db()
    services.review_create(assignment=work, reviewer=reviewer, verdict="accept")
    question.refresh_from_db()
    assert (question.status, question.distractor) == ("accepted", "B")
    rounds = list(QuestionRound.objects.filter(question=question).order_by("round"))
    assert [(r.round, r.distractor, r.verdict, r.comment) for r in rounds] == [
        (1, "C", "return", "Rendang is the better distractor."),
        (2, "B", "accept", ""),
    ]
    answering.refresh_from_db()
    assert answering.n_tasks == 1
    # The author is a member of the answering project but never gets their own question.
    assert services.assignment_claim(project=answering, user=author) is None
    assert services.assignment_claim(project=answering, user=answerer).task.question_id == question.pk


def test_authors_cannot_review_themselves(authoring):
    project, author = authoring
    work = services.assignment_claim(project=project, user=author)
    services.assignment_submit(token=work.token, user=author, payload=GOOD)
    with pytest.raises(services.AnnotationError):
        services.review_create(assignment=work, reviewer=author, verdict="accept")


def test_answers_are_scored_and_the_author_never_answers(make_user, job_project):
    creator, a, b = make_user("annotator"), make_user("annotator"), make_user("annotator")
    dataset = build_question_dataset(creators=[creator], n_per_creator=1)
    project = job_project(kind="mcq_answer", dataset=dataset, members=[creator, a, b], overlap=3)
    assert services.assignment_claim(project=project, user=creator) is None
    for user, choice in ((a, "A"), (b, "C")):
        work = services.assignment_claim(project=project, user=user)
        services.assignment_submit(token=work.token, user=user, payload={"choice": choice})
    scores = dict(
        Annotation.objects.filter(criterion="choice").values_list("assignment__annotator_id", "value_int")
    )
    assert scores == {a.pk: 1, b.pk: 0}


def test_a_four_option_question_takes_a_to_d_only(make_user, job_project):
    from annotation.selectors import task_view

    creator, answerer = make_user("annotator"), make_user("annotator")
    dataset = build_question_dataset(creators=[creator], n_per_creator=1)
    dataset.questions.update(choices={"A": "opor ayam", "B": "es krim", "C": "roti", "D": "keju"})
    project = job_project(kind="mcq_answer", dataset=dataset, members=[answerer], overlap=1)
    work = services.assignment_claim(project=project, user=answerer)
    shown = task_view(assignment=work, lang="id").as_payload()
    assert [c["label"] for c in shown["item"]["choices"]] == ["A", "B", "C", "D"]
    with pytest.raises(services.SubmissionInvalid) as caught:
        services.assignment_submit(token=work.token, user=answerer, payload={"choice": "E"})
    assert caught.value.errors == {"choice": ["Pick one of the options A to D."]}
    assert not Annotation.objects.exists()
    services.assignment_submit(token=work.token, user=answerer, payload={"choice": "D"})
    assert Annotation.objects.get(criterion="choice").choice == "D"


def test_questions_with_more_ambiguous_flags_than_allowed_are_excluded(make_user, job_project):
    creator = make_user("annotator")
    answerers = [make_user("annotator") for _ in range(4)]
    dataset = build_question_dataset(creators=[creator], n_per_creator=1)
    project = job_project(kind="mcq_answer", dataset=dataset, members=answerers, overlap=4, max_ambiguous=1)
    with pytest.raises(services.SubmissionInvalid) as caught:
        work = services.assignment_claim(project=project, user=answerers[0])
        services.assignment_submit(
            token=work.token, user=answerers[0], payload={"choice": "A", "ambiguous": True}
        )
    assert list(caught.value.errors) == ["comment"]
    flagged = {"choice": "A", "ambiguous": True, "comment": "B juga benar."}
    services.assignment_submit(token=work.token, user=answerers[0], payload=flagged)
    assert Question.objects.get().status == "accepted"  # 1 flag is not more than 1
    work = services.assignment_claim(project=project, user=answerers[1])
    services.assignment_submit(token=work.token, user=answerers[1], payload=flagged)
    question = Question.objects.get()
    assert (question.status, question.meta["excluded_by"]) == (
        "excluded",
        {"project": project.pk, "ambiguous": 2},
    )
    # Excluded questions are no longer handed out.
    assert services.assignment_claim(project=project, user=answerers[2]) is None
    # An answerer taking the flag back (edit) brings it back: 1 flag again.
    services.assignment_submit(token=work.token, user=answerers[1], payload={"choice": "A"})
    assert Question.objects.get().status == "accepted"


def test_error_taxonomy_reviews(make_user, job_project):
    dataset = build_question_dataset(creators=[make_user("annotator")], n_per_creator=3, origin="llm")
    project = job_project(kind="mcq_answer", dataset=dataset, members=[make_user("annotator")])
    reviewer = make_user("reviewer")
    q1, q2, q3 = Question.objects.order_by("id")
    services.question_error_review_save(project=project, question=q1, reviewer=reviewer, errors=[])
    services.question_error_review_save(
        project=project,
        question=q2,
        reviewer=reviewer,
        errors=["fluency", "context"],
        option_errors=["invalid_options", "typo"],
        primary_error="context",
    )
    services.question_error_review_save(project=project, question=q3, reviewer=reviewer, errors=["fluency"])
    services.question_error_review_save(
        project=project, question=q3, reviewer=reviewer, errors=["fluency"], comment="x"
    )
    assert QuestionErrorReview.objects.count() == 3
    # Stored in the taxonomy's order, question and option errors apart.
    review = QuestionErrorReview.objects.get(question=q2)
    assert (review.errors, review.option_errors) == (["fluency", "context"], ["typo", "invalid_options"])
    with pytest.raises(services.AnnotationError, match="of the question in this project: nonsense"):
        services.question_error_review_save(
            project=project, question=q1, reviewer=reviewer, errors=["nonsense"]
        )
    # "Invalid options" applies to options only.
    with pytest.raises(services.AnnotationError, match="of the question in this project: invalid_options"):
        services.question_error_review_save(
            project=project, question=q1, reviewer=reviewer, errors=["invalid_options"]
        )
    assert QuestionErrorReview.objects.get(question=q1).errors == []
    from annotation.selectors import mcq_report

    report = mcq_report(project=project)
    taxonomy, options = report.taxonomy, report.option_taxonomy
    # Question errors: 1 of 3 questions error-free; fluency on 2, context on 1: 3 tags, fluency 2/3 of them.
    assert (taxonomy.n_questions, taxonomy.n_error_free) == (3, 1)
    assert taxonomy.questions_with["fluency"] == 2 and taxonomy.questions_with["context"] == 1
    assert taxonomy.share_of_errors["fluency"] == pytest.approx(2 / 3)
    assert "invalid_options" not in taxonomy.questions_with
    # Option errors: only q2 has any (typo and invalid options, half of the 2 tags each).
    assert (options.n_questions, options.n_error_free) == (3, 2)
    assert options.share_of_errors["invalid_options"] == pytest.approx(0.5)
    assert report.taxonomy_labels["invalid_options"] == "Invalid options"
    assert mcq_report(project=project, lang="id").taxonomy_labels["typo"] == "Salah ketik"


def test_error_taxonomy_review_keeps_a_main_error(make_user, job_project):
    dataset = build_question_dataset(creators=[make_user("annotator")], n_per_creator=1, origin="llm")
    project = job_project(kind="mcq_answer", dataset=dataset, members=[make_user("annotator")])
    reviewer = make_user("reviewer")
    question = Question.objects.get()

    def save(**tags):
        return services.question_error_review_save(
            project=project, question=question, reviewer=reviewer, **tags
        )

    # One error ticked is the main one; the same category on the question and its options is one error.
    assert save(errors=["fluency"]).primary_error == "fluency"
    assert save(errors=["typo"], option_errors=["typo"]).primary_error == "typo"
    assert save(errors=[]).primary_error == ""
    with pytest.raises(services.AnnotationError, match="Several errors are ticked: choose the main one"):
        save(errors=["fluency"], option_errors=["invalid_options"])
    with pytest.raises(services.AnnotationError, match=r"one of the errors ticked \(got context\)"):
        save(errors=["fluency", "typo"], primary_error="context")
    with pytest.raises(services.AnnotationError, match=r"one of the errors ticked \(got typo\)"):
        save(errors=[], primary_error="typo")
    assert (QuestionErrorReview.objects.get().errors, QuestionErrorReview.objects.get().primary_error) == (
        [],
        "",
    )
    review = save(errors=["fluency"], option_errors=["invalid_options"], primary_error="invalid_options")
    assert (review.errors, review.option_errors, review.primary_error) == (
        ["fluency"],
        ["invalid_options"],
        "invalid_options",
    )


def test_taxonomy_shares_count_each_reviewed_llm_question_once(make_user, job_project):
    from annotation.selectors import mcq_report, taxonomy_labels_csv

    dataset = build_question_dataset(creators=[make_user("annotator")], n_per_creator=4, origin="llm")
    project = job_project(kind="mcq_answer", dataset=dataset, members=[make_user("annotator")])
    reviewer, second = make_user("reviewer"), make_user("reviewer")
    q0, q1, q2, q3 = Question.objects.order_by("id")
    Question.objects.filter(pk=q3.pk).update(origin="human")
    services.question_error_review_save(project=project, question=q0, reviewer=reviewer, errors=[])
    services.question_error_review_save(
        project=project,
        question=q1,
        reviewer=reviewer,
        errors=["fluency", "context"],
        primary_error="context",
    )
    # Saved before reviewers chose a main error: typo and fluency, none chosen. Fluency comes first in
    # id-csqa's taxonomy (translation, wrong language, structure, fluency, context, subjectivity, typo, ...).
    QuestionErrorReview.objects.create(
        project=project, question=q2, reviewer=reviewer, errors=["fluency", "typo"], primary_error=""
    )
    # A second reviewer says q0 has a typo: a tie with "no error", the error wins.
    services.question_error_review_save(project=project, question=q0, reviewer=second, errors=["typo"])
    # A human-written question is not in the table.
    services.question_error_review_save(project=project, question=q3, reviewer=reviewer, errors=["typo"])

    shares = mcq_report(project=project).taxonomy_shares
    # 3 questions: context, fluency, typo; 1/3 = 33.33 each, the leftover tenth to fluency (first in order).
    assert [(r.label, r.count, r.percent) for r in shares.rows if r.count] == [
        ("fluency", 1, 33.4),
        ("context", 1, 33.3),
        ("typo", 1, 33.3),
    ]
    assert len(shares.rows) == 9 and shares.rows[-1].label == "no_error"
    assert (shares.n_questions, shares.n_reviews, shares.n_fallback, shares.n_split) == (3, 4, 1, 1)
    # The multi-label summary still counts every tag of every reviewed question (the human one too).
    assert mcq_report(project=project).taxonomy.n_questions == 4
    assert taxonomy_labels_csv(project=project).splitlines() == [
        "question_id,label",
        f"q-{q0.creator.username}-0,typo",
        f"q-{q0.creator.username}-1,context",
        f"q-{q0.creator.username}-2,fluency",
    ]


def test_error_taxonomy_is_id_csqa_by_default_and_editable(make_user, job_project):
    dataset = build_question_dataset(creators=[make_user("annotator")], n_per_creator=1, origin="llm")
    project = job_project(kind="mcq_answer", dataset=dataset, members=[make_user("annotator")])
    assert [c.en for c in taxonomy_from_data(project.error_taxonomy)] == [
        "Translation",
        "Wrong language",
        "Structure",
        "Fluency",
        "Context",
        "Subjectivity",
        "Typo",
        "Invalid options",
    ]
    reviewer = make_user("reviewer")
    question = Question.objects.get()
    services.question_error_review_save(
        project=project, question=question, reviewer=reviewer, errors=["typo"], option_errors=["typo"]
    )
    edited = taxonomy_from_text(
        "typo | Typo | Salah ketik | question, options\nbias | Bias | Bias | question"
    )
    services.error_taxonomy_set(project=project, categories=edited)
    project.refresh_from_db()
    assert [c["code"] for c in project.error_taxonomy] == ["typo", "bias"]
    services.question_error_review_save(
        project=project,
        question=question,
        reviewer=reviewer,
        errors=["bias"],
        option_errors=["typo"],
        primary_error="bias",
    )
    # Dropping "typo", or taking it from the options it was used for, is refused and changes nothing.
    for text in (
        "bias | Bias | Bias | question",
        "typo | Typo | Salah ketik | question\nbias | Bias | Bias | question",
    ):
        with pytest.raises(services.AnnotationError, match="use these categories; keep them: typo"):
            services.error_taxonomy_set(project=project, categories=taxonomy_from_text(text))
    project.refresh_from_db()
    assert [c["code"] for c in project.error_taxonomy] == ["typo", "bias"]


def test_authoring_without_dataset_creates_one(make_user):
    project = services.project_create(dataset=None, name="Tulis", kind="question_authoring", overlap=1)
    assert project.dataset.kind == Dataset.Kind.QUESTIONS and project.dataset.name == "Tulis (questions)"
    with pytest.raises(services.ProjectInvalid):
        services.project_create(dataset=project.dataset, name="Dua", kind="question_authoring", overlap=3)
