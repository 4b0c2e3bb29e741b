"""Error-span jobs (MQM, ESA): tasks with suggestions from flags, answers, edits, what became of each
suggestion, and the rows the scores read."""

from __future__ import annotations

import pytest

from annotation import selectors, services
from annotation.models import Annotation, ErrorSpan, SpanSuggestion, Task
from datasets_app.models import Dataset, TranslationUnit

pytestmark = pytest.mark.django_db

# Written for these tests: Indonesian sources, two systems' Javanese translations.
UNITS = [
    ("s1", "Harga beras naik 5 persen.", "Regine beras mundhak 50 persen.", "sys-alpha"),
    ("s1b", "Harga beras naik 5 persen.", "Regine beras mundhak 5 persen.", "sys-beta"),
    ("s2", "Dia tidak datang kemarin.", "Dheweke teka wingi (mesthi).", "sys-alpha"),
]


def build_units() -> Dataset:
    dataset = Dataset.objects.create(name="mqm-units", kind=Dataset.Kind.TRANSLATIONS)
    for ext, source, target, system in UNITS:
        TranslationUnit.objects.create(
            dataset=dataset,
            external_id=ext,
            source_text=source,
            source_language="ind",
            target_language="jav",
            register="ngoko",
            translation_text=target,
            translator_name=system,
            status="accepted",
            flags=[
                {"code": "number_mismatch", "details": {"extra_in_translation": ["50"]}}
                if "50" in target
                else {"code": "bracket_addition", "details": {"in_source": []}}
                if "(" in target
                else {"code": "length_ratio", "details": {}}
            ],
        )
    return dataset


@pytest.fixture
def mqm(make_user, job_project):
    people = [make_user("annotator"), make_user("annotator")]
    project = job_project(kind="translation_mqm", dataset=build_units(), members=people, overlap=2)
    return project, people


def _claim_unit(project, user, external_id):
    """Claim until the annotator holds the unit ``external_id`` (skipping nothing: the claims go in their
    own shuffled order, so submit the others with "no error" on the way)."""
    while True:
        assignment = services.assignment_claim(project=project, user=user)
        assert assignment is not None, f"{external_id} never came"
        if assignment.task.translation_unit.external_id == external_id:
            return assignment
        services.assignment_submit(token=assignment.token, user=user, payload={"no_error": True})


def test_tasks_come_with_spans_suggested_by_the_flags(mqm):
    project, _ = mqm
    assert project.n_tasks == 3
    number = SpanSuggestion.objects.get(task__translation_unit__external_id="s1")
    assert (number.start, number.end, number.category, number.severity, number.source) == (
        21,
        23,
        "accuracy/mistranslation",
        "major",
        "flags",
    )
    bracket = SpanSuggestion.objects.get(task__translation_unit__external_id="s2")
    assert UNITS[2][2][bracket.start : bracket.end] == "(mesthi)"
    assert bracket.category == "accuracy/addition"
    assert not SpanSuggestion.objects.filter(task__translation_unit__external_id="s1b").exists()


def test_spans_are_stored_with_what_became_of_each_suggestion(mqm):
    project, (ann, _) = mqm
    assignment = _claim_unit(project, ann, "s1")
    suggestion = SpanSuggestion.objects.get(task=assignment.task)
    payload = {
        "spans": [
            {
                "start": 21,
                "end": 23,
                "category": "accuracy/mistranslation",
                "severity": "minor",
                "suggestion": suggestion.pk,
            },
            {"side": "source", "start": 0, "end": 5, "category": "accuracy/omission", "severity": "minor"},
        ]
    }
    result = services.assignment_submit(token=assignment.token, user=ann, payload=payload)
    assert result.outcome == "created"
    spans = list(ErrorSpan.objects.filter(assignment=assignment).order_by("side", "start"))
    assert [(s.side, s.start, s.end, s.origin, s.outcome) for s in spans] == [
        ("source", 0, 5, "manual", ""),
        ("target", 21, 23, "suggested", "edited"),  # severity changed from major
    ]
    row = Annotation.objects.get(assignment=assignment)
    assert (row.criterion, row.choice, row.value_int) == ("mqm", "errors", 2)
    again = services.assignment_submit(token=assignment.token, user=ann, payload=payload)
    assert again.outcome == "unchanged"
    assert ErrorSpan.objects.filter(assignment=assignment).count() == 2


