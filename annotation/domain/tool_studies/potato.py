"""Potato's annotated output (potato-annotation 1.2 / 2.x): the ``annotation_output`` folder, one folder per
annotator holding ``annotated_instances.jsonl``, read as a study.

Each line is ``{"id" (or "instance_id"), "displayed_text", "label_annotations": {scheme: {...}}}``; the
annotator is the folder's name. Schemes understood, by the shape of their answer:

- likert: ``{"scale_4": "4"}`` (the point chosen), a criterion on 1..max(highest point seen, 2);
- multiple choice (radio, or multiselect with one label ticked): ``{"<label>": "<true|1|label>"}``, a
  criterion whose categories are the labels seen;
- pairwise (binary mode): ``{"selection": "A" | "B" | "tie"}``, a vote; the two texts are the line's
  ``displayed_text`` when it is a list of two, or the list under the chosen response key;
- text (``annotation_type: text``): ``{"text_box": "..."}`` or labelled boxes, the answer's comment (with
  several text schemes, each line names its scheme). A pairwise study may have text schemes beside its vote.

Refused, with no equivalent here: pairwise scale mode (``{"scale_value": "-2"}``: a degree of preference
that an A / B / tie vote would lose), and a multiselect with several labels ticked.

The text judged is ``displayed_text`` (or the chosen response key); the prompt a chosen key of the line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from annotation.domain.tool_studies.label_studio import FieldMapping
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

VERSION = "Potato 1.2 / 2.x annotation_output (annotated_instances.jsonl per annotator)"
FILE_NAME = "annotated_instances.jsonl"
_SCALE = re.compile(r"^scale_(\d+)$")
_OFF = {"", "0", "false", "off", "no"}
_ON = {"1", "true", "on", "yes"}
_SELECTION = {"a": "A", "b": "B", "tie": "tie", "both_bad": "both_bad"}


def _chosen(value: object) -> bool:
    if isinstance(value, bool):
        return value
    return value is not None and str(value).strip().lower() not in _OFF


def _text_answer(value: Mapping) -> str | None:
    """The text of a text scheme's answer (``{"text_box": "..."}``, or labelled boxes ``{"pro": "...",
    "con": "..."}``, shown as ``label: text`` lines); None when the answer is a choice: every value is a
    flag (``true``, ``1``, ``on`` ...) or the label itself."""
    if "text_box" in value and len(value) == 1:
        text = value["text_box"]
        return text.strip() if isinstance(text, str) else None
    if not value or not all(isinstance(v, str) for v in value.values()):
        return None
    flags = _OFF | _ON
    if all(v.strip().lower() in flags or v.strip().lower() == str(k).lower() for k, v in value.items()):
        return None
    return "\n".join(f"{k}: {v.strip()}" for k, v in value.items() if v.strip())


def parse(
    lines_by_annotator: Mapping[str, Sequence[tuple[int, object]]],
    *,
    folder: str,
    mapping: FieldMapping | None = None,
) -> Study:
    """``lines_by_annotator``: the annotator's folder name -> (line number, decoded line) of their file."""
    mapping = mapping or FieldMapping()
    problems = Problems(folder)
    items: dict[str, Item] = {}
    raw: list[tuple[str, str, str, str, str, object]] = []  # item, annotator, where, file, scheme, value
    for annotator in sorted(lines_by_annotator):
        file = f"{folder}/{annotator}/{FILE_NAME}"
        for line_no, line in lines_by_annotator[annotator]:
            where = f"line {line_no}"
            if not isinstance(line, Mapping):
                problems.add(where, "", "Expected a JSON object.", file=file)
                continue
            iid = line.get("id", line.get("instance_id"))
            if iid in (None, ""):
                problems.add(where, "id", "Missing.", file=file)
                continue
            item_id = str(iid)
            labels = line.get("label_annotations") or {}
            if not isinstance(labels, Mapping):
                problems.add(where, "label_annotations", "Expected an object by scheme.", file=file)
                continue
            text = line.get(mapping.responses[0]) if mapping.responses else line.get("displayed_text")
            prompt = line.get(mapping.prompt, "") if mapping.prompt else ""
            if isinstance(text, list) and all(isinstance(t, str) for t in text):
                responses = tuple((f"response_{i + 1}", t) for i, t in enumerate(text))
            elif isinstance(text, str):
                responses = (("response", text),)
            else:
                problems.add(
                    where,
                    mapping.responses[0] if mapping.responses else "displayed_text",
                    "Missing, or not text.",
                    file=file,
                )
                continue
            item = Item(item_id, prompt if isinstance(prompt, str) else "", responses)
            if item_id in items and items[item_id].responses != responses:
                problems.add(
                    where,
                    "displayed_text",
                    gettext_noop("Item %(item)s shows other text than in another annotator's file."),
                    item=item_id,
                    file=file,
                )
            items.setdefault(item_id, item)
            for scheme, value in labels.items():
                raw.append((item_id, annotator, where, file, str(scheme), value))
    shapes: dict[str, str] = {}
    seen_points: dict[str, int] = {}
    seen_labels: dict[str, list[str]] = {}
    parsed: list[tuple[str, str, str, str, str, object]] = []
    for item_id, annotator, where, file, scheme, value in raw:
        field_name = f"label_annotations.{scheme}"
        if not isinstance(value, Mapping):
            problems.add(where, field_name, "Expected an object.", file=file)
            continue
        on = [k for k, v in value.items() if _chosen(v)]
        if "selection" in value:
            shape, got = "pairwise", _SELECTION.get(str(value["selection"]).strip().lower())
            if got is None:
                problems.add(
                    where,
                    f"{field_name}.selection",
                    gettext_noop("Expected A, B or tie; got %(value)s."),
                    value=repr(value["selection"]),
                    file=file,
                )
                continue
        elif "scale_value" in value:
            problems.add(
                where,
                field_name,
                "Pairwise answers in scale mode cannot be imported; use binary mode.",
                file=file,
            )
            continue
        elif on and all(_SCALE.match(k) for k in on):
            if len(on) != 1:
                problems.add(where, field_name, "More than one point chosen.", file=file)
                continue
            shape, got = "likert", int(_SCALE.match(on[0]).group(1))  # type: ignore[union-attr]
            if got < 1:
                problems.add(where, field_name, "Likert points start at 1.", file=file)
                continue
            seen_points[scheme] = max(seen_points.get(scheme, 2), got)
        elif (text := _text_answer(value)) is not None:
            shape, got = "text", text
        else:
            if len(on) != 1:
                problems.add(
                    where, field_name, gettext_noop("Expected one label; found %(n)s."), file=file, n=len(on)
                )
                continue
            shape, got = "choice", on[0]
            seen_labels.setdefault(scheme, [])
            if got not in seen_labels[scheme]:
                seen_labels[scheme].append(got)
        if shapes.setdefault(scheme, shape) != shape:
            problems.add(
                where,
                field_name,
                gettext_noop("The scheme was answered as %(shape)s elsewhere."),
                file=file,
                shape=shapes[scheme],
            )
            continue
        parsed.append((item_id, annotator, where, file, scheme, got))
    pairwise_schemes = [s for s, shape in shapes.items() if shape == "pairwise"]
    text_schemes = sorted(s for s, shape in shapes.items() if shape == "text")
    judged = sorted(s for s, shape in shapes.items() if shape != "text")
    if pairwise_schemes and len(judged) > 1:
        problems.add(
            "",
            ", ".join(judged),
            "A pairwise study holds one pairwise scheme and nothing else (text boxes aside).",
        )
    problems.raise_any()
    criteria: dict[str, Criterion] = {}
    for scheme, n in seen_points.items():
        criteria[scheme] = Criterion(criterion_name(scheme), points=n, source_name=scheme)
    for scheme, labels in seen_labels.items():
        cats = categories_from_labels(labels)
        if cats is None:
            problems.add("", scheme, "Two labels differ only in case or punctuation.")
            continue
        criteria[scheme] = Criterion(criterion_name(scheme), categories=cats, source_name=scheme)
    problems.raise_any()
    per: dict[tuple[str, str], dict] = {}
    for item_id, annotator, where, file, scheme, got in parsed:
        entry = per.setdefault(
            (item_id, annotator), {"ratings": {}, "vote": None, "where": f"{file}: {where}", "comments": []}
        )
        if scheme in text_schemes:
            if got:
                entry["comments"].append(f"{scheme}: {got}" if len(text_schemes) > 1 else got)
            continue
        if scheme in pairwise_schemes:
            entry["vote"] = got
            continue
        criterion = criteria[scheme]
        if criterion.categories:
            got = dict((label, v) for v, label in criterion.categories)[got]
        if len(items[item_id].responses) != 1:
            problems.add(
                where,
                f"label_annotations.{scheme}",
                "A rating judges one text; this item shows several.",
                file=file,
            )
            continue
        entry["ratings"][(0, criterion.name)] = got
    problems.raise_any()
    study = Study(
        tool="potato",
        tool_version=VERSION,
        kind="pairwise" if pairwise_schemes else "likert",
        criteria=tuple(criteria.values()),
        items=tuple(items.values()),
        answers=tuple(
            Answer(i, a, e["ratings"], e["vote"], "\n".join(e["comments"]), where=e["where"])
            for (i, a), e in per.items()
        ),
        fields={"prompt": mapping.prompt, "responses": list(mapping.responses), "item_id": ""},
    )
    check_study(study, problems)
    return study
