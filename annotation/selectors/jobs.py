"""Reads of the translation and question jobs: blinded task views, round tables, manager reports.

What an annotator gets (``job_task_view``) carries no unit, question or dataset id, no author of a
question, and names a translator only by pseudonym (``translator_pseudonym``).
"""

from __future__ import annotations

import functools
import io
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.utils.crypto import salted_hmac

from annotation.domain.taxonomy import TaxonomyReview, TaxonomyShares, question_labels, taxonomy_shares
from annotation.models import (
    Annotation,
    Assignment,
    Project,
    QuestionErrorReview,
    QuestionRound,
    Review,
    TranslationError,
    TranslationRound,
)
from annotation.selectors.base import done_count
from datasets_app.domain.csv_cells import SafeWriter, frame_to_csv
from datasets_app.domain.languages import LANGUAGES, registers_for
from datasets_app.domain.questions import (
    CHOICE_LABELS,
    OPTIONS,
    QUESTION,
    ConflictMatrix,
    TaxonomySummary,
    ambiguous_exclusions,
    answer_conflict_matrix,
    error_taxonomy_summary,
    taxonomy_from_data,
)
from datasets_app.domain.text_diff import diff_words
from datasets_app.domain.translation_flags import (
    BACK_TRANSLATION_CHRF,
    BACK_TRANSLATION_MEASURES,
    FLAG_TITLES,
    LOW_BACK_TRANSLATION,
)
from datasets_app.models import Question, TranslationUnit

__all__ = [
    "AuthoringReport",
    "JobTaskView",
    "McqReport",
    "TranslationReport",
    "ambiguous_counts",
    "authoring_report",
    "conflict_matrix",
    "conflict_matrix_csv",
    "flag_views",
    "job_task_view",
    "llm_questions",
    "mcq_answer_rows",
    "mcq_report",
    "question_review_item",
    "round_views",
    "taxonomy_labels_csv",
    "translation_report",
    "translator_pseudonym",
    "unit_round_table",
]

# --- pseudonyms and labels -------------------------------------------------------------------------------


def translator_pseudonym(dataset_id: int, user_id: int | None = None, name: str = "") -> str:
    """A stable, non-reversible name for a translator within one dataset ("T-3FA9C1"): reviewers and the
    exported corpus can tell translators apart without learning who they are."""
    if user_id is None and not name:
        return "T-?"
    key = f"u{user_id}" if user_id is not None else f"n{name}"
    return "T-" + salted_hmac("timbang.translator-pseudonym", f"{dataset_id}:{key}").hexdigest()[:6].upper()


def language_label(code: str, lang: str) -> dict[str, str]:
    language = LANGUAGES.get(code)
    if language is None:
        return {"code": code, "name": code}
    return {"code": code, "name": language.name_id if lang == "id" else language.name_en}


def register_label(language: str, code: str, lang: str) -> dict[str, str] | None:
    if not code:
        return None
    for register in registers_for(language):
        if register.code == code:
            return {
                "code": code,
                "name": register.name_id if lang == "id" else register.name_en,
                "description": register.description_id if lang == "id" else register.description_en,
            }
    return {"code": code, "name": code, "description": ""}


def error_labels(codes: Iterable[str]) -> list[str]:
    labels = dict(TranslationError.choices)
    return [str(labels.get(code, code)) for code in codes]


def flag_views(flags: Iterable[dict[str, Any]], lang: str) -> list[dict[str, str]]:
    """Stored flags in the UI language (bilingual messages come from the domain)."""
    out = []
    for flag in flags or []:
        title = (
            flag.get("title_id" if lang == "id" else "title_en") or FLAG_TITLES.get(flag["code"], ("", ""))[0]
        )
        out.append(
            {
                "code": flag["code"],
                "severity": flag.get("severity", "warning"),
                "title": title,
                "message": flag.get("message_id" if lang == "id" else "message_en", ""),
            }
        )
    return out


# --- the annotator's view ------------------------------------------------------------------------------


