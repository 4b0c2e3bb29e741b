"""Reads of the review queue and of an annotator's own submitted work ("My work").

The queue is filtered, sorted and paged in the database; a page of items is then built with a fixed
number of queries for the rating kinds (responses, answers and criteria of the whole page at once). Each
item shows the task the way its annotator saw it: responses in the stored permutation, under the same
labels, with the answer given to each response beside it: every criterion under its label, a named
answer (yes / no / unsure) under its label, in the page's language.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.paginator import Page, Paginator
from django.db.models import Exists, OuterRef, Q, QuerySet

from annotation.domain import rubrics as default_rubrics
from annotation.domain.blinding import invert_permutation, shown_labels
from annotation.domain.submission import ALL_BAD
from annotation.models import (
    RATING_KINDS,
    SPAN_KINDS,
    Annotation,
    AnnotatorGroup,
    Assignment,
    Membership,
    Project,
    Review,
    Rubric,
)
from annotation.selectors.jobs import job_task_view, question_review_item
from annotation.selectors.spans import span_task_view
from datasets_app.models import Response

__all__ = [
    "REVIEW_PAGE_SIZE",
    "REVIEW_SORTS",
    "REVIEW_STATUSES",
    "EDITABLE_KINDS",
    "MyWorkRow",
    "ReviewFilter",
    "ReviewFilterInvalid",
    "ReviewItem",
    "ReviewRating",
    "ReviewResponse",
    "my_work",
    "review_filter_choices",
    "review_items",
    "review_page",
    "review_queue_filtered",
]

REVIEW_PAGE_SIZE = 20
REVIEW_STATUSES = ("pending", "resubmitted", "accepted", "all")
REVIEW_SORTS = {
    "oldest": ("submitted_at", "id"),
    "newest": ("-submitted_at", "-id"),
    "annotator": ("annotator__username", "submitted_at", "id"),
}
# Kinds whose submitted answer the annotator may reopen from "My work" (a new round, the old one kept);
# the translation and authoring jobs have their own rounds, driven by their reviewers.
EDITABLE_KINDS = (*RATING_KINDS, Project.Kind.MCQ_ANSWER, *SPAN_KINDS)


class ReviewFilterInvalid(ValueError):
    """A filter of the review queue that cannot be read; ``errors`` maps the parameter to its message."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class ReviewFilter:
    project: int | None = None
    kind: str = ""
    annotator: int | None = None
    group: int | None = None
    status: str = "pending"
    submitted_from: date | None = None
    submitted_to: date | None = None
    simulated: bool = False
    flagged: bool = False
    sort: str = "oldest"

    @classmethod
    def from_query(cls, query: Any) -> ReviewFilter:
        """Read the queue's GET parameters; every unreadable one is named in ``ReviewFilterInvalid``."""
        errors: dict[str, str] = {}

        def number(name: str) -> int | None:
            raw = (query.get(name) or "").strip()
            if not raw:
                return None
            if not raw.isdigit():
                errors[name] = f"{raw!r} is not a number."
                return None
            return int(raw)

        def day(name: str) -> date | None:
            raw = (query.get(name) or "").strip()
            if not raw:
                return None
            try:
                return date.fromisoformat(raw)
            except ValueError:
                errors[name] = f"{raw!r} is not a date (YYYY-MM-DD)."
                return None

        kind = (query.get("kind") or "").strip()
        if kind and kind not in Project.Kind.values:
            errors["kind"] = f"{kind!r} is not a job kind."
        status = (query.get("status") or "pending").strip()
        if status not in REVIEW_STATUSES:
            errors["status"] = f"{status!r} is not one of {', '.join(REVIEW_STATUSES)}."
        sort = (query.get("sort") or "oldest").strip()
        if sort not in REVIEW_SORTS:
            errors["sort"] = f"{sort!r} is not one of {', '.join(REVIEW_SORTS)}."
        result = cls(
            project=number("project"),
            kind=kind,
            annotator=number("annotator"),
            group=number("group"),
            status=status,
            submitted_from=day("from"),
            submitted_to=day("to"),
            simulated=query.get("simulated") in ("1", "on", "true"),
            flagged=query.get("flagged") in ("1", "on", "true"),
            sort=sort,
        )
        if errors:
            raise ReviewFilterInvalid(errors)
        return result

    def as_query(self) -> dict[str, str]:
        """The GET parameters that give this filter back (for paging links and the form after a post)."""
        pairs = {
            "project": self.project,
            "kind": self.kind,
            "annotator": self.annotator,
            "group": self.group,
            "status": "" if self.status == "pending" else self.status,
            "from": self.submitted_from.isoformat() if self.submitted_from else "",
            "to": self.submitted_to.isoformat() if self.submitted_to else "",
            "simulated": "1" if self.simulated else "",
            "flagged": "1" if self.flagged else "",
            "sort": "" if self.sort == "oldest" else self.sort,
        }
        return {k: str(v) for k, v in pairs.items() if v not in (None, "")}


