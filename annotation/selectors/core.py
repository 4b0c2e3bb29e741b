"""Reads of annotation: the blinded task an annotator sees, progress, review queues.

Everything built here for an annotator (``task_view``) carries shown positions and labels only: no
model name, response id, prompt id or dataset meta, so templates and serializers cannot leak them.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Exists, F, FloatField, Func, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from annotation.domain import rubrics as default_rubrics
from annotation.domain.blinding import invert_permutation, shown_labels
from annotation.domain.gold import gold_accuracy, score_gold
from annotation.domain.progress import annotator_progress, group_progress, project_progress
from annotation.domain.submission import ALL_BAD
from annotation.models import (
    JOB_KINDS,
    RATING_KINDS,
    SPAN_KINDS,
    Annotation,
    Assignment,
    Membership,
    Project,
    Review,
    Rubric,
    Task,
)
from annotation.selectors.base import DONE, SENT_BACK, done_count, response_turns
from annotation.selectors.jobs import job_task_view
from annotation.selectors.spans import span_task_view

__all__ = [
    "AnnotatorProject",
    "CriterionView",
    "ProgressReport",
    "ReviewAnswer",
    "ShownResponse",
    "TaskView",
    "annotator_projects",
    "assignment_for_user",
    "gold_scores",
    "membership_for",
    "progress_report",
    "project_list",
    "project_members",
    "review_answer",
    "review_queue",
    "criterion_scales",
    "rubrics_for",
    "task_view",
]


# --- the annotator's view --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShownResponse:
    number: int  # 1-based position on screen
    label: str
    turns: list[str]


@dataclass(frozen=True)
class CriterionView:
    key: str
    label: dict[str, str]
    question: dict[str, str]
    levels: dict[str, list[tuple[int | str, str]]]  # lang -> [(value, text)] in scale order
    version: int
    scale: default_rubrics.Scale = default_rubrics.DEFAULT_SCALE

    @functools.cached_property
    def content_key(self) -> str:
        """Equal for two views that show the same texts and scale: what a page part built from the
        criterion is kept under (``{% memo %}``). Views are shared and never changed, so it is built once."""
        return json.dumps(
            [self.key, self.version, self.label, self.question, self.levels, self.scale.as_json()],
            sort_keys=True,
            default=str,
        )


@dataclass
class TaskView:
    token: str
    kind: str
    status: str
    round: int
    project_id: int
    project_name: str
    instructions: dict[str, str]
    category: str
    category_label: dict[str, str]
    language: str
    prompt_turns: list[str]
    responses: list[ShownResponse]
    criteria: list[CriterionView]
    best_pick: str
    allow_all_bad: bool
    judged_turn: int | None  # 1-based, pairwise per-turn tasks
    aligned: list[dict[str, Any]]  # pairwise: per turn, the user message and A/B replies
    done: int
    total: int
    lease_expires_at: Any
    values: dict[str, Any] = field(default_factory=dict)  # current answer in shown positions
    review_comment: str = ""

    @property
    def is_pairwise(self) -> bool:
        return self.kind == Project.Kind.PAIRWISE

    @functools.cached_property
    def page_key(self) -> tuple[Any, ...]:
        """What the task page's kept parts (``{% memo %}``) show that a project's tasks share: equal for two
        tasks whose page differs only by what is put in at each use (the project's name, the progress, the
        token, the prompt and responses, the answer)."""
        return (
            self.kind,
            self.status,
            self.project_id,
            self.best_pick,
            self.allow_all_bad,
            len(self.responses),
            tuple(criterion.content_key for criterion in self.criteria),
            self.instructions.get("id", ""),
            self.instructions.get("en", ""),
            self.review_comment,
        )

    def as_payload(self) -> dict[str, Any]:
        """The JSON an API client gets: the same blinded content as the page."""
        return {
            "task": self.token,
            "kind": self.kind,
            "status": self.status,
            "round": self.round,
            "project": {"id": self.project_id, "name": self.project_name},
            "instructions": self.instructions,
            "prompt": {
                "category": self.category,
                "category_label": self.category_label,
                "language": self.language,
                "turns": self.prompt_turns,
            },
            "responses": [{"number": r.number, "label": r.label, "turns": r.turns} for r in self.responses],
            "criteria": [
                {
                    "key": c.key,
                    "label": c.label,
                    "question": c.question,
                    "rubric_version": c.version,
                    "levels": {lang: {str(v): t for v, t in levels} for lang, levels in c.levels.items()},
                    "scale": c.scale.as_json(),
                }
                for c in self.criteria
            ],
            "best_pick": self.best_pick,
            "allow_all_bad": self.allow_all_bad,
            "judged_turn": self.judged_turn,
            "progress": {"done": self.done, "total": self.total},
            "lease_expires_at": self.lease_expires_at.isoformat() if self.lease_expires_at else None,
            "current": self.values,
            "review_comment": self.review_comment,
        }


def assignment_for_user(*, token: str, user: AbstractBaseUser) -> Assignment:
    """The caller's own assignment with what the page needs; another's raises ``DoesNotExist`` (404)."""
    return Assignment.objects.select_related("task__prompt", "project").get(token=token, annotator_id=user.pk)


def rubrics_for(project: Project, category: str) -> list[CriterionView]:
    """The project's criteria with the rubric of ``category`` (its own wording, else the general one).

    Every task page and every ``next`` shows these texts, so each process keeps what it read, keyed by the
    project, its rubric stamp (moved on by ``rubrics_changed`` in the transaction that writes rubric rows),
    the criteria, their versions and the category: an edited, added or deleted rubric row shows on the
    next task, in every process, with no read beyond the project row the caller already has. Texts read
    after a rubric write that is then rolled back are dropped (``_forget_rolled_back``). The views are
    shared: read them, never change them.
    """
    if not project.criteria:
        return []
    slug = default_rubrics.normalize_category(category) or ""
    wanted = tuple((criterion, project.rubric_versions.get(criterion, 1)) for criterion in project.criteria)
    _forget_rolled_back()
    return list(_rubric_views_cached(project.pk, project.rubric_stamp, wanted, slug))


class _RubricWrites(threading.local):
    """This thread's transaction that wrote rubric rows and has not committed yet: its outermost atomic
    block, and the callback each write left to run at commit."""

    block: object | None = None
    at_commit: tuple[object, ...] = ()


_rubric_writes = _RubricWrites()


def _rubric_writes_committed() -> None:
    _rubric_writes.block, _rubric_writes.at_commit = None, ()
    _rubric_views_cached.cache_clear()


def _forget_rolled_back() -> None:
    """Texts read after an uncommitted rubric write are kept under the stamp the projects had before it.
    If a write was rolled back (its transaction, or the savepoint it was made in: Django then drops its
    commit callback), those are not that stamp's texts: forget everything kept."""
    block = _rubric_writes.block
    if block is None:
        return
    conn = transaction.get_connection()
    if conn.atomic_blocks and conn.atomic_blocks[0] is block:
        pending = {id(entry[1]) for entry in conn.run_on_commit}
        kept = tuple(callback for callback in _rubric_writes.at_commit if id(callback) in pending)
        if len(kept) == len(_rubric_writes.at_commit):
            return
        _rubric_writes.at_commit = kept
        if not kept:
            _rubric_writes.block = None
    else:
        _rubric_writes.block, _rubric_writes.at_commit = None, ()
    _rubric_views_cached.cache_clear()


