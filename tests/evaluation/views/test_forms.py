"""Endpoint and run-start pages: thin forms over the services, errors on the fields, nothing half-started."""

from __future__ import annotations

import pytest

from datasets_app.models import Response
from evaluation.models import BenchmarkResult, BenchmarkRun, GenerationRun, JudgeRun, ModelEndpoint, RunChunk
from evaluation.services.endpoints import endpoint_own_queue
from tests.evaluation.inference.openai_stub_server import Reply, completion_body
from tests.evaluation.services.builders import (
    fair_judge,
    last_user,
    make_endpoint,
    make_pair_dataset,
    make_prompt_dataset,
    make_translation_dataset,
)

pytestmark = pytest.mark.django_db

PASTED_KEY = "sk-proj-4f9a8b7c6d5e4f3a2b1c"


def _endpoint_post(**overrides) -> dict[str, object]:
    data = {
        "slug": "sahabat-9b",
        "backend": "openai",
        "base_url": "http://127.0.0.1:8000/v1",
        "model_id": "GoToCompany/sahabat-ai-9b",
        "queue": "default",
        "max_concurrency": "4",
        "temperature": "0.2",
        "top_p": "",
        "top_k": "40",
        "max_tokens": "",
        "seed": "",
        "backend_options": '{"timeout_s": 30}',
        "api_key_env": "TIMBANG_MODEL_KEY_SAHABAT",
        "is_active": "on",
    }
    data.update(overrides)
    return data


def _errors(response) -> dict[str, list[str]]:
    return {name: list(messages) for name, messages in response.context["form"].errors.items()}


def _run_post(kind: str, **fields) -> dict[str, object]:
    """A run-start POST: the page's forms carry their kind as a prefix."""
    return {"kind": kind, **{f"{kind}-{name}": value for name, value in fields.items()}}


def test_an_endpoint_is_created_and_edited_through_its_pages(role_client):
    client = role_client("researcher")
    assert 'name="csrfmiddlewaretoken"' in client.get("/evaluation/endpoints/new/").content.decode()

    response = client.post("/evaluation/endpoints/new/", _endpoint_post())
    assert response.status_code == 302 and response["Location"] == "/evaluation/endpoints/"
    endpoint = ModelEndpoint.objects.get(slug="sahabat-9b")
    assert endpoint.created_by == client.user
    assert (endpoint.model_id, endpoint.max_concurrency, endpoint.api_key_env) == (
        "GoToCompany/sahabat-ai-9b",
        4,
        "TIMBANG_MODEL_KEY_SAHABAT",
    )
    # Only the sampling fields that were filled are stored; the rest keep the study defaults.
    assert endpoint.sampling_defaults == {"temperature": 0.2, "top_k": 40}
    assert endpoint.backend_options == {"timeout_s": 30}
    listing = client.get("/evaluation/endpoints/").content.decode()
    assert f"/evaluation/endpoints/{endpoint.pk}/edit/" in listing

    edit_url = f"/evaluation/endpoints/{endpoint.pk}/edit/"
    page = client.get(edit_url).content.decode()
    assert 'value="TIMBANG_MODEL_KEY_SAHABAT"' in page and 'value="40"' in page

    # The slug is fixed once responses may carry it: a posted slug is ignored.
    response = client.post(
        edit_url,
        _endpoint_post(slug="renamed", temperature="", top_p="0.9", max_concurrency="2", is_active=""),
    )
    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.slug == "sahabat-9b"
    assert endpoint.sampling_defaults == {"top_k": 40, "top_p": 0.9}
    assert (endpoint.max_concurrency, endpoint.is_active) == (2, False)


