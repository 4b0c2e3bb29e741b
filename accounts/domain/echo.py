"""How much of a caller's own input an error message repeats back.

An error that names every unknown key of a request repeats the whole request: a body of a million keys made
an answer of megabytes. Messages name a few values, each cut short, and count the rest.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

ECHO_LIMIT = 10
ECHO_WIDTH = 40


def clipped(value: object, width: int = ECHO_WIDTH) -> str:
    """``value`` as text, cut to ``width`` characters (the cut marked with "…")."""
    text = str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def echoed(
    values: Iterable[object],
    *,
    limit: int = ECHO_LIMIT,
    width: int = ECHO_WIDTH,
    ordered: bool = True,
    more: str = "and {n} more",
) -> str:
    """At most ``limit`` of ``values`` joined with ", ", each cut to ``width`` characters, then ``more`` with
    the number left out: ``a, b, c, and 7 more``.

    ``ordered``: the smallest ``limit`` values in sorted order (found in one pass, without sorting them
    all); otherwise the first ``limit`` in the order given."""
    count = 0
    if ordered:
        items = list(values)
        count = len(items)
        shown = heapq.nsmallest(limit, map(str, items))
    else:
        shown = []
        for value in values:
            count += 1
            if len(shown) < limit:
                shown.append(str(value))
    text = ", ".join(clipped(value, width) for value in shown)
    if count > len(shown):
        text += ", " + more.format(n=count - len(shown))
    return text