def rubrics_changed(**kwargs: object) -> None:
    """Rubric rows were written: every project's rubric stamp moves on, in the writing transaction, so
    every process reads the rows again for its next task once it commits.

    Connected to ``post_save`` and ``post_delete`` of ``Rubric`` (``AnnotationConfig.ready``) and called
    by services that write rubric rows in bulk. The stamps move once per transaction: a later write in the
    same transaction (a designer's save deletes and writes several rows) only makes this process forget
    what it kept. This process forgets at once (for project objects already in memory with their old
    stamp), again at commit, and, should the write be rolled back, at the next read after that.
    """
    _rubric_views_cached.cache_clear()
    conn = transaction.get_connection()
    if not conn.in_atomic_block:
        Project.objects.update(rubric_stamp=F("rubric_stamp") + 1)
        return
    _forget_rolled_back()  # an earlier write of this thread that was rolled back
    # A write whose commit callback is still pending stands, and so does the move made with the first of
    # them (at the same savepoint or an outer one): the stamps need not move again.
    if _rubric_writes.block is not conn.atomic_blocks[0] or not _rubric_writes.at_commit:
        Project.objects.update(rubric_stamp=F("rubric_stamp") + 1)
        _rubric_writes.block, _rubric_writes.at_commit = conn.atomic_blocks[0], ()
    callback = functools.partial(_rubric_writes_committed)  # an object of its own, to find it again
    transaction.on_commit(callback)
    _rubric_writes.at_commit = (*_rubric_writes.at_commit, callback)


