"""Benchmark runs: multiple choice (generated answer or option log-probability), translation (chrF++),
open QA (normalised substring match, or the 1-5 factual judge divided by 5)."""

from __future__ import annotations

import random
import threading
from typing import Any

from django.db import transaction
from django.utils.translation import gettext_noop

from accounts.domain.echo import echoed
from datasets_app.models import Dataset, Prompt, Question, TranslationUnit
from evaluation.domain.answer_extraction import (
    MCQ_PROMPT_VARIANTS,
    McqExample,
    best_option,
    build_cloze_prompt,
    build_mcq_prompt,
    choose_variant,
    cloze_continuations,
    extract_choice_with_rule,
    first_line,
    is_correct,
    option_continuations,
)
from evaluation.domain.benchmark_metrics import (
    CLOZE_RULES,
    MATCH_RULES,
    answer_match,
    chrf_pp_sentence,
    judge_score_normalised,
)
from evaluation.domain.judge_parsing import parse_grade
from evaluation.domain.judge_templates import FACTUAL, SCORE_RANGES, render_factual
from evaluation.domain.presets import BENCHMARK
from evaluation.domain.prompt_sets import DRAW
from evaluation.domain.sampling import SamplingParams, SamplingParamsError
from evaluation.inference.base import ChatRequest, stopped
from evaluation.inference.registry import backend_completes_text, backend_scores_options
from evaluation.models import BenchmarkResult, BenchmarkRun, ModelEndpoint, RunChunk
from evaluation.services.endpoints import endpoint_backend, endpoint_check_allowed, endpoint_sampling
from evaluation.services.judging import judge_sampling, judge_template_default, to_domain_template
from evaluation.services.prompt_templates import (
    template_from_snapshot,
    template_snapshot,
    templates_for_run,
)
from evaluation.services.runs import (
    ItemOutcome,
    RunConfigError,
    check_chunk_size,
    check_preset,
    chunk_process,
    chunks_create,
    run_launch,
)

BENCHMARK_OPTIONS = frozenset(
    {
        "sampling",
        "seed",
        "max_tokens",
        "chunk_size",
        "scoring",
        "k_shot",
        "shot_split",
        "eval_split",
        "shot_dataset_id",
        "prompt_language",
        "variant",
        "judge_language",
        "back_translate",
        "match_rule",
        "cloze_rule",
        "direction",
        "templates",
        "aggregation",
        "preset",
    }
)
# Translation directions over a unit (source text in Indonesian, translation in a local language):
# ``to_source``, the local text into Indonesian (LoraxBench's), or ``from_source``, Indonesian into the
# local language and register.
DIRECTIONS = ("to_source", "from_source")
SCORINGS = {
    BenchmarkRun.Task.MCQ: ("extract", "logprob"),
    BenchmarkRun.Task.TRANSLATION: ("chrf",),
    BenchmarkRun.Task.OPEN_QA: ("substring", "judge"),
}
# Multiple choice: how each mode reads the answer (the ``scoring`` kept in the run's config).
MODE_SCORING = {
    BenchmarkRun.Mode.CHAT: "extract",
    BenchmarkRun.Mode.COMPLETION: "extract",
    BenchmarkRun.Mode.LOGPROB: "logprob",
    BenchmarkRun.Mode.CLOZE: "logprob",
}
LANGUAGE_NAMES = {
    "ind": "Indonesian",
    "sun": "Sundanese",
    "jav": "Javanese",
    "mad": "Madurese",
    "min": "Minangkabau",
    "ban": "Balinese",
    "bug": "Buginese",
    "eng": "English",
}
TRANSLATION_PROMPTS = {
    "en": "Translate the following text from {source} into {target}{register}. Reply with the translation only.\n\n{text}",
    "id": "Terjemahkan teks berikut dari bahasa {source} ke bahasa {target}{register}. Balas hanya dengan terjemahannya.\n\n{text}",
}


def _metric_language(iso3: str) -> str:
    return {"ind": "id", "eng": "en"}.get(iso3, iso3)


def _split_of(question: Question) -> str | None:
    return (question.meta or {}).get("split")


