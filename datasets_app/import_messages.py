"""An import's record problems as the page shows them, in the page's language.

The domain (``domain/import_records.py``, ``domain/column_mapping.py``) and the import service write
each problem in fixed English words, which the API, the CLI and the stored import keep as they are.
The page maps each known message to a translated template here, and so the reasons a file is refused as
a whole (the upload's and the reader's); a message it does not know yet is shown as written.
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
        (
            r"give either prompt \(one turn\) or turns \(a list\), not both",
            _("give either prompt (one turn) or turns (a list), not both"),
        ),
        (r"must hold at least one user message", _("must hold at least one user message")),
        (
            r"must be a list of \{model, text\} objects, got (?P<type>\w+)",
            _("must be a list of {model, text} objects, got %(type)s"),
        ),
        (
            r"must be an object with model and text \(or turns\)",
            _("must be an object with model and text (or turns)"),
        ),
        (
            r"must be an object with options A, B, C, D and E",
            _("must be an object with options A, B, C, D and E"),
        ),
        (r"has two identical options", _("has two identical options")),
        (
            r"is required: an object with options A and B up to A to E \((?P<low>\d+) to (?P<high>\d+) options\)",
            _("is required: an object with options A and B up to A to E (%(low)s to %(high)s options)"),
        ),
        (
            r"must be an object with options A and B up to A to E \((?P<low>\d+) to (?P<high>\d+) options\)",
            _("must be an object with options A and B up to A to E (%(low)s to %(high)s options)"),
        ),
        (
            r"has (?P<n>\d+) options; a question has (?P<low>\d+) to (?P<high>\d+)",
            _("has %(n)s options; a question has %(low)s to %(high)s"),
        ),
        (
            r"must be one of (?P<keys>[A-E](?:, [A-E])*), got (?P<value>.*)",
            _("must be one of %(keys)s, got %(value)s"),
        ),
        (r"must differ from the answer", _("must differ from the answer")),
        (
            r"holds a NUL character \(\\u0000\), which cannot be stored",
            _("holds a NUL character (\\u0000), which cannot be stored"),
        ),
        (r"is nested deeper than (?P<n>\d+) levels", _("is nested deeper than %(n)s levels")),
        (r"must be an object of field: column", _("must be an object of field: column")),
        (r"must be an object of field: value", _("must be an object of field: value")),
        (
            r"must be a list of \{text, model_column \| model_name\}",
            _("must be a list of {text, model_column | model_name}"),
        ),
        (
            r"is not a field of ours; use one of (?P<fields>.+)",
            _("is not a field of ours; use one of %(fields)s"),
        ),
        (r"only the id may come from the row number", _("only the id may come from the row number")),
        (
            r"cannot be a constant; use one of (?P<fields>.+)",
            _("cannot be a constant; use one of %(fields)s"),
        ),
        (r"is mapped from a column already", _("is mapped from a column already")),
        (r"at most (?P<n>\d+) response columns", _("at most %(n)s response columns")),
        (
            r"must be an object with text and model_column or model_name",
            _("must be an object with text and model_column or model_name"),
        ),
        (r"must name the column holding the response", _("must name the column holding the response")),
        (r"model_column and model_name must be text", _("model_column and model_name must be text")),
        (
            r"give either model_column \(a column holding the model\) or model_name",
            _("give either model_column (a column holding the model) or model_name"),
        ),
        (r"repeats model (?P<model>.+)", _("repeats model %(model)s")),
        (r"must be true or false", _("must be true or false")),
        (r"a mapping must be an object, got (?P<type>\w+)", _("a mapping must be an object, got %(type)s")),
    ]
]


# A file the upload or the reader refuses as a whole (``UploadRejected``, ``UnreadableFile``).
_FILE_MESSAGES: list[tuple[re.Pattern[str], Promise]] = [
    (re.compile(p), t)
    for p, t in [
        (
            r"file: is larger than the limit of (?P<n>\d+) MiB",
            _("file: is larger than the limit of %(n)s MiB"),
        ),
        (
            r"file: a Hugging Face dataset folder must be uploaded as a \.zip",
            _("file: a Hugging Face dataset folder must be uploaded as a .zip"),
        ),
        (
            r"file: (?P<name>.+) is not a readable zip \((?P<why>.*)\)",
            _("file: %(name)s is not a readable zip (%(why)s)"),
        ),
        (
            r"file: (?P<name>.+) holds (?P<n>[\d,]+) entries, more than the limit of (?P<limit>[\d,]+)",
            _("file: %(name)s holds %(n)s entries, more than the limit of %(limit)s"),
        ),
        (
            r"file: (?P<name>.+) holds an unsafe path (?P<path>.+)",
            _("file: %(name)s holds an unsafe path %(path)s"),
        ),
        (
            r"file: (?P<name>.+) holds an encrypted file (?P<path>.+)",
            _("file: %(name)s holds an encrypted file %(path)s"),
        ),
        (
            r"file: (?P<name>.+) would unpack to (?P<total>.+), above the limit of (?P<limit>.+) unpacked",
            _("file: %(name)s would unpack to %(total)s, above the limit of %(limit)s unpacked"),
        ),
        (
            r"file: (?P<name>.+) unpacks to more than (?P<total>.+), above the limit of (?P<limit>.+) unpacked",
            _("file: %(name)s unpacks to more than %(total)s, above the limit of %(limit)s unpacked"),
        ),
        (
            r"file: (?P<name>.+) would unpack to (?P<total>.+) from (?P<size>.+) zipped, a compression ratio of "
            r"(?P<ratio>[\d,]+):1, above the limit of (?P<limit>\d+):1",
            _(
                "file: %(name)s would unpack to %(total)s from %(size)s zipped, a compression ratio of "
                "%(ratio)s:1, above the limit of %(limit)s:1"
            ),
        ),
        (
            r"file: (?P<name>.+) unpacks to more than (?P<total>.+) from (?P<size>.+) zipped, a compression "
            r"ratio of (?P<ratio>[\d,]+):1, above the limit of (?P<limit>\d+):1",
            _(
                "file: %(name)s unpacks to more than %(total)s from %(size)s zipped, a compression ratio of "
                "%(ratio)s:1, above the limit of %(limit)s:1"
            ),
        ),
        (
            r"file: (?P<name>.+) cannot be unpacked: (?P<path>.+?): (?P<why>.*)",
            _("file: %(name)s cannot be unpacked: %(path)s: %(why)s"),
        ),
        (
            r"(?P<name>.+): cannot tell the format from the extension; pass --format jsonl\|csv\|hf",
            _(
                "%(name)s: cannot tell the format from the extension; use .jsonl, .csv or a .zip of a dataset folder"
            ),
        ),
        (
            r"(?P<name>.+): the hf format needs a dataset folder",
            _("%(name)s: the hf format needs a dataset folder"),
        ),
        (
            r"(?P<name>.+): (?P<where>line \d+|.+ row \d+): more than (?P<n>\d+) columns, too many to preview and map "
            r"in the browser; import it with the API or the import_dataset command",
            _(
                "%(name)s: %(where)s: more than %(n)s columns, too many to preview and map in the browser; import "
                "it with the API or the import_dataset command"
            ),
        ),
        (
            r"(?P<name>.+): is a folder; the (?P<format>\w+) format needs a file",
            _("%(name)s: is a folder; the %(format)s format needs a file"),
        ),
        (r"(?P<name>.+): the file is empty", _("%(name)s: the file is empty")),
        (
            r"(?P<name>.+): line 1: cannot read the header \((?P<why>.*)\)",
            _("%(name)s: line 1: cannot read the header (%(why)s)"),
        ),
        (
            r"(?P<name>.+): line 1: column names must be unique and non-empty",
            _("%(name)s: line 1: column names must be unique and non-empty"),
        ),
        (
            r"(?P<name>.+): line 1: a column name holds a NUL byte",
            _("%(name)s: line 1: a column name holds a NUL byte"),
        ),
        (
            r"(?P<name>.+): (?P<split>\S+) row (?P<line>\d+): cannot be read \((?P<why>.*)\)",
            _("%(name)s: %(split)s row %(line)s: cannot be read (%(why)s)"),
        ),
        (r"(?P<name>.+): no such file or folder", _("%(name)s: no such file or folder")),
        (r"(?P<name>.+): not a dataset id", _("%(name)s: not a dataset id")),
        (
            r"(?P<name>.+): cannot be read from the Hugging Face Hub \((?P<why>.*)\)",
            _("%(name)s: cannot be read from the Hugging Face Hub (%(why)s)"),
        ),
        (
            r"(?P<name>[^:]+): not a readable Hugging Face dataset folder \((?P<why>.*)\)",
            _("%(name)s: not a readable Hugging Face dataset folder (%(why)s)"),
        ),
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


def file_problem(text: str) -> str:
    """Why a file was refused as a whole, in the page's language; an unknown reason as written."""
    return _translate(text, _FILE_MESSAGES)


def shown(problem: Mapping[str, str]) -> dict[str, str]:
    """A stored problem (location, field, message) as the import page shows it."""
    return {
        "location": location(problem.get("location", "")),
        "field": problem.get("field", ""),
        "message": message(problem.get("message", "")),
    }
