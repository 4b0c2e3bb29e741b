"""Validation of what an annotator submits, and its translation from screen positions to canonical ids.

Payloads use the numbers the annotator saw: ``ratings.2.fluency`` is the fluency rating of the response
labelled "Respons 2", ``votes.1`` the vote on the first turn. Error keys are these same dotted names, so a
form can put each message next to the input it belongs to. Cleaned answers use 0-based indexes, first in
shown space and then, through ``answer_to_canonical``, in canonical space: only the latter is stored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from accounts.domain.echo import ECHO_LIMIT, clipped
from annotation.domain.blinding import PAIRWISE_VOTES, check_permutation, map_pairwise_vote
from annotation.domain.rubrics import Scale

Kind = Literal["likert", "best_of_n", "pairwise"]
BestPickMode = Literal["off", "optional", "required"]
ALL_BAD = "all_bad"
KINDS: tuple[str, ...] = ("likert", "best_of_n", "pairwise")


def gettext_noop(message: str) -> str:
    """Marks a message that reaches the task page for the translation catalogue, as Django's function of this
    name does (the domain does not import Django); the page shows it translated, the API as written."""
    return message


_INT_TEXT = re.compile(r"\s*[+-]?\d+\s*")
_VOTE_BY_TEXT = {vote.lower(): vote for vote in PAIRWISE_VOTES}


@dataclass(frozen=True)
class SubmissionRules:
    """What a project accepts; built by the service layer from the project row.

    ``vote_turns`` (pairwise): ``None`` asks for one overall vote (payload key ``vote``); a tuple of 0-based
    turn indexes asks for one vote per listed turn (payload ``votes`` keyed by turn number from 1).
    ``best_pick`` applies to likert projects; best-of-N projects always require a pick. ``scales`` gives
    a criterion its own scale (points or categories); a criterion without one is rated from ``scale_min``
    to ``scale_max``.
    """

    kind: Kind
    n_responses: int
    criteria: tuple[str, ...] = ("relevance", "fluency")
    scale_min: int = 1
    scale_max: int = 5
    best_pick: BestPickMode = "off"
    allow_all_bad: bool = False
    vote_turns: tuple[int, ...] | None = None
    max_text_chars: int = 5000
    scales: Mapping[str, Scale] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown project kind {self.kind!r}; expected one of {', '.join(KINDS)}")
        if self.n_responses < 1:
            raise ValueError("n_responses must be at least 1")
        if self.kind == "pairwise" and self.n_responses != 2:
            raise ValueError("a pairwise task has exactly 2 responses")
        if self.kind == "likert" and not self.criteria:
            raise ValueError("a likert project needs at least one criterion")
        if len(set(self.criteria)) != len(self.criteria):
            raise ValueError("criteria repeat")
        if self.scale_min >= self.scale_max:
            raise ValueError("scale_min must be below scale_max")
        if self.best_pick not in ("off", "optional", "required"):
            raise ValueError(f"unknown best_pick mode {self.best_pick!r}")
        if self.vote_turns is not None:
            if not self.vote_turns or len(set(self.vote_turns)) != len(self.vote_turns):
                raise ValueError("vote_turns must list distinct turns")
            if min(self.vote_turns) < 0:
                raise ValueError("vote_turns are 0-based turn indexes")


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str


@dataclass(frozen=True)
class LikertAnswer:
    """``ratings[response][criterion]``; ``best`` is a response index, ``"all_bad"`` or ``None``."""

    ratings: dict[int, dict[str, int | str]]
    best: int | str | None = None
    comment: str = ""
    canonical: bool = False


@dataclass(frozen=True)
class BestOfNAnswer:
    best: int | str
    comment: str = ""
    canonical: bool = False


@dataclass(frozen=True)
class PairwiseAnswer:
    """``votes`` keyed by 0-based turn, or by ``None`` for the one overall vote."""

    votes: dict[int | None, str]
    rationale: str = ""
    canonical: bool = False


Answer = LikertAnswer | BestOfNAnswer | PairwiseAnswer


@dataclass(frozen=True)
class SubmissionResult:
    answer: Answer | None
    errors: tuple[FieldError, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.errors

    def errors_by_field(self) -> dict[str, list[str]]:
        grouped: dict[str, list[str]] = {}
        for error in self.errors:
            grouped.setdefault(error.field, []).append(error.message)
        return grouped


@dataclass(frozen=True)
class AnnotationValue:
    """One stored value in long format: a rating of a response, a best pick, or a vote on a turn."""

    target: int | None
    turn: int | None
    criterion: str
    value: int | str


# --- parsing helpers -----------------------------------------------------------------------------------


def _as_int(value: object) -> int | None:
    # Forms post numbers as text; JSON as numbers. Floats and booleans are refused rather than rounded.
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INT_TEXT.fullmatch(value):
        return int(value)
    return None


def _position(key: object, count: int) -> int | None:
    number = _as_int(key)
    if number is None or not 1 <= number <= count:
        return None
    return number - 1


def _clean_text(payload: Mapping[str, object], key: str, limit: int, errors: list[FieldError]) -> str:
    value = payload.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        errors.append(FieldError(key, "Expected text."))
        return ""
    text = value.strip()
    if len(text) > limit:
        errors.append(FieldError(key, f"Must be at most {limit} characters (got {len(text)})."))
    return text


def _check_unknown(payload: Mapping[str, object], allowed: set[str], errors: list[FieldError]) -> None:
    unknown = [key for key in payload if key not in allowed]
    for key in unknown[:ECHO_LIMIT]:
        errors.append(FieldError(clipped(key), "Unknown field."))
    if len(unknown) > ECHO_LIMIT:
        errors.append(FieldError("", f"{len(unknown) - ECHO_LIMIT} more unknown fields."))


def _clean_best(
    value: object, rules: SubmissionRules, required: bool, errors: list[FieldError]
) -> int | str | None:
    if value is None or value == "":
        if required:
            errors.append(FieldError("best", gettext_noop("Pick the best response.")))
        return None
    if value == ALL_BAD:
        if rules.allow_all_bad:
            return ALL_BAD
        errors.append(FieldError("best", '"all_bad" is not allowed in this project.'))
        return None
    position = _position(value, rules.n_responses)
    if position is None:
        expected = f"a response number from 1 to {rules.n_responses}"
        if rules.allow_all_bad:
            expected += ' or "all_bad"'
        errors.append(FieldError("best", f"Expected {expected}."))
    return position


def _clean_ratings(
    value: object, rules: SubmissionRules, errors: list[FieldError]
) -> dict[int, dict[str, int | str]]:
    if value is None:
        errors.append(FieldError("ratings", "This field is required."))
        return {}
    if not isinstance(value, Mapping):
        errors.append(FieldError("ratings", "Expected an object keyed by response number."))
        return {}
    scale = f"a whole number from {rules.scale_min} to {rules.scale_max}"
    given: dict[int, Mapping[str, object]] = {}
    for key, per_response in value.items():
        position = _position(key, rules.n_responses)
        if position is None:
            errors.append(
                FieldError(
                    f"ratings.{key}", f"There is no response {key}; expected 1 to {rules.n_responses}."
                )
            )
        elif position in given:
            errors.append(FieldError(f"ratings.{position + 1}", "Given more than once."))
        elif not isinstance(per_response, Mapping):
            errors.append(
                FieldError(f"ratings.{position + 1}", "Expected an object of ratings by criterion.")
            )
            given[position] = {}
        else:
            given[position] = per_response
            for criterion in per_response:
                if criterion not in rules.criteria:
                    errors.append(
                        FieldError(
                            f"ratings.{position + 1}.{criterion}",
                            f"Unknown criterion; expected one of {', '.join(rules.criteria)}.",
                        )
                    )
    ratings: dict[int, dict[str, int | str]] = {}
    for position in range(rules.n_responses):
        per_response = given.get(position, {})
        ratings[position] = {}
        for criterion in rules.criteria:
            name = f"ratings.{position + 1}.{criterion}"
            raw = per_response.get(criterion)
            if raw is None or raw == "":
                errors.append(FieldError(name, gettext_noop("This rating is required.")))
                continue
            own = rules.scales.get(criterion)
            if own is not None:
                parsed = own.parse(raw)
                if parsed is None:
                    errors.append(FieldError(name, f'"{criterion}" takes {own.describe()}; got {raw!r}.'))
                else:
                    ratings[position][criterion] = parsed
                continue
            number = _as_int(raw)
            if number is None or not rules.scale_min <= number <= rules.scale_max:
                errors.append(FieldError(name, f"Expected {scale}."))
                continue
            ratings[position][criterion] = number
    return ratings


def _clean_vote(value: object, name: str, errors: list[FieldError]) -> str | None:
    if value is None or value == "":
        errors.append(FieldError(name, gettext_noop("A vote is required.")))
        return None
    vote = _VOTE_BY_TEXT.get(value.strip().lower()) if isinstance(value, str) else None
    if vote is None:
        errors.append(FieldError(name, f"Expected one of {', '.join(PAIRWISE_VOTES)}."))
    return vote


def _clean_votes(
    payload: Mapping[str, object], rules: SubmissionRules, errors: list[FieldError]
) -> dict[int | None, str | None]:
    if rules.vote_turns is None:
        vote = _clean_vote(payload.get("vote"), "vote", errors)
        return {None: vote}
    value = payload.get("votes")
    if value is None:
        errors.append(FieldError("votes", "This field is required."))
        return {}
    if not isinstance(value, Mapping):
        errors.append(FieldError("votes", "Expected an object keyed by turn number."))
        return {}
    by_turn: dict[int, object] = {}
    for key, raw in value.items():
        number = _as_int(key)
        turn = None if number is None else number - 1
        if turn is None or turn not in rules.vote_turns:
            allowed = ", ".join(str(t + 1) for t in sorted(rules.vote_turns))
            errors.append(
                FieldError(f"votes.{key}", f"This task has no vote on turn {key}; expected {allowed}.")
            )
        elif turn in by_turn:
            errors.append(FieldError(f"votes.{number}", "Given more than once."))
        else:
            by_turn[turn] = raw
    return {turn: _clean_vote(by_turn.get(turn), f"votes.{turn + 1}", errors) for turn in rules.vote_turns}


# --- public API ----------------------------------------------------------------------------------------


def validate_submission(payload: object, rules: SubmissionRules) -> SubmissionResult:
    """Check a submitted payload against the project's rules; positions in the answer are shown indexes.

    Every problem is reported (not only the first) so the annotator can fix the whole form at once.
    """
    errors: list[FieldError] = []
    if not isinstance(payload, Mapping):
        return SubmissionResult(None, (FieldError("payload", "Expected an object."),))

    answer: Answer | None
    if rules.kind == "likert":
        allowed = {"ratings", "comment"}
        if rules.best_pick != "off":
            allowed.add("best")
        elif "best" in payload:
            errors.append(FieldError("best", "Best pick is not enabled for this project."))
            allowed.add("best")
        _check_unknown(payload, allowed, errors)
        ratings = _clean_ratings(payload.get("ratings"), rules, errors)
        best = None
        if rules.best_pick != "off":
            best = _clean_best(payload.get("best"), rules, rules.best_pick == "required", errors)
        comment = _clean_text(payload, "comment", rules.max_text_chars, errors)
        answer = LikertAnswer(ratings=ratings, best=best, comment=comment)
    elif rules.kind == "best_of_n":
        _check_unknown(payload, {"best", "comment"}, errors)
        best = _clean_best(payload.get("best"), rules, True, errors)
        comment = _clean_text(payload, "comment", rules.max_text_chars, errors)
        answer = None if best is None else BestOfNAnswer(best=best, comment=comment)
    else:
        vote_key, other_key = ("vote", "votes") if rules.vote_turns is None else ("votes", "vote")
        if other_key in payload:
            errors.append(FieldError(other_key, f"This task takes {vote_key!r}, not {other_key!r}."))
        _check_unknown(payload, {vote_key, other_key, "rationale"}, errors)
        votes = _clean_votes(payload, rules, errors)
        rationale = _clean_text(payload, "rationale", rules.max_text_chars, errors)
        answer = PairwiseAnswer(votes=votes, rationale=rationale)

    if errors or answer is None:
        return SubmissionResult(None, tuple(errors))
    return SubmissionResult(answer)


def answer_to_canonical(answer: Answer, permutation: Sequence[int]) -> Answer:
    """Re-express a shown-space answer in canonical response indexes using the assignment's permutation."""
    if answer.canonical:
        raise ValueError("answer is already in canonical indexes")
    check_permutation(permutation)

    def canon(index: int | str | None) -> int | str | None:
        if index is None or index == ALL_BAD:
            return index
        if not 0 <= index < len(permutation):
            raise ValueError(f"shown index {index} outside a permutation of {len(permutation)}")
        return permutation[index]

    if isinstance(answer, LikertAnswer):
        if len(answer.ratings) != len(permutation):
            raise ValueError(f"{len(answer.ratings)} rated responses but a permutation of {len(permutation)}")
        ratings = {permutation[shown]: dict(values) for shown, values in answer.ratings.items()}
        return replace(answer, ratings=dict(sorted(ratings.items())), best=canon(answer.best), canonical=True)
    if isinstance(answer, BestOfNAnswer):
        return replace(answer, best=canon(answer.best), canonical=True)
    if len(permutation) != 2:
        raise ValueError("a pairwise answer needs a permutation of 2")
    swapped = list(permutation) == [1, 0]
    votes = {turn: map_pairwise_vote(vote, swapped) for turn, vote in answer.votes.items()}
    return replace(answer, votes=votes, canonical=True)