@dataclass
class JobTaskView:
    token: str
    kind: str
    status: str
    round: int
    project_id: int
    project_name: str
    instructions: dict[str, str]
    done: int
    total: int
    lease_expires_at: Any
    item: dict[str, Any]
    values: dict[str, Any] = field(default_factory=dict)
    review_comment: str = ""
    criteria: list = field(default_factory=list)
    is_pairwise: bool = False

    @functools.cached_property
    def page_key(self) -> tuple[Any, ...]:
        """What the task page's kept parts (``{% memo %}``) show that a project's tasks share (as
        ``TaskView.page_key``)."""
        return (
            self.kind,
            self.status,
            self.project_id,
            self.instructions.get("id", ""),
            self.instructions.get("en", ""),
            self.review_comment,
        )

    def as_payload(self) -> dict[str, Any]:
        return {
            "task": self.token,
            "kind": self.kind,
            "status": self.status,
            "round": self.round,
            "project": {"id": self.project_id, "name": self.project_name},
            "instructions": self.instructions,
            "item": self.item,
            "progress": {"done": self.done, "total": self.total},
            "lease_expires_at": self.lease_expires_at.isoformat() if self.lease_expires_at else None,
            "current": self.values,
            "review_comment": self.review_comment,
        }


def round_views(
    unit: TranslationUnit, lang: str, *, rounds: Iterable[TranslationRound] | None = None
) -> list[dict]:
    """The unit's rounds for people who may see its history, translators as pseudonyms, fixes as diffs."""
    rounds = list(
        rounds if rounds is not None else TranslationRound.objects.filter(unit=unit).order_by("round")
    )
    views = []
    for r in rounds:
        views.append(
            {
                "round": r.round,
                "translator": translator_pseudonym(unit.dataset_id, r.translator_id, r.translator_name),
                "text": r.translation_text,
                "verdict": r.verdict,
                "verdict_label": str(TranslationRound.Verdict(r.verdict).label) if r.verdict else "",
                "categories": error_labels(r.error_categories),
                "comment": r.comment,
                "fixed_text": r.fixed_text,
                "diff": diff_words(r.translation_text, r.fixed_text).as_dicts() if r.fixed_text else [],
                "flags": flag_views(r.flags, lang),
            }
        )
    return views


def _unit_common(unit: TranslationUnit, lang: str) -> dict[str, Any]:
    return {
        "source": unit.source_text,
        "source_language": language_label(unit.source_language, lang),
        "target_language": language_label(unit.target_language, lang),
        "register": register_label(unit.target_language, unit.register, lang),
    }


def _translation_item(assignment: Assignment, lang: str) -> tuple[dict, dict, str]:
    unit = assignment.task.translation_unit
    rounds = list(TranslationRound.objects.filter(unit=unit).order_by("round"))
    item = _unit_common(unit, lang)
    own = [r for r in rounds if r.translation_assignment_id == assignment.pk]
    values: dict[str, Any] = {}
    comment = ""
    if own:
        values["translation"] = own[-1].translation_text
    elif unit.translation_text:  # an imported translation sent back for revision
        values["translation"] = unit.translation_text
    rejected = [r for r in rounds if r.verdict == TranslationRound.Verdict.REJECT]
    if unit.status == TranslationUnit.Status.REVISE and rejected:
        last = rejected[-1]
        item["returned"] = {"categories": error_labels(last.error_categories), "comment": last.comment}
        comment = last.comment
    return item, values, comment


def _review_item(assignment: Assignment, lang: str) -> tuple[dict, dict]:
    unit = assignment.task.translation_unit
    rounds = list(TranslationRound.objects.filter(unit=unit).order_by("round"))
    item = _unit_common(unit, lang)
    current = rounds[-1] if rounds else None
    reviewing_own_round = current is not None and current.review_assignment_id == assignment.pk
    # After the verdict the unit's text may be the reviewer's fix; show what was reviewed.
    item["translation"] = current.translation_text if current else unit.translation_text
    translator_id = current.translator_id if current else unit.translator_id
    name = current.translator_name if current else unit.translator_name
    item["translator"] = translator_pseudonym(unit.dataset_id, translator_id, name)
    item["round"] = current.round if current else 1
    item["flags"] = flag_views(current.flags if current and current.flags else unit.flags, lang)
    item["history"] = round_views(unit, lang, rounds=rounds[:-1] if rounds else [])
    item["error_categories"] = [{"code": c, "label": str(label)} for c, label in TranslationError.choices]
    values: dict[str, Any] = {}
    if reviewing_own_round and current.verdict:
        values = {
            "verdict": current.verdict,
            "error_categories": list(current.error_categories),
            "comment": current.comment,
            "fixed_text": current.fixed_text,
        }
        if current.fixed_text:
            item["diff"] = diff_words(current.translation_text, current.fixed_text).as_dicts()
    return item, values


