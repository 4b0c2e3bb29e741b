"""Pure rules of an arena battle: checking a prompt, what the stream may say, mapping a vote to a
leaderboard outcome, and the style features of an answer (the choice of a pair is ``sampling``).

No Django here: plain values in and out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from datasets_app.domain.languages import is_known_language, is_valid_register

SIDES = ("A", "B")
VOTES = ("A", "B", "tie", "both_bad")
# The ``winner`` values of the leaderboard's battle CSV (the columns of ``LEADERBOARD_COLUMNS``).
WINNER_OF_VOTE = {"A": "model_a", "B": "model_b", "tie": "tie", "both_bad": "tie (bothbad)"}

# Columns of a battle row as the ``leaderboard`` command reads them: the required three, then the optional
# grouping columns, then answer lengths and style counts as ``<feature>_a`` / ``<feature>_b``.
LEADERBOARD_COLUMNS = (
    "model_a",
    "model_b",
    "winner",
    "language",
    "register",
    "category",
    "length_a",
    "length_b",
    "headers_a",
    "headers_b",
    "bold_a",
    "bold_b",
    "lists_a",
    "lists_b",
    "turns",
    "sampler",
    "probability",
    "battle",
)

# Codes of a prompt a battle refuses (the page and the API translate them).
EMPTY = "empty"
TOO_LONG = "too_long"
BLOCKED = "blocked"
UNKNOWN_LANGUAGE = "unknown_language"
UNKNOWN_REGISTER = "unknown_register"


@dataclass(frozen=True)
class PromptProblem:
    """Why a prompt is refused: ``code`` and, for a blocked term, the ``term`` found."""

    code: str
    term: str = ""
    limit: int = 0


def prompt_problems(
    text: str, *, max_chars: int, blocked_terms: Sequence[str], language: str, register: str = ""
) -> list[PromptProblem]:
    """Everything wrong with a prompt, in the order a person would fix it (empty list: accepted).

    Blocked terms match case-insensitively as whole words (a term of several words matches with any run of
    spaces between them), so a block on "bom" does not refuse "bombai".
    """
    problems: list[PromptProblem] = []
    stripped = (text or "").strip()
    if not stripped:
        problems.append(PromptProblem(EMPTY))
    elif len(stripped) > max_chars:
        problems.append(PromptProblem(TOO_LONG, limit=max_chars))
    for term in blocked_terms:
        words = [re.escape(w) for w in str(term).split()]
        if words and re.search(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", stripped, re.IGNORECASE):
            problems.append(PromptProblem(BLOCKED, term=str(term).strip()))
            break
    if not is_known_language(language):
        problems.append(PromptProblem(UNKNOWN_LANGUAGE))
    elif not is_valid_register(language, register or None):
        problems.append(PromptProblem(UNKNOWN_REGISTER))
    return problems


def winner_of(vote: str) -> str:
    """The leaderboard's outcome for a stored (canonical) vote."""
    try:
        return WINNER_OF_VOTE[vote]
    except KeyError:
        raise ValueError(f"unknown vote {vote!r}; expected one of {', '.join(VOTES)}") from None


def conversation(user_turns: Sequence[str], answers: Sequence[str]) -> list[dict[str, str]]:
    """The chat messages one side is sent for its next answer: user and assistant turns interleaved, ending
    with the user's newest message (``answers`` holds one answer fewer than ``user_turns``)."""
    if len(answers) != len(user_turns) - 1:
        raise ValueError(f"{len(user_turns)} user turns need {len(user_turns) - 1} earlier answers")
    messages: list[dict[str, str]] = []
    for n, text in enumerate(user_turns):
        messages.append({"role": "user", "content": text})
        if n < len(answers):
            messages.append({"role": "assistant", "content": answers[n]})
    return messages


_HEADER = re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+", re.MULTILINE)


def style_counts(text: str) -> dict[str, int]:
    """Markdown elements of an answer, for style control: headers, bold spans and list items."""
    return {
        "headers": len(_HEADER.findall(text)),
        "bold": len(_BOLD.findall(text)),
        "lists": len(_LIST_ITEM.findall(text)),
    }