@transaction.atomic
def benchmark_run_start(
    *,
    task: str,
    endpoint: ModelEndpoint,
    dataset: Dataset,
    judge_endpoint: ModelEndpoint | None = None,
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    name: str = "",
    user=None,
) -> BenchmarkRun:
    """Plan and queue a benchmark run.

    ``mode`` (multiple choice only): ``chat`` (the prompt as one user message, the letter extracted from
    the reply), ``completion`` (the k-shot prompt continued as plain text, for base models; the letter
    extracted from the first line), ``logprob`` (each option letter scored after the prompt) or ``cloze``
    (the question without options, each option's text scored per token). Empty: from ``scoring``
    (``logprob`` gives ``logprob``), else ``chat``.

    ``options``: ``scoring`` (mcq: ``extract`` | ``logprob``; open_qa: ``substring`` | ``judge``), ``k_shot``
    with examples from the questions whose ``meta.split`` is ``shot_split`` (of ``shot_dataset_id`` or the
    same dataset), ``eval_split`` (only questions of that split are scored), ``prompt_language`` (``id``
    or ``en`` prompt variants), ``variant`` (one variant id instead of the seeded choice per question),
    ``seed``, ``sampling``, ``max_tokens``, ``chunk_size``, ``judge_language``, ``match_rule`` (open QA by
    substring: ``substring``, LoraxBench's rule and the default, or ``whole_word``), ``cloze_rule`` (cloze
    mode: ``total`` log-probability of the continuation, LoraxBench's rule and the default, or ``mean`` per
    token). ``back_translate``
    (translation): the model translates each unit's translation back into the source language; the result is
    scored by chrF++ against the source and kept as the unit's ``meta["back_translation"]``, from which the
    translation flags compute the back-translation similarity.
    """
    options = dict(options or {})
    unknown = [name for name in options if name not in BENCHMARK_OPTIONS]
    if unknown:
        raise RunConfigError(f"unknown option(s): {echoed(unknown)}")
    if task not in SCORINGS:
        raise RunConfigError(f"unknown benchmark task {task!r}")
    scoring = options.get("scoring") or SCORINGS[task][0]
    if scoring not in SCORINGS[task]:
        raise RunConfigError(
            gettext_noop("scoring for %(task)s must be one of %(allowed)s"),
            task=task,
            allowed=", ".join(SCORINGS[task]),
        )
    mode = _resolve_mode(task=task, mode=mode, scoring=options.get("scoring"))
    if task == BenchmarkRun.Task.MCQ:
        scoring = MODE_SCORING[mode]
    chunk_size = check_chunk_size(options.get("chunk_size"))
    seed = int(options.get("seed") or 0)
    overrides = dict(options.get("sampling") or {})
    overrides.setdefault(
        "max_tokens", options.get("max_tokens") or (32 if task == BenchmarkRun.Task.MCQ else 512)
    )
    if options.get("seed") is not None:
        overrides["seed"] = seed
    try:
        sampling = endpoint_sampling(endpoint, overrides).replace(n=1)
    except SamplingParamsError as exc:
        raise RunConfigError(exc.message, **exc.params) from exc
    prompt_language = options.get("prompt_language") or "id"
    if prompt_language not in MCQ_PROMPT_VARIANTS:
        raise RunConfigError("prompt_language must be 'id' or 'en'")
    config: dict[str, Any] = {
        "scoring": scoring,
        "seed": seed,
        "sampling": sampling.to_dict(),
        "chunk_size": chunk_size,
        "prompt_language": prompt_language,
    }
    if scoring == "substring":
        config["match_rule"] = _rule_option(options, "match_rule", MATCH_RULES)
    elif options.get("match_rule"):
        raise RunConfigError(gettext_noop("match_rule is an option of open QA scored by substring"))
    if mode == BenchmarkRun.Mode.CLOZE:
        config["cloze_rule"] = _rule_option(options, "cloze_rule", tuple(CLOZE_RULES))
    elif options.get("cloze_rule"):
        raise RunConfigError(gettext_noop("cloze_rule is an option of multiple choice in cloze mode"))
    if task == BenchmarkRun.Task.TRANSLATION:
        config["direction"] = _rule_option(options, "direction", DIRECTIONS)
    elif options.get("direction"):
        raise RunConfigError(gettext_noop("direction is an option of translation runs"))
    if options.get("back_translate"):
        if task != BenchmarkRun.Task.TRANSLATION:
            raise RunConfigError(gettext_noop("back_translate is an option of translation runs"))
        if config["direction"] != "to_source":
            raise RunConfigError(
                gettext_noop("back_translate translates into the source language (to_source)")
            )
        config["back_translate"] = True
    judge_template = None
    if scoring == "judge":
        if judge_endpoint is None:
            raise RunConfigError(gettext_noop("open QA scored by a judge needs a judge endpoint"))
        judge_language = options.get("judge_language") or "en"
        if judge_language not in ("en", "id"):
            raise RunConfigError("judge_language must be 'en' or 'id'")
        judge_template = judge_template_default(kind=FACTUAL, language=judge_language)
        # The judge's sampling: its template's, else the judge endpoint's defaults.
        judge_params, judge_sources = judge_sampling(template=judge_template, endpoint=judge_endpoint)
        config["judge_sampling"] = judge_params.to_dict()
        config["judge_sampling_sources"] = judge_sources

    if task == BenchmarkRun.Task.MCQ:
        _check_backend_mode(endpoint, mode)
        variants = MCQ_PROMPT_VARIANTS[prompt_language]
        if options.get("variant") and options["variant"] not in {v.id for v in variants}:
            raise RunConfigError(
                gettext_noop("unknown prompt variant %(variant)s"), variant=repr(options["variant"])
            )
        config["variant"] = options.get("variant") or ""
    templates, aggregation = templates_for_run(
        task=task,
        language=prompt_language,
        ids=options.get("templates"),
        aggregation=options.get("aggregation"),
        variant=(options.get("variant") or "") if task == BenchmarkRun.Task.MCQ else "",
    )
    config["templates"] = [template_snapshot(t) for t in templates]
    config["aggregation"] = aggregation
    if options.get("preset"):
        config["preset"] = check_preset(options["preset"], kind=BENCHMARK)
    # ``mean`` and ``max`` ask every item with every template: one item per (item, template).
    each_template = aggregation != DRAW and len(templates) > 1
    items: list[dict[str, Any]]
    if task == BenchmarkRun.Task.MCQ:
        questions = dataset.questions.exclude(status=Question.Status.EXCLUDED).order_by("id")
        if options.get("eval_split"):
            questions = [q for q in questions if _split_of(q) == options["eval_split"]]
        k = int(options.get("k_shot") or 0)
        config["k_shot"] = k
        if k:
            pool_source = (
                Dataset.objects.get(pk=options["shot_dataset_id"])
                if options.get("shot_dataset_id")
                else dataset
            )
            pool = [
                q.pk
                for q in pool_source.questions.order_by("id")
                if _split_of(q) == options.get("shot_split")
            ]
            if len(pool) < k:
                raise RunConfigError(
                    gettext_noop("k_shot=%(k)s needs %(k)s example questions in split %(split)s"),
                    k=k,
                    split=repr(options.get("shot_split")),
                )
            random.Random(seed).shuffle(pool)
            config["shot_ids"] = pool[: k + 1]  # one spare, for the question that is itself an example
        items = [{"key": f"q:{q.pk}", "question": q.pk} for q in questions]
    elif task == BenchmarkRun.Task.TRANSLATION:
        units = dataset.translation_units.exclude(translation_text="").order_by("id")
        items = [{"key": f"u:{pk}", "unit": pk} for pk in units.values_list("pk", flat=True)]
    else:
        prompts = dataset.prompts.order_by("id").values("id", "references")
        items = [
            {"key": f"p:{p['id']}", "prompt": p["id"]}
            for p in prompts
            if p["references"] and p["references"][0]
        ]

    if each_template:
        items = [
            {**item, "key": f"{item['key']}|{template.id}", "template": template.id}
            for item in items
            for template in templates
        ]
    run = BenchmarkRun.objects.create(
        task=task,
        endpoint=endpoint,
        dataset=dataset,
        judge_endpoint=judge_endpoint if scoring == "judge" else None,
        judge_template=judge_template,
        mode=mode,
        config=config,
        name=name,
        created_by=user,
    )
    chunks_create(run=run, endpoint=endpoint, items=items, chunk_size=chunk_size)
    run_launch(run=run, n_total=len(items))
    return run


