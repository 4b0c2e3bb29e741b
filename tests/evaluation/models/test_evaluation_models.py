"""Constraints the database enforces on evaluation rows."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from datasets_app.models import Response
from evaluation.domain.judge_templates import DEFAULT_TEMPLATES
from evaluation.models import GenerationRun, JudgeTemplate, Judgment, looks_like_secret
from evaluation.services.judging import judge_template_default
from tests.evaluation.services.builders import make_pair_dataset

pytestmark = pytest.mark.django_db


def test_the_shipped_templates_are_seeded_as_version_one():
    rows = set(JudgeTemplate.objects.values_list("kind", "language", "version"))
    assert {(kind, language, 1) for kind, language in DEFAULT_TEMPLATES} <= rows


def test_a_generated_response_is_unique_per_prompt_model_and_run():
    dataset = make_pair_dataset(n_prompts=1)
    prompt = dataset.prompts.get()
    run = GenerationRun.objects.create(dataset=dataset)
    Response.objects.create(
        prompt=prompt, model_name="m", turns=["x"], origin="generated", generation_run=run
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        Response.objects.create(
            prompt=prompt, model_name="m", turns=["y"], origin="generated", generation_run=run
        )
    other_run = GenerationRun.objects.create(dataset=dataset)
    Response.objects.create(
        prompt=prompt, model_name="m", turns=["z"], origin="generated", generation_run=other_run
    )


def test_a_judgment_is_unique_per_target_and_order_and_a_parse_error_holds_no_score():
    from evaluation.models import JudgeRun, ModelEndpoint

    dataset = make_pair_dataset(n_prompts=1)
    a, b = dataset.prompts.get().responses.order_by("model_name")
    endpoint = ModelEndpoint.objects.create(slug="j", base_url="http://127.0.0.1:9/v1", model_id="m")
    run = JudgeRun.objects.create(
        judge_kind="pairwise",
        endpoint=endpoint,
        template=judge_template_default(kind="pairwise", language="en"),
        dataset=dataset,
    )
    fields = {
        "judge_run": run,
        "target_key": "pair:1:2:tall",
        "prompt_id": a.prompt_id,
        "response_a": a,
        "response_b": b,
        "template_kind": "pairwise",
        "template_version": 1,
    }
    Judgment.objects.create(order="ab", parse_status="ok", verdict="A", **fields)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.create(order="ab", parse_status="ok", verdict="B", **fields)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.create(order="ba", parse_status="error", score=3, **fields)


@pytest.mark.parametrize(
    ("value", "secret"),
    [
        ("OPENAI_API_KEY", False),
        ("HF_TOKEN", False),
        ("sk-abc", True),
        ("ghp_abcdef", True),
        ("Zx9Qw8Er7Ty6Ui5Op4", True),
    ],
)
def test_looks_like_secret(value, secret):
    assert looks_like_secret(value) is secret