@functools.lru_cache(maxsize=512)
def _rubric_views_cached(
    project_id: int, stamp: int, wanted: tuple[tuple[str, int], ...], slug: str
) -> tuple[CriterionView, ...]:
    # The project and its stamp are part of the key only: a new stamp makes the older entries unreachable.
    return _rubric_views_read(wanted, slug)


def _rubric_views_read(wanted: tuple[tuple[str, int], ...], slug: str) -> tuple[CriterionView, ...]:
    versions = Q()
    for criterion, version in wanted:
        versions |= Q(criterion=criterion, version=version)
    found: dict[str, Rubric] = {}
    for rubric in Rubric.objects.filter(versions, category__in={slug, ""}).order_by():
        if rubric.criterion not in found or rubric.category:
            found[rubric.criterion] = rubric
    views = []
    for criterion, _version in wanted:
        rubric = found.get(criterion)
        if rubric is None:
            continue
        scale = default_rubrics.scale_from_json(rubric.scale)
        levels = {
            lang: [(v, texts[str(v)]) for v in scale.values if str(v) in texts]
            for lang, texts in rubric.levels.items()
        }
        views.append(
            CriterionView(criterion, rubric.label, rubric.question or {}, levels, rubric.version, scale)
        )
    return tuple(views)


def criterion_scales(project: Project) -> dict[str, default_rubrics.Scale]:
    """The scale of each of the project's criteria at its rubric version (from the shared rubric cache)."""
    return {view.key: view.scale for view in rubrics_for(project, "")}


def _current_values(assignment: Assignment, project: Project, task: Task) -> dict[str, Any]:
    rows = list(assignment.annotations.filter(round=assignment.round))
    if not rows and assignment.round > 1:
        rows = list(assignment.annotations.filter(round=assignment.round - 1))
    if not rows:
        return {}
    shown_of = invert_permutation(assignment.permutation)
    index_of = {rid: i for i, rid in enumerate(task.response_ids)}
    swapped = list(assignment.permutation) == [1, 0]
    values: dict[str, Any] = {}
    for row in rows:
        if row.criterion == "comment":
            values["rationale" if project.is_pairwise else "comment"] = row.comment
        elif row.criterion == "vote":
            vote = row.choice
            if swapped and vote in ("A", "B"):
                vote = "B" if vote == "A" else "A"
            values.setdefault("votes", {})[row.turn] = vote
            values["vote"] = vote
        elif row.criterion == "best":
            values["best"] = ALL_BAD if row.choice == ALL_BAD else shown_of[index_of[row.response_id]] + 1
        else:
            number = shown_of[index_of[row.response_id]] + 1
            rated = row.value_int if row.value_int is not None else row.choice  # points or a category
            values.setdefault("ratings", {}).setdefault(str(number), {})[row.criterion] = rated
    return values


