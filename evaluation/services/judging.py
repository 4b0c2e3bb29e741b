"""Judge templates and aspects (editable, versioned) and judge runs.

Pairwise judges run each pair in both orders by default (two calls of the same item, in the same chunk), so
the combined verdict and its consistency flag are written together with the two judgments. A judge output
that cannot be parsed is stored with parse status ``error`` and its raw text; it is a result, not a failure,
and never becomes a score. Only a request that failed after the backend's retries makes the item fail.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.db import transaction
from django.utils.translation import gettext_noop

from accounts.domain.echo import clipped, echoed
from annotation.models import Project
from datasets_app.models import Dataset, Prompt, Response
from evaluation import selectors
from evaluation.domain.judge_parsing import (
    ParseResult,
    canonical_verdict,
    combine_two_orders,
    parse_judge_output,
)
from evaluation.domain.judge_templates import (
    FACTUAL,
    FAMILY_TEMPLATE_NAMES,
    NO_TIE,
    PAIRWISE,
    PAIRWISE_FAMILIES,
    SINGLE_GRADE,
    WITH_TIE,
    TemplateError,
    aspects_for,
    default_template,
    normalise_category,
    pairwise_family_of,
    render_factual,
    render_pairwise,
    render_single_grade,
    with_explanation_limit,
)
from evaluation.domain.judge_templates import (
    JudgeTemplate as DomainTemplate,
)
from evaluation.domain.presets import JUDGE as PRESET_JUDGE
from evaluation.domain.sampling import (
    SOURCE_ENDPOINT,
    SOURCE_RUN,
    SOURCE_TEMPLATE,
    SamplingParams,
    SamplingParamsError,
    resolve_sampling,
)
from evaluation.inference.base import ChatRequest, stopped
from evaluation.models import (
    CategoryAspects,
    JudgeRun,
    JudgeTemplate,
    Judgment,
    ModelEndpoint,
    PairVerdict,
    RunChunk,
)
from evaluation.services.endpoints import endpoint_backend
from evaluation.services.runs import (
    ItemOutcome,
    RunConfigError,
    check_chunk_size,
    check_preset,
    chunk_process,
    chunk_results_write,
    chunks_create,
    run_launch,
)

JUDGE_OPTIONS = frozenset(
    {
        "sampling",
        "seed",
        "max_tokens",
        "chunk_size",
        "models",
        "generation_run_ids",
        "per_turn",
        "structured_output",
        "explanation_max_chars",
        "language",
        "on_one_error",
        "preset",
        "samples",
    }
)

#: Most verdicts a run may sample per item (the judge lab's calibration needs at least 3).
MAX_SAMPLES = 10


def to_domain_template(template: JudgeTemplate) -> DomainTemplate:
    return DomainTemplate(
        kind=template.kind,
        language=template.language,
        version=template.version,
        system=template.system,
        user=template.user,
        name=template.name,
        output_schema=template.output_schema or {},
        sampling=template.sampling or {},
    )


def judge_sampling(
    *, template: JudgeTemplate, endpoint: ModelEndpoint, explicit: Mapping[str, Any] | None = None
) -> tuple[SamplingParams, dict[str, str]]:
    """The sampling a judge with ``template`` on ``endpoint`` takes, and where each value came from: the run's
    ``explicit`` values, else the template's, else the endpoint's defaults, else Timbang's (``n`` is 1)."""
    try:
        sampling, sources = resolve_sampling(
            [
                (SOURCE_RUN, dict(explicit or {})),
                (SOURCE_TEMPLATE, dict(template.sampling or {})),
                (SOURCE_ENDPOINT, dict(endpoint.sampling_defaults or {})),
            ]
        )
        return sampling.replace(n=1), sources
    except SamplingParamsError as exc:
        raise RunConfigError(exc.message, **exc.params) from exc


@transaction.atomic
def judge_template_update(
    *,
    template: JudgeTemplate,
    system: str,
    user: str,
    sampling: Mapping[str, Any] | None = None,
    editor=None,
) -> JudgeTemplate:
    """Editing a template writes a new version (the next after the latest); older judgments keep theirs.

    ``system``: the system message (empty: none is sent). ``sampling``: what the template states about
    sampling (``None``: the edited version's, kept)."""
    latest = (
        JudgeTemplate.objects.select_for_update()
        .filter(name=template.name, kind=template.kind, language=template.language)
        .order_by("-version")
        .first()
    )
    version = (latest.version if latest else template.version) + 1
    # Validates placeholders (a pairwise template without {{response_2}} cannot judge anything).
    checked = DomainTemplate(
        kind=template.kind,
        language=template.language,
        version=version,
        system=system,
        user=user,
        name=template.name,
        output_schema=template.output_schema or {},
        sampling=(template.sampling or {}) if sampling is None else sampling,
    )
    return JudgeTemplate.objects.create(
        name=template.name,
        kind=template.kind,
        language=template.language,
        version=version,
        system=checked.system,
        user=checked.user,
        output_schema=dict(checked.output_schema),
        sampling=dict(checked.sampling),
        created_by=editor,
    )


