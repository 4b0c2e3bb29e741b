"""Blinding: who sees which response where, and in which order tasks come.

Every random choice here is derived from a BLAKE2b hash of (purpose, project seed, ids), never from
Python's ``hash()`` (salted per process) nor from ``random``/numpy (whose algorithms may change between
versions). The same inputs therefore give the same permutation in every process, on every machine and
after every upgrade, so an assignment's stored permutation can always be recomputed and checked.

Index conventions used across ``annotation.domain``:

- *canonical index*: position of a response in the task's canonical response list (the order the service
  layer fixes once, e.g. by response id); this is what gets stored.
- *shown index*: 0-based position on the annotator's screen; shown index ``i`` carries the label
  ``shown_labels(n, lang)[i]`` ("Respons 1" for ``i == 0``).
- A permutation is the list of canonical indexes in shown order: ``permutation[shown] == canonical``.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

Id = int | str | uuid.UUID
Lang = Literal["id", "en"]

PAIRWISE_VOTES: tuple[str, ...] = ("A", "B", "tie", "both_bad")
ORDER_KEY_BITS = 63
ORDER_KEY_MODULUS = 1 << ORDER_KEY_BITS
DEFAULT_ORDER_SLOTS = 8

_T = TypeVar("_T")


def _encode_part(part: object) -> bytes:
    # Ids are compared as text so that 42 and "42" (an id that went through JSON or a URL) agree.
    if isinstance(part, bool) or not isinstance(part, int | str | uuid.UUID):
        raise TypeError(f"seed parts must be int, str or UUID, not {type(part).__name__}")
    text = str(part).encode("utf-8")
    return len(text).to_bytes(4, "big") + text


def derive_key(purpose: str, *parts: Id) -> bytes:
    """32-byte key for one random decision: BLAKE2b over the length-prefixed text of each part.

    Length prefixes keep ``("1", "23")`` and ``("12", "3")`` apart; ``purpose`` keeps unrelated decisions
    (response order, side swap, task order, pair sampling, gold slots) independent for the same ids.
    """
    material = _encode_part(purpose) + b"".join(_encode_part(p) for p in parts)
    return hashlib.blake2b(material, digest_size=32, person=b"timbang.v1").digest()


class HashStream:
    """Deterministic stream of uniform integers: BLAKE2b keyed by ``key`` in counter mode.

    Used instead of ``random.Random`` so that the sequence is fixed by this file alone.
    """

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._words = self._generate()

    def _generate(self) -> Iterator[int]:
        counter = 0
        while True:
            block = hashlib.blake2b(counter.to_bytes(8, "big"), key=self._key, digest_size=64).digest()
            for offset in range(0, 64, 8):
                yield int.from_bytes(block[offset : offset + 8], "big")
            counter += 1

    def next_u64(self) -> int:
        return next(self._words)

    def randbelow(self, n: int) -> int:
        """Uniform integer in ``[0, n)``; rejection sampling avoids the modulo bias."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = ((1 << 64) // n) * n
        while True:
            word = self.next_u64()
            if word < limit:
                return word % n

    def shuffle(self, items: MutableSequence[_T]) -> None:
        """Fisher-Yates shuffle in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]

    def sample(self, items: Sequence[_T], k: int) -> list[_T]:
        """``k`` distinct elements in random order (partial Fisher-Yates)."""
        if not 0 <= k <= len(items):
            raise ValueError(f"cannot sample {k} of {len(items)} items")
        pool = list(items)
        for i in range(k):
            j = i + self.randbelow(len(pool) - i)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]


# --- responses within a task -------------------------------------------------------------------------


def response_permutation(project_seed: Id, task_id: Id, annotator_id: Id, n: int) -> list[int]:
    """Order in which ``annotator_id`` sees the ``n`` responses of ``task_id``.

    Returns canonical indexes in shown order. Each annotator gets an independent uniform permutation, so
    position effects average out across annotators instead of favouring one model.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    order = list(range(n))
    HashStream(derive_key("response-order", project_seed, task_id, annotator_id)).shuffle(order)
    return order


def side_swap(project_seed: Id, task_id: Id, annotator_id: Id) -> bool:
    """Whether the canonical second response of a pair is shown as "A".

    Defined as the 2-response permutation so that a pairwise assignment stores ``[1, 0]`` exactly when
    the sides are swapped and the same ``to_canonical`` mapping serves both task shapes.
    """
    return response_permutation(project_seed, task_id, annotator_id, 2) == [1, 0]


def check_permutation(permutation: Sequence[int], n: int | None = None) -> None:
    """Raise ``ValueError`` unless ``permutation`` is a permutation of ``range(n)``."""
    size = len(permutation) if n is None else n
    if len(permutation) != size or sorted(permutation) != list(range(size)):
        raise ValueError(f"not a permutation of 0..{size - 1}: {list(permutation)}")


def to_canonical(permutation: Sequence[int], shown_index: int) -> int:
    """Canonical index of the response shown at ``shown_index``."""
    if not 0 <= shown_index < len(permutation):
        raise IndexError(f"shown index {shown_index} out of range for {len(permutation)} responses")
    return permutation[shown_index]


def to_shown(permutation: Sequence[int], canonical_index: int) -> int:
    """Shown index of the response with ``canonical_index`` (inverse of ``to_canonical``)."""
    try:
        return list(permutation).index(canonical_index)
    except ValueError:
        raise IndexError(f"canonical index {canonical_index} is not in {list(permutation)}") from None