def test_a_pasted_key_is_refused_on_its_field_and_never_stored_or_shown(role_client):
    client = role_client("project_manager")
    response = client.post("/evaluation/endpoints/new/", _endpoint_post(api_key_env=PASTED_KEY))
    assert response.status_code == 200
    assert "looks like an API key" in " ".join(_errors(response)["api_key_env"])
    assert not ModelEndpoint.objects.exists()
    assert PASTED_KEY not in response.content.decode()

    endpoint = ModelEndpoint.objects.create(
        slug="kept", model_id="m", base_url="http://x/v1", api_key_env="TIMBANG_MODEL_KEY_KEPT"
    )
    response = client.post(
        f"/evaluation/endpoints/{endpoint.pk}/edit/",
        _endpoint_post(slug="kept", api_key_env=f"Bearer {PASTED_KEY}"),
    )
    assert response.status_code == 200 and "api_key_env" in _errors(response)
    assert PASTED_KEY not in response.content.decode()
    endpoint.refresh_from_db()
    assert (endpoint.api_key_env, endpoint.model_id) == ("TIMBANG_MODEL_KEY_KEPT", "m")


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"top_p": "1.5"}, "top_p", "top_p harus bilangan dalam (0, 1], bukan 1.5"),
        ({"queue": "gpu"}, "queue", "Gunakan 'default' atau 'gpu.<nama>'"),
        ({"base_url": ""}, "base_url", "Endpoint yang kompatibel dengan OpenAI memerlukan URL dasar."),
        (
            {"backend_options": '{"batch_size": 4}'},
            "backend_options",
            "Opsi tidak dikenal untuk backend openai: batch_size; yang diizinkan:",
        ),
        (
            {"backend_options": '{"extra_headers": {"x-api-key": "abc"}}'},
            "backend_options",
            "tidak boleh berisi kredensial",
        ),
        ({"backend_options": "[1, 2]"}, "backend_options", "Opsi backend harus berupa objek."),
    ],
)
def test_service_validation_errors_read_in_indonesian_on_the_indonesian_page(
    role_client, overrides, field, message
):
    response = role_client("researcher").post(
        "/evaluation/endpoints/new/", _endpoint_post(**overrides), HTTP_ACCEPT_LANGUAGE="id"
    )
    assert response.status_code == 200
    assert message in " ".join(_errors(response)[field])
    assert not ModelEndpoint.objects.exists()


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"top_p": "1.5"}, "top_p", "top_p must be a number in (0, 1]"),
        ({"queue": "gpu"}, "queue", "Use 'default' or 'gpu.<name>'"),
        ({"base_url": ""}, "base_url", "needs a base URL"),
        ({"backend_options": '{"batch_size": 4}'}, "backend_options", "Unknown option(s) for the openai"),
        ({"backend_options": '{"extra_headers": {"x-api-key": "abc"}}'}, "backend_options", "credentials"),
        ({"backend_options": "[1, 2]"}, "backend_options", "must be an object"),
        ({"backend_options": "{not json"}, "backend_options", "valid JSON"),
    ],
)
def test_service_validation_errors_are_shown_on_their_fields(role_client, overrides, field, message):
    response = role_client("researcher").post("/evaluation/endpoints/new/", _endpoint_post(**overrides))
    assert response.status_code == 200
    assert message in " ".join(_errors(response)[field])
    assert not ModelEndpoint.objects.exists()


