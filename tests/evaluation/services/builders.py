"""Builders shared by the evaluation run tests: datasets, endpoints on a stub server, scripted judges."""

from __future__ import annotations

import json
import re
from typing import Any

from datasets_app.models import Dataset, Prompt, Question, Response, TranslationUnit
from evaluation.models import ModelEndpoint
from tests.evaluation.inference.openai_stub_server import Reply, completion_body

FAST_OPTIONS = {"max_attempts": 1, "timeout_s": 10}


def make_endpoint(server, slug: str = "stub-model", **fields: Any) -> ModelEndpoint:
    defaults = {
        "backend": ModelEndpoint.Backend.OPENAI,
        "base_url": server.base_url,
        "model_id": "stub-model",
        "max_concurrency": 8,
        "backend_options": dict(FAST_OPTIONS),
    }
    defaults.update(fields)
    return ModelEndpoint.objects.create(slug=slug, **defaults)


def make_prompt_dataset(
    *, n_prompts: int = 3, two_turn_first: bool = True, name: str = "gen-data"
) -> Dataset:
    """Prompts p0.. (p0 has two turns when ``two_turn_first``), references per turn, no responses."""
    dataset = Dataset.objects.create(name=name)
    for i in range(n_prompts):
        turns = [f"Pertanyaan {i}"] + ([f"Lanjutan {i}"] if (i == 0 and two_turn_first) else [])
        Prompt.objects.create(
            dataset=dataset,
            external_id=f"p{i}",
            category="math" if i % 2 else "analysis",
            language="ind",
            turns=turns,
            references=[f"Rujukan {i} giliran {t + 1}" for t in range(len(turns))],
        )
    return dataset


def make_pair_dataset(*, n_prompts: int = 2, name: str = "pair-data") -> Dataset:
    """Each prompt with a ``good`` response (model alpha) and a ``bad`` one (model beta)."""
    dataset = Dataset.objects.create(name=name)
    for i in range(n_prompts):
        prompt = Prompt.objects.create(
            dataset=dataset, external_id=f"q{i}", category="analysis", language="ind", turns=[f"Soal {i}"]
        )
        Response.objects.create(prompt=prompt, model_name="alpha", turns=[f"GOOD answer {i}"])
        Response.objects.create(prompt=prompt, model_name="beta", turns=[f"BAD answer {i}"])
    return dataset


def last_user(body: dict[str, Any]) -> str:
    return next((m["content"] for m in reversed(body.get("messages", [])) if m.get("role") == "user"), "")


def shown_block(text: str, number: int) -> str:
    match = re.search(rf"\[Response {number}\]\n(.*?)(?:\n\n\[|\Z)", text, re.DOTALL)
    return match.group(1) if match else ""


def fair_judge(body: dict[str, Any]) -> Reply:
    """Picks whichever shown response contains GOOD: consistent across orders."""
    text = last_user(body)
    winner = "Response 1" if "GOOD" in shown_block(text, 1) else "Response 2"
    return Reply(body=completion_body(json.dumps({"explanation": "the good one", "score": winner})))


def first_position_judge(body: dict[str, Any]) -> Reply:
    """Always picks the first shown response: biased to the first position."""
    return Reply(body=completion_body(json.dumps({"explanation": "first", "score": "Response 1"})))


def garbage_judge(body: dict[str, Any]) -> Reply:
    return Reply(body=completion_body("I really cannot say which one I prefer, sorry."))


def make_question_dataset(name: str = "mcq-data") -> Dataset:
    dataset = Dataset.objects.create(name=name, kind=Dataset.Kind.QUESTIONS)
    rows = [
        ("c1", "shot", "Ibu kota Jawa Barat?", "B"),
        ("c2", "shot", "Makanan dari kedelai?", "A"),
        ("t1", "test", "Alat musik dari bambu?", "C"),
        ("t2", "test", "Hari kemerdekaan Indonesia?", "D"),
        ("t3", "test", "Pulau terbesar di Indonesia?", "E"),
    ]
    for external_id, split, text, answer in rows:
        Question.objects.create(
            dataset=dataset,
            external_id=external_id,
            category="budaya" if external_id != "t3" else "geografi",
            language="ind",
            text=text,
            choices={"A": "tempe", "B": "Bandung", "C": "angklung", "D": "17 Agustus", "E": "Kalimantan"},
            answer_key=answer,
            meta={"split": split},
        )
    return dataset


def make_translation_dataset(name: str = "mt-data") -> Dataset:
    dataset = Dataset.objects.create(name=name, kind=Dataset.Kind.TRANSLATIONS)
    TranslationUnit.objects.create(
        dataset=dataset,
        external_id="u1",
        source_text="Saya pergi ke pasar.",
        source_language="ind",
        target_language="jav",
        register="krama",
        translation_text="Kula tindak dhateng peken.",
    )
    TranslationUnit.objects.create(
        dataset=dataset,
        external_id="u2",
        source_text="Terima kasih banyak.",
        source_language="ind",
        target_language="sun",
        translation_text="Hatur nuhun pisan.",
    )
    return dataset