def _authoring_item(assignment: Assignment, lang: str) -> tuple[dict, dict, str]:
    pair = assignment.task.concept_pair
    item = {
        "category": pair.category,
        "concept": pair.concept,
        "language": language_label(pair.language, lang),
        "labels": list(CHOICE_LABELS),
    }
    values: dict[str, Any] = {}
    comment = ""
    if assignment.task.question_id:
        last = (
            QuestionRound.objects.filter(question_id=assignment.task.question_id).order_by("-round").first()
        )
        if last is not None:
            values = {
                "question": last.text,
                "choices": dict(last.choices),
                "answer": last.answer_key,
                "distractor": last.distractor,
                "concept_override": last.concept_override,
                "override_comment": last.override_comment,
            }
        if assignment.round > 1:
            comment = (
                Review.objects.filter(assignment=assignment, verdict=Review.Verdict.REJECT)
                .order_by("-round", "-id")
                .values_list("comment", flat=True)
                .first()
                or ""
            )
    return item, values, comment


def _mcq_item(assignment: Assignment) -> tuple[dict, dict]:
    question = assignment.task.question
    item = {
        "question": question.text,
        # A question has its own number of options (id-csqa A-E, SeaExam A-D).
        "choices": [
            {"label": label, "text": question.choices[label]}
            for label in CHOICE_LABELS
            if label in question.choices
        ],
        "category": question.category,
        "language": question.language,
    }
    values: dict[str, Any] = {}
    for row in assignment.annotations.filter(round=assignment.round):
        if row.criterion == "choice":
            values["choice"] = row.choice
        elif row.criterion == "ambiguous":
            values["ambiguous"] = True
            values["comment"] = row.comment
        elif row.criterion == "comment":
            values["comment"] = row.comment
    return item, values


def job_task_view(*, assignment: Assignment, lang: str) -> JobTaskView:
    """The blinded task of a translation or question job, for the task page and the API."""
    project = assignment.project
    lang = "id" if lang.startswith("id") else "en"
    comment = ""
    if project.kind == Project.Kind.TRANSLATION:
        item, values, comment = _translation_item(assignment, lang)
    elif project.kind == Project.Kind.TRANSLATION_REVIEW:
        item, values = _review_item(assignment, lang)
    elif project.kind == Project.Kind.QUESTION_AUTHORING:
        item, values, comment = _authoring_item(assignment, lang)
    else:
        item, values = _mcq_item(assignment)
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
        review_comment=comment,
    )


# --- translation: manager report and export --------------------------------------------------------------


@dataclass(frozen=True)
class TranslationReport:
    status_counts: dict[str, int]
    flag_codes: list[str]
    flag_titles: dict[str, str]
    flags_by_pair: list[dict[str, Any]]
    back_translation_flags: list[dict[str, Any]]
    back_translation_flagged: int
    translators: list[dict[str, Any]]
    rounds_distribution: list[tuple[int, int]]
    mean_rounds: float | None
    error_counts: list[tuple[str, int]]


def _measure_title(measure: object, index: int) -> str:
    # Flags stored before the measure became a setting name chrF++ by its title.
    code = BACK_TRANSLATION_CHRF if measure == "chrF++" else measure
    titles = BACK_TRANSLATION_MEASURES.get(code) if isinstance(code, str) else None
    return titles[index] if titles else str(measure or "")


