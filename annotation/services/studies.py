"""Imports of finished studies: a whole study loaded as a project with its people and answers.

Above ``kinds`` because an import creates its project through ``project_create``.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.roles import ANNOTATOR
from accounts.services import person_create
from annotation.domain.error_spans import WMT21, category_key, severity_key
from annotation.domain.mqm_tsv import (
    MqmRow,
    MqmTable,
    TsvError,
    ratings_from_rows,
    read_mqm_tsv,
    segment_key,
    segment_texts,
)
from annotation.domain.rubrics import scale_from_json
from annotation.domain.span_marking import ESA, MQM
from annotation.domain.tool_studies.study import Study, pseudonym
from annotation.models import (
    Annotation,
    Assignment,
    ErrorSpan,
    Membership,
    Project,
    Rubric,
    SpanSuggestion,
    Task,
    TaskSlot,
)
from annotation.services.kinds import project_create
from annotation.services.loop import ProjectInvalid
from annotation.services.loop_sql import new_instances
from annotation.services.projects import project_activate, project_member_add
from annotation.services.questions import ImportedAnswer, mcq_answers_import
from annotation.services.rubrics import rubric_save
from datasets_app.domain.idcsqa import IdCsqaData
from datasets_app.models import Dataset, Prompt, Question, Response, TranslationUnit

__all__ = [
    "MQM_TSV_EXTRA",
    "MqmImport",
    "TOOL_STUDY_STEPS",
    "ToolStudyImported",
    "idcsqa_import",
    "mqm_rater_accounts",
    "mqm_tsv_import",
    "mqm_tsv_import_with_accounts",
    "mqm_tsv_raters",
    "tool_study_import",
    "tool_study_name_check",
]

# Accounts of annotators who answered in another tool: they cannot log in; exports show pseudonyms only.
IMPORTED_LAST_NAME = "(imported)"


@transaction.atomic
def idcsqa_import(
    *,
    data: IdCsqaData,
    name: str,
    users: Mapping[str, AbstractBaseUser],
    overlap: int = 5,
    max_ambiguous: int = 3,
    created_by: AbstractBaseUser | None = None,
) -> Project:
    """Load an id-csqa study (``datasets_app.domain.idcsqa``): its questions into a new dataset, and an
    active answering project over them holding every worker's answers. ``users`` maps the study's worker
    names (W1..W6) to accounts; creators and answerers are those accounts."""
    missing = sorted(({q.creator for q in data.questions} | {a.answerer for a in data.answers}) - set(users))
    if missing:
        raise ProjectInvalid({"users": f"No account given for {', '.join(missing)}."})
    if Dataset.objects.filter(name=name).exists():
        raise ProjectInvalid({"name": f"A dataset named {name!r} exists already."})
    dataset = Dataset.objects.create(
        name=name,
        kind=Dataset.Kind.QUESTIONS,
        source="id-csqa Human_Gen",
        license="CC BY-NC 4.0",
        created_by=created_by,
    )
    questions = Question.objects.bulk_create(
        [
            Question(
                dataset=dataset,
                external_id=q.question_id,
                concept=q.concept,
                category=q.category,
                language=q.language,
                text=q.text,
                choices=dict(q.choices),
                answer_key=q.answer_key,
                distractor=q.distractor or "",
                creator=users[q.creator],
                creator_name=q.creator,
                origin=Question.Origin.HUMAN,
                status=Question.Status.ACCEPTED,
                meta={"majority_answer": q.majority_answer},
            )
            for q in data.questions
        ],
        batch_size=2000,
    )
    project = project_create(
        dataset=dataset,
        name=name,
        kind=Project.Kind.MCQ_ANSWER,
        overlap=overlap,
        max_ambiguous=max_ambiguous,
        groups=["A"],
        created_by=created_by,
    )
    group = project.groups.get()
    for worker in sorted(users):
        project_member_add(project=project, user=users[worker], group=group)
    project_activate(project=project)
    by_external = {q.external_id: q for q in questions}
    mcq_answers_import(
        project=project,
        answers=(
            ImportedAnswer(by_external[a.question_id], users[a.answerer], a.choice, a.ambiguous, a.comment)
            for a in data.answers
        ),
    )
    project.refresh_from_db()
    return project


# --- WMT/Anthea MQM TSV files ----------------------------------------------------------------------

# The optional columns an imported file may have; each one is stored where the export finds it again.
MQM_TSV_EXTRA = ("comment", "lp", "language", "register", "score", "origin", "outcome")
_ORIGIN_SOURCES = {"flags": SpanSuggestion.Source.FLAGS, "llm": SpanSuggestion.Source.LLM}
# Longest cell each stored field takes.
_LIMITS = (
    ("system", 200, lambda row: row.system),
    ("category", 80, lambda row: row.category),
    ("severity", 10, lambda row: row.severity),
)


def _file_tree(labels: list[str]) -> list[dict[str, object]] | None:
    """The category tree of a file's labels (``tree_from_json``'s form): a top node per first level, the
    labels below it, each node keeping the file's spelling as its label (the export writes it back)."""
    tops: dict[str, dict[str, object]] = {}
    seen: set[str] = set()
    for label in labels:
        code = category_key(label)
        if code in seen:
            continue
        seen.add(code)
        top_code = code.split("/")[0]
        if "/" not in code:
            node = tops.setdefault(top_code, {"label": label, "children": []})
            node["label"] = label
            continue
        top = tops.setdefault(top_code, {"label": label.split("/")[0].strip(), "children": []})
        name = label.split("/")[-1].strip() or label
        top["children"].append({"label": label, "name": {"en": name, "id": name}})  # type: ignore[union-attr]
    return [{k: v for k, v in node.items() if k != "children" or v} for node in tops.values()] or None


