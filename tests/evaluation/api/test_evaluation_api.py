"""The evaluation API: endpoints without keys, starting and inspecting runs, results as JSON and CSV."""

from __future__ import annotations

import csv
import io

import pytest

from evaluation.models import ModelEndpoint
from tests.evaluation.inference.openai_stub_server import Reply, completion_body
from tests.evaluation.services.builders import (
    fair_judge,
    make_endpoint,
    make_pair_dataset,
    make_prompt_dataset,
)

pytestmark = pytest.mark.django_db


def test_annotators_and_anonymous_users_are_refused(api_client_for, client):
    annotator = api_client_for("annotator")
    assert annotator.get("/api/v1/evaluation/endpoints/").status_code == 403
    assert annotator.post("/api/v1/evaluation/generation-runs/start", {}, format="json").status_code == 403
    assert client.get("/api/v1/evaluation/judge-runs/").status_code in (401, 403)


def test_endpoint_create_refuses_a_key_and_never_returns_one(api_client_for, monkeypatch):
    api = api_client_for("researcher")
    bad = api.post(
        "/api/v1/evaluation/endpoints/create",
        {
            "slug": "hosted",
            "base_url": "https://api.example.com/v1",
            "model_id": "m",
            "api_key_env": "sk-abc123def456ghi789",
        },
        format="json",
    )
    assert bad.status_code == 400
    assert "api_key_env" in bad.json()
    assert not ModelEndpoint.objects.exists()
    # The service's own refusals come filled in and in English, whatever the client's language.
    bad = api.post(
        "/api/v1/evaluation/endpoints/create",
        {"slug": "hosted", "base_url": "https://api.example.com/v1", "model_id": "m", "queue": "gpu"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="id",
    )
    assert bad.json() == {"queue": ["Use 'default' or 'gpu.<name>' (lower case, digits, - and _)."]}

    good = api.post(
        "/api/v1/evaluation/endpoints/create",
        {
            "slug": "hosted",
            "base_url": "https://api.example.com/v1",
            "model_id": "m",
            "api_key_env": "TIMBANG_MODEL_KEY_HOSTED",
        },
        format="json",
    )
    assert good.status_code == 201, good.json()
    monkeypatch.setenv("TIMBANG_MODEL_KEY_HOSTED", "the-real-secret-value")
    listed = api.get("/api/v1/evaluation/endpoints/").content.decode()
    assert "TIMBANG_MODEL_KEY_HOSTED" in listed and "the-real-secret-value" not in listed

    endpoint_id = good.json()["id"]
    patched = api.patch(
        f"/api/v1/evaluation/endpoints/{endpoint_id}/update", {"queue": "gpu.hosted"}, format="json"
    )
    assert patched.status_code == 200 and patched.json()["queue"] == "gpu.hosted"
    assert (
        api.patch(
            f"/api/v1/evaluation/endpoints/{endpoint_id}/update", {"queue": "gpu"}, format="json"
        ).status_code
        == 400
    )


def test_generation_run_start_inspect_and_cancel(api_client_for, server, django_capture_on_commit_callbacks):
    api = api_client_for("researcher")
    dataset = make_prompt_dataset(n_prompts=2, two_turn_first=False)
    make_endpoint(server, "gen")
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(
            "/api/v1/evaluation/generation-runs/start",
            {"dataset": dataset.pk, "endpoints": ["gen"], "options": {"seed": 1}},
            format="json",
        )
    assert started.status_code == 201, started.json()
    run_id = started.json()["id"]

    detail = api.get(f"/api/v1/evaluation/generation-runs/{run_id}").json()
    assert (detail["status"], detail["n_done"], detail["n_total"], detail["progress_percent"]) == (
        "succeeded",
        2,
        2,
        100,
    )
    cancel = api.post(f"/api/v1/evaluation/generation-runs/{run_id}/cancel")
    assert cancel.json() == {"cancelled": False, "status": "succeeded"}
    assert api.get("/api/v1/evaluation/robot-runs/1").status_code == 404

    bad = api.post(
        "/api/v1/evaluation/generation-runs/start",
        {"dataset": dataset.pk, "endpoints": ["gen"], "options": {"colour": 1}},
        format="json",
    )
    assert bad.status_code == 400 and "unknown option" in bad.json()["detail"]
    # The API answers in English whatever the client's language (the run page translates).
    bad = api.post(
        "/api/v1/evaluation/generation-runs/start",
        {"dataset": dataset.pk, "endpoints": ["gen"], "options": {"chunk_size": 0}},
        format="json",
        HTTP_ACCEPT_LANGUAGE="id",
    )
    assert (
        bad.status_code == 400 and bad.json()["detail"] == "chunk_size must be an integer in 1..1000, got 0"
    )


def test_judge_run_results_as_json_and_csv(api_client_for, server, django_capture_on_commit_callbacks):
    server.responder = fair_judge
    api = api_client_for("project_manager")
    dataset = make_pair_dataset(n_prompts=2)
    make_endpoint(server, "judge")
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(
            "/api/v1/evaluation/judge-runs/start",
            {"judge_kind": "pairwise", "endpoint": "judge", "dataset": dataset.pk},
            format="json",
        )
    assert started.status_code == 201, started.json()
    run_id = started.json()["id"]

    detail = api.get(f"/api/v1/evaluation/judge-runs/{run_id}").json()
    assert detail["summary"]["verdicts"]["A"] == 2
    assert detail["summary"]["consistency"]["consistent"] == 2
    judgments = api.get(f"/api/v1/evaluation/judge-runs/{run_id}/judgments").json()
    assert judgments["count"] == 4
    assert {j["order"] for j in judgments["results"]} == {"ab", "ba"}

    download = api.get(f"/api/v1/evaluation/judge-runs/{run_id}/verdicts.csv")
    assert download["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(download.streaming_content).decode())))
    assert len(rows) == 2 and {r["verdict"] for r in rows} == {"A"} and rows[0]["response_a"].isdigit()
    judgments_csv = api.get(f"/api/v1/evaluation/judge-runs/{run_id}/judgments.csv")
    assert len(list(csv.DictReader(io.StringIO(b"".join(judgments_csv.streaming_content).decode())))) == 4


def test_the_openapi_schema_lists_the_run_operations(api_client_for):
    schema = api_client_for("researcher").get("/api/schema/").content.decode()
    assert "/api/v1/evaluation/judge-runs/start" in schema
    assert "/api/v1/evaluation/benchmark-runs/{run_id}/results.csv" in schema


def test_a_judge_run_started_through_the_api_chooses_the_tie_family(
    api_client_for, server, django_capture_on_commit_callbacks
):
    server.responder = lambda body: Reply(body=completion_body('{"explanation": "sama", "score": "tie"}'))
    api = api_client_for("researcher")
    dataset = make_pair_dataset(n_prompts=1)
    make_endpoint(server, "judge")
    bad = api.post(
        "/api/v1/evaluation/judge-runs/start",
        {"judge_kind": "pairwise", "endpoint": "judge", "dataset": dataset.pk, "pairwise_family": "maybe"},
        format="json",
    )
    assert bad.status_code == 400 and "pairwise_family" in bad.json()
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(
            "/api/v1/evaluation/judge-runs/start",
            {
                "judge_kind": "pairwise",
                "endpoint": "judge",
                "dataset": dataset.pk,
                "pairwise_family": "with_tie",
            },
            format="json",
        )
    assert started.status_code == 201, started.json()
    assert started.json()["pairwise_family"] == "with_tie"
    detail = api.get(f"/api/v1/evaluation/judge-runs/{started.json()['id']}").json()
    assert detail["summary"]["verdicts"]["tie"] == 1 and detail["summary"]["n_parse_errors"] == 0


def test_benchmark_results_csv_ends_with_the_raw_output_and_the_rule(
    api_client_for, server, django_capture_on_commit_callbacks
):
    from evaluation.serializers import BENCHMARK_RESULT_FIELDS
    from evaluation.services import benchmark_run_start
    from tests.evaluation.services.builders import make_question_dataset

    server.responder = lambda body: Reply(body=completion_body("Hmm. Jawabannya B"))
    with django_capture_on_commit_callbacks(execute=True):
        run = benchmark_run_start(
            task="mcq", endpoint=make_endpoint(server, "mcq"), dataset=make_question_dataset()
        )
    api = api_client_for("researcher")
    download = api.get(f"/api/v1/evaluation/benchmark-runs/{run.pk}/results.csv")
    reader = csv.DictReader(io.StringIO(b"".join(download.streaming_content).decode()))
    # The columns kept their order; the two new ones come last.
    assert reader.fieldnames == [*BENCHMARK_RESULT_FIELDS, "raw_output", "rule"]
    rows = list(reader)
    assert rows and all(
        (r["raw_output"], r["rule"], r["prediction"]) == ("Hmm. Jawabannya B", "own_answer", "B")
        for r in rows
    )


def test_a_generation_run_takes_a_system_prompt_through_the_api(
    api_client_for, server, django_capture_on_commit_callbacks
):
    api = api_client_for("researcher")
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    make_endpoint(server, "gen")
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(
            "/api/v1/evaluation/generation-runs/start",
            {
                "dataset": dataset.pk,
                "endpoints": ["gen"],
                "options": {"system_prompt": "Anda adalah asisten yang membantu."},
            },
            format="json",
        )
    assert started.status_code == 201, started.json()
    assert started.json()["config"]["system_prompt"] == "Anda adalah asisten yang membantu."
    assert server.requests[0].body["messages"] == [
        {"role": "system", "content": "Anda adalah asisten yang membantu."},
        {"role": "user", "content": "Pertanyaan 0"},
    ]
    bad = api.post(
        "/api/v1/evaluation/generation-runs/start",
        {"dataset": dataset.pk, "endpoints": ["gen"], "options": {"system_prompt": 7}},
        format="json",
    )
    assert bad.status_code == 400 and bad.json()["detail"] == "system_prompt must be text, got int"


def test_graded_scores_are_whole_numbers_or_decimals_in_json_and_csv(
    api_client_for, server, django_capture_on_commit_callbacks
):
    from datasets_app.models import Response

    def grade(body):
        text = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        return Reply(body=completion_body("Rating: [[7.5]]" if "Jawaban satu" in text else "Skor: 8"))

    server.responder = grade
    api = api_client_for("researcher")
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    prompt = dataset.prompts.get()
    Response.objects.create(prompt=prompt, model_name="m1", turns=["Jawaban satu"])
    Response.objects.create(prompt=prompt, model_name="m2", turns=["Jawaban dua"])
    make_endpoint(server, "grader")
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post(
            "/api/v1/evaluation/judge-runs/start",
            {"judge_kind": "single_grade", "endpoint": "grader", "dataset": dataset.pk},
            format="json",
        )
    run_id = started.json()["id"]
    detail = api.get(f"/api/v1/evaluation/judge-runs/{run_id}").json()
    # (7.5 + 8) / 2
    assert detail["summary"]["mean_score"] == 7.75
    assert detail["config"]["sampling_sources"]["temperature"] == "template"
    results = api.get(f"/api/v1/evaluation/judge-runs/{run_id}/judgments").json()["results"]
    scores = sorted((j["score"] for j in results), key=float)
    assert scores == [7.5, 8] and type(scores[1]) is int  # a whole score stays an integer in the JSON
    download = api.get(f"/api/v1/evaluation/judge-runs/{run_id}/judgments.csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(download.streaming_content).decode())))
    assert sorted(r["score"] for r in rows) == ["7.5", "8"]
