"""An Argilla dataset (Argilla 2.x, the layout ``rg.Dataset.to_hub`` writes and ``to_datasets()`` gives)
read as a study.

Records are flat rows: the dataset's fields by name (``prompt``, ``response`` ...), ``id``, and for each
question ``<q>.responses`` (the values), ``<q>.responses.users`` (the user ids, same order) and
``<q>.responses.status`` (``submitted``, ``draft``, ``discarded``). The questions' types and options come
from ``.argilla/settings.json`` (``questions: [{"name", "settings": {"type", "options"}}]``); without it,
a question's type is read from its values (whole numbers: rating; text: label; lists: ranking).

- ``rating``: a criterion on points 1..the highest option (from 1; an option 0 is refused);
- ``label_selection``: a criterion whose categories are the options;
- ``ranking``: options name record fields; the ranked fields are the item's responses, and the criterion
  holds N + 1 - rank. A value is the list of options in rank order (2.x) or ``[{"value", "rank"}]`` (1.x);
- ``text``: the answer's comment (with several text questions, each line names its question).

Refused, with no equivalent here: ``multi_label_selection`` (several labels where a criterion holds one)
and ``span`` (spans are marked on translations only, in MQM and ESA projects).

Only ``submitted`` responses are answers. Rating and label questions judge an item's single response; a
dataset with a ranking question takes its responses from the ranking's options.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from annotation.domain.tool_studies.label_studio import ID_KEYS, PROMPT_KEYS, FieldMapping
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

VERSION = "Argilla 2.x (to_hub / to_datasets layout)"
QUESTION_TYPES = ("rating", "label_selection", "ranking", "text")
SUFFIXES = (".responses", ".responses.users", ".responses.status")


def questions_from(
    settings: Mapping | None, columns: Sequence[str], records: Sequence[Mapping]
) -> dict[str, dict]:
    """``{name: {"type", "options"}}`` from settings.json, or read from the values when it is absent."""
    if settings and isinstance(settings.get("questions"), list):
        out = {}
        for q in settings["questions"]:
            if isinstance(q, Mapping) and isinstance(q.get("settings"), Mapping):
                s = q["settings"]
                options = [o.get("value") if isinstance(o, Mapping) else o for o in s.get("options") or []]
                out[str(q.get("name"))] = {"type": s.get("type"), "options": options}
        return out
    out = {}
    for column in columns:
        if not column.endswith(".responses"):
            continue
        name = column[: -len(".responses")]
        values = [v for r in records for v in (r.get(column) or [])]
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            out[name] = {"type": "rating", "options": sorted(set(values))}
        elif values and all(isinstance(v, str) for v in values):
            out[name] = {"type": "label_selection", "options": list(dict.fromkeys(values))}
        elif values and all(isinstance(v, list) for v in values):
            opts = [x.get("value") if isinstance(x, Mapping) else x for v in values for x in v]
            out[name] = {"type": "ranking", "options": list(dict.fromkeys(opts))}
        else:
            out[name] = {"type": "unknown", "options": []}
    return out


def suggest_mapping(records: Sequence[Mapping], settings: Mapping | None) -> FieldMapping:
    fields = []
    if settings and isinstance(settings.get("fields"), list):
        fields = [str(f.get("name")) for f in settings["fields"] if isinstance(f, Mapping)]
    elif records:
        fields = [
            k
            for k, v in records[0].items()
            if isinstance(v, str) and "." not in k and k not in ("id", "status", "_server_id")
        ]
    prompt = next((k for k in PROMPT_KEYS if k in fields), "")
    item_id = next((k for k in ID_KEYS if records and k in records[0]), "")
    return FieldMapping(prompt=prompt, responses=tuple(f for f in fields if f != prompt), item_id=item_id)


def parse(
    records: Sequence[Mapping], *, settings: Mapping | None, file: str, mapping: FieldMapping | None = None
) -> Study:
    problems = Problems(file)
    columns = list(dict.fromkeys(k for r in records for k in r))
    questions = questions_from(settings, columns, records)
    mapping = mapping or suggest_mapping(records, settings)
    for name, q in questions.items():
        if q["type"] not in QUESTION_TYPES:
            if f"{name}.responses" in columns:
                problems.add(
                    "settings",
                    name,
                    gettext_noop(
                        "Questions of type %(type)s cannot be imported (rating, label_selection, ranking, "
                        "text)."
                    ),
                    type=repr(q["type"]),
                )
    rankings = [n for n, q in questions.items() if q["type"] == "ranking" and f"{n}.responses" in columns]
    if len(rankings) > 1:
        problems.add(
            "settings", ", ".join(rankings), "Only one ranking question can give an item its responses."
        )
    problems.raise_any()
    ranking = rankings[0] if rankings else None
    texts = [n for n, q in questions.items() if q["type"] == "text" and f"{n}.responses" in columns]
    criteria: dict[str, Criterion] = {}
    for name, q in questions.items():
        if f"{name}.responses" not in columns or q["type"] not in QUESTION_TYPES or q["type"] == "text":
            continue
        options = q["options"]
        if q["type"] == "rating":
            ints = [o for o in options if isinstance(o, int) and not isinstance(o, bool)]
            if len(ints) != len(options) or not ints or min(ints) < 1:
                problems.add(
                    "settings",
                    name,
                    "A rating question is imported when its options are whole numbers from 1.",
                )
                continue
            criteria[name] = Criterion(criterion_name(name), points=max(ints), source_name=name)
        elif q["type"] == "label_selection":
            cats = categories_from_labels([str(o) for o in options])
            if cats is None:
                problems.add("settings", name, "Two labels differ only in case or punctuation.")
                continue
            criteria[name] = Criterion(criterion_name(name), categories=cats, source_name=name)
        else:
            criteria[name] = Criterion(
                criterion_name(name), points=len(options), source_name=name, from_ranking=True
            )
    problems.raise_any()
    items: list[Item] = []
    answers: list[Answer] = []
    per: dict[tuple[str, str], dict] = {}
    for n, record in enumerate(records, start=1):
        rid = record.get(mapping.item_id) if mapping.item_id else None
        item_id = str(rid) if rid not in (None, "") else str(n)
        where = f"record {item_id}"
        prompt = record.get(mapping.prompt, "") if mapping.prompt else ""
        if not isinstance(prompt, str):
            problems.add(where, mapping.prompt, "Expected the prompt as text.")
            prompt = ""
        if ranking is not None:
            names = [str(o) for o in questions[ranking]["options"]]
        else:
            names = list(mapping.responses)
            if len(names) != 1:
                problems.add(
                    where,
                    "responses",
                    gettext_noop("Rating and label questions judge one response field; %(n)s are chosen."),
                    n=len(names),
                )
                continue
        responses = []
        for name in names:
            text = record.get(name)
            if not isinstance(text, str):
                problems.add(
                    where, name, "Missing, or not text (a ranking's options must name record fields)."
                )
                continue
            responses.append((name, text))
        items.append(Item(item_id, prompt, tuple(responses)))
        index = {name: i for i, (name, _) in enumerate(responses)}
        for qname, criterion in criteria.items():
            values = record.get(f"{qname}.responses")
            if values is None:
                continue
            users = record.get(f"{qname}.responses.users") or []
            statuses = record.get(f"{qname}.responses.status") or ["submitted"] * len(values)
            if (
                not isinstance(values, list)
                or not isinstance(users, list)
                or len(users) != len(values)
                or len(statuses) != len(values)
            ):
                problems.add(
                    where,
                    f"{qname}.responses",
                    "Values, users and statuses must be lists of the same length.",
                )
                continue
            for value, user, status in zip(values, users, statuses, strict=True):
                if status != "submitted":
                    continue
                if user in (None, ""):
                    problems.add(where, f"{qname}.responses.users", "A response without its user.")
                    continue
                entry = per.setdefault((item_id, str(user)), {"ratings": {}, "where": where})
                field_name = f"{qname}.responses"
                if criterion.from_ranking:
                    order = _ranking(value)
                    if order is None or sorted(order) != sorted(index) or len(set(order)) != len(order):
                        problems.add(
                            where,
                            field_name,
                            gettext_noop(
                                "A ranking by %(user)s must order every option once; got %(value)s."
                            ),
                            user=user,
                            value=repr(value),
                        )
                        continue
                    for rank, name in enumerate(order, start=1):
                        entry["ratings"][(index[name], criterion.name)] = len(order) + 1 - rank
                elif criterion.categories:
                    by_label = {label: v for v, label in criterion.categories}
                    if not isinstance(value, str) or value not in by_label:
                        problems.add(
                            where,
                            field_name,
                            gettext_noop("%(value)s is not one of the labels."),
                            value=repr(value),
                        )
                        continue
                    if ranking is not None:
                        problems.add(
                            where,
                            field_name,
                            "A label question cannot judge the ranked responses one by one.",
                        )
                        continue
                    entry["ratings"][(0, criterion.name)] = by_label[value]
                else:
                    if (
                        isinstance(value, bool)
                        or not isinstance(value, int)
                        or not 1 <= value <= criterion.points
                    ):
                        problems.add(
                            where,
                            field_name,
                            gettext_noop("Expected a whole number from 1 to %(n)s; got %(value)s."),
                            n=criterion.points,
                            value=repr(value),
                        )
                        continue
                    if ranking is not None:
                        problems.add(
                            where,
                            field_name,
                            "A rating question cannot judge the ranked responses one by one.",
                        )
                        continue
                    entry["ratings"][(0, criterion.name)] = value
        for qname in texts:
            for value, user in _submitted(record, qname, where, problems):
                if not isinstance(value, str):
                    problems.add(where, f"{qname}.responses", "Expected text.")
                    continue
                entry = per.setdefault((item_id, str(user)), {"ratings": {}, "where": where})
                if value.strip():
                    line = f"{qname}: {value.strip()}" if len(texts) > 1 else value.strip()
                    entry.setdefault("comments", []).append(line)
    problems.raise_any()
    for (item_id, user), entry in per.items():
        comment = "\n".join(entry.get("comments", ()))
        answers.append(Answer(item_id, user, entry["ratings"], comment=comment, where=entry["where"]))
    study = Study(
        tool="argilla",
        tool_version=VERSION,
        kind="likert",
        criteria=tuple(criteria.values()),
        items=tuple(items),
        answers=tuple(answers),
        fields={"prompt": mapping.prompt, "responses": list(mapping.responses), "item_id": mapping.item_id},
    )
    check_study(study, problems)
    return study


def _ranking(value: object) -> list[str] | None:
    if not isinstance(value, list):
        return None
    if all(isinstance(v, str) for v in value):
        return list(value)
    if all(isinstance(v, Mapping) and "value" in v and "rank" in v for v in value):
        return [str(v["value"]) for v in sorted(value, key=lambda v: v["rank"])]
    return None


def _submitted(record: Mapping, qname: str, where: str, problems: Problems) -> list[tuple[object, object]]:
    """(value, user) of the question's submitted responses on the record; a malformed one is a problem."""
    values = record.get(f"{qname}.responses")
    if values is None:
        return []
    users = record.get(f"{qname}.responses.users") or []
    statuses = record.get(f"{qname}.responses.status") or ["submitted"] * len(values or [])
    if (
        not isinstance(values, list)
        or not isinstance(users, list)
        or len(users) != len(values)
        or len(statuses) != len(values)
    ):
        problems.add(
            where, f"{qname}.responses", "Values, users and statuses must be lists of the same length."
        )
        return []
    out = []
    for value, user, status in zip(values, users, statuses, strict=True):
        if status != "submitted":
            continue
        if user in (None, ""):
            problems.add(where, f"{qname}.responses.users", "A response without its user.")
            continue
        out.append((value, user))
    return out
