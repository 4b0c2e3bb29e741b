"""Refusals shown in the page's language.

Services raise English texts marked for the catalogue (``gettext_noop``), and the API and the commands answer
them as written. A text with ``%(name)s`` placeholders travels with its values apart, as ``message`` and
``params`` (Django's ``ValidationError``, ``annotation.services.AnnotationError``,
``evaluation.services.RunConfigError``, ``exports.options.Refusal``), so that a page can translate the text
before filling the values in: translating a text already filled in would find no entry in the catalogue.
"""

from __future__ import annotations

from django.utils.translation import gettext


class Refused(Exception):
    """An exception whose message may hold ``%(name)s`` placeholders, their values given as keywords:
    ``str()`` is the English text filled in (what the API and the commands answer), ``message`` and
    ``params`` keep them apart for ``shown``."""

    def __init__(self, message: str = "", **params: object):
        self.message = message
        self.params = params
        super().__init__(message % params if params else message)


def shown(error: object) -> str:
    """``error`` (an exception, a ``ValidationError`` or a text) in the active language.

    The text is ``error.message`` where there is one, else ``str(error)``; it is translated, then filled with
    ``error.params``. A value that is itself such an error is shown the same way; a list or tuple of values
    is a choice of alternatives, joined with the language's "or". A text with no translation is shown as
    written.
    """
    message = getattr(error, "message", None)
    text = str(message) if message is not None else str(error)
    translated = gettext(text) if text else text
    params = getattr(error, "params", None)
    if not params:
        return translated
    either = f" {gettext('or')} "
    values = {
        name: shown(value)
        if hasattr(value, "params")
        else either.join(map(str, value))
        if isinstance(value, (list, tuple))
        else value
        for name, value in params.items()
    }
    return translated % values