def clean_submission(payload: object, rules: SubmissionRules, permutation: Sequence[int]) -> SubmissionResult:
    """Validate, then map to canonical indexes: what the service layer stores."""
    result = validate_submission(payload, rules)
    if not result.ok or result.answer is None:
        return result
    check_permutation(permutation, rules.n_responses)
    return SubmissionResult(answer_to_canonical(result.answer, permutation))


def annotation_values(answer: Answer) -> list[AnnotationValue]:
    """Long-format values of a canonical answer, one per (target, turn, criterion).

    A best pick is one value whose ``value`` is the canonical index (or ``"all_bad"``), so agreement on
    best picks is computed over canonical ids, never over screen positions.
    """
    if not answer.canonical:
        raise ValueError("map the answer to canonical indexes first")
    values: list[AnnotationValue] = []
    if isinstance(answer, LikertAnswer):
        for target, per_criterion in sorted(answer.ratings.items()):
            for criterion, value in per_criterion.items():
                values.append(AnnotationValue(target, None, criterion, value))
        if answer.best is not None:
            values.append(AnnotationValue(None, None, "best", answer.best))
    elif isinstance(answer, BestOfNAnswer):
        values.append(AnnotationValue(None, None, "best", answer.best))
    else:
        for turn, vote in answer.votes.items():
            values.append(AnnotationValue(None, turn, "vote", vote))
    return values