@dataclass(frozen=True)
class MqmImport:
    project: Project
    units: int
    ratings: int
    spans: int


def mqm_tsv_raters(text: str) -> list[str]:
    """The raters a file names, in order of first appearance (``TsvError`` on a bad file)."""
    return list(dict.fromkeys(row.rater for row in read_mqm_tsv(text).rows))


@transaction.atomic
def mqm_rater_accounts(*, raters: list[str], prefix: str) -> dict[str, AbstractBaseUser]:
    """An account for every rater of a file: the account named ``prefix + rater`` when there is one, else a
    new annotator account of that name (a random password nobody knows; it never needs to log in)."""
    User = get_user_model()
    names = {rater: f"{prefix}{rater}" for rater in raters}
    existing = {
        u.get_username(): u for u in User.objects.filter(**{f"{User.USERNAME_FIELD}__in": names.values()})
    }
    group = Group.objects.get(name=ANNOTATOR)
    return {
        rater: existing.get(name) or person_create(username=name, groups=[group])
        for rater, name in names.items()
    }


def _import_problems(table: MqmTable, kind: str) -> list[str]:
    problems = [
        f"line 1: column {name!r} is not imported (optional columns: {', '.join(MQM_TSV_EXTRA)})"
        for name in table.extra
        if name not in MQM_TSV_EXTRA
    ]
    if "lp" in table.extra and "language" in table.extra:
        problems.append("line 1: give the language pair in 'lp' or 'language', not both")
    for row in table.rows:
        if not row.target.strip():
            problems.append(f"line {row.line}, column target: empty")
        if row.span is not None and not row.span.marked:
            problems.append(
                f"line {row.line}, column target: the error marks no span; mark it with <v>...</v> "
                "in the target or the source"
            )
        for column, limit, cell in _LIMITS:
            if len(cell(row)) > limit:
                problems.append(f"line {row.line}, column {column}: longer than {limit} characters")
        if len(table.extra_value(row, "comment")) > 500:
            problems.append(f"line {row.line}, column comment: longer than 500 characters")
        if len(table.extra_value(row, "register")) > 40:
            problems.append(f"line {row.line}, column register: longer than 40 characters")
    if kind == Project.Kind.TRANSLATION_ESA and "score" not in table.extra:
        problems.append("line 1: an ESA import needs a 'score' column")
    return problems