def task_view(*, assignment: Assignment, lang: str) -> Any:
    """Everything the task page and the API show, in the order this annotator sees the responses.

    Translation and question jobs get their own view (``annotation.selectors.jobs.job_task_view``).
    """
    task, project = assignment.task, assignment.project
    if project.kind in SPAN_KINDS:
        return span_task_view(assignment=assignment, lang=lang)
    if project.kind in JOB_KINDS:
        return job_task_view(assignment=assignment, lang=lang)
    prompt = task.prompt
    # A claim brings the texts along (``loop_sql.slot_take``); a page opened by its URL reads them.
    by_id = getattr(task, "loaded_response_turns", None) or response_turns(task.response_ids)
    canonical = [by_id[rid] for rid in task.response_ids]
    shown = [canonical[i] for i in assignment.permutation]
    lang = "id" if lang.startswith("id") else "en"
    labels = shown_labels(len(shown), lang, pairwise=project.is_pairwise)  # type: ignore[arg-type]
    responses = [
        ShownResponse(number=i + 1, label=labels[i], turns=list(turns)) for i, turns in enumerate(shown)
    ]
    turns = list(prompt.turns)
    aligned: list[dict[str, Any]] = []
    if project.is_pairwise:
        last = len(turns) if task.turn is None else task.turn + 1
        a_turns, b_turns = responses[0].turns, responses[1].turns
        for i, (user_turn, a, b) in enumerate(zip_longest(turns, a_turns, b_turns, fillvalue="")):
            if i >= last:
                break
            aligned.append({"number": i + 1, "user": user_turn, "a": a, "b": b, "judged": task.turn == i})
    category_slug = default_rubrics.normalize_category(prompt.category) or ""
    review = ""
    if assignment.round > 1:
        review = (
            Review.objects.filter(assignment=assignment, verdict=Review.Verdict.REJECT)
            .order_by("-round", "-id")
            .values_list("comment", flat=True)
            .first()
            or ""
        )
    return TaskView(
        token=assignment.token,
        kind=project.kind,
        status=assignment.status,
        round=assignment.round,
        project_id=project.pk,
        project_name=project.name,
        instructions={"id": project.instructions_id, "en": project.instructions_en},
        category=category_slug,
        category_label=default_rubrics.CATEGORY_LABELS.get(
            category_slug, {"id": prompt.category, "en": prompt.category}
        ),
        language=prompt.language,
        prompt_turns=turns,
        responses=responses,
        criteria=rubrics_for(project, prompt.category),
        best_pick=project.best_pick,
        allow_all_bad=project.allow_all_bad,
        judged_turn=None if task.turn is None else task.turn + 1,
        aligned=aligned,
        # A claim counted the caller's submitted tasks already, in the statement that locked the claim.
        done=getattr(assignment, "progress_done", None)
        if getattr(assignment, "progress_done", None) is not None
        else done_count(project_id=project.pk, user_id=assignment.annotator_id),
        total=project.n_tasks,
        lease_expires_at=assignment.lease_expires_at
        if assignment.status == Assignment.Status.ASSIGNED
        else None,
        values=_current_values(assignment, project, task)
        if assignment.status != "assigned" or assignment.round > 1
        else {},
        review_comment=review,
    )


# --- annotators' projects ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotatorProject:
    project: Project
    group_name: str
    done: int
    total: int
    sent_back: int = 0

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100


def annotator_projects(*, user: AbstractBaseUser) -> list[AnnotatorProject]:
    """Active and paused projects the user annotates in, with their own progress (one query)."""

    def own(condition: Q) -> Subquery:
        return Subquery(
            Assignment.objects.filter(
                condition, project_id=OuterRef("project_id"), annotator_id=user.pk, is_gold=False
            )
            .order_by()
            .values("project_id")
            .annotate(n=Count("id"))
            .values("n")
        )

    memberships = (
        Membership.objects.filter(
            user_id=user.pk, project__status__in=[Project.Status.ACTIVE, Project.Status.PAUSED]
        )
        .select_related("project", "group")
        .annotate(done=Coalesce(own(DONE), 0), sent_back=Coalesce(own(SENT_BACK), 0))
        .order_by("-project__created_at", "-project_id")
    )
    return [
        AnnotatorProject(m.project, m.group.name, m.done, m.project.n_tasks, m.sent_back) for m in memberships
    ]


def membership_for(*, project_id: int, user: AbstractBaseUser) -> Membership | None:
    return (
        Membership.objects.select_related("project", "group")
        .filter(project_id=project_id, user_id=user.pk)
        .first()
    )


# --- managers -------------------------------------------------------------------------------------------


def project_list() -> QuerySet[Project]:
    return (
        Project.objects.select_related("dataset")
        .annotate(n_groups=Count("groups", distinct=True))
        .order_by("-created_at", "-id")
    )


def project_members(*, project: Project) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(project=project)
        .select_related("user", "group")
        .order_by("group_id", "user__username")
    )