MAX_ASPECTS = 12
MAX_EXPLANATION_CHARS = 4000
MAX_ASPECT_CHARS = 300


@transaction.atomic
def category_aspects_set(
    *, category: str, language: str, aspects: Sequence[str], project: Project | None = None
) -> CategoryAspects:
    """Replace the priority aspects of ``category`` in ``language`` (most important first) for every
    single-answer judge run that starts afterwards: the shared ones, or only ``project``'s runs when
    given; the category name is normalised (``"Creative Writing"`` = ``creative_writing``)."""
    key = normalise_category(category) if isinstance(category, str) else ""
    if not key or len(key) > 100:
        raise RunConfigError(gettext_noop("category: give a name of 1 to 100 characters"))
    if language not in JudgeTemplate.Language.values:
        raise RunConfigError(f"language must be one of {', '.join(JudgeTemplate.Language.values)}")
    cleaned = [a.strip() for a in aspects if isinstance(a, str) and a.strip()]
    if not cleaned:
        raise RunConfigError(
            gettext_noop("%(category)s (%(language)s): give at least one aspect"),
            category=key,
            language=language,
        )
    if len(cleaned) > MAX_ASPECTS:
        raise RunConfigError(
            gettext_noop("%(category)s (%(language)s): at most %(most)s aspects, got %(got)s"),
            category=key,
            language=language,
            most=MAX_ASPECTS,
            got=len(cleaned),
        )
    too_long = next((n for n, a in enumerate(cleaned, start=1) if len(a) > MAX_ASPECT_CHARS), None)
    if too_long is not None:
        raise RunConfigError(
            gettext_noop("%(category)s (%(language)s): aspect %(n)s is longer than %(most)s characters"),
            category=key,
            language=language,
            n=too_long,
            most=MAX_ASPECT_CHARS,
        )
    row, _ = CategoryAspects.objects.update_or_create(
        project=project, category=key, language=language, defaults={"aspects": cleaned}
    )
    return row


@transaction.atomic
def category_aspects_update(
    *, category: str, aspects: Mapping[str, Sequence[str]], project: Project | None = None
) -> list[CategoryAspects]:
    """Set the aspects of ``category`` in several languages at once (shared, or ``project``'s own): all
    of them, or none on bad input."""
    return [
        category_aspects_set(category=category, language=language, aspects=given, project=project)
        for language, given in aspects.items()
    ]


@transaction.atomic
def category_aspects_reset(*, category: str, project: Project | None = None) -> int:
    """Drop the edited aspects of ``category`` (both languages): the shared ones, after which the shipped
    ones apply again; or only ``project``'s own, after which the shared ones apply to it again."""
    deleted, _ = CategoryAspects.objects.filter(
        project=project, category=normalise_category(category)
    ).delete()
    return deleted


def judge_template_default(*, kind: str, language: str, name: str = "default") -> JudgeTemplate:
    """The latest template ``name`` of ``kind`` in ``language``; the shipped text is written back if the
    table lost it (the seed migrations normally provide it)."""
    latest = selectors.judge_template_latest(kind=kind, language=language, name=name)
    if latest is not None:
        return latest
    shipped = default_template(kind, language, name)
    template, _ = JudgeTemplate.objects.get_or_create(
        name=shipped.name,
        kind=kind,
        language=language,
        version=shipped.version,
        defaults={
            "system": shipped.system,
            "user": shipped.user,
            "output_schema": dict(shipped.output_schema),
            "sampling": dict(shipped.sampling),
        },
    )
    return template


def _coin(seed: int, key: str) -> bool:
    return hashlib.sha256(f"{seed}\x1f{key}".encode()).digest()[0] % 2 == 0