@transaction.atomic
def mqm_tsv_import(
    *,
    text: str,
    name: str,
    source_language: str,
    target_language: str,
    users: Mapping[str, AbstractBaseUser],
    kind: str = Project.Kind.TRANSLATION_MQM,
    created_by: AbstractBaseUser | None = None,
    now: datetime | None = None,
) -> MqmImport:
    """Load a WMT/Anthea MQM TSV file (``annotation.domain.mqm_tsv``) as an active error-span project
    holding every rater's spans, so published ratings can be scored, reviewed, re-annotated and exported.

    Each (system, segment) becomes a translation unit of a new dataset (the system is its translator; the
    file's doc, doc_id, seg_id and per-unit cells are kept in ``meta["mqm_tsv"]``), each rater's lines on it
    one submitted assignment with its ``ErrorSpan`` rows (cells as written; ``comment`` on the span) and its
    ``mqm``/``esa`` answer row. ``users`` maps every rater name to an account. A bad file raises ``TsvError``
    (every line and column at fault), a clash ``ProjectInvalid``; nothing is written then.
    """
    if kind not in (Project.Kind.TRANSLATION_MQM, Project.Kind.TRANSLATION_ESA):
        raise ProjectInvalid({"kind": "An MQM file becomes an MQM or ESA project."})
    table = read_mqm_tsv(text)
    problems = _import_problems(table, kind)
    if problems:
        raise TsvError(problems)
    ratings = ratings_from_rows(table, WMT21)
    texts = segment_texts(table)
    esa = kind == Project.Kind.TRANSLATION_ESA
    if esa:
        for rating in ratings:
            if rating.score is None or rating.score != int(rating.score):
                line = next(
                    r.line
                    for r in table.rows
                    if (r.system, segment_key(r.doc, r.doc_id, r.seg_id), r.rater)
                    == (rating.system, rating.segment, rating.rater)
                )
                raise TsvError(
                    [f"line {line}, column score: an ESA import needs a whole number from 0 to 100"]
                )
    missing = sorted({row.rater for row in table.rows} - set(users))
    if missing:
        raise ProjectInvalid({"users": f"No account given for {', '.join(missing)}."})
    if Dataset.objects.filter(name=name).exists():
        raise ProjectInvalid({"name": f"A dataset named {name!r} exists already."})
    now = now or timezone.now()

    dataset = Dataset.objects.create(
        name=name, kind=Dataset.Kind.TRANSLATIONS, source="MQM TSV file", created_by=created_by
    )
    unit_cells = [c for c in ("lp", "language", "register") if c in table.extra]
    first_rows: dict[tuple[str, str], MqmRow] = {}
    unit_raters: dict[tuple[str, str], dict[str, str]] = {}
    for row in table.rows:
        key = (row.system, segment_key(row.doc, row.doc_id, row.seg_id))
        first_rows.setdefault(key, row)
        unit_raters.setdefault(key, {})[str(users[row.rater].pk)] = row.rater
    # The file's spelling of each severity (``Major``), written back by the export.
    severities = {severity_key(row.severity): row.severity for row in reversed(table.rows) if row.span}
    units = TranslationUnit.objects.bulk_create(
        [
            TranslationUnit(
                dataset=dataset,
                external_id=f"{number:06d}",
                source_text=texts[key][0],
                source_language=source_language,
                target_language=target_language,
                register=table.extra_value(row, "register"),
                translation_text=texts[key][1],
                translator_name=row.system,
                status=TranslationUnit.Status.ACCEPTED,
                meta={
                    "system": row.system,
                    "segment": key[1],
                    "mqm_tsv": {
                        "doc": row.doc,
                        "doc_id": row.doc_id,
                        "seg_id": row.seg_id,
                        "columns": list(table.header),
                        "cells": {c: table.extra_value(row, c) for c in unit_cells},
                        "raters": unit_raters[key],
                        "severities": severities,
                    },
                },
            )
            for number, (key, row) in enumerate(first_rows.items(), start=1)
        ],
        batch_size=2000,
    )
    unit_of = {key: unit for key, unit in zip(first_rows, units, strict=True)}
    per_segment = Counter((r.system, r.segment) for r in ratings)
    project = project_create(
        dataset=dataset,
        name=name,
        kind=kind,
        overlap=max(per_segment.values()),
        groups=["A"],
        created_by=created_by,
        span_settings={"categories": _file_tree([row.category for row in table.rows if row.span])},
    )
    group = project.groups.get()
    raters = list(dict.fromkeys(row.rater for row in table.rows))
    for rater in raters:
        project_member_add(project=project, user=users[rater], group=group)
    project_activate(project=project)

    tasks = {t.translation_unit_id: t for t in Task.objects.filter(project=project)}
    slots = {s.task_id: s for s in TaskSlot.objects.filter(project=project, group=group)}
    groups = dict(Membership.objects.filter(project=project).values_list("user_id", "group_id"))
    assignments: dict[tuple[str, str, str], Assignment] = {}
    for rating in ratings:
        task = tasks[unit_of[(rating.system, rating.segment)].pk]
        user = users[rating.rater]
        assignments[(rating.system, rating.segment, rating.rater)] = Assignment(
            project=project,
            task=task,
            slot=slots[task.pk],
            group_id=groups[user.pk],
            annotator=user,
            status=Assignment.Status.SUBMITTED,
            permutation=[],
            started_at=now,
            submitted_at=now,
        )
    Assignment.objects.bulk_create(assignments.values(), batch_size=2000)

    suggestions: dict[tuple, SpanSuggestion] = {}
    span_rows: list[tuple[MqmRow, Assignment]] = []
    for row in table.rows:
        key = (row.system, segment_key(row.doc, row.doc_id, row.seg_id), row.rater)
        if row.span is not None:
            span_rows.append((row, assignments[key]))
            source = _ORIGIN_SOURCES.get(row.span.origin)
            if source is not None:
                s = row.span
                suggestions.setdefault(
                    (assignments[key].task_id, source, s.side, s.start, s.end, category_key(row.category)),
                    SpanSuggestion(
                        task_id=assignments[key].task_id,
                        source=source,
                        side=s.side,
                        start=s.start or 0,
                        end=s.end or 0,
                        category=category_key(row.category),
                        severity=severity_key(row.severity),
                    ),
                )
    SpanSuggestion.objects.bulk_create(suggestions.values(), batch_size=2000)
    spans = []
    for row, assignment in span_rows:
        s = row.span
        assert s is not None and s.start is not None and s.end is not None
        source = _ORIGIN_SOURCES.get(s.origin)
        suggestion = (
            suggestions[(assignment.task_id, source, s.side, s.start, s.end, category_key(row.category))]
            if source
            else None
        )
        spans.append(
            ErrorSpan(
                assignment=assignment,
                round=1,
                side=s.side,
                start=s.start,
                end=s.end,
                category=category_key(row.category),
                severity=severity_key(row.severity),
                origin=ErrorSpan.Origin.SUGGESTED if suggestion else ErrorSpan.Origin.MANUAL,
                suggestion=suggestion,
                outcome=s.outcome if suggestion else "",
                comment=table.extra_value(row, "comment"),
            )
        )
    ErrorSpan.objects.bulk_create(spans, batch_size=2000)
    no_error_comments = {
        (row.system, segment_key(row.doc, row.doc_id, row.seg_id), row.rater): table.extra_value(
            row, "comment"
        )
        for row in table.rows
        if row.span is None
    }
    answers = []
    for rating in ratings:
        errors = len(rating.errors)
        answers.append(
            Annotation(
                assignment=assignments[(rating.system, rating.segment, rating.rater)],
                round=1,
                criterion=ESA if esa else MQM,
                choice="errors" if errors else "no_error",
                value_int=int(rating.score or 0) if esa else errors,
                comment=no_error_comments.get((rating.system, rating.segment, rating.rater), ""),
            )
        )
    Annotation.objects.bulk_create(answers, batch_size=2000)
    taken = Counter(a.slot_id for a in assignments.values())
    for slot_id in sorted(taken):
        n = taken[slot_id]
        TaskSlot.objects.filter(pk=slot_id).update(
            open_count=F("open_count") - n, submitted_count=F("submitted_count") + n
        )
    project.refresh_from_db()
    return MqmImport(project=project, units=len(units), ratings=len(ratings), spans=len(spans))


