"""Every write of the evaluation app: endpoints, templates, runs and the chunk work their tasks do."""

from evaluation.services.benchmarks import benchmark_chunk_process, benchmark_run_start
from evaluation.services.endpoints import (
    backend_cache_clear,
    endpoint_backend,
    endpoint_create,
    endpoint_update,
)
from evaluation.services.generation import generation_chunk_process, generation_run_start
from evaluation.services.judging import (
    category_aspects_reset,
    category_aspects_set,
    category_aspects_update,
    judge_chunk_process,
    judge_run_start,
    judge_template_update,
)
from evaluation.services.runs import RunConfigError, run_cancel

__all__ = [
    "RunConfigError",
    "backend_cache_clear",
    "benchmark_chunk_process",
    "benchmark_run_start",
    "category_aspects_reset",
    "category_aspects_set",
    "category_aspects_update",
    "endpoint_backend",
    "endpoint_create",
    "endpoint_update",
    "generation_chunk_process",
    "generation_run_start",
    "judge_chunk_process",
    "judge_run_start",
    "judge_template_update",
    "run_cancel",
]
