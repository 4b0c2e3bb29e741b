"""A Timbang project as a Label Studio project: the tasks with their annotations in Label Studio's JSON
export format (the one ``label_studio.parse`` reads), and a labeling config that shows them.

Each task's ``data`` holds ``prompt``, ``item_id`` and one text per response (``response_1`` ...). A
rating is a ``rating`` result (``from_name`` ``<criterion>_<n>``, ``to_name`` ``response_<n>``); a
category a ``choices`` result; a pairwise vote A / B a ``pairwise`` result (``left`` / ``right``) and a
tie or both-bad vote a ``choices`` result of the ``vote`` question; a best pick a ``choices`` result of
``best`` naming the response. Model names stay in ``meta`` of the task, never in what an annotator sees.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr


@dataclass(frozen=True)
class ExportItem:
    item_id: str
    prompt: str
    responses: tuple[tuple[str, str], ...]  # (model name, text) in canonical order


@dataclass(frozen=True)
class ExportAnswer:
    item_id: str
    annotator: str
    ratings: Mapping[tuple[int, str], int | str] = field(default_factory=dict)
    vote: str | None = None
    best: int | str | None = None
    comment: str = ""


def _result(from_name: str, to_name: str, kind: str, value: dict) -> dict:
    return {"from_name": from_name, "to_name": to_name, "type": kind, "value": value, "origin": "manual"}


def build_tasks(
    *,
    kind: str,
    criteria: Mapping[str, Mapping],
    items: Sequence[ExportItem],
    answers: Sequence[ExportAnswer],
) -> list[dict]:
    """The tasks, in item order, each with every answer as an annotation. ``criteria`` maps a criterion
    to its scale (``{"points": N}`` or ``{"categories": [{"value", "label"}]}``)."""
    by_item: dict[str, list[ExportAnswer]] = {}
    for answer in answers:
        by_item.setdefault(answer.item_id, []).append(answer)
    tasks = []
    for n, item in enumerate(items, start=1):
        data = {"item_id": item.item_id, "prompt": item.prompt}
        for i, (_, text) in enumerate(item.responses, start=1):
            data[f"response_{i}"] = text
        annotations = []
        for a_n, answer in enumerate(by_item.get(item.item_id, []), start=1):
            result = []
            for (index, criterion), value in sorted(
                answer.ratings.items(), key=lambda kv: (kv[0][0], kv[0][1])
            ):
                target = f"response_{index + 1}" if len(item.responses) > 1 else "response_1"
                name = f"{criterion}_{index + 1}" if len(item.responses) > 1 else criterion
                scale = criteria.get(criterion, {})
                if scale.get("categories"):
                    labels = {
                        c["value"]: (c.get("label") or {}).get("en") or c["value"]
                        for c in scale["categories"]
                    }
                    result.append(
                        _result(name, target, "choices", {"choices": [labels.get(str(value), str(value))]})
                    )
                else:
                    result.append(_result(name, target, "rating", {"rating": int(value)}))
            if answer.vote in ("A", "B"):
                result.append(
                    _result(
                        "pw",
                        "response_1,response_2",
                        "pairwise",
                        {"selected": "left" if answer.vote == "A" else "right"},
                    )
                )
            elif answer.vote in ("tie", "both_bad"):
                result.append(_result("vote", "response_1", "choices", {"choices": [answer.vote]}))
            if answer.best is not None:
                best = "all_bad" if answer.best == "all_bad" else f"response_{int(answer.best) + 1}"
                result.append(_result("best", "response_1", "choices", {"choices": [best]}))
            if answer.comment:
                result.append(_result("comment", "response_1", "textarea", {"text": [answer.comment]}))
            annotations.append(
                {
                    "id": n * 1000 + a_n,
                    "completed_by": answer.annotator,
                    "result": result,
                    "was_cancelled": False,
                }
            )
        tasks.append(
            {
                "id": n,
                "data": data,
                "annotations": annotations,
                "predictions": [],
                "meta": {"models": [model for model, _ in item.responses]},
            }
        )
    return tasks


def label_config(
    *, kind: str, criteria: Mapping[str, Mapping], n_responses: int, best_pick: bool = False
) -> str:
    """A labeling config (Label Studio XML) under which the exported tasks open."""
    lines = ["<View>", '  <Text name="prompt" value="$prompt"/>']
    for i in range(1, n_responses + 1):
        lines.append(f'  <Text name="response_{i}" value="$response_{i}"/>')
    if kind == "pairwise":
        lines.append('  <Pairwise name="pw" toName="response_1,response_2"/>')
        lines.append('  <Choices name="vote" toName="response_1" choice="single">')
        lines.append('    <Choice value="tie"/>')
        lines.append('    <Choice value="both_bad"/>')
        lines.append("  </Choices>")
    for criterion, scale in criteria.items():
        for i in range(1, n_responses + 1):
            name = f"{criterion}_{i}" if n_responses > 1 else criterion
            if scale.get("categories"):
                lines.append(f'  <Choices name={quoteattr(name)} toName="response_{i}" choice="single">')
                for c in scale["categories"]:
                    label = (c.get("label") or {}).get("en") or c["value"]
                    lines.append(f"    <Choice value={quoteattr(label)}/>")
                lines.append("  </Choices>")
            else:
                lines.append(
                    f'  <Rating name={quoteattr(name)} toName="response_{i}" maxRating="{int(scale.get("points", 5))}"/>'
                )
    if best_pick:
        lines.append('  <Choices name="best" toName="response_1" choice="single">')
        for i in range(1, n_responses + 1):
            lines.append(f'    <Choice value="response_{i}"/>')
        lines.append('    <Choice value="all_bad"/>')
        lines.append("  </Choices>")
    lines.append('  <TextArea name="comment" toName="response_1"/>')
    lines.append("</View>")
    return "\n".join(lines) + "\n"