def invert_permutation(permutation: Sequence[int]) -> list[int]:
    """``inverse[canonical] == shown`` for every response."""
    check_permutation(permutation)
    inverse = [0] * len(permutation)
    for shown, canonical in enumerate(permutation):
        inverse[canonical] = shown
    return inverse


def map_pairwise_vote(vote: str, swapped: bool) -> str:
    """Map a vote between shown sides and canonical sides (the mapping is its own inverse).

    "A"/"B" trade places when the sides were swapped; "tie" and "both_bad" mean the same on both sides.
    """
    if vote not in PAIRWISE_VOTES:
        raise ValueError(f"unknown pairwise vote {vote!r}; expected one of {', '.join(PAIRWISE_VOTES)}")
    if swapped and vote in ("A", "B"):
        return "B" if vote == "A" else "A"
    return vote


def shown_labels(n: int, lang: Lang, *, pairwise: bool = False) -> list[str]:
    """Labels for shown positions: "Respons 1".."Respons N" (id), "Response 1".."Response N" (en),
    or "A", "B" for a pairwise task (the same in both languages)."""
    if lang not in ("id", "en"):
        raise ValueError(f"unsupported language {lang!r}; expected 'id' or 'en'")
    if pairwise:
        if n != 2:
            raise ValueError("a pairwise task shows exactly 2 responses")
        return ["A", "B"]
    if n < 1:
        raise ValueError("n must be at least 1")
    word = "Respons" if lang == "id" else "Response"
    return [f"{word} {i}" for i in range(1, n + 1)]


# --- order of tasks for each annotator -----------------------------------------------------------------


@dataclass(frozen=True)
class OrderSlot:
    """Where an annotator's task order comes from: one of the per-task key columns and a start offset."""

    slot: int
    offset: int


def task_shuffle_key(project_seed: Id, task_id: Id, slot: int) -> int:
    """Per-task random key in ``[0, 2**63)`` for one of the precomputed order slots.

    Fits a signed 64-bit integer column on both PostgreSQL (``bigint``) and SQLite.
    """
    if slot < 0:
        raise ValueError("slot must be non-negative")
    return HashStream(derive_key("task-order", project_seed, task_id, slot)).next_u64() >> 1


def task_shuffle_keys(project_seed: Id, task_id: Id, n_slots: int = DEFAULT_ORDER_SLOTS) -> list[int]:
    """All ``n_slots`` keys of a task, computed once when the task is created and stored with it."""
    return [task_shuffle_key(project_seed, task_id, slot) for slot in range(n_slots)]


def annotator_order_slot(project_seed: Id, annotator_id: Id, n_slots: int = DEFAULT_ORDER_SLOTS) -> OrderSlot:
    """The slot and rotation offset that define ``annotator_id``'s order of tasks in a project."""
    if n_slots < 1:
        raise ValueError("n_slots must be at least 1")
    stream = HashStream(derive_key("annotator-order", project_seed, annotator_id))
    return OrderSlot(slot=stream.randbelow(n_slots), offset=stream.next_u64() >> 1)


def rotate_order_key(shuffle_key: int, offset: int) -> int:
    """Position of a key in the cycle of keys that starts at ``offset``."""
    return (shuffle_key - offset) % ORDER_KEY_MODULUS


def task_order_key(
    project_seed: Id, annotator_id: Id, task_id: Id, *, n_slots: int = DEFAULT_ORDER_SLOTS
) -> int:
    """Sort key giving each annotator a reproducible shuffled order of a project's tasks.

    Sorting tasks by this key (ties, which are astronomically rare, broken by task id) gives exactly the
    order a database produces from stored keys, so Python and SQL never disagree about "next".

    Design: each task stores ``n_slots`` random keys (``task_shuffle_keys``), in a child table
    ``(project_id, slot, shuffle_key, task_id)`` with an index on ``(project_id, slot, shuffle_key)`` or in
    ``n_slots`` indexed columns. An annotator is bound to one slot and a random offset
    (``annotator_order_slot``); their order is the slot's key order rotated to start at the offset.
    A database reads it from the index with two range scans and no per-row arithmetic, identically on
    PostgreSQL and SQLite::

        SELECT task_id FROM task_order
         WHERE project_id = :p AND slot = :slot AND shuffle_key >= :offset AND <eligible>
         ORDER BY shuffle_key, task_id LIMIT :n
        -- then, if fewer than :n rows came back, the wrap-around part:
         ... AND shuffle_key < :offset ORDER BY shuffle_key, task_id LIMIT :n

    Trade-off: a truly independent order per annotator (``ORDER BY hash(salt || task)``) cannot use an
    index and sorts the whole pool on every request; a per-task key XOR a per-annotator salt needs the
    ``#`` operator (missing in SQLite) and is equally unindexable. Here two annotators share their base
    order with probability ``1 / n_slots`` and even then start at unrelated points of the cycle; storage is
    ``n_slots`` integers per task. Eight slots keep that cheap while spreading annotators over the pool,
    which also keeps concurrent claims from colliding on the same rows.
    """
    where = annotator_order_slot(project_seed, annotator_id, n_slots)
    return rotate_order_key(task_shuffle_key(project_seed, task_id, where.slot), where.offset)
