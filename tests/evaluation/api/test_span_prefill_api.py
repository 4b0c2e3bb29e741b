"""The span pre-fill API: bad input named and nothing queued; the parse statuses per endpoint."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation import services
from evaluation.models import ModelEndpoint, SpanJudgment
from tests.annotation.conftest import build_translation_dataset

pytestmark = pytest.mark.django_db


def test_bad_requests_are_refused_and_counts_are_read(api_client_for, django_capture_on_commit_callbacks):
    dataset = build_translation_dataset(n_units=2, translated=True)
    project = services.project_create(
        dataset=dataset, name="mqm api", kind="translation_mqm", overlap=1, seed=1
    )
    endpoint = ModelEndpoint.objects.create(slug="far-away", base_url="http://127.0.0.1:9/v1", model_id="m")
    api = api_client_for("researcher")
    url = reverse("api-span-prefill", args=[project.pk])
    with django_capture_on_commit_callbacks() as queued:
        refused = api.post(url, {"endpoint": "nobody", "language": "fr"}, format="json")
    assert refused.status_code == 400 and set(refused.json()) == {"endpoint", "language"}
    assert queued == []
    task = project.tasks.first()
    SpanJudgment.objects.create(
        endpoint=endpoint, task=task, parse_status="error", parse_reason="empty output"
    )
    assert api.get(url).json() == {
        "counts": [{"endpoint": "far-away", "parse_status": "error", "tasks": 1, "spans": 0}]
    }
    likert = services.project_create(
        dataset=dataset, name="not spans", kind="translation_review", overlap=1, seed=1
    )
    assert api.get(reverse("api-span-prefill", args=[likert.pk])).status_code == 404
    assert api_client_for("annotator").get(url).status_code == 403