@transaction.atomic
def judge_run_start(
    *,
    judge_kind: str,
    endpoint: ModelEndpoint,
    dataset: Dataset | None = None,
    annotation_project: Project | None = None,
    template: JudgeTemplate | None = None,
    order_mode: str = JudgeRun.OrderMode.BOTH,
    pairwise_family: str | None = None,
    options: dict[str, Any] | None = None,
    name: str = "",
    user=None,
) -> JudgeRun:
    """Plan and queue a judge run over a dataset's responses or an annotation project's tasks.

    ``options``: ``language`` of the default template (``en``/``id``), ``sampling``, ``seed``, ``max_tokens``,
    ``chunk_size``, ``models`` and ``generation_run_ids`` (dataset source: which responses), ``per_turn``
    (pairwise over a dataset: one verdict per turn), ``structured_output`` (default true: ask for JSON with
    the template's schema), ``explanation_max_chars`` (with structured output: the schema caps the
    explanation at that many characters, so a constrained reply reaches its score within the token budget),
    ``on_one_error`` (``use_other``/``error``, see ``combine_two_orders``), ``samples`` (k, default 1: the judge
    answers each item k times, each with its own seed, for the judge lab's calibration; k > 1 needs a
    temperature above 0).

    Sampling, per parameter: the run's ``sampling``, ``seed`` and ``max_tokens``, else the template's
    ``sampling``, else the endpoint's defaults; ``config["sampling_sources"]`` says which gave each value.

    ``pairwise_family`` (pairwise judges): ``no_tie`` (IndoPref: the judge must pick a response; a tie reply
    is a parse error) or ``with_tie`` (MT-bench: A, B or tie). Without a template it picks the family's
    latest template (``default`` or ``with_tie``) in the option's language; with one, it must match the
    template's family. Empty: the template's family, or ``no_tie``.
    """
    options = dict(options or {})
    unknown = [name for name in options if name not in JUDGE_OPTIONS]
    if unknown:
        raise RunConfigError(f"unknown option(s): {echoed(unknown)}")
    if judge_kind not in (PAIRWISE, SINGLE_GRADE, FACTUAL):
        raise RunConfigError(f"unknown judge kind {judge_kind!r}")
    if (dataset is None) == (annotation_project is None):
        raise RunConfigError(gettext_noop("give either a dataset or an annotation project"))
    if order_mode not in JudgeRun.OrderMode.values:
        raise RunConfigError(f"unknown order mode {order_mode!r}")
    if pairwise_family is not None and pairwise_family not in PAIRWISE_FAMILIES:
        raise RunConfigError(
            f"pairwise_family must be one of {', '.join(PAIRWISE_FAMILIES)}, got {pairwise_family!r}"
        )
    if pairwise_family == WITH_TIE and judge_kind != PAIRWISE:
        raise RunConfigError(
            gettext_noop("pairwise_family applies to pairwise judges only, not to %(kind)s"), kind=judge_kind
        )
    if template is None:
        language = options.get("language") or "en"
        if language not in JudgeTemplate.Language.values:
            raise RunConfigError(f"language must be one of {', '.join(JudgeTemplate.Language.values)}")
        family = pairwise_family or NO_TIE
        template_name = FAMILY_TEMPLATE_NAMES[family] if judge_kind == PAIRWISE else "default"
        template = judge_template_default(kind=judge_kind, language=language, name=template_name)
    if template.kind != judge_kind:
        raise RunConfigError(
            gettext_noop("template %(template)s is not a %(kind)s template"),
            template=str(template),
            kind=judge_kind,
        )
    family = NO_TIE
    if judge_kind == PAIRWISE:
        family = pairwise_family_of(template.name)
        if pairwise_family is not None and pairwise_family != family:
            raise RunConfigError(
                gettext_noop(
                    "template %(template)s belongs to the %(family)s family, but the run asks for %(asked)s"
                ),
                template=str(template),
                family=family,
                asked=pairwise_family,
            )
    chunk_size = check_chunk_size(options.get("chunk_size"))
    if not isinstance(options.get("sampling") or {}, Mapping):
        raise RunConfigError(
            gettext_noop("sampling must be an object such as %(example)s"), example='{"temperature": 0}'
        )
    overrides = dict(options.get("sampling") or {})
    for key in ("seed", "max_tokens"):
        if options.get(key) is not None:
            overrides[key] = options[key]
    sampling, sampling_sources = judge_sampling(template=template, endpoint=endpoint, explicit=overrides)
    seed = options.get("seed") if options.get("seed") is not None else 0
    config = {
        "sampling": sampling.to_dict(),
        "sampling_sources": sampling_sources,
        "seed": seed,
        "chunk_size": chunk_size,
        "structured_output": bool(options.get("structured_output", True)),
        "on_one_error": options.get("on_one_error", "use_other"),
        "models": list(options.get("models") or []),
        "generation_run_ids": list(options.get("generation_run_ids") or []),
        "per_turn": bool(options.get("per_turn", False)),
    }
    if options.get("preset"):
        config["preset"] = check_preset(options["preset"], kind=PRESET_JUDGE)
    if config["on_one_error"] not in ("use_other", "error"):
        raise RunConfigError("on_one_error must be 'use_other' or 'error'")
    limit = options.get("explanation_max_chars")
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_EXPLANATION_CHARS:
            raise RunConfigError(
                f"explanation_max_chars must be a whole number from 1 to {MAX_EXPLANATION_CHARS}, "
                f"got {clipped(repr(limit))}"
            )
        config["explanation_max_chars"] = limit
    config["samples"] = _check_samples(options.get("samples"), sampling)
    if annotation_project is not None and judge_kind == PAIRWISE and not annotation_project.is_pairwise:
        raise RunConfigError(gettext_noop("a pairwise judge needs a pairwise annotation project"))
    run = JudgeRun.objects.create(
        judge_kind=judge_kind,
        endpoint=endpoint,
        template=template,
        source=JudgeRun.Source.DATASET if dataset is not None else JudgeRun.Source.ANNOTATION_PROJECT,
        dataset=dataset,
        annotation_project=annotation_project,
        order_mode=order_mode,
        pairwise_family=family,
        config=config,
        name=name,
        created_by=user,
    )
    if dataset is not None:
        items = selectors.judge_targets_from_dataset(
            dataset_id=dataset.pk,
            judge_kind=judge_kind,
            model_names=config["models"],
            generation_run_ids=config["generation_run_ids"],
            per_turn=config["per_turn"],
        )
    else:
        items = selectors.judge_targets_from_annotation_project(
            project_id=annotation_project.pk, judge_kind=judge_kind
        )
    if judge_kind == PAIRWISE:
        for item in items:
            if order_mode == JudgeRun.OrderMode.BOTH:
                item["orders"] = [Judgment.Order.AB, Judgment.Order.BA]
            else:
                item["orders"] = [Judgment.Order.AB if _coin(seed, item["key"]) else Judgment.Order.BA]
    items = sampled_items(items, config["samples"])
    chunks_create(run=run, endpoint=endpoint, items=items, chunk_size=chunk_size)
    run_launch(run=run, n_total=len(items))
    return run


