"""The prompt templates page, and a benchmark run asked with a set of templates from the run page."""

from __future__ import annotations

import pytest

from evaluation.models import BenchmarkRun, PromptTemplate
from tests.evaluation.inference.openai_stub_server import Reply, completion_body
from tests.evaluation.services.builders import last_user, make_endpoint, make_question_dataset

pytestmark = pytest.mark.django_db


def test_a_researcher_adds_a_papers_prompt_and_a_bad_one_is_refused_in_both_languages(role_client):
    client = role_client("researcher")
    page = client.get("/evaluation/prompt-templates/").content.decode()
    assert "id-1" in page and "mt-id-1" in page and "Timbang (shipped)" in page

    added = client.post(
        "/evaluation/prompt-templates/",
        {
            "slug": "idcsqa-p1",
            "task": "mcq",
            "language": "id",
            "instruction": "Pilih jawaban yang benar.",
            "body": "{{question}}\n{{choices}}\nJawaban:",
            "note": "id-csqa, prompt 1",
        },
        follow=True,
    ).content.decode()
    assert "Prompt template idcsqa-p1 added." in added and "id-csqa, prompt 1" in added
    assert PromptTemplate.objects.get(slug="idcsqa-p1").created_by == client.user

    bad = {"slug": "half", "task": "translation", "language": "en", "body": "Translate: {{text}}"}
    refused = client.post("/evaluation/prompt-templates/", bad).content.decode()
    assert "the template&#x27;s text is incomplete" in refused and "{{source}}, {{target}}" in refused
    refused_id = client.post("/evaluation/prompt-templates/", bad, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "teks templat belum lengkap" in refused_id
    again = client.post(
        "/evaluation/prompt-templates/", {**bad, "slug": "id-1", "body": "{{source}}{{target}}{{text}}"}
    )
    assert "a prompt template with the id id-1 exists already" in again.content.decode()
    assert PromptTemplate.objects.count() == 1


def test_a_run_from_the_page_asks_with_two_templates_and_shows_each_beside_the_combined_figure(
    role_client, server, django_capture_on_commit_callbacks
):
    def english_only(body):
        text = last_user(body)
        answer = {"bambu": "C", "kemerdekaan": "D", "terbesar": "E"}
        letter = next(v for k, v in answer.items() if k in text)
        return Reply(body=completion_body(letter if "Question:" in text else "A"))

    server.responder = english_only
    client = role_client("researcher")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/evaluation/runs/new/",
            {
                "kind": "benchmark",
                "benchmark-task": "mcq",
                "benchmark-endpoint": make_endpoint(server, "student").pk,
                "benchmark-dataset": make_question_dataset().pk,
                "benchmark-judge_language": "en",
                "benchmark-prompt_language": "id",
                "benchmark-eval_split": "test",
                "benchmark-templates": ["en-1", "id-2"],
                "benchmark-aggregation": "max",
            },
        )
    assert response.status_code == 302, response.content.decode()[:2000]
    run = BenchmarkRun.objects.get()
    assert (run.n_total, run.config["aggregation"]) == (6, "max")
    page = client.get(f"/evaluation/runs/benchmark/{run.pk}/").content.decode()
    assert "Prompt templates: en-1, id-2 · every item asked with each; the best template (LoraxBench)" in page
    assert 'data-testid="by-template"' in page and "Combined" in page
    assert "Overall (best template): 1.000" in page
    page_id = client.get(f"/evaluation/runs/benchmark/{run.pk}/", HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "Templat terbaik: Bahasa Indonesia en-1" in page_id
    assert "Gabungan" in page_id
