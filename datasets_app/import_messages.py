"""An import's record problems as the page shows them, in the page's language.

The domain (``domain/import_records.py``, ``domain/column_mapping.py``) and the import service write
each problem in fixed English words, which the API, the CLI and the stored import keep as they are.
The page maps each known message to a translated template here; a message it does not know yet is
shown as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

_LOCATIONS: list[tuple[re.Pattern[str], Promise]] = [
    (re.compile(r"line (?P<line>\d+)"), _("line %(line)s")),
    (re.compile(r"(?P<split>\S+) row (?P<line>\d+)"), _("%(split)s row %(line)s")),
]

_MESSAGES: list[tuple[re.Pattern[str], Promise]] = [
    (re.compile(p), t)
    for p, t in [
        (r"is required", _("is required")),
        (
            r"is required \(an ISO 639-3 code such as ind, sun, jav\)",
            _("is required (an ISO 639-3 code such as ind, sun, jav)"),
        ),
        (
            r"is required \(or turns, a list of user messages\)",
            _("is required (or turns, a list of user messages)"),
        ),
        (r"is required \(or turns\)", _("is required (or turns)")),
        (
            r"is required: an object with options A, B, C, D and E",
            _("is required: an object with options A, B, C, D and E"),
        ),
        (r"is required and must be non-empty text", _("is required and must be non-empty text")),
        (r"is required: the column holding the prompt", _("is required: the column holding the prompt")),
        (r"must be text, got (?P<type>\w+)", _("must be text, got %(type)s")),
        (r"must be text or an integer, got (?P<type>\w+)", _("must be text or an integer, got %(type)s")),
        (r"must be an object, got (?P<type>\w+)", _("must be an object, got %(type)s")),
        (r"must be a list, got (?P<type>\w+)", _("must be a list, got %(type)s")),
        (r"must be non-empty text", _("must be non-empty text")),
        (r"is longer than (?P<n>\d+) characters", _("is longer than %(n)s characters")),
        (
            r"must be an ISO 639-3 code of three letters \(ind, sun, jav, \.\.\.\), got (?P<value>.*)",
            _("must be an ISO 639-3 code of three letters (ind, sun, jav, ...), got %(value)s"),
        ),
        (
            r"is not valid JSON \((?P<why>.*) at character (?P<pos>\d+)\)",
            _("is not valid JSON (%(why)s at character %(pos)s)"),
        ),
        (
            r"has (?P<n>\d+) entries but the prompt has (?P<turns>\d+) turn\(s\)",
            _("has %(n)s entries but the prompt has %(turns)s turn(s)"),
        ),
        (
            r"has (?P<n>\d+) turn\(s\) but the prompt has (?P<turns>\d+)",
            _("has %(n)s turn(s) but the prompt has %(turns)s"),
        ),
        (r"repeats model (?P<model>.*) in the same prompt", _("repeats model %(model)s in the same prompt")),
        (
            r"has unknown option keys (?P<keys>.*); use A to E",
            _("has unknown option keys %(keys)s; use A to E"),
        ),
        (
            r"must be one of A, B, C, D, E, got (?P<value>.*)",
            _("must be one of A, B, C, D, E, got %(value)s"),
        ),
        (r"must be human or llm, got (?P<value>.*)", _("must be human or llm, got %(value)s")),
        (r"is the same as source_language", _("is the same as source_language")),
        (
            r"repeats id (?P<id>.*) first seen at (?P<where>.+)",
            _("repeats id %(id)s first seen at %(where)s"),
        ),
        (r"must name a column", _("must name a column")),
    ]
]


def _translate(text: str, table: list[tuple[re.Pattern[str], Promise]]) -> str:
    for pattern, template in table:
        match = pattern.fullmatch(text)
        if match:
            params = match.groupdict()
            if "where" in params:
                params["where"] = location(params["where"])
            return str(template) % params if params else str(template)
    return text


def location(text: str) -> str:
    """``line 6`` or ``validation row 3`` in the page's language."""
    return _translate(text, _LOCATIONS)


def message(text: str) -> str:
    """A known record-check message in the page's language; an unknown one as written."""
    return _translate(text, _MESSAGES)


def shown(problem: Mapping[str, str]) -> dict[str, str]:
    """A stored problem (location, field, message) as the import page shows it."""
    return {
        "location": location(problem.get("location", "")),
        "field": problem.get("field", ""),
        "message": message(problem.get("message", "")),
    }
