"""Pre-filled error spans from a real small model (SmolLM2-135M behind llama.cpp's server): every task gets
a judgment with its raw reply and parse status; parsed spans become suggestions on the task page, which the
annotator accepts."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import ErrorSpan, SpanSuggestion
from datasets_app.models import Dataset, TranslationUnit
from evaluation.models import ModelEndpoint, SpanJudgment
from evaluation.services import backend_cache_clear
from evaluation.services.span_prefill import span_prefill_run

pytestmark = pytest.mark.django_db

# Written for this test: English sources, Indonesian translations with an error each (a wrong number; a
# sentence left untranslated, which a model quoting the source points at rightly).
UNITS = [
    ("The price of rice rose by 5 percent.", "Harga beras naik 50 persen."),
    ("She did not come yesterday.", "She did not come yesterday."),
]


@pytest.fixture
def chat_model(llamacpp_server, llamacpp_model_id):
    endpoint = ModelEndpoint.objects.create(
        slug="smollm2",
        base_url=llamacpp_server,
        model_id=llamacpp_model_id,
        max_concurrency=2,
        backend_options={"structured_output": "json_object", "timeout_s": 120, "max_attempts": 2},
    )
    yield endpoint
    backend_cache_clear()


@pytest.fixture
def project(make_user):
    dataset = Dataset.objects.create(name="prefill", kind=Dataset.Kind.TRANSLATIONS)
    for i, (source, target) in enumerate(UNITS):
        TranslationUnit.objects.create(
            dataset=dataset,
            external_id=f"p{i}",
            source_text=source,
            source_language="eng",
            target_language="ind",
            translation_text=target,
            translator_name="mt-a",
            status="accepted",
        )
    annotator = make_user("annotator")
    project = services.project_create(
        dataset=dataset, name="prefill", kind="translation_mqm", overlap=1, seed=2
    )
    services.project_member_add(project=project, user=annotator, group=project.groups.get())
    services.project_activate(project=project)
    project.annotator = annotator
    return project


def test_the_model_prefills_spans_with_a_parse_status_and_the_annotator_accepts_one(
    client, project, chat_model
):
    result = span_prefill_run(project=project, endpoint=chat_model, lang="en")
    judgments = list(SpanJudgment.objects.filter(task__project=project))
    assert result.tasks == 2 and len(judgments) == 2
    assert result.ok + result.errors == 2
    for judgment in judgments:
        assert judgment.parse_status in ("ok", "error")
        assert judgment.raw_output  # the reply is kept whatever its status
        if judgment.parse_status == "error":
            assert judgment.n_spans == 0 and judgment.parse_reason
    suggested = list(SpanSuggestion.objects.filter(task__project=project, source="llm"))
    assert len(suggested) == result.suggestions
    for s in suggested:
        target = s.task.translation_unit.translation_text
        assert 0 <= s.start < s.end <= len(target) and s.severity in ("minor", "major")
    # Run again: the judgments are updated in place, no suggestion is duplicated.
    again = span_prefill_run(project=project, endpoint=chat_model, lang="en")
    assert SpanJudgment.objects.filter(task__project=project).count() == 2
    assert SpanSuggestion.objects.filter(task__project=project, source="llm").count() == again.suggestions

    # At temperature 0 the model quotes the untranslated sentence, which is in the translation.
    assert suggested, f"no span: {[(j.parse_status, j.raw_output, j.n_dropped) for j in judgments]}"
    suggestion = SpanSuggestion.objects.filter(task__project=project, source="llm").first()
    annotator = project.annotator
    client.force_login(annotator)
    assignment = services.assignment_claim(project=project, user=annotator)
    while assignment.task_id != suggestion.task_id:
        services.assignment_submit(token=assignment.token, user=annotator, payload={"no_error": True})
        assignment = services.assignment_claim(project=project, user=annotator)
    page = client.get(reverse("annotation:task", args=[assignment.token]))
    data = page.context["span_data"]
    assert any(g["id"] == suggestion.pk and g["source"] == "llm" for g in data["suggestions"])
    accepted = {
        "side": "target",
        "start": suggestion.start,
        "end": suggestion.end,
        "category": suggestion.category,
        "severity": suggestion.severity,
        "suggestion": suggestion.pk,
    }
    client.post(reverse("annotation:submit", args=[assignment.token]), {"spans": json.dumps([accepted])})
    span = ErrorSpan.objects.get(assignment=assignment, suggestion=suggestion)
    assert (span.origin, span.outcome) == ("suggested", "accepted")


def test_the_command_and_the_page_run_the_same_prefill(
    client, project, chat_model, make_user, capsys, django_capture_on_commit_callbacks
):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    call_command("span_prefill", project=project.pk, endpoint="smollm2", limit=1, json=True)
    counts = json.loads(capsys.readouterr().out)
    assert counts["tasks"] == 1 and counts["ok"] + counts["errors"] == 1
    with pytest.raises(CommandError) as caught:
        call_command("span_prefill", project=project.pk, endpoint="nobody", json=True)
    assert caught.value.returncode == 2 and "--endpoint" in str(caught.value)

    client.force_login(make_user("project_manager"))
    with django_capture_on_commit_callbacks(execute=True):
        page = client.post(
            reverse("evaluation:span-prefill", args=[project.pk]),
            {"endpoint": chat_model.pk, "language": "id"},
        )
    assert page.status_code == 302
    shown = client.get(reverse("evaluation:span-prefill", args=[project.pk]))
    assert SpanJudgment.objects.filter(task__project=project, language="id").count() == 2
    assert 'data-testid="span-prefill-counts"' in shown.content.decode()
