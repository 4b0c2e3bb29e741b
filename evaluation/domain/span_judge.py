"""The error-span judge: the prompt that asks a model for a translation's errors as JSON spans, and the
JSON schema its reply is held to. The reply is read by ``judge_parsing.parse_spans``.

The model quotes each error's words instead of counting characters (small models cannot count); the
parser finds the quote in the translation. Prompts are ours, in English and Indonesian.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SPAN_SEVERITIES = ("minor", "major")

SPAN_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "errors": {
            "type": "array",
            "maxItems": 12,
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "category": {"type": "string"},
                    "severity": {"type": "string", "enum": list(SPAN_SEVERITIES)},
                },
                "required": ["text", "category", "severity"],
            },
        }
    },
    "required": ["errors"],
}

_SYSTEM = {
    "en": (
        "You are a careful translation reviewer. You find the errors in a translation and answer only with "
        "JSON."
    ),
    "id": (
        "Anda peninjau terjemahan yang teliti. Anda menemukan kesalahan dalam terjemahan dan hanya menjawab "
        "dengan JSON."
    ),
}

_USER = {
    "en": (
        "Source ({source_language}):\n{source}\n\n"
        "Translation ({target_language}{register}):\n{target}\n\n"
        "List the errors of the translation. For each error copy its exact words from the translation into "
        '"text", choose a "category" from this list and a "severity": "minor" (the meaning is kept) or '
        '"major" (the meaning changes or the text is hard to understand).\n'
        "Categories:\n{categories}\n\n"
        'Answer with JSON only: {{"errors": [{{"text": "...", "category": "...", "severity": "minor"}}]}}. '
        'If the translation is correct, answer {{"errors": []}}.'
    ),
    "id": (
        "Sumber ({source_language}):\n{source}\n\n"
        "Terjemahan ({target_language}{register}):\n{target}\n\n"
        "Sebutkan kesalahan dalam terjemahan. Untuk setiap kesalahan, salin kata-katanya persis dari "
        'terjemahan ke "text", pilih "category" dari daftar ini dan "severity": "minor" (maknanya tetap) '
        'atau "major" (maknanya berubah atau teksnya sulit dipahami).\n'
        "Kategori:\n{categories}\n\n"
        'Jawab hanya dengan JSON: {{"errors": [{{"text": "...", "category": "...", "severity": "minor"}}]}}. '
        'Jika terjemahannya benar, jawab {{"errors": []}}.'
    ),
}


def span_messages(
    *,
    source: str,
    target: str,
    source_language: str,
    target_language: str,
    register: str,
    categories: Sequence[tuple[str, str]],
    lang: str = "en",
) -> list[dict[str, str]]:
    """The chat messages of one segment: ``categories`` are (code, name) pairs, listed as ``code: name``."""
    lang = "id" if lang == "id" else "en"
    listed = "\n".join(f"- {code}: {name}" for code, name in categories)
    user = _USER[lang].format(
        source=source,
        target=target,
        source_language=source_language,
        target_language=target_language,
        register=f", {register}" if register else "",
        categories=listed,
    )
    return [{"role": "system", "content": _SYSTEM[lang]}, {"role": "user", "content": user}]