def _back_translation_rows(
    found: list[tuple[int, dict[str, Any]]], *, index: int, limit: int
) -> list[dict[str, Any]]:
    """The ``limit`` back-translation flags of lowest similarity, with their units (one query)."""
    lowest = sorted(found, key=lambda item: (float(item[1].get("similarity", 0.0)), item[0]))[:limit]
    units = TranslationUnit.objects.in_bulk([unit_id for unit_id, _ in lowest])
    rows = []
    for unit_id, details in lowest:
        unit = units.get(unit_id)
        if unit is None:  # deleted since the first read
            continue
        rows.append(
            {
                "unit": unit.external_id,
                "source": unit.source_text,
                "back_translation": (unit.meta or {}).get("back_translation", ""),
                "language": unit.target_language,
                "register": unit.register,
                "measure": details.get("measure", ""),
                "measure_title": _measure_title(details.get("measure"), index),
                "similarity": details.get("similarity"),
                "threshold": details.get("threshold"),
            }
        )
    return rows


def translation_report(
    *, project: Project, lang: str = "en", back_translation_limit: int = 50
) -> TranslationReport:
    """Flags per language and register, the back-translation flags of lowest similarity (measure,
    similarity, threshold), reject rate per translator, rounds per unit, error categories."""
    units = TranslationUnit.objects.filter(dataset_id=project.dataset_id)
    status_counts = Counter(units.values_list("status", flat=True))
    per_pair: dict[tuple[str, str], Counter] = defaultdict(Counter)
    totals: Counter[tuple[str, str]] = Counter()
    flagged: Counter[tuple[str, str]] = Counter()
    seen_codes: set[str] = set()
    back: list[tuple[int, dict[str, Any]]] = []
    for unit_id, language, register, flags in units.values_list(
        "id", "target_language", "register", "flags"
    ).iterator(2000):
        key = (language, register)
        totals[key] += 1
        codes = {f["code"] for f in flags or []}
        flagged[key] += bool(codes)
        per_pair[key].update(codes)
        seen_codes |= codes
        back.extend(
            (unit_id, f.get("details") or {}) for f in flags or [] if f["code"] == LOW_BACK_TRANSLATION
        )
    flag_codes = [code for code in FLAG_TITLES if code in seen_codes]
    index = 1 if lang == "id" else 0
    flags_by_pair = [
        {
            "language": language,
            "register": register,
            "units": totals[(language, register)],
            "flagged": flagged[(language, register)],
            "counts": [per_pair[(language, register)].get(code, 0) for code in flag_codes],
        }
        for language, register in sorted(totals)
    ]
    rounds = TranslationRound.objects.filter(unit__dataset_id=project.dataset_id)
    per_translator: dict[tuple[int | None, str], Counter] = defaultdict(Counter)
    names: dict[int, str] = {}
    errors: Counter[str] = Counter()
    rounds_per_unit: Counter[int] = Counter()
    for translator_id, username, name, verdict, categories, unit_id in rounds.values_list(
        "translator_id", "translator__username", "translator_name", "verdict", "error_categories", "unit_id"
    ).iterator(2000):
        key = (translator_id, "" if translator_id else name)
        if translator_id:
            names[translator_id] = username
        per_translator[key]["rounds"] += 1
        if verdict:
            per_translator[key]["reviewed"] += 1
            per_translator[key][verdict] += 1
        errors.update(categories or [])
        rounds_per_unit[unit_id] += 1
    translators = []
    for (translator_id, name), counts in sorted(
        per_translator.items(), key=lambda kv: (-kv[1]["rounds"], str(kv[0]))
    ):
        reviewed = counts["reviewed"]
        translators.append(
            {
                "name": names.get(translator_id, name) if translator_id else (name or "—"),
                "pseudonym": translator_pseudonym(project.dataset_id, translator_id, name),
                "rounds": counts["rounds"],
                "reviewed": reviewed,
                "accepted": counts["accept"],
                "fixed": counts["fix"],
                "rejected": counts["reject"],
                "reject_rate": counts["reject"] / reviewed if reviewed else None,
            }
        )
    distribution = sorted(Counter(rounds_per_unit.values()).items())
    n_units = sum(n for _, n in distribution)
    mean = sum(k * n for k, n in distribution) / n_units if n_units else None
    labels = dict(TranslationError.choices)
    error_counts = [(str(labels[code]), errors.get(code, 0)) for code in TranslationError.values]
    return TranslationReport(
        status_counts={s: status_counts.get(s, 0) for s in TranslationUnit.Status.values},
        flag_codes=flag_codes,
        flag_titles={code: FLAG_TITLES[code][index] for code in flag_codes},
        flags_by_pair=flags_by_pair,
        back_translation_flags=_back_translation_rows(back, index=index, limit=back_translation_limit),
        back_translation_flagged=len(back),
        translators=translators,
        rounds_distribution=distribution,
        mean_rounds=mean,
        error_counts=error_counts,
    )