def review_queue_filtered(
    *, filters: ReviewFilter, reviewer_id: int, flagged: dict[int, set[int]] | None = None
) -> QuerySet[Assignment]:
    """Submitted, non-gold work of every kind that others did, filtered and sorted.

    Simulated annotators' work is left out unless ``filters.simulated``. ``flagged`` maps a project id to
    the annotator ids a quality signal flags there; with ``filters.flagged`` only their work is listed.
    """
    current = Review.objects.filter(assignment_id=OuterRef("pk"), round=OuterRef("round"))
    earlier_reject = Review.objects.filter(
        assignment_id=OuterRef("pk"), round__lt=OuterRef("round"), verdict=Review.Verdict.REJECT
    )
    simulated = Membership.objects.filter(
        project_id=OuterRef("project_id"), user_id=OuterRef("annotator_id"), is_simulated=True
    )
    qs = Assignment.objects.filter(status=Assignment.Status.SUBMITTED, is_gold=False).exclude(
        annotator_id=reviewer_id
    )
    if filters.status == "pending":
        qs = qs.filter(~Exists(current))
    elif filters.status == "resubmitted":
        qs = qs.filter(~Exists(current)).filter(Exists(earlier_reject))
    elif filters.status == "accepted":
        qs = qs.filter(Exists(current.filter(verdict=Review.Verdict.ACCEPT)))
    if not filters.simulated:
        qs = qs.filter(~Exists(simulated))
    if filters.project is not None:
        qs = qs.filter(project_id=filters.project)
    if filters.kind:
        qs = qs.filter(project__kind=filters.kind)
    if filters.annotator is not None:
        qs = qs.filter(annotator_id=filters.annotator)
    if filters.group is not None:
        qs = qs.filter(group_id=filters.group)
    if filters.submitted_from is not None:
        qs = qs.filter(submitted_at__date__gte=filters.submitted_from)
    if filters.submitted_to is not None:
        qs = qs.filter(submitted_at__date__lte=filters.submitted_to)
    if filters.flagged:
        condition = Q(pk__in=[])
        for project_id, annotator_ids in (flagged or {}).items():
            condition |= Q(project_id=project_id, annotator_id__in=sorted(annotator_ids))
        qs = qs.filter(condition)
    return qs.select_related("project", "annotator", "group", "task__prompt").order_by(
        *REVIEW_SORTS[filters.sort]
    )


def review_page(queryset: QuerySet[Assignment], page: str | int | None) -> Page:
    """One page of the queue (the last page when ``page`` is past it, the first when it is unreadable)."""
    return Paginator(queryset, REVIEW_PAGE_SIZE).get_page(page)


def review_filter_choices(*, filters: ReviewFilter) -> dict[str, Any]:
    """What the filter form offers: projects, kinds, the selected project's groups and annotators."""
    projects = list(Project.objects.order_by("-created_at", "-id").only("id", "name", "kind"))
    groups: list[AnnotatorGroup] = []
    annotators: list[tuple[int, str]] = []
    if filters.project is not None:
        groups = list(AnnotatorGroup.objects.filter(project_id=filters.project).order_by("id"))
        members = Membership.objects.filter(project_id=filters.project)
        if not filters.simulated:
            members = members.filter(is_simulated=False)
        annotators = [
            (m.user_id, m.user.get_username())
            for m in members.select_related("user").order_by("user__username")
        ]
    return {
        "projects": projects,
        "kinds": Project.Kind.choices,
        "groups": groups,
        "annotators": annotators,
        "statuses": REVIEW_STATUSES,
        "sorts": tuple(REVIEW_SORTS),
    }