def _check_samples(value: Any, sampling: SamplingParams) -> int:
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SAMPLES:
        raise RunConfigError(
            f"samples must be a whole number from 1 to {MAX_SAMPLES}, got {clipped(repr(value))}"
        )
    if value > 1 and not (sampling.temperature or 0) > 0:
        raise RunConfigError(
            gettext_noop("sampling %(k)s verdicts per item needs a temperature above 0"), k=value
        )
    return value


def sampled_items(items: list[dict[str, Any]], samples: int) -> list[dict[str, Any]]:
    """Each item ``samples`` times: the first keeps its key (a run of one sample is unchanged), the others
    get ``key#s`` and ``sample`` s, so each sampled verdict is its own result, written once."""
    if samples <= 1:
        return items
    return [
        item if s == 0 else {**item, "key": f"{item['key']}#{s}", "sample": s}
        for item in items
        for s in range(samples)
    ]


def judge_existing_keys(run: JudgeRun, items: list[dict[str, Any]]) -> set[str]:
    keys = [item["key"] for item in items]
    if run.judge_kind == PAIRWISE:
        return set(
            PairVerdict.objects.filter(judge_run=run, target_key__in=keys).values_list(
                "target_key", flat=True
            )
        )
    return set(
        Judgment.objects.filter(judge_run=run, target_key__in=keys).values_list("target_key", flat=True)
    )


