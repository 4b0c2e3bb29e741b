"""Reads of the error-span jobs (MQM, ESA): the blinded task, a submission's spans for its reviewer, and
the rows the scores are computed from.

The annotator's view carries the source, the translation, languages, register, flags, the category tree
and the task's suggested spans: no unit, dataset or system name (the system is the unit's translator, a
model's name when the translation was generated).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from annotation.domain.error_spans import ErrorSpan as DomainSpan
from annotation.domain.error_spans import (
    InjectedError,
    SegmentRating,
    SystemScore,
    attention_scores,
    esa_report,
    mqm_report,
    span_agreement,
    tree_to_json,
)
from annotation.domain.span_marking import ESA, text_pieces
from annotation.domain.span_settings import SpanConfig, span_config
from annotation.models import (
    Annotation,
    Assignment,
    AttentionCheck,
    ErrorSpan,
    Project,
    SpanSuggestion,
    Task,
)
from annotation.selectors.base import done_count
from annotation.selectors.jobs import JobTaskView, flag_views, language_label, register_label

__all__ = [
    "attention_check_count",
    "attention_check_scores",
    "shown_target",
    "task_with_text",
    "span_settings_text",
    "span_agreement_summary",
    "score_bars",
    "span_scores_report",
    "span_config_of",
    "span_score_rows",
    "span_task_view",
    "spans_shown",
]


def shown_target(task: Task) -> str:
    """The translation annotators see on ``task``: its unit's, or an attention check's copy with the
    injected error (read once per task object)."""
    try:
        return task.attention_check.target_text
    except AttentionCheck.DoesNotExist:
        return task.translation_unit.translation_text


def task_with_text(task_id: int) -> Task:
    """A span task with its unit and its attention check (if any) in one query."""
    return Task.objects.select_related("translation_unit", "attention_check").get(pk=task_id)


def span_config_of(project: Project) -> SpanConfig:
    return span_config(project.span_settings or {}, protocol=_protocol(project))


def _protocol(project: Project) -> str:
    return ESA if project.kind == Project.Kind.TRANSLATION_ESA else "mqm"


def spans_shown(
    spans: Iterable[ErrorSpan], *, source: str, target: str, labels: dict[str, str]
) -> dict[str, Any]:
    """Stored spans of one round for a page: the list (removed suggestions apart) and both texts cut into
    pieces that know which spans cover them."""
    kept, removed = [], []
    for s in spans:
        row = {
            "side": s.side,
            "start": s.start,
            "end": s.end,
            "text": (source if s.side == ErrorSpan.Side.SOURCE else target)[s.start : s.end],
            "category": s.category,
            "category_label": labels.get(s.category, s.category),
            "severity": s.severity,
            "origin": s.origin,
            "outcome": s.outcome,
            "comment": s.comment,
            "suggestion": s.suggestion_id,
        }
        (removed if s.outcome == ErrorSpan.Outcome.REMOVED else kept).append(row)
    for number, row in enumerate(kept, start=1):
        row["number"] = number
    return {
        "spans": kept,
        "removed": removed,
        "target_pieces": text_pieces(
            target,
            [(r["start"], r["end"], r["severity"]) if r["side"] == "target" else (0, 0, "") for r in kept],
        ),
        "source_pieces": text_pieces(
            source,
            [(r["start"], r["end"], r["severity"]) if r["side"] == "source" else (0, 0, "") for r in kept],
        ),
    }


def span_task_view(*, assignment: Assignment, lang: str) -> JobTaskView:
    """The blinded error-span task for the task page, the API and the reviewer."""
    project = assignment.project
    lang = "id" if lang.startswith("id") else "en"
    task = task_with_text(assignment.task_id)
    unit = task.translation_unit
    target = shown_target(task)
    config = span_config_of(project)
    categories = config.labelled(lang)
    labels = {c["code"]: c["label"] for c in categories}
    suggestions = [
        {
            "id": s.pk,
            "side": s.side,
            "start": s.start,
            "end": s.end,
            "category": s.category,
            "category_label": labels.get(s.category, s.category),
            "severity": s.severity,
            "source": s.source,
            # A flag's code helps; a judge's words stay with the manager (they may name the model).
            "note": s.note if s.source == SpanSuggestion.Source.FLAGS else "",
        }
        for s in SpanSuggestion.objects.filter(task_id=assignment.task_id).order_by(
            "side", "start", "end", "id"
        )
    ]
    item: dict[str, Any] = {
        "protocol": config.protocol,
        "source": unit.source_text,
        "translation": target,
        "source_language": language_label(unit.source_language, lang),
        "target_language": language_label(unit.target_language, lang),
        "register": register_label(unit.target_language, unit.register, lang),
        "flags": flag_views(unit.flags, lang),
        "categories": categories,
        "severities": list(config.severities),
        "suggestions": suggestions,
    }
    values: dict[str, Any] = {}
    if assignment.status == Assignment.Status.SUBMITTED or assignment.round > 1:
        # The round's answer; a reopened round (sent back, or opened from My work) starts from the last one.
        row = (
            Annotation.objects.filter(assignment=assignment, round__lte=assignment.round)
            .order_by("-round")
            .first()
        )
        stored = list(ErrorSpan.objects.filter(assignment=assignment, round=row.round)) if row else []
        if row is not None:
            shown = spans_shown(stored, source=unit.source_text, target=target, labels=labels)
            values = {
                "spans": [
                    {
                        k: r[k]
                        for k in ("side", "start", "end", "category", "severity", "suggestion", "comment")
                    }
                    for r in shown["spans"]
                ],
                "no_error": row.choice == "no_error",
                "score": row.value_int if config.protocol == ESA else None,
            }
            item["marked"] = shown
    return JobTaskView(
        token=assignment.token,
        kind=project.kind,
        status=assignment.status,
        round=assignment.round,
        project_id=project.pk,
        project_name=project.name,
        instructions={"id": project.instructions_id, "en": project.instructions_en},
        done=done_count(project_id=project.pk, user_id=assignment.annotator_id),
        total=project.n_tasks,
        lease_expires_at=assignment.lease_expires_at
        if assignment.status == Assignment.Status.ASSIGNED
        else None,
        item=item,
        values=values,
    )


def span_score_rows(project: Project, *, named: bool = False) -> list[SegmentRating]:
    """Every counted submission of ``project`` as a rating for the score functions (two queries).

    The system is the unit's translator (the model or person whose translation it is); a segment is the
    unit's source within its language pair and register, so every system's translation of one source is
    the same segment. Raters are numbered pseudonyms (``named``: their user names, for managers' pages).
    Removed suggestions come along (they count in no
    score; the export reads what became of them). Answers to attention checks are left out
    (``attention_check_scores`` reads them).
    """
    answers = list(
        Annotation.objects.counted()
        .filter(
            assignment__project=project,
            criterion=_protocol(project),
            assignment__task__attention_check__isnull=True,
        )
        .select_related("assignment__task__translation_unit", "assignment__annotator")
        .order_by("assignment_id")
    )
    spans: dict[tuple[int, int], list[DomainSpan]] = {}
    stored = ErrorSpan.objects.filter(
        assignment__project=project, assignment__task__attention_check__isnull=True
    ).select_related("suggestion")
    for s in stored.order_by("assignment_id", "round", "side", "start", "end", "id"):
        origin = s.suggestion.source if s.suggestion is not None else "annotator"
        spans.setdefault((s.assignment_id, s.round), []).append(
            DomainSpan(s.start, s.end, s.side, s.category, s.severity, origin, s.outcome)
        )
    raters: dict[int, str] = {}
    rows = []
    for answer in answers:
        assignment = answer.assignment
        unit = assignment.task.translation_unit
        rater = raters.setdefault(
            assignment.annotator_id,
            assignment.annotator.get_username() if named else f"R{len(raters) + 1}",
        )
        segment = (unit.meta or {}).get("segment") or unit.source_text
        rows.append(
            SegmentRating(
                system=unit.translator_name or (unit.meta or {}).get("system", "") or "—",
                segment=f"{unit.source_language}>{unit.target_language}:{unit.register}:{segment}",
                rater=rater,
                spans=tuple(spans.get((assignment.pk, answer.round), ())),
                score=float(answer.value_int) if answer.criterion == ESA else None,
                language=unit.target_language,
                register=unit.register,
            )
        )
    return rows


def attention_check_count(project: Project) -> int:
    return AttentionCheck.objects.filter(task__project=project).count()


def attention_check_scores(project: Project) -> dict[int, dict[str, Any]]:
    """Per annotator (user id) who submitted an attention check of ``project``: checks ``seen``, ``found``,
    ``missed`` and ``share`` found (``error_spans.attention_scores``; the category must agree too when the
    project's setting says so). Two queries."""
    checks = {c.task_id: c for c in AttentionCheck.objects.filter(task__project=project).order_by("task_id")}
    if not checks:
        return {}
    answers = list(
        Annotation.objects.counted()
        .filter(assignment__project=project, criterion=_protocol(project), assignment__task_id__in=checks)
        .values_list("assignment_id", "round", "assignment__task_id", "assignment__annotator_id")
    )
    spans: dict[tuple[int, int], list[DomainSpan]] = {}
    stored = ErrorSpan.objects.filter(assignment_id__in=[a[0] for a in answers]).order_by("id")
    for s in stored.values_list(
        "assignment_id", "round", "start", "end", "side", "category", "severity", "outcome"
    ):
        spans.setdefault((s[0], s[1]), []).append(DomainSpan(s[2], s[3], s[4], s[5], s[6], "annotator", s[7]))
    ratings = [
        SegmentRating("check", str(task_id), str(user_id), spans=tuple(spans.get((aid, rnd), ())))
        for aid, rnd, task_id, user_id in answers
    ]
    injected = [
        InjectedError(
            "check", str(task_id), DomainSpan(c.start, c.end, "target", c.category, c.severity), c.kind
        )
        for task_id, c in checks.items()
    ]
    match = span_config_of(project).checks.match_category
    return {
        int(score.rater): {
            "seen": score.checked,
            "found": score.found,
            "missed": score.missed,
            "share": score.share,
        }
        for score in attention_scores(injected, ratings, match_category=match)
    }


def _score(s: SystemScore, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "system": s.system,
        "score": s.score,
        "ci95": list(s.ci95) if s.ci95 else None,
        "segments": s.segments,
        "ratings": s.ratings,
        "errors": s.errors,
        "by_category": s.by_category,
        "by_category_named": [(labels.get(k, k), v) for k, v in s.by_category.items()],
        "by_severity": s.by_severity,
    }


def span_scores_report(
    project: Project, *, lang: str = "en", draws: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """System scores of an error-span project (MQM points, lower is better; or ESA's mean 0-100, higher is
    better) with bootstrap intervals over segments, per language and register, and the raters' agreement
    on spans: ``annotation.domain.error_spans`` computes every number, as for ``mqm_scores``."""
    config = span_config_of(project)
    ratings = span_score_rows(project)
    labels = {c["code"]: c["label"] for c in config.labelled(lang)}
    out: dict[str, Any] = {
        "protocol": config.protocol,
        "higher_is_better": config.protocol == ESA,
        "ratings": len(ratings),
        "draws": draws,
        "seed": seed,
        "systems": [],
        "by_language": {},
        "by_register": {},
        "agreement": None,
    }
    if not ratings:
        return out
    if config.protocol == ESA:
        report = esa_report(ratings, draws=draws, seed=seed)
    else:
        report = mqm_report(ratings, config.weights, draws=draws, seed=seed)
        out["weights"] = config.weights.as_json()
    out["systems"] = [_score(s, labels) for s in report.systems]
    out["by_language"] = {k: [_score(s, labels) for s in v] for k, v in report.by_language.items()}
    out["by_register"] = {k: [_score(s, labels) for s in v] for k, v in report.by_register.items()}
    agreement = span_agreement(ratings, config.weights)
    out["agreement"] = {
        "char_f1": agreement.char_f1,
        "severity_weighted": agreement.severity_weighted,
        "span_match": agreement.span_match,
        "segments": agreement.n_segments,
        "pairs": agreement.n_pairs,
        "by_pair": [
            {
                "rater_a": p.rater_a,
                "rater_b": p.rater_b,
                "segments": p.segments,
                "char_f1": p.char_f1,
                "severity_weighted": p.severity_weighted,
                "precision": p.precision,
                "recall": p.recall,
            }
            for p in agreement.pairs
        ],
    }
    return out


def span_settings_text(project: Project) -> str:
    """The category tree and weights in use, as the JSON a manager edits on the project page."""
    config = span_config_of(project)
    data = {"categories": tree_to_json(config.tree), "weights": config.weights.as_json()}
    if (project.span_settings or {}).get("attention_checks") is not None:
        data["attention_checks"] = config.checks.as_json()
    return json.dumps(data, ensure_ascii=False, indent=2)


def span_agreement_summary(project: Project) -> dict[str, Any]:
    """The raters' agreement on spans alone (no bootstrap), by user name: the project page's quality
    section."""
    agreement = span_agreement(span_score_rows(project, named=True), span_config_of(project).weights)
    return {
        "char_f1": agreement.char_f1,
        "severity_weighted": agreement.severity_weighted,
        "span_match": agreement.span_match,
        "segments": agreement.n_segments,
        "pairs": agreement.n_pairs,
        "by_pair": agreement.pairs,
    }


def score_bars(systems: list[dict[str, Any]], *, width: int = 560, row: int = 26) -> dict[str, Any]:
    """An SVG bar chart of system scores with their 95% intervals (coordinates only; the page draws it)."""
    if not systems:
        return {"bars": [], "width": width, "height": 0}
    label_w, pad = 160, 50
    top = max(max(s["score"], (s["ci95"] or [0, 0])[1]) for s in systems) or 1.0
    scale = (width - label_w - pad) / top
    bars = []
    for i, s in enumerate(systems):
        lo, hi = s["ci95"] or (s["score"], s["score"])
        bars.append(
            {
                "system": s["system"],
                "y": i * row + 4,
                "text_y": i * row + row // 2 + 4,
                "w": max(1.0, s["score"] * scale),
                "x0": label_w,
                "ci_x1": label_w + lo * scale,
                "ci_x2": label_w + hi * scale,
                "ci_y": i * row + row // 2,
                "value_x": label_w + max(s["score"], hi) * scale + 6,
                "score": s["score"],
            }
        )
    return {"bars": bars, "width": width, "height": len(systems) * row + 8, "label_w": label_w}