@dataclass(frozen=True)
class ReviewRating:
    """One answer on one criterion, as the reviewer reads it: the criterion's label and the value shown
    (a point as its number, a category under its label), in the page's language."""

    criterion: str
    label: str
    value: str


@dataclass
class ReviewResponse:
    """One response as its annotator saw it, with the answer they gave to it."""

    label: str
    turns: list[str]
    ratings: list[ReviewRating] = field(default_factory=list)
    best: bool = False
    voted: bool = False


@dataclass
class ReviewItem:
    assignment: Assignment
    kind: str
    simulated: bool = False
    flagged: bool = False
    prompt_turns: list[str] = field(default_factory=list)
    responses: list[ReviewResponse] = field(default_factory=list)
    all_bad: bool = False
    votes: list[tuple[int | None, str]] = field(default_factory=list)
    comment: str = ""
    job: Any = None
    question: dict[str, Any] | None = None
    returned_comment: str = ""


@dataclass(frozen=True)
class _Criterion:
    label: dict[str, str]
    scale: default_rubrics.Scale


def _criteria_of(projects: list[Project]) -> dict[tuple[str, int], _Criterion]:
    """Label and scale of every (criterion, rubric version) the ``projects`` rate on: one query."""
    wanted = {(c, p.rubric_versions.get(c, 1)) for p in projects for c in p.criteria}
    if not wanted:
        return {}
    versions = Q()
    for criterion, version in wanted:
        versions |= Q(criterion=criterion, version=version)
    found = {}
    for rubric in Rubric.objects.filter(versions, category="").order_by():
        found[(rubric.criterion, rubric.version)] = _Criterion(
            dict(rubric.label or {}), default_rubrics.scale_from_json(rubric.scale)
        )
    return found


def _shown_rating(
    row: Annotation, project: Project, criteria: dict[tuple[str, int], _Criterion], lang: str
) -> ReviewRating:
    criterion = criteria.get((row.criterion, project.rubric_versions.get(row.criterion, 1)))
    label = (criterion.label if criterion else {}) or default_rubrics.CRITERION_LABELS.get(row.criterion, {})
    value: int | str = row.value_int if row.value_int is not None else row.choice
    return ReviewRating(
        criterion=row.criterion,
        label=label.get(lang) or label.get("en") or row.criterion,
        value=criterion.scale.label(value, lang) if criterion else str(value),
    )


def _rating_answer(
    item: ReviewItem,
    rows: list[Annotation],
    response_ids: list[int],
    *,
    criteria: dict[tuple[str, int], _Criterion],
    lang: str,
) -> None:
    """Put each stored value beside the response it belongs to, in shown positions."""
    permutation = list(item.assignment.permutation)
    shown_of = invert_permutation(permutation)
    index_of = {rid: i for i, rid in enumerate(response_ids)}
    swapped = permutation == [1, 0]
    votes: dict[int | None, str] = {}
    for row in rows:
        if row.criterion == "comment":
            item.comment = row.comment
        elif row.criterion == "vote":
            vote = row.choice
            if swapped and vote in ("A", "B"):
                vote = "B" if vote == "A" else "A"
            votes[row.turn] = vote
        elif row.criterion == "best":
            if row.choice == ALL_BAD:
                item.all_bad = True
            else:
                item.responses[shown_of[index_of[row.response_id]]].best = True
        elif row.response_id in index_of and (row.value_int is not None or row.choice):
            rating = _shown_rating(row, item.assignment.project, criteria, lang)
            item.responses[shown_of[index_of[row.response_id]]].ratings.append(rating)
    item.votes = [(None if t is None else t + 1, votes[t]) for t in sorted(votes, key=lambda t: t or 0)]
    for _, vote in item.votes:
        if vote in ("A", "B"):
            item.responses[0 if vote == "A" else 1].voted = True