def default_rater_prefix(name: str) -> str:
    """The account name prefix of a file's raters: the project's name in lower case, ``-`` for what an
    account name cannot hold, then ``-``."""
    return re.sub(r"[^\w.@+-]+", "-", name.strip().lower()) + "-"


@transaction.atomic
def mqm_tsv_import_with_accounts(
    *,
    text: str,
    name: str,
    source_language: str,
    target_language: str,
    kind: str = Project.Kind.TRANSLATION_MQM,
    rater_prefix: str = "",
    created_by: AbstractBaseUser | None = None,
) -> tuple[MqmImport, dict[str, AbstractBaseUser]]:
    """``mqm_tsv_import`` with an account per rater (``mqm_rater_accounts``, prefix ``rater_prefix`` or
    ``default_rater_prefix(name)``), all or nothing: what the import page, its API and
    ``manage.py import_mqm_tsv`` call."""
    raters = mqm_tsv_raters(text)
    users = mqm_rater_accounts(raters=raters, prefix=rater_prefix.strip() or default_rater_prefix(name))
    done = mqm_tsv_import(
        text=text,
        name=name.strip(),
        source_language=source_language,
        target_language=target_language,
        users=users,
        kind=kind,
        created_by=created_by,
    )
    return done, users


# The steps of a study's import, in order: reading the file, then those of ``tool_study_import``.
TOOL_STUDY_STEPS: tuple[str, ...] = ("read", "items", "project", "annotators", "answers")


