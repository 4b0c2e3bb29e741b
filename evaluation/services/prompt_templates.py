"""Benchmark prompt templates: the shipped ones and those researchers add, and the set a run asks with."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.db import transaction
from django.utils.translation import gettext_noop

from accounts.domain.echo import clipped, echoed
from evaluation.domain.answer_extraction import MCQ_PROMPT_VARIANTS, McqPromptVariant
from evaluation.domain.prompt_sets import AGGREGATIONS, DRAW, MCQ, TEXT_TEMPLATES, TextTemplate
from evaluation.models import BenchmarkRun, PromptTemplate
from evaluation.services.runs import RunConfigError

Template = McqPromptVariant | TextTemplate

# The template a run of each task asks with when none is chosen (multiple choice: the language's set).
DEFAULT_TEXT_TEMPLATES = {
    (BenchmarkRun.Task.TRANSLATION, "id"): "mt-id-1",
    (BenchmarkRun.Task.TRANSLATION, "en"): "mt-en-1",
    (BenchmarkRun.Task.OPEN_QA, "id"): "qa-plain",
    (BenchmarkRun.Task.OPEN_QA, "en"): "qa-plain-en",
}


def builtin_templates(task: str) -> list[Template]:
    if task == MCQ:
        return [variant for variants in MCQ_PROMPT_VARIANTS.values() for variant in variants]
    return list(TEXT_TEMPLATES.get(task, ()))


def template_of_row(row: PromptTemplate) -> Template:
    """The domain template of a stored one; a ValueError says what its texts lack."""
    if row.task == MCQ:
        return McqPromptVariant(
            id=row.slug,
            language=row.language,
            instruction=row.instruction,
            block=row.body,
            choice_line=row.choice_line or "{{letter}}. {{text}}",
            cloze_block=row.cloze_body or "{{question}}",
        )
    return TextTemplate(id=row.slug, task=row.task, language=row.language, text=row.body)


def templates_available(task: str, language: str | None = None) -> list[Template]:
    """The shipped templates of ``task`` then the added ones, in ``language`` when given."""
    found = builtin_templates(task)
    for row in PromptTemplate.objects.filter(task=task).order_by("slug"):
        try:
            found.append(template_of_row(row))
        except ValueError:
            continue  # stored before a check existed; refused again on use
    return [t for t in found if language is None or t.language == language]


def template_snapshot(template: Template) -> dict[str, Any]:
    """The texts a run keeps of a template."""
    data = asdict(template)
    data["kind"] = "mcq" if isinstance(template, McqPromptVariant) else "text"
    return data


def template_from_snapshot(data: dict[str, Any]) -> Template:
    fields = {k: v for k, v in data.items() if k != "kind"}
    return McqPromptVariant(**fields) if data.get("kind") == "mcq" else TextTemplate(**fields)


@transaction.atomic
def prompt_template_create(
    *,
    slug: str,
    task: str,
    language: str,
    body: str,
    instruction: str = "",
    choice_line: str = "",
    cloze_body: str = "",
    note: str = "",
    user=None,
) -> PromptTemplate:
    """Store a prompt template; its texts must hold the task's placeholders and its id must be new."""
    if task not in BenchmarkRun.Task.values:
        raise RunConfigError(gettext_noop("unknown benchmark task %(task)s"), task=clipped(repr(task)))
    shipped = {t.id for each in BenchmarkRun.Task.values for t in builtin_templates(each)}
    if slug in shipped or PromptTemplate.objects.filter(slug=slug).exists():
        raise RunConfigError(gettext_noop("a prompt template with the id %(slug)s exists already"), slug=slug)
    row = PromptTemplate(
        slug=slug,
        task=task,
        language=language,
        instruction=instruction,
        body=body,
        choice_line=choice_line or "{{letter}}. {{text}}",
        cloze_body=cloze_body or "{{question}}",
        note=note,
        created_by=user,
    )
    try:
        template_of_row(row)
    except ValueError as exc:
        raise RunConfigError(
            gettext_noop("the template's text is incomplete: %(why)s"), why=str(exc)
        ) from exc
    row.full_clean()
    row.save()
    return row


def templates_for_run(
    *, task: str, language: str, ids: list[str] | None, aggregation: str | None, variant: str = ""
) -> tuple[list[Template], str]:
    """The templates a benchmark run asks with, in the order given, and the aggregation.

    ``ids`` empty: ``variant`` alone when given, else multiple choice asks with the language's shipped set
    (one drawn per question) and the other tasks with their one shipped template. ``aggregation`` empty:
    ``draw``."""
    aggregation = aggregation or DRAW
    if aggregation not in AGGREGATIONS:
        raise RunConfigError(
            gettext_noop("aggregation must be one of %(allowed)s, got %(value)s"),
            allowed=", ".join(AGGREGATIONS),
            value=clipped(repr(aggregation)),
        )
    available = {t.id: t for t in templates_available(task)}
    if not ids:
        if variant:
            ids = [variant]
        elif task == MCQ:
            ids = [t.id for t in MCQ_PROMPT_VARIANTS[language]]
        else:
            ids = [DEFAULT_TEXT_TEMPLATES[(task, language)]]
    if isinstance(ids, str) or not all(isinstance(i, str) for i in ids):
        raise RunConfigError(gettext_noop("templates must be a list of template ids"))
    unknown = [i for i in ids if i not in available]
    if unknown:
        raise RunConfigError(
            gettext_noop("unknown prompt template(s) for %(task)s: %(ids)s (known: %(known)s)"),
            task=task,
            ids=echoed(unknown),
            known=echoed(sorted(available)),
        )
    if len(set(ids)) != len(ids):
        raise RunConfigError(gettext_noop("a prompt template is listed twice"))
    return [available[i] for i in ids], aggregation