def _judge_messages(
    run: JudgeRun, template: DomainTemplate, item: dict[str, Any], order: str, prompts, responses, overrides
) -> list[dict[str, str]]:
    prompt = prompts[item["prompt"]]
    first = responses[item["a"]]
    if run.judge_kind == PAIRWISE:
        second = responses[item["b"]]
        shown = (first.turns, second.turns) if order == Judgment.Order.AB else (second.turns, first.turns)
        # A verdict on one turn shows the conversation up to it, with both assistants' earlier answers.
        return render_pairwise(
            template,
            user_turns=prompt.turns,
            response_1=shown[0],
            response_2=shown[1],
            turn_index=item["turn"],
        )
    turn = item["turn"]
    if run.judge_kind == SINGLE_GRADE:
        aspects = aspects_for(prompt.category or "general", template.language, overrides)
        return render_single_grade(
            template,
            user_turns=prompt.turns,
            answer_turns=first.turns,
            turn_index=turn,
            category=prompt.category or "general",
            references=prompt.references or None,
            aspects=aspects,
        )
    if turn >= len(first.turns):
        raise TemplateError(f"the response has no turn {turn + 1}")
    return render_factual(
        template, question=prompt.turns[turn], gold=prompt.references[turn], answer=first.turns[turn]
    )


def _judgment_row(run: JudgeRun, item: dict[str, Any], order: str, parsed: ParseResult, result) -> Judgment:
    shown = ""
    verdict = ""
    score = None
    if parsed.ok:
        if run.judge_kind == PAIRWISE:
            shown = str(parsed.value)
            verdict = canonical_verdict(shown, order)
        else:
            score = float(parsed.value)
    return Judgment(
        judge_run=run,
        target_key=item["key"],
        prompt_id=item["prompt"],
        response_a_id=item["a"],
        response_b_id=item.get("b"),
        turn=item["turn"],
        annotation_task_id=item.get("task"),
        order=order,
        sample=item.get("sample", 0),
        template_kind=run.template.kind,
        template_version=run.template.version,
        raw_output=result.text,
        parse_status=Judgment.ParseStatus.OK if parsed.ok else Judgment.ParseStatus.ERROR,
        parse_reason=parsed.reason[:200],
        shown_verdict=shown,
        verdict=verdict,
        score=score,
        explanation=parsed.explanation or "",
        latency_s=result.latency_s,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
    )


def _pair_verdict(
    run: JudgeRun, item: dict[str, Any], parsed_by_order: dict[str, ParseResult]
) -> PairVerdict:
    if len(parsed_by_order) == 2:
        combined = combine_two_orders(
            parsed_by_order[Judgment.Order.AB],
            parsed_by_order[Judgment.Order.BA],
            on_one_error=run.config.get("on_one_error", "use_other"),
        )
        verdict, consistency, reason = combined.verdict, combined.consistency, combined.reason
    else:
        ((order, parsed),) = parsed_by_order.items()
        if parsed.ok:
            verdict = canonical_verdict(str(parsed.value), order)
            consistency, reason = PairVerdict.Consistency.SINGLE, f"one order ({order})"
        else:
            verdict, consistency, reason = (
                "error",
                PairVerdict.Consistency.ERROR,
                "the only order failed to parse",
            )
    return PairVerdict(
        judge_run=run,
        target_key=item["key"],
        prompt_id=item["prompt"],
        response_a_id=item["a"],
        response_b_id=item["b"],
        turn=item["turn"],
        annotation_task_id=item.get("task"),
        verdict=verdict,
        consistency=consistency,
        reason=reason[:200],
        sample=item.get("sample", 0),
    )


def judge_compute(
    *,
    run: JudgeRun,
    items: list[dict[str, Any]],
    endpoint: ModelEndpoint,
    on_outcomes: Callable[[list[ItemOutcome]], Any] | None = None,
    stop: threading.Event | None = None,
) -> list[ItemOutcome]:
    """The chunk's judge calls in concurrent batches of about the endpoint's concurrency (whole items),
    each batch parsed and combined per item; ``on_outcomes`` gets each batch's outcomes as it ends.

    Once ``stop`` is set no further request is sent; an item with a request not sent has no outcome."""
    backend = endpoint_backend(endpoint)
    template = to_domain_template(run.template)
    sampling = SamplingParams.from_dict(run.config["sampling"])
    schema = dict(template.output_schema) if run.config.get("structured_output", True) else None
    if schema is not None and run.config.get("explanation_max_chars"):
        schema = with_explanation_limit(schema, run.config["explanation_max_chars"])
    prompts = Prompt.objects.in_bulk({item["prompt"] for item in items})
    response_ids = {item["a"] for item in items} | {item["b"] for item in items if item.get("b")}
    responses = Response.objects.in_bulk(response_ids)
    overrides = (
        selectors.aspect_overrides(project_id=run.annotation_project_id)
        if run.judge_kind == SINGLE_GRADE
        else None
    )

    errors: dict[str, str] = {}
    requests: list[ChatRequest] = []
    for item in items:
        orders = item.get("orders") or [Judgment.Order.SINGLE]
        try:
            if item["prompt"] not in prompts or any(
                rid not in responses for rid in (item["a"], item.get("b")) if rid is not None
            ):
                raise TemplateError("the prompt or a response no longer exists")
            for order in orders:
                messages = _judge_messages(run, template, item, order, prompts, responses, overrides)
                requests.append(
                    ChatRequest(
                        messages=messages,
                        sampling=_sample_sampling(sampling, item.get("sample", 0)),
                        response_format=schema,
                        request_id=f"{item['key']}|{order}",
                    )
                )
        except (TemplateError, IndexError) as exc:
            errors[item["key"]] = f"cannot build the judge prompt: {exc}"
    outcomes: list[ItemOutcome] = []
    for batch in _batches(items, requests, max(1, endpoint.max_concurrency)):
        if stopped(stop):
            break
        generated = backend.generate(_requests_of(batch, requests), stop=stop)
        batch_outcomes = _judge_outcomes(run, batch, generated, errors)
        outcomes += batch_outcomes
        if on_outcomes is not None:
            on_outcomes(batch_outcomes)
    return outcomes