def tool_study_name_check(name: str) -> None:
    """Refuse a study's name that is empty or names a dataset already (``ProjectInvalid`` on ``name``)."""
    name = name.strip()
    if not name:
        raise ProjectInvalid({"name": "Give the study a name."})
    if Dataset.objects.filter(name=name).exists():
        raise ProjectInvalid({"name": f"A dataset named {name!r} exists already."})


@dataclass(frozen=True)
class ToolStudyImported:
    project: Project
    counts: dict[str, int]
    criteria: dict[str, str]  # the study's question name -> the criterion it is rated under here


def _pseudonym_key() -> bytes:
    return hashlib.sha256(f"timbang.tool-study-pseudonyms\0{settings.SECRET_KEY}".encode()).digest()


def _criterion_for(name: str, scale: dict, label: str) -> str:
    """The criterion a study's question is stored under: an existing one of that name on the same scale,
    or a new one (``name``, ``name_b`` ... when the name is taken by another scale)."""
    wanted = scale_from_json(scale)
    for suffix in ["", *[f"_{c}" for c in "bcdefghijk"]]:
        candidate = f"{name[: 40 - len(suffix)]}{suffix}"
        latest = Rubric.objects.filter(criterion=candidate, category="").order_by("-version").first()
        if latest is None:
            rubric_save(
                criterion=candidate,
                label={"id": label, "en": label},
                question=None,
                scale=scale,
                levels={"id": {}, "en": {}},
                new=True,
            )
            return candidate
        if scale_from_json(latest.scale) == wanted:
            return candidate
    raise ProjectInvalid({"criteria": f"No free criterion name for {label!r}."})


@transaction.atomic
def tool_study_import(
    *,
    study: Study,
    name: str,
    language: str = "ind",
    created_by: AbstractBaseUser | None = None,
    step: Callable[[str], None] | None = None,
) -> ToolStudyImported:
    """Load a study read from another tool (``annotation.domain.tool_studies``): its items as a new
    dataset of prompts and responses, an active project of the study's kind over them, and every answer as
    a submitted assignment of a pseudonymous annotator (an account that cannot log in). All or nothing.

    ``step`` is called with each step's name (``TOOL_STUDY_STEPS`` after ``read``) before it starts; what
    it raises (a background import's cancel) rolls everything back."""
    step = step or (lambda name: None)
    tool_study_name_check(name)
    name = name.strip()
    step("items")
    criteria = {
        c.name: _criterion_for(c.name, c.scale_json(), c.source_name or c.name) for c in study.criteria
    }
    dataset = Dataset.objects.create(
        name=name,
        kind=Dataset.Kind.PROMPTS,
        source=study.tool_version,
        created_by=created_by,
    )
    prompts = Prompt.objects.bulk_create(
        [
            Prompt(
                dataset=dataset,
                external_id=item.external_id,
                language=language,
                turns=[item.prompt],
                meta={"source_tool": study.tool},
            )
            for item in study.items
        ],
        batch_size=2000,
    )
    responses = Response.objects.bulk_create(
        [
            Response(prompt=prompt, model_name=model, turns=[text], origin=Response.Origin.IMPORTED)
            for prompt, item in zip(prompts, study.items, strict=True)
            for model, text in item.responses
        ],
        batch_size=2000,
    )
    if any(r.pk is None for r in responses):  # backends that do not return ids (none of ours)
        responses = list(Response.objects.filter(prompt__dataset=dataset).order_by("id"))
    response_ids: dict[str, list[int]] = {}
    cursor = 0
    for item in study.items:
        response_ids[item.external_id] = [r.pk for r in responses[cursor : cursor + len(item.responses)]]
        cursor += len(item.responses)
    step("project")
    project = project_create(
        dataset=dataset,
        name=name,
        kind=study.kind,
        criteria=list(criteria.values()) if study.kind == Project.Kind.LIKERT else [],
        overlap=max(1, max((c for c in Counter(a.item_id for a in study.answers).values()), default=1)),
        groups=["A"],
        description=f"Imported from {study.tool_version}.",
        created_by=created_by,
    )
    step("annotators")
    key = _pseudonym_key()
    users = {}
    user_model = get_user_model()
    for annotator in study.annotators:
        username = pseudonym(study.tool, annotator, key)
        user = user_model.objects.filter(username=username).first()
        if user is None:
            user = user_model(username=username, last_name=IMPORTED_LAST_NAME, is_active=False)
            user.set_unusable_password()
            user.save()
        users[annotator] = user
    group = project.groups.get()
    for annotator in sorted(users):
        project_member_add(project=project, user=users[annotator], group=group)
    if users:
        project_activate(project=project)
    step("answers")
    n_answers = _answers_import(
        project=project, study=study, users=users, criteria=criteria, response_ids=response_ids
    )
    project.refresh_from_db()
    return ToolStudyImported(
        project=project,
        counts={
            "items": len(study.items),
            "responses": len(responses),
            "annotators": len(users),
            "answers": n_answers,
            "values": Annotation.objects.filter(assignment__project=project).count(),
        },
        criteria={(c.source_name or c.name): criteria[c.name] for c in study.criteria},
    )