def _check_backend_mode(endpoint: ModelEndpoint, mode: str) -> None:
    """Refuse, before anything is queued, a multiple-choice mode the endpoint's backend cannot run."""
    if mode in (BenchmarkRun.Mode.LOGPROB, BenchmarkRun.Mode.CLOZE) and not backend_scores_options(
        endpoint.backend
    ):
        raise RunConfigError(
            gettext_noop(
                "mode %(mode)s scores options by log-probability, which the %(backend)s backend of %(endpoint)s "
                "cannot do; choose an endpoint on transformers, vllm or llamacpp, or the chat mode"
            ),
            mode=mode,
            backend=endpoint.backend,
            endpoint=endpoint.slug,
        )
    if mode == BenchmarkRun.Mode.COMPLETION and not backend_completes_text(endpoint.backend):
        raise RunConfigError(
            gettext_noop(
                "mode completion needs plain text completion, which the %(backend)s backend of %(endpoint)s "
                "cannot do; choose an endpoint on openai or llamacpp, or the chat mode"
            ),
            backend=endpoint.backend,
            endpoint=endpoint.slug,
        )


def _rule_option(options: dict[str, Any], name: str, allowed: tuple[str, ...]) -> str:
    """The named rule ``options[name]``, or the first of ``allowed`` (the paper's rule) when not given."""
    rule = options.get(name) or allowed[0]
    if rule not in allowed:
        raise RunConfigError(
            gettext_noop("%(name)s must be one of %(allowed)s, got %(rule)s"),
            name=name,
            allowed=", ".join(allowed),
            rule=repr(rule)[:40],
        )
    return rule


