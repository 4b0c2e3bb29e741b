"""Every write of the evaluation app: endpoints, templates, runs and the chunk work their tasks do."""

from evaluation.services.benchmarks import benchmark_chunk_process, benchmark_run_start
from evaluation.services.control import run_not_done_count, run_retry_not_done
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
from evaluation.services.prompt_templates import prompt_template_create, templates_available
from evaluation.services.runs import RunConfigError, run_cancel
from evaluation.services.workers import run_queues_without_worker

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
    "prompt_template_create",
    "run_cancel",
    "templates_available",
    "run_not_done_count",
    "run_retry_not_done",
    "run_queues_without_worker",
]
