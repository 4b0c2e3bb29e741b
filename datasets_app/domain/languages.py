"""Languages Timbang works with: Indonesian and 19 regional languages of Indonesia, plus English as a source.

Codes are ISO 639-3 (what ``Prompt.language`` and ``TranslationUnit.target_language`` store). The list
follows the spread of LoraxBench-style projects: the large languages of Java, Sumatra, Kalimantan, Sulawesi,
Bali and Nusa Tenggara, down to languages with a few hundred thousand speakers.

Every language here is written in the Latin script in today's data (``script = "Latn"``). Several also have a
traditional script (``other_scripts``, ISO 15924 codes: Javanese ``Java``, Sundanese ``Sund``, Balinese
``Bali``, Lontara ``Bugi``, Batak ``Batk``, Rejang ``Rjng``, Jawi/Pegon ``Arab``). Data in those scripts are
the exception and must be asked for explicitly; the translation flags treat letters outside the Latin script
as a problem by default.

Registers (speech levels) exist for three languages and are chosen per translation unit: Javanese
Krama/Ngoko, Sundanese Lemes/Loma, Madurese Engghi-Enten/Enja'-Iya.
"""

from __future__ import annotations

from dataclasses import dataclass

LATIN = "Latn"


@dataclass(frozen=True)
class Register:
    """A speech level of one language, e.g. Javanese Krama (polite) or Ngoko (plain)."""

    code: str
    language: str
    name_en: str
    name_id: str
    description_en: str
    description_id: str


@dataclass(frozen=True)
class Language:
    code: str
    name_en: str
    name_id: str
    script: str = LATIN
    other_scripts: tuple[str, ...] = ()
    registers: tuple[Register, ...] = ()
    is_source_only: bool = False


_REGISTERS: dict[str, tuple[Register, ...]] = {
    "jav": (
        Register(
            "krama",
            "jav",
            "Krama",
            "Krama",
            "Polite register, used with elders, strangers and in formal settings.",
            "Ragam hormat, dipakai kepada orang yang lebih tua, orang yang belum dikenal, dan dalam situasi "
            "resmi.",
        ),
        Register(
            "ngoko",
            "jav",
            "Ngoko",
            "Ngoko",
            "Plain register, used among friends and family and towards younger people.",
            "Ragam biasa, dipakai antarteman, dalam keluarga, dan kepada orang yang lebih muda.",
        ),
    ),
    "sun": (
        Register(
            "lemes",
            "sun",
            "Lemes",
            "Lemes",
            "Polite register (basa hormat).",
            "Ragam halus (basa hormat).",
        ),
        Register(
            "loma",
            "sun",
            "Loma",
            "Loma",
            "Familiar register (basa loma), used among peers.",
            "Ragam akrab (basa loma), dipakai antarteman sebaya.",
        ),
    ),
    "mad": (
        Register(
            "engghi_ethen",
            "mad",
            "Engghi-Enten",
            "Engghi-Enten",
            "Middle polite register, named after its words for 'yes' and 'no'.",
            "Ragam tengah yang sopan, dinamai menurut kata 'ya' dan 'tidak' dalam ragam itu.",
        ),
        Register(
            "enja_iya",
            "mad",
            "Enja'-Iya",
            "Enja'-Iya",
            "Plain register, used among peers and towards younger people.",
            "Ragam biasa, dipakai antarteman sebaya dan kepada orang yang lebih muda.",
        ),
    ),
}


def _lang(code: str, name_en: str, name_id: str, other_scripts: tuple[str, ...] = ()) -> Language:
    return Language(code, name_en, name_id, LATIN, other_scripts, _REGISTERS.get(code, ()))