def _resolve_mode(*, task: str, mode: str | None, scoring: str | None) -> str:
    if mode and mode not in BenchmarkRun.Mode.values:
        raise RunConfigError(f"mode must be one of {', '.join(BenchmarkRun.Mode.values)}, got {mode!r}")
    if task != BenchmarkRun.Task.MCQ:
        if mode and mode != BenchmarkRun.Mode.CHAT:
            raise RunConfigError(
                gettext_noop("mode %(mode)s is for multiple choice; %(task)s runs use chat"),
                mode=repr(mode),
                task=task,
            )
        return BenchmarkRun.Mode.CHAT
    if not mode:
        return BenchmarkRun.Mode.LOGPROB if scoring == "logprob" else BenchmarkRun.Mode.CHAT
    if scoring and scoring != MODE_SCORING[mode]:
        raise RunConfigError(
            gettext_noop("mode %(mode)s reads answers by %(reads)s, not scoring %(scoring)s"),
            mode=repr(mode),
            reads=repr(MODE_SCORING[mode]),
            scoring=repr(scoring),
        )
    return mode


def benchmark_existing_keys(run: BenchmarkRun, items: list[dict[str, Any]]) -> set[str]:
    keys = [item["key"] for item in items]
    return set(
        BenchmarkResult.objects.filter(benchmark_run=run, item_key__in=keys).values_list(
            "item_key", flat=True
        )
    )


def _shots(run: BenchmarkRun, question_id: int) -> list[McqExample]:
    shot_ids = [pk for pk in run.config.get("shot_ids", []) if pk != question_id][
        : run.config.get("k_shot", 0)
    ]
    shots = Question.objects.in_bulk(shot_ids)
    return [
        McqExample(question=shots[pk].text, choices=shots[pk].choices, answer=shots[pk].answer_key)
        for pk in shot_ids
        if pk in shots
    ]


