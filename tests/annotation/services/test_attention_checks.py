"""Attention checks of error-span projects: made with the tasks or added by the manager, scored per
annotator, kept out of scores, agreement and exports."""

from __future__ import annotations

import pytest

from annotation import selectors, services
from annotation.models import Annotation, AttentionCheck, Task, TaskSlot
from datasets_app.models import Dataset, TranslationUnit
from exports.families.error_spans_selectors import error_span_records

pytestmark = pytest.mark.django_db

# Written for these tests: Indonesian sources, Javanese translations; only the first has a negation.
UNITS = [
    ("u1", "Dia tidak datang kemarin.", "Dheweke ora teka wingi."),
    ("u2", "Harga beras naik 5 persen.", "Regine beras mundhak 5 persen."),
    ("u3", "Saya makan nasi.", "Aku mangan sega."),
    ("u4", "Anak itu tidur.", "Bocah iku turu."),
]
NEGATION_ONLY = {"attention_checks": {"share": 0.25, "kinds": ["negation_drop"]}}


def build_units(name: str = "check-units") -> Dataset:
    dataset = Dataset.objects.create(name=name, kind=Dataset.Kind.TRANSLATIONS)
    for ext, source, target in UNITS:
        TranslationUnit.objects.create(
            dataset=dataset,
            external_id=ext,
            source_text=source,
            source_language="ind",
            target_language="jav",
            register="ngoko",
            translation_text=target,
            translator_name="sys-a",
            status="accepted",
        )
    return dataset


@pytest.fixture
def checked(make_user, job_project):
    people = [make_user("annotator"), make_user("annotator")]
    project = job_project(
        kind="translation_mqm", dataset=build_units(), members=people, overlap=2, span_settings=NEGATION_ONLY
    )
    return project, people


def test_the_share_of_units_gets_an_injected_copy_with_its_truth(checked):
    project, _ = checked
    assert project.n_tasks == 5  # four units and one check
    check = AttentionCheck.objects.get(task__project=project)
    assert check.task.translation_unit.external_id == "u1"
    assert check.kind == "negation_drop"
    assert check.target_text == "Dheweke teka wingi."
    assert check.target_text[check.start : check.end] == "teka"
    assert (check.category, check.severity, check.original) == ("accuracy/mistranslation", "major", "ora")
    # The unit itself is untouched and still has its own task.
    assert TranslationUnit.objects.get(external_id="u1").translation_text == "Dheweke ora teka wingi."
    assert Task.objects.filter(project=project, translation_unit__external_id="u1").count() == 2
    assert TaskSlot.objects.filter(task=check.task).get().capacity == 2


def _claim_all(project, user):
    """Claim every task; return the check's assignment, answering the others "no error"."""
    check_assignment = None
    while (assignment := services.assignment_claim(project=project, user=user)) is not None:
        if AttentionCheck.objects.filter(task_id=assignment.task_id).exists():
            return assignment
        services.assignment_submit(token=assignment.token, user=user, payload={"no_error": True})
    return check_assignment


def test_marking_nothing_finds_nothing_and_marking_the_span_is_credited(checked):
    project, (idle, careful) = checked
    check = AttentionCheck.objects.get(task__project=project)
    first = _claim_all(project, idle)
    services.assignment_submit(token=first.token, user=idle, payload={"no_error": True})
    second = _claim_all(project, careful)
    span = {"start": 6, "end": 12, "category": "fluency/grammar", "severity": "minor"}  # "e teka"
    services.assignment_submit(token=second.token, user=careful, payload={"spans": [span]})
    scores = selectors.attention_check_scores(project)
    assert scores == {
        idle.pk: {"seen": 1, "found": 0, "missed": 1, "share": 0.0},
        careful.pk: {"seen": 1, "found": 1, "missed": 0, "share": 1.0},
    }
    # With the category rule on, a grammar span is not the mistranslation injected.
    services.project_update(
        project=project,
        span_settings={"attention_checks": {**NEGATION_ONLY["attention_checks"], "match_category": True}},
    )
    assert selectors.attention_check_scores(project)[careful.pk]["found"] == 0
    # The quality report and its rows (API, CSV) carry the same figures.
    services.project_update(project=project, span_settings=NEGATION_ONLY)
    report = selectors.quality_report(project=project)
    assert report.n_checks == 1
    rows = {row["annotator"]: row for row in selectors.quality_rows(report)}
    assert (rows[careful.username]["checks_seen"], rows[careful.username]["checks_found"]) == (1, 1)
    assert (rows[idle.username]["checks_found"], rows[idle.username]["checks_share"]) == (0, 0.0)
    assert check.task_id == second.task_id


def test_checks_count_in_no_score_agreement_or_export(checked):
    project, (idle, careful) = checked
    for user in (idle, careful):
        assignment = _claim_all(project, user)
        services.assignment_submit(
            token=assignment.token,
            user=user,
            payload={
                "spans": [{"start": 8, "end": 12, "category": "accuracy/mistranslation", "severity": "major"}]
            },
        )
        # Finish the rest so every real task has both answers.
        while (rest := services.assignment_claim(project=project, user=user)) is not None:
            services.assignment_submit(token=rest.token, user=user, payload={"no_error": True})
    assert Annotation.objects.filter(assignment__project=project, criterion="mqm").count() == 10
    ratings = selectors.span_score_rows(project)
    assert len(ratings) == 8 and not [r for r in ratings if r.errors]
    report = selectors.span_scores_report(project, draws=0)
    assert report["systems"][0]["score"] == 0.0  # the check's major error is not sys-a's
    assert selectors.span_agreement_summary(project)["segments"] == 4
    records = error_span_records(project)
    assert len(records) == 8 and all(r.target != "Dheweke teka wingi." for r in records)


def test_the_manager_adds_checks_up_to_the_share(make_user, job_project):
    people = [make_user("annotator")]
    project = job_project(kind="translation_esa", dataset=build_units(), members=people, overlap=1)
    assert not AttentionCheck.objects.filter(task__project=project).exists()
    assert services.attention_checks_add(project=project) == 0  # the setting is off
    services.project_update(
        project=project,
        span_settings={"attention_checks": {"share": 0.5, "kinds": ["number_swap", "untranslated"]}},
    )
    assert services.attention_checks_add(project=project) == 2
    checks = list(AttentionCheck.objects.filter(task__project=project))
    assert {c.kind for c in checks} <= {"number_swap", "untranslated"}
    assert len({c.task.translation_unit_id for c in checks}) == 2
    assert all(TaskSlot.objects.filter(task=c.task).exists() for c in checks)  # claimable at once
    project.refresh_from_db()
    assert project.n_tasks == 6
    assert services.attention_checks_add(project=project) == 0  # the share is reached


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"share": 0.9}, "share is a number from 0 to 0.5"),
        ({"share": 0.1, "kinds": ["typo"]}, "unknown kind 'typo'"),
        ({"share": 0.1, "kinds": []}, "kinds lists one or more"),
        ({"share": 0.1, "often": True}, "Unknown attention_checks setting 'often'"),
        ({"share": 0.1, "match_category": "yes"}, "match_category is true or false"),
    ],
)
def test_a_bad_setting_says_what_is_wrong_and_writes_nothing(make_user, job_project, setting, message):
    project = job_project(kind="translation_mqm", dataset=build_units(), members=[make_user("annotator")])
    with pytest.raises(services.ProjectInvalid) as refused:
        services.project_update(project=project, span_settings={"attention_checks": setting})
    assert message in refused.value.errors["span_settings"]
    project.refresh_from_db()
    assert project.span_settings == {}
