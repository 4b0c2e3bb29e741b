"""The codes in an agreement report as the dashboard shows them, in the page's language.

The report keeps codes and English names (the API, the CSV downloads and the commands answer them as they
are): criterion slugs, votes, judge kinds, the sources of Bradley-Terry ratings, judge names such as
``gemma (run 2)``, and the notes of a section. ``Labels`` turns a cell, a chart row or a note into what the
page shows; a code it does not know is shown as written.
"""

from __future__ import annotations

import re
from typing import Any

from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

from annotation import labels as annotation_labels
from datasets_app.domain.languages import language_register_name
from evaluation.domain.benchmark_metrics import MISSING_LEVEL

# Who gave a leaderboard row's verdicts (``analytics.services._judges_section``).
JUDGE_KINDS = {
    "human": _("People"),
    "pairwise": _("Pairwise verdict"),
    "graded": _("Scores"),
    "ensemble": _("Ensemble of judges"),
}
# The votes behind a row of Bradley-Terry ratings.
RATING_SOURCES = {
    "pairwise": _("Pairwise votes"),
    "best_of_n": _("Best-of-N picks"),
}
# Judge names the report writes itself.
JUDGE_NAMES = {
    "human-human": _("People with each other"),
    "ensemble": _("Ensemble of judges"),
}
_RUN = re.compile(r"^(?P<judge>.+) \(run (?P<run>\d+)\)$")
# The dimensions of the agreement breakdowns (``analytics.domain.agreement.GROUPING_COLUMNS``).
DIMENSIONS = {
    "category": _("Category"),
    "language": _("Language"),
    "register": _("Register"),
    "group": _("Group"),
}

# What ``analytics.domain.bradley_terry`` says when it cannot rate, after ``<source>: ``.
_RATING_REFUSALS = {
    "the Bradley-Terry estimate does not exist: some group of models never wins (or never loses) against "
    "the others": _(
        "the Bradley-Terry estimate does not exist: some group of models never wins (or never loses) against "
        "the others"
    ),
    "Bradley-Terry needs votes between at least two models": _(
        "Bradley-Terry needs votes between at least two models"
    ),
    "a vote compares a model with itself": _("a vote compares a model with itself"),
}
_SOURCE_NOTE = re.compile(r"^(?P<source>\w+): (?P<message>.+)$", re.S)


class Labels:
    """The labels of one page (the criteria's are read once)."""

    def __init__(self) -> None:
        self.criteria = annotation_labels.criterion_labels()

    def language(self, group: str) -> str:
        """A language code, or a language and register (``jav / krama``), by its name in the page's
        language; items without a language as such."""
        if not group or group == MISSING_LEVEL:
            return gettext("No language")
        return language_register_name(group, get_language() or "en")

    def judge(self, name: str) -> str:
        if name in JUDGE_NAMES:
            return str(JUDGE_NAMES[name])
        found = _RUN.match(name)
        if found:
            return gettext("%(judge)s (run %(run)s)") % {"judge": found["judge"], "run": found["run"]}
        return name

    def value(self, column: str, value: Any, row: dict[str, Any] | None = None) -> Any:
        """``value`` of ``column`` as the page shows it; anything that is not a known code unchanged."""
        if not isinstance(value, str):
            return value
        if column == "criterion":
            return self.criteria.get(value, value)
        if column in ("vote", "winner"):
            return annotation_labels.vote(value)
        if column == "value" and row is not None and row.get("criterion") in ("vote", "best"):
            return annotation_labels.vote(value)
        if column == "kind":
            return str(JUDGE_KINDS.get(value, value))
        if column == "source":
            return str(RATING_SOURCES.get(value, value))
        if column == "dimension":
            return str(DIMENSIONS.get(value, value))
        if column in ("language", "language_register"):
            return self.language(value)
        if column == "level" and row is not None and row.get("dimension") == "language":
            return self.language(value)
        if column == "judge":
            return self.judge(value)
        return value

    def row(self, row: dict[str, Any], keep: tuple[str, ...] = ()) -> dict[str, Any]:
        """A chart's row with its codes shown by their labels (``keep``: columns the chart reads as codes)."""
        return {k: v if k in keep else self.value(k, v, row) for k, v in row.items()}

    def note(self, note: str) -> str:
        """A section's note: translated whole, or part by part where it joins ``source: reason`` parts."""
        parts = [_SOURCE_NOTE.match(part) for part in note.split("; ")]
        if not all(found and found["source"] in RATING_SOURCES for found in parts):
            return gettext(note)
        return "; ".join(
            f"{RATING_SOURCES[found['source']]}: {_RATING_REFUSALS.get(found['message'], found['message'])}"
            for found in parts
            if found
        )