def _run_template(run: BenchmarkRun, item: dict[str, Any], draw_key: str):
    """The template ``item`` is asked with: its own (``mean``/``max``), else one drawn by the seeded rule
    over the run's templates (``draw``; one template: that one)."""
    templates = [template_from_snapshot(data) for data in run.config["templates"]]
    if item.get("template"):
        return next(t for t in templates if t.id == item["template"])
    return templates[choose_variant(draw_key, run.config.get("seed", 0), len(templates))]


def _variant(run: BenchmarkRun, question: Question, item: dict[str, Any]):
    if "templates" in run.config:
        return _run_template(run, item, question.external_id)
    # Runs started before template sets: the language's variants.
    variants = MCQ_PROMPT_VARIANTS[run.config.get("prompt_language", "id")]
    if run.config.get("variant"):
        return next(v for v in variants if v.id == run.config["variant"])
    return variants[choose_variant(question.external_id, run.config.get("seed", 0), len(variants))]


def _mcq(run: BenchmarkRun, items: list[dict[str, Any]], backend, sampling, stop) -> list[ItemOutcome]:
    questions = Question.objects.in_bulk([item["question"] for item in items])
    cloze = run.mode == BenchmarkRun.Mode.CLOZE
    # Runs started before the rule was named scored cloze options by their mean per token.
    cloze_rule = run.config.get("cloze_rule", "mean")
    prepared = []
    outcomes: list[ItemOutcome] = []
    for item in items:
        question = questions.get(item["question"])
        if question is None:
            outcomes.append(ItemOutcome(key=item["key"], error="the question no longer exists"))
            continue
        variant = _variant(run, question, item)
        shots = _shots(run, question.pk)
        text = (
            build_cloze_prompt(question.text, variant, shots)
            if cloze
            else build_mcq_prompt(question.text, question.choices, variant, shots)
        )
        prepared.append((item, question, variant, text))

    def row(item, question, variant, **fields) -> BenchmarkResult:
        return BenchmarkResult(
            benchmark_run=run,
            item_key=item["key"],
            question=question,
            category=question.category,
            language=question.language,
            variant=variant.id,
            reference=question.answer_key,
            **fields,
        )

    if run.mode in (BenchmarkRun.Mode.LOGPROB, BenchmarkRun.Mode.CLOZE):
        for item, question, variant, text in prepared:
            if stopped(stop):  # one call per question: the ones left are not sent
                break
            letters = list(question.choices)
            if cloze:
                logprobs = backend.score_options(
                    text, cloze_continuations(question.choices), mode=CLOZE_RULES[cloze_rule]
                )
            else:
                logprobs = backend.score_options(text, option_continuations(question.choices))
            predicted = best_option(letters, logprobs)
            raw = {"logprobs": dict(zip(letters, logprobs, strict=True)), "mode": run.mode}
            if cloze:
                raw["rule"] = cloze_rule
            outcomes.append(
                ItemOutcome(
                    key=item["key"],
                    rows=[
                        row(
                            item,
                            question,
                            variant,
                            prediction=predicted,
                            correct=is_correct(predicted, question.answer_key),
                            score=None,
                            raw=raw,
                        )
                    ],
                )
            )
        return outcomes

    completion = run.mode == BenchmarkRun.Mode.COMPLETION
    requests = [
        ChatRequest(
            messages=[{"role": "user", "content": text}],
            sampling=sampling,
            request_id=item["key"],
            completion=completion,
        )
        for item, _, _, text in prepared
    ]
    results = {r.request_id: r for r in backend.generate(requests, stop=stop)}
    for item, question, variant, _ in prepared:
        result = results[item["key"]]
        if result.cancelled:
            continue
        if not result.ok:
            outcomes.append(ItemOutcome(key=item["key"], error=result.error))
            continue
        answer = first_line(result.text) if completion else result.text
        predicted, rule = extract_choice_with_rule(answer, question.choices)
        raw = {"output": result.text, "rule": rule}
        if completion:
            raw["answer_line"] = answer
        outcomes.append(
            ItemOutcome(
                key=item["key"],
                rows=[
                    row(
                        item,
                        question,
                        variant,
                        prediction=predicted or "",
                        correct=is_correct(predicted, question.answer_key),
                        raw=raw,
                        latency_s=result.latency_s,
                        prompt_tokens=result.prompt_tokens,
                        completion_tokens=result.completion_tokens,
                    )
                ],
            )
        )
    return outcomes


