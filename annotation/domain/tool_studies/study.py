"""The one shape every tool's study is read into, the problems a file can have, and the small rules
shared by the readers (criterion names, category values, pseudonyms).

A study is either ``likert`` (each item has one or more responses, each rated on criteria: points or
categories) or ``pairwise`` (each item has two responses and a vote A / B / tie / both_bad). Ranking
questions become a likert criterion ``<name>`` on points 1..N whose value is N + 1 - rank (higher is
better, so preference exports order responses the right way round).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

TOOLS: tuple[str, ...] = ("label_studio", "argilla", "potato")
TOOL_LABELS: dict[str, str] = {"label_studio": "Label Studio", "argilla": "Argilla", "potato": "Potato"}
VOTES: tuple[str, ...] = ("A", "B", "tie", "both_bad")
MAX_PROBLEMS = 100
MIN_POINTS, MAX_POINTS, MAX_CATEGORIES = 2, 10, 10
# Names the answer table keeps for itself (``annotation.services.rubrics``): a criterion read from a file
# under one of them is renamed ``<name>_pick``.
RESERVED = frozenset({"best", "vote", "comment", "choice", "ambiguous", "answer", "verdict"})

Kind = Literal["likert", "pairwise"]


def gettext_noop(message: str) -> str:
    """Marks a message for the translation catalogue, as Django's function of this name does (the domain
    does not import Django); the page shows it translated (``template % params``), the API as written."""
    return message


@dataclass(frozen=True)
class Problem:
    """What is wrong, and where: the file, the record in it (a task id, a line, a row) and the field.
    ``message`` is in English; ``template`` and ``params`` rebuild it in another language."""

    file: str
    record: str
    field: str
    message: str
    template: str = ""
    params: Mapping[str, object] = field(default_factory=dict)

    def as_dict(self) -> dict[str, str]:
        return {"file": self.file, "record": self.record, "field": self.field, "message": self.message}

    def __str__(self) -> str:
        return ": ".join(p for p in (self.file, self.record, self.field, self.message) if p)


class StudyInvalid(ValueError):
    """A file that cannot be read as a study; ``problems`` lists every problem found (up to a limit)."""

    def __init__(self, problems: Sequence[Problem], total: int | None = None) -> None:
        self.problems = list(problems)[:MAX_PROBLEMS]
        self.total = total if total is not None else len(problems)
        first = str(self.problems[0]) if self.problems else "no study found"
        more = f" (and {self.total - 1} more problem(s))" if self.total > 1 else ""
        super().__init__(first + more)


class Problems:
    """Collects problems while a reader walks a whole file, then raises them together."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.items: list[Problem] = []

    def add(
        self, record: object, field_name: str, message: str, *, file: str | None = None, **params: object
    ) -> None:
        """``message`` may hold ``%(name)s`` places filled from ``params``."""
        text = message % params if params else message
        self.items.append(Problem(file or self.file, str(record), field_name, text, message, params))

    def raise_any(self) -> None:
        if self.items:
            raise StudyInvalid(self.items)


@dataclass(frozen=True)
class Criterion:
    """A rated criterion: ``points`` 2..10, or ``categories`` as (value, label) pairs in order."""

    name: str
    points: int = 0
    categories: tuple[tuple[str, str], ...] = ()
    source_name: str = ""
    from_ranking: bool = False

    def scale_json(self) -> dict:
        """The rubric scale (``annotation.domain.rubrics.scale_from_json``)."""
        if self.categories:
            return {
                "categories": [
                    {"value": v, "label": {"id": label, "en": label}} for v, label in self.categories
                ]
            }
        return {"points": self.points}


@dataclass(frozen=True)
class Item:
    """One thing judged: a prompt (may be empty) and its responses as (name, text), in canonical order."""

    external_id: str
    prompt: str
    responses: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Answer:
    """One annotator's answer to one item: ratings by (response index, criterion), or a vote."""

    item_id: str
    annotator: str
    ratings: Mapping[tuple[int, str], int | str] = field(default_factory=dict)
    vote: str | None = None
    comment: str = ""
    where: str = ""


@dataclass(frozen=True)
class Study:
    tool: str
    tool_version: str
    kind: Kind
    criteria: tuple[Criterion, ...]
    items: tuple[Item, ...]
    answers: tuple[Answer, ...]
    fields: Mapping[str, object] = field(default_factory=dict)

    @property
    def annotators(self) -> list[str]:
        return sorted({a.annotator for a in self.answers})

    def summary(self) -> dict[str, object]:
        """The counts and settings a preview shows (plain values, JSON-ready)."""
        return {
            "tool": self.tool,
            "tool_version": self.tool_version,
            "kind": self.kind,
            "criteria": [
                {
                    "name": c.name,
                    "source_name": c.source_name or c.name,
                    "scale": c.scale_json(),
                    "from_ranking": c.from_ranking,
                }
                for c in self.criteria
            ],
            "n_items": len(self.items),
            "n_responses": sum(len(i.responses) for i in self.items),
            "n_annotators": len(self.annotators),
            "n_answers": len(self.answers),
            "max_answers_per_item": max_answers_per_item(self),
            "fields": dict(self.fields),
        }

    def long_rows(self) -> list[tuple[str, str, str, int | str]]:
        """(unit, coder, criterion, value) of every rating or vote: what agreement is computed on.
        The unit of a rating is ``item/response index``; of a vote, the item."""
        rows: list[tuple[str, str, str, int | str]] = []
        for answer in self.answers:
            for (index, criterion), value in sorted(
                answer.ratings.items(), key=lambda kv: (kv[0][0], kv[0][1])
            ):
                rows.append((f"{answer.item_id}/{index}", answer.annotator, criterion, value))
            if answer.vote is not None:
                rows.append((answer.item_id, answer.annotator, "vote", answer.vote))
        return rows