@dataclass(frozen=True)
class SideAnswer:
    """One side's answers over the battle's turns, with their token counts."""

    model: str
    texts: Sequence[str]
    tokens: Sequence[int]


def leaderboard_row(
    *,
    battle: str,
    vote: str,
    a: SideAnswer,
    b: SideAnswer,
    language: str,
    register: str,
    category: str,
    sampler: str,
    probability: float,
) -> dict[str, Any]:
    """One voted battle as a row of ``LEADERBOARD_COLUMNS``: lengths in tokens and the style counts summed
    over the battle's turns (the vote judged the whole conversation)."""
    style_a = [style_counts(t) for t in a.texts]
    style_b = [style_counts(t) for t in b.texts]
    row: dict[str, Any] = {
        "model_a": a.model,
        "model_b": b.model,
        "winner": winner_of(vote),
        "language": language,
        "register": register,
        "category": category,
        "length_a": int(sum(a.tokens)),
        "length_b": int(sum(b.tokens)),
        "turns": len(a.texts),
        "sampler": sampler,
        "probability": float(probability),
        "battle": battle,
    }
    for feature in ("headers", "bold", "lists"):
        row[f"{feature}_a"] = sum(s[feature] for s in style_a)
        row[f"{feature}_b"] = sum(s[feature] for s in style_b)
    return {column: row[column] for column in LEADERBOARD_COLUMNS}


# --- what the stream may say ----------------------------------------------------------------------------

# The only keys an event to the voter's browser carries: a side letter, a turn number, text and a status.
# Never a model name, an endpoint, a response id or an error text from the model server.
EVENT_KEYS = frozenset({"type", "side", "turn", "offset", "text", "reason", "status"})
FAILURE_REASONS = ("timeout", "model_error")


def delta_event(side: str, turn: int, offset: int, text: str) -> dict[str, Any]:
    """New text of one side from character ``offset`` of its answer on ``turn``."""
    return {"type": "delta", "side": _side(side), "turn": int(turn), "offset": int(offset), "text": text}


def done_event(side: str, turn: int, text: str) -> dict[str, Any]:
    """One side finished its answer on ``turn``: the whole text, so a missed delta never shows."""
    return {"type": "done", "side": _side(side), "turn": int(turn), "text": text}


def failed_event(side: str, turn: int, reason: str) -> dict[str, Any]:
    if reason not in FAILURE_REASONS:
        raise ValueError(f"unknown failure reason {reason!r}")
    return {"type": "failed", "side": _side(side), "turn": int(turn), "reason": reason}


def end_event(status: str) -> dict[str, Any]:
    """The stream of this turn is over: the battle is ``ready`` for a vote or ``not_counted``."""
    return {"type": "end", "status": status}


def _side(side: str) -> str:
    if side not in SIDES:
        raise ValueError(f"side must be A or B, got {side!r}")
    return side


def checked_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """An event as it may leave the server: only ``EVENT_KEYS``; anything else is a bug and raises."""
    extra = set(event) - EVENT_KEYS
    if extra:
        raise ValueError(f"event carries keys a voter may not see: {sorted(extra)}")
    return dict(event)


def sse_frame(event: Mapping[str, Any]) -> bytes:
    """One server-sent event (``data:`` line and a blank line), JSON on one line."""
    return ("data: " + json.dumps(checked_event(event), ensure_ascii=False) + "\n\n").encode()


def new_text(sent: int, offset: int, text: str) -> tuple[str, int]:
    """The part of a delta not shown yet, given ``sent`` characters shown: ``(text, new length)``.

    A delta that starts beyond what was shown (one was missed) adds nothing; the side's ``done`` event
    carries the whole text and puts the pane right.
    """
    end = offset + len(text)
    if offset > sent or end <= sent:
        return "", sent
    return text[sent - offset :], end


# Categories a voter can file a prompt under (stored as these codes; the page shows them translated).
CATEGORIES = (
    "chat",
    "knowledge",
    "culture",
    "writing",
    "translation",
    "reasoning",
    "math",
    "coding",
    "advice",
    "other",
)