def _translation(
    run: BenchmarkRun, items: list[dict[str, Any]], backend, sampling, stop
) -> list[ItemOutcome]:
    units = TranslationUnit.objects.in_bulk([item["unit"] for item in items])
    words = TRANSLATION_PROMPTS[run.config.get("prompt_language", "id")]
    back = bool(run.config.get("back_translate"))
    # Runs started before the direction was named translated from the source (unless back-translating).
    to_source = run.config.get("direction", "to_source" if back else "from_source") == "to_source"
    requests = []
    template_ids: dict[str, str] = {}
    outcomes: list[ItemOutcome] = []
    for item in items:
        unit = units.get(item["unit"])
        if unit is None:
            outcomes.append(ItemOutcome(key=item["key"], error="the translation unit no longer exists"))
            continue
        register = f" ({unit.register})" if unit.register else ""
        source, target = unit.source_language, unit.target_language
        if to_source:  # the local text into the source language, which has no register of its own
            source, target, register = target, source, ""
        values = {
            "source": LANGUAGE_NAMES.get(source, source),
            "target": LANGUAGE_NAMES.get(target, target),
            "register": register,
            "text": unit.translation_text if to_source else unit.source_text,
        }
        if "templates" in run.config:
            template = _run_template(run, item, item["key"])
            template_ids[item["key"]] = template.id
            text = template.render(**values)
        else:  # runs started before template sets
            text = words.format(**values)
        requests.append(
            ChatRequest(
                messages=[{"role": "user", "content": text}], sampling=sampling, request_id=item["key"]
            )
        )
    results = {r.request_id: r for r in backend.generate(requests, stop=stop)}
    for item in items:
        if item["key"] not in results:
            continue
        unit, result = units[item["unit"]], results[item["key"]]
        if result.cancelled:
            continue
        if not result.ok:
            outcomes.append(ItemOutcome(key=item["key"], error=result.error))
            continue
        prediction = result.text.strip()
        reference = unit.source_text if to_source else unit.translation_text
        chrf = chrf_pp_sentence(prediction, reference)
        if back:
            # Kept on the unit for the back-translation flag; a rerun overwrites it with its own.
            meta = {**(unit.meta or {}), "back_translation": prediction, "back_translation_run": run.pk}
            TranslationUnit.objects.filter(pk=unit.pk).update(meta=meta)
        outcomes.append(
            ItemOutcome(
                key=item["key"],
                rows=[
                    BenchmarkResult(
                        benchmark_run=run,
                        item_key=item["key"],
                        unit=unit,
                        # The local language in both directions: LoraxBench's tables are per language.
                        language=unit.target_language,
                        register=unit.register,
                        variant=template_ids.get(item["key"], ""),
                        prediction=prediction,
                        reference=reference,
                        score=chrf / 100,
                        raw={
                            "chrf_pp": chrf,
                            "back_translation": back,
                            "direction": "to_source" if to_source else "from_source",
                        },
                        latency_s=result.latency_s,
                        prompt_tokens=result.prompt_tokens,
                        completion_tokens=result.completion_tokens,
                    )
                ],
            )
        )
    return outcomes


