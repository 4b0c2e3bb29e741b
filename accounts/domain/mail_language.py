"""The language Timbang writes to a person in: from the ISO 639-3 code of the language they work in."""

from __future__ import annotations

# Interface languages by their ISO 639-3 code.
_INTERFACE = {"eng": "en", "ind": "id"}


def mail_language(working_language: str, *, interface_languages: tuple[str, ...], default: str) -> str:
    """The interface language (``en``, ``id``) for a person who works in ``working_language``.

    A language Timbang's interface has is its own; a person who annotates any other language (Javanese,
    Sundanese, Madurese and the other regional languages of Indonesia) reads Indonesian; a person with no
    language on record gets ``default``.
    """
    code = (working_language or "").strip().lower()
    if not code:
        return default
    wanted = _INTERFACE.get(code, "id")
    return wanted if wanted in interface_languages else default