def review_items(
    assignments: list[Assignment], *, lang: str, flagged: dict[int, set[int]] | None = None
) -> list[ReviewItem]:
    """The page's items. Rating kinds: four queries for the whole page (memberships, responses, answers,
    the criteria's rubrics); the translation and question jobs read their own item each."""
    lang = "id" if lang.startswith("id") else "en"
    flagged = flagged or {}
    simulated = set(
        Membership.objects.filter(
            is_simulated=True,
            project_id__in={a.project_id for a in assignments},
            user_id__in={a.annotator_id for a in assignments},
        ).values_list("project_id", "user_id")
    )
    rating = [a for a in assignments if a.project.kind in RATING_KINDS]
    response_ids = {rid for a in rating for rid in a.task.response_ids}
    turns = dict(Response.objects.filter(pk__in=response_ids).order_by().values_list("id", "turns"))
    rows_of: dict[int, list[Annotation]] = {}
    returned: dict[int, str] = {}
    criteria = _criteria_of(list({a.project_id: a.project for a in rating}.values()))
    if rating:
        for row in Annotation.objects.filter(assignment__in=rating).order_by("id"):
            rows_of.setdefault(row.assignment_id, []).append(row)
        for review in Review.objects.filter(
            assignment__in=[a for a in rating if a.round > 1], verdict=Review.Verdict.REJECT
        ).order_by("round", "id"):
            returned[review.assignment_id] = review.comment
    items = []
    for assignment in assignments:
        project = assignment.project
        item = ReviewItem(
            assignment=assignment,
            kind=project.kind,
            simulated=(assignment.project_id, assignment.annotator_id) in simulated,
            flagged=assignment.annotator_id in flagged.get(assignment.project_id, set()),
        )
        if project.kind in RATING_KINDS:
            task = assignment.task
            shown = [task.response_ids[i] for i in assignment.permutation]
            labels = shown_labels(len(shown), lang, pairwise=project.is_pairwise)  # type: ignore[arg-type]
            item.prompt_turns = list(task.prompt.turns)
            item.responses = [
                ReviewResponse(label=labels[i], turns=list(turns.get(rid, []))) for i, rid in enumerate(shown)
            ]
            rows = [r for r in rows_of.get(assignment.pk, []) if r.round == assignment.round]
            _rating_answer(item, rows, list(task.response_ids), criteria=criteria, lang=lang)
            item.returned_comment = returned.get(assignment.pk, "")
        elif project.kind == Project.Kind.QUESTION_AUTHORING:
            item.question = question_review_item(assignment)
        elif project.kind in SPAN_KINDS:
            item.job = span_task_view(assignment=assignment, lang=lang)
        else:
            item.job = job_task_view(assignment=assignment, lang=lang)
        items.append(item)
    return items


# --- My work ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MyWorkRow:
    assignment: Assignment
    number: int
    verdict: str
    review_comment: str
    editable: bool


def my_work(*, user: AbstractBaseUser, project: Project) -> list[MyWorkRow]:
    """The caller's submitted and returned tasks in ``project``, newest first, numbered in the order they
    were claimed (the number the annotator knows them by; no task or response id is shown).

    ``verdict`` is the latest review of the work's current or previous round (``reject`` while it is back
    with them); ``editable`` says whether it can be reopened now.
    """
    own = list(
        Assignment.objects.filter(project=project, annotator_id=user.pk, is_gold=False)
        .filter(Q(status=Assignment.Status.SUBMITTED) | Q(status=Assignment.Status.ASSIGNED, round__gt=1))
        .order_by("id")
    )
    latest: dict[int, Review] = {}
    for review in Review.objects.filter(assignment__in=own).order_by("round", "id"):
        latest[review.assignment_id] = review
    open_for_edits = project.allow_edits and project.status in (Project.Status.ACTIVE, Project.Status.PAUSED)
    rows = []
    for number, assignment in enumerate(own, start=1):
        review = latest.get(assignment.pk)
        rows.append(
            MyWorkRow(
                assignment=assignment,
                number=number,
                verdict=review.verdict if review else "",
                review_comment=review.comment if review else "",
                editable=open_for_edits
                and project.kind in EDITABLE_KINDS
                and assignment.status == Assignment.Status.SUBMITTED,
            )
        )
    rows.reverse()
    return rows