def _open_qa(run: BenchmarkRun, items: list[dict[str, Any]], backend, sampling, stop) -> list[ItemOutcome]:
    prompts = Prompt.objects.in_bulk([item["prompt"] for item in items])
    template_ids: dict[str, str] = {}
    requests = []
    for item in items:
        if item["prompt"] not in prompts:
            continue
        question = prompts[item["prompt"]].turns[0]
        if "templates" in run.config:
            template = _run_template(run, item, item["key"])
            template_ids[item["key"]] = template.id
            question = template.render(question=question)
        requests.append(
            ChatRequest(
                messages=[{"role": "user", "content": question}], sampling=sampling, request_id=item["key"]
            )
        )
    results = {r.request_id: r for r in backend.generate(requests, stop=stop)}
    judged: dict[str, Any] = {}
    if run.config["scoring"] == "judge":
        template = to_domain_template(run.judge_template)
        judge_sampling = SamplingParams.from_dict(run.config["judge_sampling"])
        judge_requests = []
        for item in items:
            result = results.get(item["key"])
            if result is None or not result.ok:
                continue
            prompt = prompts[item["prompt"]]
            messages = render_factual(
                template, question=prompt.turns[0], gold=prompt.references[0], answer=result.text
            )
            judge_requests.append(
                ChatRequest(
                    messages=messages,
                    sampling=judge_sampling,
                    response_format=dict(template.output_schema),
                    request_id=item["key"],
                )
            )
        judge_backend = endpoint_backend(run.judge_endpoint)
        judged = {r.request_id: r for r in judge_backend.generate(judge_requests, stop=stop)}

    outcomes = []
    for item in items:
        result = results.get(item["key"])
        if result is None:
            outcomes.append(ItemOutcome(key=item["key"], error="the prompt no longer exists"))
            continue
        if result.cancelled or (item["key"] in judged and judged[item["key"]].cancelled):
            continue
        if not result.ok:
            outcomes.append(ItemOutcome(key=item["key"], error=result.error))
            continue
        prompt = prompts[item["prompt"]]
        gold = prompt.references[0]
        fields: dict[str, Any] = {"raw": {"output": result.text}}
        if run.config["scoring"] == "judge":
            judge_result = judged[item["key"]]
            if not judge_result.ok:
                outcomes.append(ItemOutcome(key=item["key"], error=f"judge: {judge_result.error}"))
                continue
            low, high = SCORE_RANGES[FACTUAL]
            parsed = parse_grade(
                judge_result.text, low, high, truncated=judge_result.finish_reason == "length"
            )
            fields["score"] = judge_score_normalised(parsed.value if parsed.ok else None, high)
            fields["raw"].update(
                {
                    "judge_output": judge_result.text,
                    "judge_parse_status": parsed.status,
                    "judge_score": parsed.value,
                }
            )
        else:
            # Runs started before the rule was named matched whole words.
            rule = run.config.get("match_rule", "whole_word")
            fields["correct"] = answer_match(result.text, gold, _metric_language(prompt.language), rule=rule)
            fields["raw"]["rule"] = rule
        outcomes.append(
            ItemOutcome(
                key=item["key"],
                rows=[
                    BenchmarkResult(
                        benchmark_run=run,
                        item_key=item["key"],
                        prompt=prompt,
                        category=prompt.category,
                        language=prompt.language,
                        register=prompt.register,
                        variant=template_ids.get(item["key"], ""),
                        prediction=result.text,
                        reference=gold,
                        latency_s=result.latency_s,
                        prompt_tokens=result.prompt_tokens,
                        completion_tokens=result.completion_tokens,
                        **fields,
                    )
                ],
            )
        )
    return outcomes


def benchmark_compute(
    *,
    run: BenchmarkRun,
    items: list[dict[str, Any]],
    endpoint: ModelEndpoint,
    stop: threading.Event | None = None,
) -> list[ItemOutcome]:
    if run.judge_endpoint_id is not None:
        # Before the model's requests: a judge the deployment refuses fails the run with nothing sent.
        endpoint_check_allowed(run.judge_endpoint)
    backend = endpoint_backend(endpoint)
    sampling = SamplingParams.from_dict(run.config["sampling"])
    if run.task == BenchmarkRun.Task.MCQ:
        return _mcq(run, items, backend, sampling, stop)
    if run.task == BenchmarkRun.Task.TRANSLATION:
        return _translation(run, items, backend, sampling, stop)
    return _open_qa(run, items, backend, sampling, stop)


def benchmark_chunk_process(*, chunk: RunChunk, run: BenchmarkRun) -> bool:
    return chunk_process(
        chunk=chunk, run=run, existing_keys=benchmark_existing_keys, compute=benchmark_compute
    )