def _answers_import(
    *,
    project: Project,
    study: Study,
    users: Mapping[str, AbstractBaseUser],
    criteria: Mapping[str, str],
    response_ids: Mapping[str, list[int]],
) -> int:
    """Every answer as a submitted assignment taking one of the group's k places on its item's task."""
    now = timezone.now()
    tasks = {t.prompt.external_id: t for t in Task.objects.filter(project=project).select_related("prompt")}
    slots = {s.task_id: s for s in TaskSlot.objects.filter(project=project)}
    group = project.groups.get()
    taken: Counter[int] = Counter()
    values: list[dict] = []
    pending = []
    for answer in study.answers:
        task = tasks.get(answer.item_id)
        if task is None:
            raise ProjectInvalid({"answers": f"Item {answer.item_id} has no task."})
        slot = slots[task.pk]
        taken[slot.pk] += 1
        values.append(
            {
                "project_id": project.pk,
                "task_id": task.pk,
                "slot_id": slot.pk,
                "group_id": group.pk,
                "annotator_id": users[answer.annotator].pk,
                "status": Assignment.Status.SUBMITTED,
                "permutation": list(range(len(task.response_ids))),
                "started_at": now,
                "submitted_at": now,
            }
        )
        pending.append((len(values) - 1, answer, task))
    # Instances built as the annotation loop builds them (``loop_sql.new_instances``): a study of many
    # thousand answers spends its time writing, not constructing models.
    assignments = Assignment.objects.bulk_create(new_instances(Assignment, values), batch_size=2000)
    rows: list[dict] = []
    for index, answer, task in pending:
        assignment_id = assignments[index].pk
        ids = response_ids[answer.item_id]
        for (target, criterion), value in answer.ratings.items():
            stored = criteria[criterion]
            row = {
                "assignment_id": assignment_id,
                "round": 1,
                "response_id": ids[target],
                "criterion": stored,
                "rubric_version": project.rubric_versions.get(stored),
            }
            if isinstance(value, str):
                row["choice"] = value
            else:
                row["value_int"] = int(value)
            rows.append(row)
        if answer.vote is not None:
            # Votes are stored against the task's A and B, whichever order the study gave them in.
            first, second = ids
            vote = answer.vote
            if task.response_a_id == second:
                vote = {"A": "B", "B": "A"}.get(vote, vote)
            winner = {"A": task.response_a_id, "B": task.response_b_id}.get(vote)
            rows.append(
                {
                    "assignment_id": assignment_id,
                    "round": 1,
                    "criterion": "vote",
                    "choice": vote,
                    "response_id": winner,
                    "turn": task.turn,
                }
            )
        if answer.comment:
            rows.append(
                {
                    "assignment_id": assignment_id,
                    "round": 1,
                    "criterion": "comment",
                    "comment": answer.comment,
                }
            )
    Annotation.objects.bulk_create(new_instances(Annotation, rows), batch_size=2000)
    # One statement per distinct number of answers a slot got (at most k), not one per task.
    by_count: dict[int, list[int]] = {}
    for slot_id, n in taken.items():
        by_count.setdefault(n, []).append(slot_id)
    for n, slot_ids in sorted(by_count.items()):
        for start in range(0, len(slot_ids), 5000):
            TaskSlot.objects.filter(pk__in=slot_ids[start : start + 5000]).update(
                open_count=F("open_count") - n, submitted_count=F("submitted_count") + n
            )
    return len(assignments)