def test_a_generation_run_started_from_the_page_runs_and_redirects_to_it(
    role_client, server, django_capture_on_commit_callbacks
):
    client = role_client("researcher")
    dataset = make_prompt_dataset(n_prompts=2, two_turn_first=False)
    first, second = make_endpoint(server, "model-one"), make_endpoint(server, "model-two")
    page = client.get("/evaluation/runs/new/?kind=generation").content.decode()
    forms = page.split("<h1>Start a run</h1>", 1)[1]
    assert forms.count('name="csrfmiddlewaretoken"') == 3  # one per kind, each with its token
    assert 'id="start-generation" class="card" open' in forms

    post = _run_post(
        "generation",
        name="two models",
        dataset=dataset.pk,
        endpoints=[first.pk, second.pk],
        n_per_prompt=1,
        temperature="0.2",
        seed="7",
        max_tokens="64",
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/evaluation/runs/new/", post)

    run = GenerationRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/evaluation/runs/generation/{run.pk}/"
    run.refresh_from_db()
    assert (run.status, run.name, run.created_by) == ("succeeded", "two models", client.user)
    # 2 models x 2 single-turn prompts = 4 responses from 4 requests.
    assert (run.n_total, run.n_done) == (4, 4)
    assert Response.objects.filter(generation_run=run).count() == 4
    sent = server.requests[0].body
    # Set on the page: temperature, seed, max tokens; top_p comes from the study default 0.95.
    assert (sent["temperature"], sent["seed"], sent["max_tokens"], sent["top_p"]) == (0.2, 7, 64, 0.95)


def test_a_system_prompt_set_on_the_page_opens_every_conversation(
    role_client, server, django_capture_on_commit_callbacks
):
    client = role_client("researcher")
    endpoint = make_endpoint(server, "assistant")
    post = _run_post(
        "generation",
        dataset=make_prompt_dataset(n_prompts=1, two_turn_first=False).pk,
        endpoints=[endpoint.pk],
        n_per_prompt=1,
        system_prompt="You are a helpful assistant.",
    )
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/evaluation/runs/new/", post)
    assert GenerationRun.objects.get().config["system_prompt"] == "You are a helpful assistant."
    assert server.requests[0].body["messages"][0] == {
        "role": "system",
        "content": "You are a helpful assistant.",
    }


def test_a_judge_temperature_set_on_the_page_wins_over_the_templates(
    role_client, server, django_capture_on_commit_callbacks
):
    server.responder = lambda body: Reply(body=completion_body('{"explanation": "ok", "score": 6}'))
    client = role_client("researcher")
    dataset = make_prompt_dataset(n_prompts=1, two_turn_first=False)
    Response.objects.create(prompt=dataset.prompts.get(), model_name="m", turns=["x"])
    post = _run_post(
        "judge",
        judge_kind="single_grade",
        endpoint=make_endpoint(server, "grader", sampling_defaults={"top_k": 50}).pk,
        dataset=dataset.pk,
        order_mode="both",
        language="en",
        structured_output="on",
        on_one_error="use_other",
        temperature="0.3",
    )
    page = client.get("/evaluation/runs/new/?kind=judge").content.decode()
    assert "Empty: the template&#x27;s value, else the endpoint&#x27;s default." in page
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/evaluation/runs/new/", post)
    run = JudgeRun.objects.get()
    sent = server.requests[0].body
    # The page's 0.3 over the SeaBench template's 0; top_k from the endpoint, top_p Timbang's default.
    assert (sent["temperature"], sent["top_k"], sent["top_p"]) == (0.3, 50, 0.95)
    sources = run.config["sampling_sources"]
    assert (sources["temperature"], sources["top_k"], sources["top_p"]) == ("run", "endpoint", "default")


def test_a_judge_run_started_from_the_page_judges_both_orders(
    role_client, server, django_capture_on_commit_callbacks
):
    server.responder = fair_judge
    client = role_client("project_manager")
    judge = make_endpoint(server, "judge")
    dataset = make_pair_dataset(n_prompts=2)
    post = _run_post(
        "judge",
        judge_kind="pairwise",
        endpoint=judge.pk,
        dataset=dataset.pk,
        order_mode="both",
        language="en",
        structured_output="on",
        on_one_error="use_other",
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/evaluation/runs/new/", post)

    run = JudgeRun.objects.get()
    assert response["Location"] == f"/evaluation/runs/judge/{run.pk}/"
    run.refresh_from_db()
    assert (run.status, run.judge_kind, run.order_mode, run.template.language) == (
        "succeeded",
        "pairwise",
        "both",
        "en",
    )
    # 2 pairs x 2 orders = 4 judge calls; the fair judge prefers alpha's GOOD answer both times.
    assert len(server.requests) == 4
    assert sorted(run.pair_verdicts.values_list("verdict", "consistency")) == [("A", "consistent")] * 2


def test_a_single_order_judge_in_indonesian_from_the_page(
    role_client, server, django_capture_on_commit_callbacks
):
    server.responder = fair_judge
    client = role_client("researcher")
    post = _run_post(
        "judge",
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "judge").pk,
        dataset=make_pair_dataset(n_prompts=3).pk,
        order_mode="single_random",
        language="id",
        on_one_error="use_other",
        seed="3",
    )
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/evaluation/runs/new/", post)
    run = JudgeRun.objects.get()
    assert (run.order_mode, run.template.language, run.config["seed"]) == ("single_random", "id", 3)
    assert len(server.requests) == 3  # one order per pair
    assert all("[Respon 1]" in last_user(r.body) for r in server.requests)


def test_a_benchmark_run_started_from_the_page(role_client, server, django_capture_on_commit_callbacks):
    server.responder = lambda body: Reply(
        body=completion_body("Rujukan 0 giliran 1." if "Pertanyaan 0" in last_user(body) else "entah")
    )
    client = role_client("researcher")
    post = _run_post(
        "benchmark",
        task="open_qa",
        endpoint=make_endpoint(server, "qa").pk,
        dataset=make_prompt_dataset(n_prompts=2, two_turn_first=False).pk,
        scoring="substring",
        judge_language="en",
        prompt_language="id",
        k_shot="0",
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/evaluation/runs/new/", post)
    run = BenchmarkRun.objects.get()
    assert response["Location"] == f"/evaluation/runs/benchmark/{run.pk}/"
    assert (run.config["scoring"], run.config["match_rule"]) == ("substring", "substring")
    correct = dict(
        BenchmarkResult.objects.filter(benchmark_run=run).values_list("prompt__external_id", "correct")
    )
    assert correct == {"p0": True, "p1": False}


def test_the_whole_word_rule_chosen_on_the_page(role_client, server, django_capture_on_commit_callbacks):
    server.responder = lambda body: Reply(body=completion_body("Rujukan 0 giliran 1nya."))
    client = role_client("researcher")
    post = _run_post(
        "benchmark",
        task="open_qa",
        endpoint=make_endpoint(server, "qa").pk,
        dataset=make_prompt_dataset(n_prompts=1, two_turn_first=False).pk,
        scoring="substring",
        match_rule="whole_word",
        cloze_rule="mean",  # not cloze mode: left out, not refused
        judge_language="en",
        prompt_language="id",
    )
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/evaluation/runs/new/", post)
    run = BenchmarkRun.objects.get()
    assert run.config["match_rule"] == "whole_word" and "cloze_rule" not in run.config
    assert BenchmarkResult.objects.get(benchmark_run=run).correct is False
    page = client.get(f"/evaluation/runs/benchmark/{run.pk}/", HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "whole_word" in page


def test_a_translation_run_from_the_page_in_the_chosen_direction_with_its_language_table(
    role_client, server, django_capture_on_commit_callbacks
):
    server.responder = lambda body: Reply(body=completion_body("Kula tindak dhateng peken."))
    client = role_client("researcher")
    post = _run_post(
        "benchmark",
        task="translation",
        endpoint=make_endpoint(server, "mt").pk,
        dataset=make_translation_dataset().pk,
        direction="from_source",
        judge_language="en",
        prompt_language="id",
    )
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/evaluation/runs/new/", post)
    run = BenchmarkRun.objects.get()
    assert run.config["direction"] == "from_source"
    # The units' requests run concurrently, so in no set order.
    sent = [last_user(request.body) for request in server.requests]
    assert any("dari bahasa Indonesian ke bahasa Javanese (krama)" in text for text in sent)
    page = client.get(f"/evaluation/runs/benchmark/{run.pk}/", HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "chrF++ per bahasa" in page and "Bahasa Jawa / Krama" in page and "Rata-rata semua bahasa" in page


def _bad_run_start(client, server, kind: str, fields: dict, message: str, **headers):
    """Post a run-start form of ``kind`` with ``fields`` over a working base; the page shows ``message``
    among the form's errors and nothing is started."""
    endpoint = make_endpoint(server, "model-one")
    dataset = make_prompt_dataset(n_prompts=2)
    base = {
        "generation": {"dataset": dataset.pk, "endpoints": [endpoint.pk]},
        "judge": {"endpoint": endpoint.pk, "language": "en", "on_one_error": "use_other"},
        "benchmark": {
            "endpoint": endpoint.pk,
            "dataset": dataset.pk,
            "prompt_language": "id",
            "judge_language": "en",
        },
    }[kind]
    response = client.post("/evaluation/runs/new/", _run_post(kind, **base, **fields), **headers)
    assert response.status_code == 200
    assert message in " ".join(response.context["forms"][kind].non_field_errors())
    assert message in response.content.decode().replace("&#x27;", "'")
    assert not GenerationRun.objects.exists() and not JudgeRun.objects.exists()
    assert not BenchmarkRun.objects.exists() and not RunChunk.objects.exists()
    return response


@pytest.mark.parametrize(
    ("kind", "fields", "message"),
    [
        ("generation", {"n_per_prompt": 1, "top_p": "1.5"}, "top_p must be a number in (0, 1]"),
        ("generation", {"n_per_prompt": 1, "chunk_size": "0"}, "chunk_size must be an integer in 1..1000"),
        ("judge", {"judge_kind": "pairwise", "order_mode": "both"}, "give either a dataset or an annotation"),
        ("benchmark", {"task": "open_qa", "scoring": "judge"}, "needs a judge endpoint"),
        ("benchmark", {"task": "mcq", "scoring": "chrf"}, "scoring for mcq must be one of extract, logprob"),
        (
            "benchmark",
            {"task": "mcq", "mode": "cloze"},
            "mode cloze scores options by log-probability, which the openai backend of model-one cannot do",
        ),
    ],
)
def test_a_bad_option_shows_an_error_and_starts_nothing(role_client, server, kind, fields, message):
    response = _bad_run_start(role_client("researcher"), server, kind, fields, message)
    assert response.context["selected"] == kind  # the form with the error is the open one


@pytest.mark.parametrize(
    ("kind", "fields", "message"),
    [
        ("generation", {"n_per_prompt": 1, "top_p": "1.5"}, "top_p harus bilangan dalam (0, 1], bukan 1.5"),
        (
            "generation",
            {"n_per_prompt": 1, "chunk_size": "0"},
            "ukuran potongan (chunk_size) harus bilangan bulat 1..1000, bukan 0",
        ),
        (
            "judge",
            {"judge_kind": "pairwise", "order_mode": "both"},
            "pilih dataset atau proyek anotasi, salah satu saja",
        ),
        (
            "benchmark",
            {"task": "open_qa", "scoring": "judge"},
            "QA terbuka yang dinilai juri memerlukan model juri",
        ),
        (
            "benchmark",
            {"task": "mcq", "scoring": "chrf"},
            "penilaian untuk mcq harus salah satu dari extract, logprob",
        ),
        (
            "benchmark",
            {"task": "translation", "mode": "cloze"},
            "mode 'cloze' untuk pilihan ganda; run translation memakai chat",
        ),
        ("benchmark", {"task": "open_qa", "back_translate": "on"}, "terjemahan balik (back_translate) hanya"),
        (
            "benchmark",
            {"task": "mcq", "mode": "logprob"},
            "yang tidak bisa dilakukan backend openai milik model-one",
        ),
    ],
)
def test_a_bad_option_is_named_in_indonesian_on_the_indonesian_page(
    role_client, server, kind, fields, message
):
    _bad_run_start(role_client("researcher"), server, kind, fields, message, HTTP_ACCEPT_LANGUAGE="id")


def test_only_project_managers_and_researchers_reach_the_forms(client, role_client, server):
    endpoint = make_endpoint(server, "model-one")
    urls = [
        "/evaluation/endpoints/new/",
        f"/evaluation/endpoints/{endpoint.pk}/edit/",
        "/evaluation/runs/new/",
    ]
    for url in urls:
        assert client.get(url)["Location"].startswith("/accounts/login/")
    annotator = role_client("annotator")
    for url in urls:
        assert annotator.get(url).status_code == 403
    assert annotator.post("/evaluation/endpoints/new/", _endpoint_post()).status_code == 403
    post = _run_post("generation", dataset=make_prompt_dataset().pk, endpoints=[endpoint.pk], n_per_prompt=1)
    assert annotator.post("/evaluation/runs/new/", post).status_code == 403
    assert ModelEndpoint.objects.count() == 1 and not GenerationRun.objects.exists()


def test_the_run_form_starts_a_with_tie_judge(role_client, server, django_capture_on_commit_callbacks):
    server.responder = fair_judge
    client = role_client("researcher")
    page = client.get("/evaluation/runs/new/").content.decode()
    assert 'name="judge-pairwise_family"' in page and 'value="with_tie"' in page
    post = _run_post(
        "judge",
        judge_kind="pairwise",
        endpoint=make_endpoint(server, "judge").pk,
        dataset=make_pair_dataset(n_prompts=1).pk,
        order_mode="both",
        pairwise_family="with_tie",
        language="en",
        on_one_error="use_other",
    )
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/evaluation/runs/new/", post)
    run = JudgeRun.objects.get()
    assert (run.pairwise_family, run.template.name) == ("with_tie", "with_tie")
    assert all('"score": "A", "B" or "tie"}' in last_user(r.body) for r in server.requests)


def test_an_endpoint_left_without_a_queue_gets_its_own_and_a_named_queue_is_kept(role_client):
    client = role_client("researcher")
    assert client.post("/evaluation/endpoints/new/", _endpoint_post(queue="")).status_code == 302
    assert ModelEndpoint.objects.get(slug="sahabat-9b").queue == "gpu.sahabat-9b"
    response = client.post("/evaluation/endpoints/new/", _endpoint_post(slug="Shared_One", queue="gpu.a100"))
    assert response.status_code == 302
    assert ModelEndpoint.objects.get(slug="Shared_One").queue == "gpu.a100"
    assert endpoint_own_queue("Shared_One") == "gpu.shared_one"
