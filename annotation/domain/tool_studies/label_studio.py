"""Label Studio's JSON export (the "JSON" format of Label Studio 1.x, as documented for 1.13: a list of
tasks, each ``{"id", "data": {...}, "annotations": [{"id", "completed_by", "result": [...],
"was_cancelled"}]}``) read as a study.

Results understood, by their ``type``:

- ``rating`` (``value.rating``): a likert criterion named after ``from_name`` on 1..max(5, highest given);
- ``choices`` (``value.choices``, one choice): a likert criterion whose categories are the choices seen;
- ``pairwise`` (``value.selected`` ``left`` / ``right``): a vote A / B on the task's two texts; a
  ``choices`` result holding ``tie`` or ``both_bad`` in a pairwise study is that vote;
- ``ranker`` (``value.ranker``: one list of item ids in rank order, the ``List`` tag's ``$items`` as data):
  a criterion on 1..N holding N + 1 - rank.

A rating or choice names the text it judges by ``to_name``; with one response field the whole task is that
response. Cancelled (skipped) annotations and predictions are not answers and are left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from annotation.domain.tool_studies.study import (
    Answer,
    Criterion,
    Item,
    Problems,
    Study,
    categories_from_labels,
    check_study,
    criterion_name,
    gettext_noop,
)

VERSION = "Label Studio 1.13 JSON export"
PROMPT_KEYS = ("prompt", "instruction", "question", "input", "query", "context", "source")
ID_KEYS = ("id", "external_id", "item_id", "item", "uid")
ABSTAIN = {"tie": "tie", "both_bad": "both_bad", "both bad": "both_bad", "bothbad": "both_bad"}


@dataclass(frozen=True)
class FieldMapping:
    """Which ``data`` keys hold the prompt and the responses (in order), and an optional item id key."""

    prompt: str = ""
    responses: tuple[str, ...] = ()
    item_id: str = ""


def suggest_mapping(tasks: Sequence[Mapping]) -> FieldMapping:
    """A first guess from the keys of the first task's ``data``: the prompt key by its usual names, the
    other text keys (or the ranker's list) as responses."""
    data = next(
        (t.get("data") for t in tasks if isinstance(t, Mapping) and isinstance(t.get("data"), Mapping)), {}
    )
    keys = list(data)
    prompt = next((k for k in PROMPT_KEYS if k in data and isinstance(data[k], str)), "")
    item_id = next((k for k in ID_KEYS if k in data and isinstance(data[k], str | int)), "")
    lists = [
        k
        for k in keys
        if isinstance(data[k], list) and data[k] and all(isinstance(x, Mapping) for x in data[k])
    ]
    texts = [k for k in keys if k not in (prompt, item_id) and isinstance(data[k], str)]
    return FieldMapping(prompt=prompt, responses=tuple(lists[:1] or texts), item_id=item_id)


def _annotator(raw: object) -> str | None:
    if isinstance(raw, Mapping):
        raw = raw.get("email") or raw.get("id")
    if isinstance(raw, bool) or raw is None or raw == "":
        return None
    return str(raw)


def parse(data: object, *, file: str, mapping: FieldMapping | None = None) -> Study:
    """The study in a Label Studio JSON export; every problem is reported at once (``StudyInvalid``)."""
    problems = Problems(file)
    if not isinstance(data, list):
        problems.add("", "", "Expected a JSON list of tasks (Label Studio's JSON export).")
        problems.raise_any()
    tasks: list = data  # type: ignore[assignment]
    mapping = mapping or suggest_mapping(tasks)
    results: list[tuple[str, str, str, Mapping, str]] = []  # (item, annotator, where, result, record)
    items: list[Item] = []
    ranker_lists: dict[str, dict[str, int]] = {}
    for n, task in enumerate(tasks, start=1):
        record = f"task {task.get('id', n)}" if isinstance(task, Mapping) else f"task #{n}"
        if not isinstance(task, Mapping) or not isinstance(task.get("data"), Mapping):
            problems.add(record, "data", "Expected an object with a 'data' object.")
            continue
        d = task["data"]
        item_id = (
            str(d.get(mapping.item_id))
            if mapping.item_id and d.get(mapping.item_id) is not None
            else str(task.get("id", n))
        )
        prompt = d.get(mapping.prompt, "") if mapping.prompt else ""
        if not isinstance(prompt, str):
            problems.add(record, f"data.{mapping.prompt}", "Expected the prompt as text.")
            prompt = ""
        responses: list[tuple[str, str]] = []
        if not mapping.responses:
            problems.add(record, "data", "No response field is chosen.")
        for key in mapping.responses:
            value = d.get(key)
            if isinstance(value, str):
                responses.append((key, value))
            elif isinstance(value, list) and len(mapping.responses) == 1:
                order: dict[str, int] = {}
                for i, entry in enumerate(value):
                    if not isinstance(entry, Mapping) or entry.get("id") in (None, ""):
                        problems.add(record, f"data.{key}[{i}]", "Expected a list item with an 'id'.")
                        continue
                    text = entry.get("body") or entry.get("title") or ""
                    order[str(entry["id"])] = len(responses)
                    responses.append((str(entry["id"]), str(text)))
                ranker_lists[item_id] = order
            else:
                problems.add(record, f"data.{key}", "Missing, or not text.")
        items.append(Item(item_id, prompt, tuple(responses)))
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            problems.add(record, "annotations", "Expected a list.")
            continue
        for a_n, annotation in enumerate(annotations, start=1):
            where = (
                f"{record} annotation {annotation.get('id', a_n) if isinstance(annotation, Mapping) else a_n}"
            )
            if not isinstance(annotation, Mapping):
                problems.add(where, "", "Expected an object.")
                continue
            if annotation.get("was_cancelled"):
                continue
            annotator = _annotator(annotation.get("completed_by"))
            if annotator is None:
                problems.add(where, "completed_by", "Missing: whose answer is this?")
                continue
            result = annotation.get("result")
            if not isinstance(result, list):
                problems.add(where, "result", "Expected a list of results.")
                continue
            for r_n, r in enumerate(result):
                if not isinstance(r, Mapping) or not isinstance(r.get("value"), Mapping):
                    problems.add(where, f"result[{r_n}]", "Expected an object with a 'value' object.")
                    continue
                results.append((item_id, annotator, where, r, f"result[{r_n}]"))
    # Go on with the well-formed results, so the values' problems are reported with the structure's.
    return _study(items, results, mapping, ranker_lists, problems)


def _study(items, results, mapping: FieldMapping, ranker_lists, problems: Problems) -> Study:
    types = {str(r.get("type", "")) for *_, r, _ in results}
    pairwise = "pairwise" in types
    kind = "pairwise" if pairwise else "likert"
    unknown = types - {"rating", "choices", "pairwise", "ranker", "textarea"}
    for t in sorted(unknown):
        where, rec = next((w, rr) for _, _, w, r, rr in results if str(r.get("type", "")) == t)
        problems.add(
            where,
            f"{rec}.type",
            gettext_noop(
                "Results of type %(type)s cannot be imported (rating, choices, pairwise, ranker, textarea)."
            ),
            type=repr(t),
        )
    if pairwise and types & {"rating", "ranker"}:
        problems.add("", "type", "A pairwise study cannot also hold ratings or rankings.")
        problems.raise_any()
    results = [x for x in results if str(x[3].get("type", "")) not in unknown]
    by_item = {i.external_id: i for i in items}
    response_index = {i.external_id: {name: n for n, (name, _) in enumerate(i.responses)} for i in items}
    points: dict[str, int] = {}
    labels: dict[str, list[str]] = {}
    ranked: dict[str, int] = {}
    answers: dict[tuple[str, str], dict] = {}
    for item_id, annotator, where, r, rec in results:
        kind_r = r.get("type")
        value = r["value"]
        source = str(r.get("from_name") or kind_r)
        entry = answers.setdefault(
            (item_id, annotator), {"ratings": {}, "vote": None, "where": where, "comment": ""}
        )
        if kind_r == "textarea":
            texts = value.get("text")
            entry["comment"] = "\n".join(str(t) for t in texts) if isinstance(texts, list) else ""
            continue
        if kind_r in ("rating", "choices"):
            source = _criterion_source(source, str(r.get("to_name") or ""), response_index[item_id])
        if kind_r == "pairwise":
            selected = value.get("selected")
            if selected not in ("left", "right"):
                problems.add(
                    where,
                    f"{rec}.value.selected",
                    gettext_noop("Expected 'left' or 'right'; got %(value)s."),
                    value=repr(selected),
                )
                continue
            entry["vote"] = "A" if selected == "left" else "B"
            continue
        if kind_r == "choices":
            chosen = value.get("choices")
            if not isinstance(chosen, list) or len(chosen) != 1 or not isinstance(chosen[0], str):
                problems.add(where, f"{rec}.value.choices", "Expected exactly one choice.")
                continue
            if pairwise:
                vote = ABSTAIN.get(chosen[0].strip().lower())
                if vote is None:
                    problems.add(
                        where, f"{rec}.value.choices", "In a pairwise study a choice is 'tie' or 'both_bad'."
                    )
                else:
                    entry["vote"] = vote
                continue
            target = _target(r, by_item[item_id], response_index[item_id], where, rec, problems)
            if target is None:
                continue
            labels.setdefault(source, [])
            if chosen[0] not in labels[source]:
                labels[source].append(chosen[0])
            entry["ratings"][(target, source)] = ("choice", chosen[0])
            continue
        if kind_r == "rating":
            number = value.get("rating")
            if (
                isinstance(number, bool)
                or not isinstance(number, int | float)
                or number != int(number)
                or number < 1
            ):
                problems.add(
                    where,
                    f"{rec}.value.rating",
                    gettext_noop("Expected a whole number from 1; got %(value)s."),
                    value=repr(number),
                )
                continue
            target = _target(r, by_item[item_id], response_index[item_id], where, rec, problems)
            if target is None:
                continue
            points[source] = max(points.get(source, 5), int(number))
            entry["ratings"][(target, source)] = ("points", int(number))
            continue
        # ranker
        ranking = value.get("ranker")
        lists = list(ranking.values()) if isinstance(ranking, Mapping) else []
        order = ranker_lists.get(item_id)
        if order is None:
            problems.add(
                where,
                rec,
                gettext_noop("A ranking needs the task's list of items as its response field (%(fields)s)."),
                fields=", ".join(mapping.responses) or "-",
            )
            continue
        if len(lists) != 1 or not isinstance(lists[0], list):
            problems.add(
                where,
                f"{rec}.value.ranker",
                "Expected one list of item ids in rank order (buckets are not imported).",
            )
            continue
        ids = [str(x) for x in lists[0]]
        if sorted(ids) != sorted(order) or len(set(ids)) != len(ids):
            problems.add(where, f"{rec}.value.ranker", "The ranking must hold every item of the task once.")
            continue
        ranked[source] = max(ranked.get(source, 0), len(ids))
        for rank, rid in enumerate(ids, start=1):
            entry["ratings"][(order[rid], source)] = ("rank", len(ids) + 1 - rank)
    problems.raise_any()
    criteria: dict[str, Criterion] = {}
    for source, n in points.items():
        criteria[source] = Criterion(criterion_name(source), points=n, source_name=source)
    for source, found in labels.items():
        cats = categories_from_labels(found)
        if cats is None:
            problems.add("", source, "Two choices differ only in case or punctuation.")
            continue
        criteria[source] = Criterion(criterion_name(source), categories=cats, source_name=source)
    for source, n in ranked.items():
        criteria[source] = Criterion(criterion_name(source), points=n, source_name=source, from_ranking=True)
    names = [c.name for c in criteria.values()]
    if len(set(names)) != len(names):
        problems.add(
            "", "from_name", "Two questions have names that read the same once made criterion names."
        )
    problems.raise_any()
    value_of = {c.source_name: c for c in criteria.values()}
    out: list[Answer] = []
    for (item_id, annotator), entry in answers.items():
        ratings: dict[tuple[int, str], int | str] = {}
        for (target, source), (how, raw) in entry["ratings"].items():
            criterion = value_of[source]
            if how == "choice":
                raw = dict((label, v) for v, label in criterion.categories)[raw]
            ratings[(target, criterion.name)] = raw
        if kind == "pairwise" and entry["vote"] is None:
            problems.add(entry["where"], "result", "A pairwise answer without a vote.")
            continue
        out.append(Answer(item_id, annotator, ratings, entry["vote"], entry["comment"], where=entry["where"]))
    study = Study(
        tool="label_studio",
        tool_version=VERSION,
        kind=kind,  # type: ignore[arg-type]
        criteria=tuple(criteria.values()),
        items=tuple(items),
        answers=tuple(out),
        fields={"prompt": mapping.prompt, "responses": list(mapping.responses), "item_id": mapping.item_id},
    )
    check_study(study, problems)
    return study


def _criterion_source(from_name: str, to_name: str, index: Mapping[str, int]) -> str:
    """One criterion for the per-response copies of a question: ``relevance_2`` rating the second of the
    responses ``response_1`` .. is the criterion ``relevance`` (as Timbang's own export writes them)."""
    head, _, number = from_name.rpartition("_")
    if (
        head
        and number.isdigit()
        and to_name in index
        and index[to_name] == int(number) - 1
        and len(index) > 1
    ):
        return head
    return from_name


def _target(
    r: Mapping, item: Item, index: Mapping[str, int], where: str, rec: str, problems: Problems
) -> int | None:
    """Which response a rating or choice judges: the one its ``to_name`` names, or the only one."""
    to_name = str(r.get("to_name") or "")
    if to_name in index:
        return index[to_name]
    if len(item.responses) == 1:
        return 0
    if not item.responses:  # the item's own problem is reported already
        return None
    problems.add(
        where,
        f"{rec}.to_name",
        gettext_noop("%(name)s names none of the responses (%(fields)s)."),
        name=repr(to_name),
        fields=", ".join(index),
    )
    return None
