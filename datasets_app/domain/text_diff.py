"""Word-level diff between a translation and the reviewer's fixed version ("fix" verdict keeps the diff).

Texts are cut into words, single punctuation marks and runs of whitespace, so that joining the ``old``
sides of the operations gives back the original exactly and joining the ``new`` sides gives the edited
text: a template can render the diff without losing a space or a line break.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal, cast

OpKind = Literal["equal", "insert", "delete", "replace"]

_TOKEN = re.compile(r"\w+(?:['’ʼ-]\w+)*'?|\s+|[^\w\s]")


@dataclass(frozen=True)
class DiffOp:
    """One stretch of the diff: ``old`` is the original text of the stretch, ``new`` the edited text."""

    op: OpKind
    old: str
    new: str


@dataclass(frozen=True)
class WordDiff:
    ops: tuple[DiffOp, ...]
    old_words: int
    new_words: int
    words_deleted: int
    words_inserted: int
    words_changed: int

    @property
    def unchanged(self) -> bool:
        return all(op.op == "equal" for op in self.ops)

    @property
    def original(self) -> str:
        return "".join(op.old for op in self.ops)

    @property
    def edited(self) -> str:
        return "".join(op.new for op in self.ops)

    def as_dicts(self) -> list[dict[str, str]]:
        """The operations as plain dicts (for JSON and templates)."""
        return [{"op": op.op, "old": op.old, "new": op.new} for op in self.ops]


def tokenize(text: str) -> list[str]:
    """Words (with inner apostrophes and hyphens: "ba'na", "alun-alun"), punctuation marks, whitespace."""
    return _TOKEN.findall(text)


def _count_words(tokens: list[str]) -> int:
    return sum(1 for t in tokens if t[0].isalnum() or t[0] == "_")


def _merge(ops: list[tuple[OpKind, list[str], list[str]]]) -> list[tuple[OpKind, list[str], list[str]]]:
    # Two changes separated only by whitespace read as one change ("kucing ireng" -> "asu putih" would
    # otherwise render as two fragments around an unchanged space); fold them into one replace.
    merged: list[tuple[OpKind, list[str], list[str]]] = []
    for kind, old, new in ops:
        if (
            kind != "equal"
            and len(merged) >= 2
            and merged[-1][0] == "equal"
            and "".join(merged[-1][1]).isspace()
            and merged[-2][0] != "equal"
        ):
            _, space_old, space_new = merged.pop()
            _, prev_old, prev_new = merged.pop()
            kind, old, new = "replace", prev_old + space_old + old, prev_new + space_new + new
        merged.append((kind, old, new))
    return merged


def diff_words(original: str, edited: str) -> WordDiff:
    """Diff ``original`` against ``edited`` word by word.

    ``words_changed`` is an edit count in words: a replaced stretch counts the larger of its old and new
    word counts, an insertion or deletion counts its words, so substituting one word is 1 change.
    """
    old_tokens, new_tokens = tokenize(original), tokenize(edited)
    matcher = difflib.SequenceMatcher(None, old_tokens, new_tokens, autojunk=False)
    raw: list[tuple[OpKind, list[str], list[str]]] = [
        (cast(OpKind, tag), old_tokens[i1:i2], new_tokens[j1:j2])
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
    ]
    ops: list[DiffOp] = []
    deleted = inserted = changed = 0
    for kind, old, new in _merge(raw):
        n_old, n_new = _count_words(old), _count_words(new)
        if kind != "equal":
            deleted += n_old
            inserted += n_new
            changed += max(n_old, n_new)
        ops.append(DiffOp(kind, "".join(old), "".join(new)))
    return WordDiff(
        ops=tuple(ops),
        old_words=_count_words(old_tokens),
        new_words=_count_words(new_tokens),
        words_deleted=deleted,
        words_inserted=inserted,
        words_changed=changed,
    )
