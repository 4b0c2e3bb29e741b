"""Pre-filled error spans from an LLM judge: each task of an MQM or ESA project goes to a model with the
span template (``evaluation.domain.span_judge``); the reply is parsed (``judge_parsing.parse_spans``) and
its spans become the task's suggestions (``SpanSuggestion``, source ``llm``), which annotators accept,
edit or remove. Every call is kept as a ``SpanJudgment`` with its raw reply and parse status.

Safe to run twice: a task's judgment is updated in place (unique per endpoint and task) and its earlier
LLM suggestions that no answer used are replaced. A parse error suggests nothing and keeps the raw text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Sum
from django.utils.translation import gettext_noop

from accounts.refusals import Refused
from annotation.domain.span_marking import TARGET, SuggestedSpan
from annotation.models import SPAN_KINDS, Project, SpanSuggestion, Task
from annotation.selectors import shown_target
from annotation.services import project_span_config, span_suggestions_replace
from datasets_app.domain.languages import LANGUAGES
from datasets_app.jobs import task_named
from evaluation.domain.judge_parsing import parse_spans
from evaluation.domain.sampling import SamplingParams
from evaluation.domain.span_judge import SPAN_SCHEMA, span_messages
from evaluation.inference.base import ChatRequest
from evaluation.models import ModelEndpoint, SpanJudgment
from evaluation.services.endpoints import endpoint_backend

__all__ = [
    "SpanPrefillRefused",
    "SpanPrefillResult",
    "span_judgment_counts",
    "span_prefill_queue",
    "span_prefill_run",
]

# Deterministic, and enough tokens for a handful of quoted errors.
PREFILL_SAMPLING = {"temperature": 0.0, "max_tokens": 256, "seed": 0}
BATCH = 16
SPAN_PREFILL_TASK = "evaluation.span_prefill"


class SpanPrefillRefused(Refused):
    pass


@dataclass(frozen=True)
class SpanPrefillResult:
    tasks: int
    ok: int
    errors: int
    suggestions: int
    dropped: int

    def as_dict(self) -> dict[str, int]:
        return {
            "tasks": self.tasks,
            "ok": self.ok,
            "errors": self.errors,
            "suggestions": self.suggestions,
            "dropped": self.dropped,
        }


def _check(project: Project) -> None:
    if project.kind not in SPAN_KINDS:
        raise SpanPrefillRefused(gettext_noop("Spans are pre-filled only in MQM and ESA projects."))


def _language_name(code: str) -> str:
    language = LANGUAGES.get(code)
    return language.name_en if language else code


def span_prefill_run(
    *, project: Project, endpoint: ModelEndpoint, lang: str = "en", limit: int | None = None
) -> SpanPrefillResult:
    """Ask ``endpoint`` for the errors of every task of ``project`` (the first ``limit`` by id) and store
    them as suggestions. Model calls are made outside any transaction; each batch's rows are written in
    one."""
    _check(project)
    config = project_span_config(project)
    names = [(c["code"], c["label"]) for c in config.labelled("id" if lang == "id" else "en")]
    # An attention check is judged on the text its annotators see, like any other task.
    tasks = list(
        Task.objects.filter(project=project)
        .select_related("translation_unit", "attention_check")
        .order_by("id")
    )
    if limit is not None:
        tasks = tasks[:limit]
    sampling = SamplingParams(**{**PREFILL_SAMPLING})
    backend = endpoint_backend(endpoint)
    ok = errors = suggestions = dropped = 0
    for start in range(0, len(tasks), BATCH):
        batch = tasks[start : start + BATCH]
        requests = [
            ChatRequest(
                messages=span_messages(
                    source=t.translation_unit.source_text,
                    target=shown_target(t),
                    source_language=_language_name(t.translation_unit.source_language),
                    target_language=_language_name(t.translation_unit.target_language),
                    register=t.translation_unit.register,
                    categories=names,
                    lang=lang,
                ),
                sampling=sampling,
                response_format=SPAN_SCHEMA,
                request_id=str(t.pk),
            )
            for t in batch
        ]
        results = backend.generate(requests)
        with transaction.atomic():
            for task, result in zip(batch, results, strict=True):
                if result.ok:
                    parsed = parse_spans(result.text, target=shown_target(task), categories=dict(names))
                    status, reason, raw = parsed.status, parsed.reason, result.text
                    found = parsed.spans if parsed.ok else ()
                    n_dropped = parsed.dropped
                else:
                    status, reason, raw, found, n_dropped = "error", (result.error or "")[:200], "", (), 0
                stored = 0
                if status == "ok":
                    # No note: annotators see that a suggestion came from a model, never which one.
                    spans = [SuggestedSpan(TARGET, s.start, s.end, s.category, s.severity) for s in found]
                    stored = span_suggestions_replace(
                        task=task, source=SpanSuggestion.Source.LLM, spans=spans
                    )
                SpanJudgment.objects.update_or_create(
                    endpoint=endpoint,
                    task=task,
                    defaults={
                        "language": "id" if lang == "id" else "en",
                        "raw_output": raw,
                        "parse_status": status,
                        "parse_reason": reason[:200],
                        "n_spans": stored,
                        "n_dropped": n_dropped,
                        "latency_s": result.latency_s,
                    },
                )
                ok += status == "ok"
                errors += status != "ok"
                suggestions += stored
                dropped += n_dropped
    return SpanPrefillResult(len(tasks), ok, errors, suggestions, dropped)


def span_prefill_queue(*, project: Project, endpoint: ModelEndpoint, lang: str = "en") -> None:
    """Hand the pre-fill of ``project`` to a worker on the endpoint's queue once the caller's transaction
    commits."""
    _check(project)
    transaction.on_commit(
        lambda: task_named(SPAN_PREFILL_TASK).apply_async(
            args=[project.pk, endpoint.pk, lang], queue=endpoint.queue
        )
    )


def span_judgment_counts(project: Project) -> Sequence[dict]:
    """Parse statuses of the project's span judgments per endpoint."""
    return list(
        SpanJudgment.objects.filter(task__project=project)
        .values("endpoint__slug", "parse_status")
        .annotate(n=Count("id"), spans=Sum("n_spans"))
        .order_by("endpoint__slug", "parse_status")
    )
