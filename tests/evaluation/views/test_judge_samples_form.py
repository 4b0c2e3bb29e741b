"""The run-start page's Verdicts per item and the endpoint page's Model family: what the judge lab needs."""

from __future__ import annotations

import pytest

from evaluation.models import JudgeRun, ModelEndpoint
from tests.evaluation.services.builders import fair_judge, make_endpoint, make_pair_dataset

pytestmark = pytest.mark.django_db


def _judge_post(**fields) -> dict[str, object]:
    return {"kind": "judge", **{f"judge-{name}": value for name, value in fields.items()}}


def test_a_sampled_judge_run_from_the_page(role_client, server, django_capture_on_commit_callbacks):
    server.responder = fair_judge
    client = role_client("researcher")
    assert 'name="judge-samples"' in client.get("/evaluation/runs/new/?kind=judge").content.decode()
    post = _judge_post(
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "judge").pk,
        dataset=make_pair_dataset(n_prompts=2).pk,
        order_mode="both",
        language="en",
        on_one_error="use_other",
        temperature="0.7",
        seed="4",
        samples="3",
    )
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/evaluation/runs/new/", post)
    run = JudgeRun.objects.get()
    assert run.config["samples"] == 3 and run.status == "succeeded"
    # 2 pairs x 3 samples x 2 orders, seeds 4, 5, 6.
    assert len(server.requests) == 12
    assert sorted({r.body["seed"] for r in server.requests}) == [4, 5, 6]
    assert sorted(run.pair_verdicts.values_list("sample", flat=True)) == [0, 0, 1, 1, 2, 2]


def test_sampling_without_a_temperature_is_refused_in_indonesian(role_client, server):
    client = role_client("researcher")
    client.cookies["django_language"] = "id"
    post = _judge_post(
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "judge").pk,
        dataset=make_pair_dataset(n_prompts=1).pk,
        order_mode="both",
        language="en",
        on_one_error="use_other",
        temperature="0",
        samples="3",
    )
    page = client.post("/evaluation/runs/new/", post, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "mengambil 3 putusan per butir memerlukan suhu di atas 0" in page
    assert not JudgeRun.objects.exists()


def test_the_endpoint_page_stores_the_model_family(role_client):
    client = role_client("researcher")
    post = {
        "slug": "qwen-juri",
        "backend": "openai",
        "base_url": "http://127.0.0.1:8000/v1",
        "model_id": "qwen",
        "queue": "default",
        "max_concurrency": "2",
        "backend_options": "{}",
        "is_active": "on",
        "family": " qwen ",
    }
    assert client.post("/evaluation/endpoints/new/", post).status_code == 302
    endpoint = ModelEndpoint.objects.get(slug="qwen-juri")
    assert endpoint.family == "qwen"
    assert 'value="qwen"' in client.get(f"/evaluation/endpoints/{endpoint.pk}/edit/").content.decode()