def unit_round_table(*, project: Project, lang: str = "en", limit: int = 50) -> list[dict[str, Any]]:
    """The most recently reviewed units with all their rounds (manager view)."""
    recent = (
        TranslationRound.objects.filter(unit__dataset_id=project.dataset_id)
        .exclude(verdict="")
        .order_by("-reviewed_at", "-id")
        .values_list("unit_id", flat=True)
    )
    unit_ids = list(dict.fromkeys(recent[: limit * 4]))[:limit]
    units = {u.pk: u for u in TranslationUnit.objects.filter(pk__in=unit_ids)}
    by_unit: dict[int, list[TranslationRound]] = defaultdict(list)
    for r in TranslationRound.objects.filter(unit_id__in=unit_ids).order_by("unit_id", "round"):
        by_unit[r.unit_id].append(r)
    return [
        {"unit": units[uid], "rounds": round_views(units[uid], lang, rounds=by_unit[uid])}
        for uid in unit_ids
        if uid in units
    ]


# --- questions -------------------------------------------------------------------------------------------


def mcq_answer_rows(*, project: Project) -> list[dict[str, Any]]:
    """One row per submitted answer (current round): question, creator, answerer, choice, key, score,
    ambiguous flag and comment. One query."""
    rows: dict[int, dict[str, Any]] = {}
    values = (
        Annotation.objects.current()
        .filter(assignment__project=project, criterion__in=["choice", "ambiguous", "comment"])
        .order_by("assignment_id", "id")
        .values_list(
            "assignment_id",
            "criterion",
            "choice",
            "value_int",
            "comment",
            "assignment__task__question_id",
            "assignment__task__question__external_id",
            "assignment__task__question__creator__username",
            "assignment__task__question__creator_name",
            "assignment__task__question__answer_key",
            "assignment__task__question__origin",
            "assignment__annotator__username",
        )
    )
    for (
        aid,
        criterion,
        choice,
        value_int,
        comment,
        qid,
        external,
        creator,
        creator_name,
        key,
        origin,
        who,
    ) in values:
        row = rows.setdefault(
            aid,
            {
                "question_pk": qid,
                "question_id": external,
                "creator": creator or creator_name or "—",
                "answerer": who,
                "choice": "",
                "answer_key": key,
                "correct": None,
                "ambiguous": False,
                "comment": "",
                "origin": origin,
            },
        )
        if criterion == "choice":
            row["choice"] = choice
            row["correct"] = value_int
        elif criterion == "ambiguous":
            row["ambiguous"] = bool(value_int)
            row["comment"] = comment
        else:
            row["comment"] = comment
    return list(rows.values())


def ambiguous_counts(*, project: Project) -> dict[str, int]:
    """Ambiguous flags per question (external id), 0 for questions with answers and no flag."""
    counts: dict[str, int] = {}
    for row in mcq_answer_rows(project=project):
        counts[row["question_id"]] = counts.get(row["question_id"], 0) + int(row["ambiguous"])
    return counts


def conflict_matrix(*, project: Project) -> ConflictMatrix | None:
    answers = [r for r in mcq_answer_rows(project=project) if r["answer_key"]]
    return answer_conflict_matrix(answers) if answers else None


@dataclass(frozen=True)
class McqReport:
    n_questions: int
    n_answers: int
    accuracy: float | None
    status_counts: dict[str, int]
    flag_distribution: list[tuple[int, int]]
    excluded: list[dict[str, Any]]
    answerers: list[dict[str, Any]]
    matrix: dict[str, Any] | None
    taxonomy: TaxonomySummary | None
    taxonomy_labels: dict[str, str]
    option_taxonomy: TaxonomySummary | None = None
    # One label per reviewed LLM-written question (``annotation.domain.taxonomy``).
    taxonomy_shares: TaxonomyShares | None = None


