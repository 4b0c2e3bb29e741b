"""Checks on values decoded from untrusted JSON (request bodies, import lines and cells).

Two things in such values break what comes after them rather than the decoder: a NUL character, which
PostgreSQL refuses in text and ``jsonb`` columns, and nesting so deep that recursive code (the JSON
encoder, serializers, the database adapter) runs out of stack. ``find_problem`` looks for both without
recursing itself, and ``loads`` decodes text, turning the decoder's own recursion limit into the same
problem.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# Deeper than any record or request body Timbang takes (prompts, answers, meta objects).
MAX_JSON_DEPTH = 64

NUL = "\x00"


@dataclass(frozen=True)
class JsonProblem:
    code: str  # "nul" or "too_deep"
    # Where in the value: the string holding the NUL ("answer.comment", "turns[2]"), or the top-level
    # member holding the over-deep nesting ("meta"); "" for the value itself.
    path: str
    max_depth: int = MAX_JSON_DEPTH

    @property
    def message(self) -> str:
        """What is wrong, in English, without the place (import errors are not translated)."""
        if self.code == "nul":
            return "holds a NUL character (\\u0000), which cannot be stored"
        return f"is nested deeper than {self.max_depth} levels"

    def describe(self, subject: str = "the value") -> str:
        return f"{self.path or subject} {self.message}"


class UnsafeJson(ValueError):
    def __init__(self, problem: JsonProblem):
        self.problem = problem
        super().__init__(problem.describe())


def find_problem(value: Any, *, max_depth: int = MAX_JSON_DEPTH, path: str = "") -> JsonProblem | None:
    """The first NUL character (in a key or a string) or the first level past ``max_depth`` in ``value``,
    walked breadth-first with an explicit queue; ``None`` when there is neither. A scalar is depth 0; each
    list or object adds one level. ``path`` prefixes the reported paths."""
    if isinstance(value, str):
        return JsonProblem("nul", path, max_depth) if NUL in value else None
    if not isinstance(value, dict | list | tuple):
        return None
    # Only containers are queued, each with the index of its parent's entry, its key there and its depth;
    # strings are checked where they are met. Paths are built only for the one reported, so a deep value
    # costs no more than a wide one.
    queue: list[tuple[Any, int, Any, int]] = [(value, -1, None, 0)]
    for index, (item, _parent, _key, depth) in enumerate(queue):
        if depth + 1 > max_depth:
            return JsonProblem("too_deep", _path(queue, index, path, top_only=True), max_depth)
        for key, child in item.items() if isinstance(item, dict) else enumerate(item):
            if (isinstance(key, str) and NUL in key) or (isinstance(child, str) and NUL in child):
                queue.append((child, index, key, depth + 1))
                return JsonProblem("nul", _path(queue, len(queue) - 1, path), max_depth)
            if isinstance(child, dict | list | tuple):
                queue.append((child, index, key, depth + 1))
    return None


def loads(text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that raises ``UnsafeJson`` for a NUL character or nesting past ``max_depth``
    (``json.JSONDecodeError`` for text that is not JSON)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise UnsafeJson(JsonProblem("too_deep", "", max_depth)) from None
    if not _may_hold_problem(text, max_depth):
        return value
    problem = find_problem(value, max_depth=max_depth)
    if problem is not None:
        raise UnsafeJson(problem)
    return value


def _may_hold_problem(text: str | bytes, max_depth: int) -> bool:
    """Whether the JSON ``text`` could decode to a value ``find_problem`` objects to; a cheap scan of the
    text that spares most lines of an import the walk. A NUL character in a decoded value comes from a raw
    NUL or a ``\\u0000`` escape in the text, and each level of nesting from a ``[`` or ``{``; the scan may
    say yes for text that is fine (a bracket inside a string), never no for text that is not."""
    if isinstance(text, bytes):
        return b"\\u0000" in text or b"\x00" in text or text.count(b"[") + text.count(b"{") > max_depth
    return "\\u0000" in text or NUL in text or text.count("[") + text.count("{") > max_depth


def _path(queue: list[tuple[Any, int, Any, int]], index: int, prefix: str, *, top_only: bool = False) -> str:
    keys = []
    while index > 0:
        _item, parent, key, _depth = queue[index]
        keys.append(key)
        index = parent
    keys.reverse()
    if top_only:
        keys = keys[:1]
    out = prefix
    for key in keys:
        if isinstance(key, str):
            key = key.replace(NUL, "\\u0000")
            out = f"{out}.{key}" if out else key
        else:
            out = f"{out}[{key}]"
    return out