class SecondsBetween(Func):
    """Seconds from one timestamp to another, in the database (millisecond precision): reading 10,000
    timestamps pairs into Python datetimes costs more than the rest of the progress report."""

    output_field = FloatField()

    def as_sql(self, compiler, connection, **extra_context):  # PostgreSQL and others
        return self.as_sql_template(
            compiler,
            connection,
            "CAST(ROUND(CAST(EXTRACT(EPOCH FROM (%(b)s - %(a)s)) AS numeric), 3) AS double precision)",
        )

    def as_sqlite(self, compiler, connection, **extra_context):
        return self.as_sql_template(
            compiler, connection, "ROUND((julianday(%(b)s) - julianday(%(a)s)) * 86400.0, 3)"
        )

    def as_sql_template(self, compiler, connection, template):
        (a_sql, a_params), (b_sql, b_params) = (compiler.compile(e) for e in self.get_source_expressions())
        return template % {"a": a_sql, "b": b_sql}, [*a_params, *b_params]


@dataclass(frozen=True)
class ProgressReport:
    project: Any
    annotators: list[dict[str, Any]]
    groups: list[dict[str, Any]]


def _answer_of(rows: list[dict[str, Any]], kind: str, task: Task) -> object:
    index_of = {rid: i for i, rid in enumerate(task.response_ids)}
    if kind == Project.Kind.LIKERT:
        ratings: dict[int, dict[str, int | str]] = {}
        for row in rows:
            if row["criterion"] in ("best", "comment") or row["response_id"] is None:
                continue
            rated = row["value_int"] if row["value_int"] is not None else row["choice"]  # points or category
            if rated not in (None, ""):
                ratings.setdefault(index_of[row["response_id"]], {})[row["criterion"]] = rated
        return ratings
    if kind == Project.Kind.BEST_OF_N:
        for row in rows:
            if row["criterion"] == "best":
                return ALL_BAD if row["choice"] == ALL_BAD else index_of[row["response_id"]]
        return None
    votes = {row["turn"]: row["choice"] for row in rows if row["criterion"] == "vote"}
    return votes.get(task.turn) if len(votes) == 1 else votes


def gold_scores(*, project: Project, annotator_id: int | None = None) -> dict[Hashable, Any]:
    """Per annotator (username) gold accuracy over submitted gold assignments (one annotator's only, when
    ``annotator_id`` is given)."""
    submitted = Assignment.objects.filter(project=project, is_gold=True, status=Assignment.Status.SUBMITTED)
    if annotator_id is not None:
        submitted = submitted.filter(annotator_id=annotator_id)
    gold = list(submitted.select_related("task", "annotator"))
    if not gold:
        return {}
    rows_by_assignment: dict[int, list[dict[str, Any]]] = {}
    for row in Annotation.objects.filter(assignment__in=gold).values(
        "assignment_id", "round", "response_id", "turn", "criterion", "value_int", "choice"
    ):
        rows_by_assignment.setdefault(row["assignment_id"], []).append(row)
    scored = []
    for assignment in gold:
        rows = [r for r in rows_by_assignment.get(assignment.pk, []) if r["round"] == assignment.round]
        answer = _answer_of(rows, project.kind, assignment.task)
        if answer is None:
            continue
        score = score_gold(project.kind, assignment.task.gold_answer, answer)
        scored.append({"annotator": assignment.annotator.get_username(), "score": score})
    return gold_accuracy(scored)