def _heatmap(matrix: ConflictMatrix) -> dict[str, Any]:
    wide = matrix.wide()
    peak = int(wide.to_numpy().max()) if wide.size else 0
    rows = []
    for creator, values in wide.iterrows():
        cells = [
            {"answerer": answerer, "value": int(v), "shade": round(int(v) / peak, 3) if peak else 0.0}
            for answerer, v in values.items()
        ]
        rows.append({"creator": creator, "cells": cells, "total": int(values.sum())})
    return {
        "answerers": [str(c) for c in wide.columns],
        "rows": rows,
        "by_answerer": [int(wide[c].sum()) for c in wide.columns],
        "total": matrix.total_conflicts,
        "total_answers": matrix.total_answers,
    }


def mcq_report(*, project: Project, lang: str = "en") -> McqReport:
    """Answers, scores, ambiguity flags and exclusions, the conflict heatmap and the error taxonomy of
    the project's LLM-written questions."""
    rows = mcq_answer_rows(project=project)
    questions = Question.objects.filter(annotation_tasks__project=project)
    status_counts = Counter(questions.values_list("status", flat=True))
    flags: dict[Hashable, int] = {}
    for row in rows:
        flags[row["question_id"]] = flags.get(row["question_id"], 0) + int(row["ambiguous"])
    over = set(ambiguous_exclusions(flags, project.max_ambiguous))
    excluded = [{"question_id": qid, "flags": flags[qid]} for qid in sorted(over)]
    per_answerer: dict[str, Counter] = defaultdict(Counter)
    scored = correct = 0
    for row in rows:
        counts = per_answerer[row["answerer"]]
        counts["answers"] += 1
        counts["ambiguous"] += int(row["ambiguous"])
        if row["correct"] is not None and row["question_id"] not in over:
            counts["scored"] += 1
            counts["correct"] += row["correct"]
            scored += 1
            correct += row["correct"]
    answerers = [
        {
            "answerer": name,
            "answers": c["answers"],
            "ambiguous": c["ambiguous"],
            "scored": c["scored"],
            "accuracy": c["correct"] / c["scored"] if c["scored"] else None,
        }
        for name, c in sorted(per_answerer.items())
    ]
    answered = [r for r in rows if r["answer_key"]]
    matrix = _heatmap(answer_conflict_matrix(answered)) if answered else None
    reviews = QuestionErrorReview.objects.filter(project=project)
    categories = taxonomy_from_data(project.error_taxonomy)
    per_question: dict[int, set[str]] = defaultdict(set)
    per_options: dict[int, set[str]] = defaultdict(set)
    for question_id, errors, option_errors in reviews.values_list("question_id", "errors", "option_errors"):
        per_question[question_id].update(errors)
        per_options[question_id].update(option_errors)
    # Question errors and option errors are summarised apart, each over the categories that apply to it.
    taxonomy = (
        error_taxonomy_summary(
            per_question, categories=[c.code for c in categories if QUESTION in c.applies_to]
        )
        if per_question
        else None
    )
    option_taxonomy = (
        error_taxonomy_summary(
            per_options, categories=[c.code for c in categories if OPTIONS in c.applies_to]
        )
        if per_options
        else None
    )
    llm_reviews = _llm_taxonomy_reviews(project)
    return McqReport(
        n_questions=questions.count(),
        n_answers=len(rows),
        accuracy=correct / scored if scored else None,
        status_counts={s: status_counts.get(s, 0) for s in Question.Status.values},
        flag_distribution=sorted(Counter(flags.values()).items()),
        excluded=excluded,
        answerers=answerers,
        matrix=matrix,
        taxonomy=taxonomy,
        taxonomy_labels={c.code: c.label(lang) for c in categories},
        option_taxonomy=option_taxonomy,
        taxonomy_shares=taxonomy_shares(llm_reviews, [c.code for c in categories]) if llm_reviews else None,
    )