def _sample_sampling(sampling: SamplingParams, sample: int) -> SamplingParams:
    """The sampling of the item's ``sample``-th verdict: the run's, with the seed moved on by ``sample`` so
    that k samples are k draws, not one draw repeated."""
    if sample == 0 or sampling.seed is None:
        return sampling
    return sampling.replace(seed=sampling.seed + sample)


def _requests_of(items: list[dict[str, Any]], requests: list[ChatRequest]) -> list[ChatRequest]:
    keys = {item["key"] for item in items}
    return [r for r in requests if r.request_id.rpartition("|")[0] in keys]


def _batches(
    items: list[dict[str, Any]], requests: list[ChatRequest], size: int
) -> list[list[dict[str, Any]]]:
    """Whole items, about ``size`` requests a batch (an item with more orders than ``size`` alone)."""
    per_item: dict[str, int] = {}
    for request in requests:
        key = request.request_id.rpartition("|")[0]
        per_item[key] = per_item.get(key, 0) + 1
    batches: list[list[dict[str, Any]]] = [[]]
    n_requests = 0
    for item in items:
        n = per_item.get(item["key"], 0)
        if batches[-1] and n_requests + n > size:
            batches.append([])
            n_requests = 0
        batches[-1].append(item)
        n_requests += n
    return [b for b in batches if b]


def _judge_outcomes(
    run: JudgeRun, items: list[dict[str, Any]], generated: list[Any], errors: dict[str, str]
) -> list[ItemOutcome]:
    results = {result.request_id: result for result in generated}
    allow_tie = run.judge_kind == PAIRWISE and run.pairwise_family == WITH_TIE
    outcomes = []
    for item in items:
        key = item["key"]
        if key in errors:
            outcomes.append(ItemOutcome(key=key, error=errors[key]))
            continue
        orders = item.get("orders") or [Judgment.Order.SINGLE]
        item_results = {order: results[f"{key}|{order}"] for order in orders}
        if any(r.cancelled for r in item_results.values()):
            continue  # not sent: neither done nor failed
        failed = next((r for r in item_results.values() if not r.ok), None)
        if failed is not None:
            outcomes.append(ItemOutcome(key=key, error=failed.error))
            continue
        parsed = {
            order: parse_judge_output(
                r.text, run.judge_kind, allow_tie=allow_tie, truncated=r.finish_reason == "length"
            )
            for order, r in item_results.items()
        }
        rows: list[Any] = [
            _judgment_row(run, item, order, parsed[order], item_results[order]) for order in orders
        ]
        if run.judge_kind == PAIRWISE:
            rows.append(_pair_verdict(run, item, parsed))
        outcomes.append(ItemOutcome(key=key, rows=rows))
    return outcomes


def judge_chunk_process(*, chunk: RunChunk, run: JudgeRun) -> bool:
    def compute(**kwargs: Any) -> list[ItemOutcome]:
        # Finished items are written batch by batch, so the run's progress moves before the chunk ends.
        return judge_compute(
            **kwargs, on_outcomes=lambda done: chunk_results_write(chunk=chunk, outcomes=done)
        )

    return chunk_process(chunk=chunk, run=run, existing_keys=judge_existing_keys, compute=compute)