def max_answers_per_item(study: Study) -> int:
    counts: dict[str, int] = {}
    for answer in study.answers:
        counts[answer.item_id] = counts.get(answer.item_id, 0) + 1
    return max(counts.values(), default=0)


_NOT_NAME = re.compile(r"[^a-z0-9_]+")


def criterion_name(raw: str) -> str:
    """A criterion name from a tool's question name: lower-case letters and '_' only, at most 40."""
    text = _NOT_NAME.sub("_", str(raw).strip().lower())
    text = re.sub(r"[0-9]", lambda m: "_" + "abcdefghij"[int(m.group())], text)
    text = re.sub(r"_+", "_", text).strip("_") or "rating"
    if not text[0].isalpha():
        text = "q_" + text
    text = text[:40].rstrip("_")
    return f"{text[:34]}_pick" if text in RESERVED else text


def category_value(label: str) -> str:
    """A stored category value from a label: lower-case letters, digits and '_', at most 20."""
    text = re.sub(r"_+", "_", _NOT_NAME.sub("_", str(label).strip().lower())).strip("_")
    return (text or "empty")[:20]


def categories_from_labels(labels: Sequence[str]) -> tuple[tuple[str, str], ...] | None:
    """(value, label) for labels in order; ``None`` when two labels would share a stored value."""
    pairs = tuple((category_value(label), str(label)) for label in labels)
    if len({v for v, _ in pairs}) != len(pairs):
        return None
    return pairs


def pseudonym(tool: str, annotator: str, key: bytes) -> str:
    """A stable, non-reversible account name for a tool's annotator id (an e-mail, a user UUID)."""
    digest = hmac.new(key, f"{tool}\0{annotator}".encode(), hashlib.sha256).hexdigest()[:12]
    prefix = {"label_studio": "ls", "argilla": "rg", "potato": "pt"}.get(tool, "ext")
    return f"{prefix}-{digest}"


def check_study(study: Study, problems: Problems) -> None:
    """Rules every reader's result must keep: items unique with responses, answers on known items, one
    answer per annotator and item, criteria on scales that fit, pairs of exactly two responses."""
    seen: dict[str, Item] = {}
    for item in study.items:
        if item.external_id in seen:
            problems.add(item.external_id, "id", "The same item id appears twice.")
        seen[item.external_id] = item
        if not item.responses:
            problems.add(item.external_id, "responses", "The item has no response to judge.")
        if study.kind == "pairwise" and len(item.responses) != 2:
            problems.add(
                item.external_id,
                "responses",
                gettext_noop("A pair needs 2 responses; found %(n)s."),
                n=len(item.responses),
            )
        names = [name for name, _ in item.responses]
        if len(set(names)) != len(names):
            problems.add(item.external_id, "responses", "Two responses of the item have the same name.")
    for criterion in study.criteria:
        if criterion.categories and not 2 <= len(criterion.categories) <= MAX_CATEGORIES:
            problems.add(
                "",
                criterion.source_name or criterion.name,
                gettext_noop("A criterion has 2 to %(max)s categories; found %(n)s."),
                max=MAX_CATEGORIES,
                n=len(criterion.categories),
            )
        if not criterion.categories and not MIN_POINTS <= criterion.points <= MAX_POINTS:
            problems.add(
                "",
                criterion.source_name or criterion.name,
                gettext_noop("A scale has %(min)s to %(max)s points; found %(n)s."),
                min=MIN_POINTS,
                max=MAX_POINTS,
                n=criterion.points,
            )
    pairs: set[tuple[str, str]] = set()
    for answer in study.answers:
        where = answer.where or answer.item_id
        if answer.item_id not in seen:
            problems.add(
                where, "item", gettext_noop("No item %(item)s in the study."), item=repr(answer.item_id)
            )
            continue
        if (answer.item_id, answer.annotator) in pairs:
            problems.add(
                where,
                "annotator",
                gettext_noop("%(who)s answered this item twice."),
                who=repr(answer.annotator),
            )
        pairs.add((answer.item_id, answer.annotator))
    if not study.items:
        problems.add("", "", "The file holds no items.")
    problems.raise_any()