def progress_report(*, project: Project) -> ProgressReport:
    """Per annotator and per group: done, skipped, expired, in progress, median seconds, gold accuracy."""
    # Ids, not names: no join, and the rows are keyed by what the members and groups below carry.
    plain = [
        {"task": task, "status": status, "seconds": seconds, "gold": gold, "annotator": user, "group": group}
        for task, status, seconds, gold, user, group in Assignment.objects.filter(project=project)
        .annotate(seconds=SecondsBetween("started_at", "submitted_at"))
        .order_by()
        .values_list("task_id", "status", "seconds", "is_gold", "annotator_id", "group_id")
    ]
    gold = gold_scores(project=project)
    annotators = []
    per_annotator = annotator_progress(plain)
    members = list(project_members(project=project))
    for membership in members:
        name = membership.user.get_username()
        item = per_annotator.get(membership.user_id)
        accuracy = gold.get(name)
        annotators.append(
            {
                "annotator": name,
                "group": membership.group.name,
                "done": item.work.done if item else 0,
                "skipped": item.work.skipped if item else 0,
                "expired": item.work.expired if item else 0,
                "in_progress": item.work.in_progress if item else 0,
                "median_seconds": item.work.median_seconds if item else None,
                "gold_items": accuracy.n_items if accuracy else 0,
                "gold_accuracy": accuracy.mean_score if accuracy else None,
            }
        )
    group_names = dict(project.groups.order_by("id").values_list("id", "name"))
    per_group = group_progress(plain, k=project.overlap, n_tasks=project.n_tasks)
    n_members = Counter(m.group_id for m in members)
    groups = []
    for group_id, name in group_names.items():
        item = per_group.get(group_id)
        groups.append(
            {
                "group": name,
                "members": n_members.get(group_id, 0),
                "done": item.work.done if item else 0,
                "skipped": item.work.skipped if item else 0,
                "in_progress": item.work.in_progress if item else 0,
                "median_seconds": item.work.median_seconds if item else None,
                "required": project.overlap * project.n_tasks,
                "toward_k": item.submitted_toward_k if item else 0,
                "tasks_complete": item.tasks_complete if item else 0,
            }
        )
    overall = None
    if group_names:
        overall = project_progress(
            [r for r in plain if r["group"] in group_names],
            k=project.overlap,
            n_tasks=project.n_tasks,
            groups=list(group_names),
        )
    return ProgressReport(project=overall, annotators=annotators, groups=groups)


# --- reviewers ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewAnswer:
    """A submitted rating answer as the review page shows it: the same fields for every kind, in the
    positions and labels the annotator saw.

    ``ratings``: (shown number, [(criterion, value)]) per rated response; ``best``: the shown number of the
    pick; ``all_bad``: the annotator said every response was bad; ``votes``: (1-based turn, or ``None``
    for the one overall vote, and the vote ``A`` / ``B`` / ``tie`` / ``both_bad``); ``comment``: the
    comment of a likert or best-of-N answer, or the rationale of a pairwise one.
    """

    ratings: list[tuple[int, list[tuple[str, int]]]] = field(default_factory=list)
    best: int | None = None
    all_bad: bool = False
    votes: list[tuple[int | None, str]] = field(default_factory=list)
    comment: str = ""


def review_answer(values: Mapping[str, Any]) -> ReviewAnswer:
    """The answer of ``TaskView.values`` in one shape, whatever the project kind stored.

    ``values`` keys differ by kind (``comment`` for likert and best-of-N, ``rationale`` for pairwise, a
    best pick that is a number or ``"all_bad"``); the review page reads only this.
    """
    ratings = [
        (int(number), list(row.items()))
        for number, row in sorted(values.get("ratings", {}).items(), key=lambda item: int(item[0]))
    ]
    best = values.get("best")
    turns = values.get("votes", {})
    votes = [
        (None if turn is None else turn + 1, turns[turn]) for turn in sorted(turns, key=lambda t: t or 0)
    ]
    return ReviewAnswer(
        ratings=ratings,
        best=best if isinstance(best, int) else None,
        all_bad=best == ALL_BAD,
        votes=votes,
        comment=values.get("comment") or values.get("rationale") or "",
    )


def review_queue(*, project: Project | None = None) -> QuerySet[Assignment]:
    """Submitted, non-gold work without a review in its current round, oldest first: rating jobs and
    authored questions (translations are reviewed in their own job, answers are not reviewed)."""
    reviewed = Review.objects.filter(assignment_id=OuterRef("pk"), round=OuterRef("round"))
    qs = Assignment.objects.filter(
        status=Assignment.Status.SUBMITTED,
        is_gold=False,
        project__kind__in=[*RATING_KINDS, Project.Kind.QUESTION_AUTHORING],
    ).filter(~Exists(reviewed))
    if project is not None:
        qs = qs.filter(project=project)
    return qs.select_related("project", "annotator", "task__prompt").order_by("submitted_at", "id")