def test_an_untouched_suggestion_is_recorded_as_removed_and_counts_for_nothing(mqm):
    project, (ann, _) = mqm
    assignment = _claim_unit(project, ann, "s2")
    services.assignment_submit(token=assignment.token, user=ann, payload={"no_error": True})
    [removed] = ErrorSpan.objects.filter(assignment=assignment)
    assert (removed.origin, removed.outcome) == ("suggested", "removed")
    row = Annotation.objects.get(assignment=assignment)
    assert (row.choice, row.value_int) == ("no_error", 0)
    [rating] = [r for r in selectors.span_score_rows(project) if r.segment.endswith(UNITS[2][1])]
    assert rating.system == "sys-alpha"
    assert [(s.origin, s.outcome) for s in rating.spans] == [("flags", "removed")]
    assert rating.errors == ()


def test_an_edit_replaces_the_spans_of_the_round(mqm):
    project, (ann, _) = mqm
    assignment = _claim_unit(project, ann, "s1b")
    services.assignment_submit(token=assignment.token, user=ann, payload={"no_error": True})
    edit = {"spans": [{"start": 0, "end": 6, "category": "fluency/spelling", "severity": "minor"}]}
    assert services.assignment_submit(token=assignment.token, user=ann, payload=edit).outcome == "edited"
    assert list(ErrorSpan.objects.filter(assignment=assignment).values_list("category", flat=True)) == [
        "fluency/spelling"
    ]
    assert Annotation.objects.get(assignment=assignment).choice == "errors"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "no_error"),
        (
            {"no_error": True, "spans": [{"start": 0, "end": 3, "category": "style", "severity": "minor"}]},
            "no_error",
        ),
        ({"spans": [{"start": 0, "end": 99, "category": "style", "severity": "minor"}]}, "spans.0.start"),
        (
            {"spans": [{"start": 0, "end": 3, "category": "nonsense", "severity": "minor"}]},
            "spans.0.category",
        ),
        (
            {"spans": [{"start": 0, "end": 3, "category": "style", "severity": "critical"}]},
            "spans.0.severity",
        ),
        (
            {
                "spans": [
                    {"start": 0, "end": 3, "category": "style", "severity": "minor", "suggestion": 99999}
                ]
            },
            "spans.0.suggestion",
        ),
        ({"spans": "unreadable"}, "spans"),
    ],
)
def test_bad_answers_say_what_and_where_and_write_nothing(mqm, payload, field):
    project, (ann, _) = mqm
    assignment = services.assignment_claim(project=project, user=ann)
    with pytest.raises(services.SubmissionInvalid) as caught:
        services.assignment_submit(token=assignment.token, user=ann, payload=payload)
    assert field in caught.value.errors
    assert not ErrorSpan.objects.exists()
    assert not Annotation.objects.exists()
    assignment.refresh_from_db()
    assert assignment.status == "assigned"


def test_esa_asks_for_a_score_and_takes_spans_without_a_category(make_user, job_project):
    people = [make_user("annotator")]
    project = job_project(kind="translation_esa", dataset=build_units(), members=people)
    assignment = services.assignment_claim(project=project, user=people[0])
    spans = [{"start": 0, "end": 6, "category": "", "severity": "major"}]
    with pytest.raises(services.SubmissionInvalid) as caught:
        services.assignment_submit(token=assignment.token, user=people[0], payload={"spans": spans})
    assert "score" in caught.value.errors
    services.assignment_submit(
        token=assignment.token, user=people[0], payload={"spans": spans, "score": "62"}
    )
    row = Annotation.objects.get(assignment=assignment)
    assert (row.criterion, row.value_int) == ("esa", 62)
    [score_row] = selectors.span_score_rows(project)
    assert score_row.score == 62
    assert [(s.start, s.end, s.severity, s.origin) for s in score_row.errors] == [
        (0, 6, "major", "annotator")
    ]


def test_judge_suggestions_replace_their_own_and_drop_spans_outside_the_text(mqm):
    from annotation.domain.span_marking import SuggestedSpan

    project, _ = mqm
    task = Task.objects.get(project=project, translation_unit__external_id="s1b")
    spans = [
        SuggestedSpan("target", 0, 6, "fluency/spelling", "minor", "judge words"),
        SuggestedSpan("target", 0, 999, "style", "minor"),
        SuggestedSpan("target", 0, 6, "made-up", "minor"),
    ]
    assert services.span_suggestions_replace(task=task, source="llm", spans=spans) == 1
    assert services.span_suggestions_replace(task=task, source="llm", spans=spans[:1]) == 1
    assert SpanSuggestion.objects.filter(task=task, source="llm").count() == 1
