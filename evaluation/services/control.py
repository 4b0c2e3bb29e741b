"""Retrying an ended run, for every run kind: which of its items have a result is the kind's own question."""

from __future__ import annotations

from django.db import models

from evaluation.models import RunChunk
from evaluation.services.benchmarks import benchmark_existing_keys
from evaluation.services.generation import generation_existing_keys
from evaluation.services.judging import judge_existing_keys
from evaluation.services.runs import ExistingKeysFn, run_not_done, run_retry

EXISTING_KEYS: dict[str, ExistingKeysFn] = {
    RunChunk.RunKind.GENERATION: generation_existing_keys,
    RunChunk.RunKind.JUDGE: judge_existing_keys,
    RunChunk.RunKind.BENCHMARK: benchmark_existing_keys,
}


def run_retry_not_done(*, run: models.Model) -> int:
    """Queue again the items of an ended run that have no result (``runs.run_retry``); returns how many."""
    return run_retry(run=run, existing_keys=EXISTING_KEYS[run.kind])


def run_not_done_count(*, run: models.Model) -> int:
    """How many items of ``run`` have no result."""
    return run_not_done(run=run, existing_keys=EXISTING_KEYS[run.kind])