LANGUAGES: dict[str, Language] = {
    language.code: language
    for language in (
        _lang("ind", "Indonesian", "Bahasa Indonesia"),
        _lang("jav", "Javanese", "Bahasa Jawa", ("Java", "Arab")),
        _lang("sun", "Sundanese", "Bahasa Sunda", ("Sund",)),
        _lang("mad", "Madurese", "Bahasa Madura", ("Java", "Arab")),
        _lang("min", "Minangkabau", "Bahasa Minangkabau", ("Arab",)),
        _lang("ban", "Balinese", "Bahasa Bali", ("Bali",)),
        _lang("bug", "Buginese", "Bahasa Bugis", ("Bugi",)),
        _lang("bjn", "Banjarese", "Bahasa Banjar", ("Arab",)),
        _lang("ace", "Acehnese", "Bahasa Aceh", ("Arab",)),
        _lang("bbc", "Toba Batak", "Bahasa Batak Toba", ("Batk",)),
        _lang("nij", "Ngaju", "Bahasa Dayak Ngaju"),
        _lang("mak", "Makassarese", "Bahasa Makassar", ("Bugi",)),
        _lang("sas", "Sasak", "Bahasa Sasak", ("Bali",)),
        _lang("gor", "Gorontalo", "Bahasa Gorontalo"),
        _lang("rej", "Rejang", "Bahasa Rejang", ("Rjng",)),
        _lang("abl", "Lampung Nyo", "Bahasa Lampung Nyo"),
        _lang("mui", "Musi", "Bahasa Musi"),
        _lang("bew", "Betawi", "Bahasa Betawi"),
        _lang("mog", "Mongondow", "Bahasa Mongondow"),
        _lang("kge", "Komering", "Bahasa Komering"),
        Language("eng", "English", "Bahasa Inggris", is_source_only=True),
    )
}

TARGET_LANGUAGE_CODES: tuple[str, ...] = tuple(
    code for code, lang in LANGUAGES.items() if not lang.is_source_only
)


def _normalise(code: str) -> str:
    return code.strip().lower() if isinstance(code, str) else ""


def is_known_language(code: str) -> bool:
    """Whether ``code`` is one of our ISO 639-3 codes (case and surrounding spaces ignored)."""
    return _normalise(code) in LANGUAGES


def get_language(code: str) -> Language:
    """The language for ``code``; ``KeyError`` with the code when unknown."""
    try:
        return LANGUAGES[_normalise(code)]
    except KeyError:
        raise KeyError(f"unknown language code: {code!r}") from None


def registers_for(code: str) -> tuple[Register, ...]:
    """The registers a translation into ``code`` can be asked for; empty for unknown codes and languages
    without registers."""
    language = LANGUAGES.get(_normalise(code))
    return language.registers if language else ()


def is_valid_register(code: str, register: str | None) -> bool:
    """``None`` (no register asked) is valid for every known language; otherwise the register must belong
    to the language."""
    if not is_known_language(code):
        return False
    if register is None or register == "":
        return True
    return any(r.code == register for r in registers_for(code))


def get_register(code: str, register: str) -> Register:
    """The register ``register`` of language ``code``; ``KeyError`` when the language has no such register."""
    for candidate in registers_for(code):
        if candidate.code == register:
            return candidate
    raise KeyError(f"language {code!r} has no register {register!r}")


def expected_script(code: str) -> str:
    """ISO 15924 code of the script translations into ``code`` should use (Latin for unknown codes too)."""
    language = LANGUAGES.get(_normalise(code))
    return language.script if language else LATIN


def _in_indonesian(ui_language: str) -> bool:
    return (ui_language or "").lower().startswith("id")


def language_name(code: str, ui_language: str = "en") -> str:
    """The name of language ``code`` in the page's language (``id``: its Indonesian name, otherwise its
    English one); an unknown code as written."""
    language = LANGUAGES.get(_normalise(code))
    if language is None:
        return code
    return language.name_id if _in_indonesian(ui_language) else language.name_en


def register_name(code: str, register: str, ui_language: str = "en") -> str:
    """The name of ``register`` of language ``code`` in the page's language; an unknown one as written."""
    for candidate in registers_for(code):
        if candidate.code == register:
            return candidate.name_id if _in_indonesian(ui_language) else candidate.name_en
    return register


# Between the language and the register of a group of items by both (``"jav / krama"``).
REGISTER_SEPARATOR = " / "


def language_register_name(group: str, ui_language: str = "en") -> str:
    """The name of a language group, or of a language-and-register group ``"jav / krama"``, in the page's
    language (``"Javanese / Krama"``); unknown parts as written."""
    code, separator, register = group.partition(REGISTER_SEPARATOR)
    name = language_name(code, ui_language)
    if not separator:
        return name
    return f"{name}{REGISTER_SEPARATOR}{register_name(code, register, ui_language)}"