def _llm_taxonomy_reviews(project: Project) -> list[TaxonomyReview]:
    """Every error-taxonomy review of the project's LLM-written questions, keyed by the question's external
    id, with the question's and the options' errors together."""
    rows = (
        QuestionErrorReview.objects.filter(project=project, question__origin=Question.Origin.LLM)
        .order_by("question_id", "id")
        .values_list("question__external_id", "errors", "option_errors", "primary_error")
    )
    return [
        TaxonomyReview(question_id=qid, codes=(*errors, *option_errors), primary=primary or None)
        for qid, errors, option_errors, primary in rows
    ]


def taxonomy_labels_csv(*, project: Project) -> str:
    """``question_id,label``: the one label of every reviewed LLM-written question (a category code or
    ``no_error``), what ``manage.py taxonomy_shares`` reads."""
    categories = [c.code for c in taxonomy_from_data(project.error_taxonomy)]
    labels, *_ = question_labels(_llm_taxonomy_reviews(project), categories)
    out = io.StringIO()
    writer = SafeWriter(out, lineterminator="\n")
    writer.writerow(["question_id", "label"])
    writer.writerows(sorted(labels.items()))
    return out.getvalue()


def conflict_matrix_csv(*, project: Project) -> str:
    """The creator x answerer conflict counts as CSV (creators as rows; names are neutralised cells)."""
    matrix = conflict_matrix(project=project)
    if matrix is None:
        return "creator\n"
    return frame_to_csv(matrix.wide(), index_label="creator")


def llm_questions(*, project: Project, reviewer_id: int) -> list[dict[str, Any]]:
    """LLM-written questions of an answering project with the reviewer's own taxonomy tags."""
    questions = Question.objects.filter(
        annotation_tasks__project=project, origin=Question.Origin.LLM
    ).order_by("id")
    mine = {
        r.question_id: r for r in QuestionErrorReview.objects.filter(project=project, reviewer_id=reviewer_id)
    }
    return [{"question": q, "review": mine.get(q.pk)} for q in questions]


@dataclass(frozen=True)
class AuthoringReport:
    n_pairs: int
    n_unclaimed: int
    status_counts: dict[str, int]
    authors: list[dict[str, Any]]
    rounds_distribution: list[tuple[int, int]]
    n_overrides: int


def authoring_report(*, project: Project) -> AuthoringReport:
    """Pairs, questions by status, returns per author, rounds per question, concept overrides."""
    n_pairs = project.concept_pairs.count()
    claimed = Assignment.objects.filter(project=project).values("task_id").distinct().count()
    questions = Question.objects.filter(annotation_tasks__project=project)
    status_counts = Counter(questions.values_list("status", flat=True))
    rounds = QuestionRound.objects.filter(question__annotation_tasks__project=project)
    per_author: dict[str, Counter] = defaultdict(Counter)
    per_question: Counter[int] = Counter()
    overrides = set()
    for author, verdict, question_id, override in rounds.values_list(
        "author__username", "verdict", "question_id", "concept_override"
    ):
        per_author[author or "—"]["rounds"] += 1
        if verdict:
            per_author[author or "—"][verdict] += 1
        per_question[question_id] += 1
        if override:
            overrides.add(question_id)
    authors = [
        {
            "author": name,
            "rounds": c["rounds"],
            "accepted": c["accept"],
            "returned": c["return"],
            "return_rate": c["return"] / (c["accept"] + c["return"]) if c["accept"] + c["return"] else None,
        }
        for name, c in sorted(per_author.items())
    ]
    return AuthoringReport(
        n_pairs=n_pairs,
        n_unclaimed=n_pairs - claimed,
        status_counts={s: status_counts.get(s, 0) for s in Question.Status.values},
        authors=authors,
        rounds_distribution=sorted(Counter(per_question.values()).items()),
        n_overrides=len(overrides),
    )


def question_review_item(assignment: Assignment) -> dict[str, Any]:
    """What a reviewer sees of an authored question: the pair, the question, its earlier rounds."""
    question = assignment.task.question
    pair = assignment.task.concept_pair
    rounds = list(QuestionRound.objects.filter(question=question).order_by("round")) if question else []
    current = rounds[-1] if rounds else None
    return {
        "pair": pair,
        "question": question,
        "current": current,
        "choices": [(label, (current.choices if current else {}).get(label, "")) for label in CHOICE_LABELS],
        "history": rounds[:-1],
    }
