"""Indonesian is complete: every catalogue entry translated, every string marked in Python or a template in
the catalogue, and no text in a template outside the translation tags.

The catalogue check runs Django's own ``makemessages`` over a copy of the source tree (symlinks) with a copy
of the catalogue, so the real ``locale/`` is never written; what it adds untranslated or marks fuzzy is what
the catalogue lacks. Failures list each entry as ``file:line  msgid``.
"""

from __future__ import annotations

import html
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "locale" / "id" / "LC_MESSAGES" / "django.po"
SOURCE_DIRS = (
    "accounts",
    "analytics",
    "annotation",
    "arena",
    "config",
    "datasets_app",
    "demo",
    "evaluation",
    "exports",
    "templates",
)
TEMPLATES = ROOT / "templates"


# --- a .po reader ---------------------------------------------------------------------------------------


@dataclass
class Entry:
    line: int
    msgid: str = ""
    msgid_plural: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)
    msgctxt: str | None = None
    fuzzy: bool = False
    references: list[str] = field(default_factory=list)

    @property
    def translated(self) -> bool:
        return not self.fuzzy and bool(self.msgstr) and all(self.msgstr.values())

    def where(self, po: Path | None) -> str:
        """``file:line  'msgid'``: where the string is used, and (``po`` given) where its entry is."""
        refs = " ".join(self.references[:3])
        entry = f" ({po.relative_to(ROOT).as_posix()}:{self.line})" if po else ""
        return f"{refs or '?'}  {self.msgid!r}{entry}"


def _unquote(text: str) -> str:
    return text.strip()[1:-1].encode("raw_unicode_escape").decode("unicode_escape")


def read_po(path: Path) -> list[Entry]:
    """The live entries of a .po file (obsolete ``#~`` entries and the header left out)."""
    entries: list[Entry] = []
    current: Entry | None = None
    target: tuple[str, int | None] | None = None
    pending_flags: list[str] = []
    pending_refs: list[str] = []

    def finish():
        if current is not None and current.msgid:
            entries.append(current)

    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#~"):
            continue
        if line.startswith("#,"):
            pending_flags += [f.strip() for f in line[2:].split(",")]
            continue
        if line.startswith("#:"):
            pending_refs += line[2:].split()
            continue
        if line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        if line.startswith('"'):
            value = _unquote(line)
            if target and current:
                name, index = target
                if name == "msgstr":
                    current.msgstr[index or 0] += value
                else:
                    setattr(current, name, (getattr(current, name) or "") + value)
            continue
        if keyword in ("msgctxt", "msgid") and (current is None or target is None or target[0] == "msgstr"):
            if keyword == "msgctxt" or current is None or target is not None:
                finish()
                current = Entry(line=number, fuzzy="fuzzy" in pending_flags, references=pending_refs)
                pending_flags, pending_refs = [], []
        if current is None:
            continue
        if keyword == "msgctxt":
            current.msgctxt, target = _unquote(rest), ("msgctxt", None)
        elif keyword == "msgid":
            current.msgid, target = _unquote(rest), ("msgid", None)
        elif keyword == "msgid_plural":
            current.msgid_plural, target = _unquote(rest), ("msgid_plural", None)
        elif keyword.startswith("msgstr"):
            index = int(keyword[7:-1]) if keyword.startswith("msgstr[") else 0
            current.msgstr[index], target = _unquote(rest), ("msgstr", index)
    finish()
    return entries


def _report(title: str, lines: list[str]) -> str:
    return f"{title} ({len(lines)}):\n  " + "\n  ".join(lines)


def test_every_catalogue_entry_has_a_translation():
    entries = read_po(CATALOGUE)
    assert len(entries) > 100
    missing = [e.where(CATALOGUE) for e in entries if not e.translated]
    assert not missing, _report(
        "Indonesian entries empty or fuzzy in locale/id/LC_MESSAGES/django.po", missing
    )


def test_every_marked_string_is_in_the_catalogue(tmp_path, settings, monkeypatch):
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in SOURCE_DIRS:
        (tree / name).symlink_to(ROOT / name, target_is_directory=True)
    locale = tree / "locale" / "id" / "LC_MESSAGES"
    locale.mkdir(parents=True)
    shutil.copy(CATALOGUE, locale / "django.po")
    settings.LOCALE_PATHS = [str(tree / "locale")]
    monkeypatch.chdir(tree)
    call_command(
        "makemessages",
        locale=["id"],
        domain="django",
        symlinks=True,
        ignore_patterns=["*/migrations/*", "*/__pycache__/*"],
        no_obsolete=True,
        verbosity=0,
    )
    merged = locale / "django.po"
    missing = [e.where(None) for e in read_po(merged) if not e.translated]
    assert not missing, _report(
        "Strings marked for translation but missing (or only fuzzy-matched) in locale/id/LC_MESSAGES/django.po",
        missing,
    )


# --- templates ------------------------------------------------------------------------------------------

_BLOCKS = [
    re.compile(r"{%\s*comment\s*%}.*?{%\s*endcomment\s*%}", re.S),
    re.compile(r"{#.*?#}", re.S),
    re.compile(r"<!--.*?-->", re.S),
    re.compile(r"<script\b.*?</script>", re.S | re.I),
    re.compile(r"<style\b.*?</style>", re.S | re.I),
    re.compile(r"{%\s*(blocktrans|blocktranslate)\b.*?{%\s*end(blocktrans|blocktranslate)\s*%}", re.S),
    re.compile(r"{%.*?%}", re.S),
    re.compile(r"{{.*?}}", re.S),
]
_TAG = re.compile(r"<[a-zA-Z/!][^>]*>", re.S)
# Attributes people read: their values must be translated too.
_READ_ATTRIBUTES = re.compile(
    r"""\b(title|placeholder|alt|aria-label|aria-description)\s*=\s*(["'])(.*?)\2""", re.S
)
_WORD = re.compile(r"[^\W\d_]{2,}")
# Text that is the same in every language: the product's name, notation, and the names printed on keys.
_SAME_IN_EVERY_LANGUAGE = {"Timbang", "JSON", "CSV", "JSONL", "URL", "ID", "EN", "API", "UTC"}
_KEYS = {"Enter", "Shift", "Ctrl", "Esc", "Alt", "Tab"}
# Templates that are not pages (e-mail subjects are still checked: they are ordinary templates).
_NOT_TEXT = ("rest_framework/",)


def _blank(match: re.Match) -> str:
    return "\n" * match.group(0).count("\n")


def untranslated_text(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` for each piece of text a reader would see that is outside the translation tags."""
    attributes: list[tuple[int, str]] = []
    for match in _READ_ATTRIBUTES.finditer(source):
        value = match.group(3)
        for block in _BLOCKS:
            value = block.sub(" ", value)
        if _WORD.search(html.unescape(value)):
            attributes.append(
                (source.count("\n", 0, match.start()) + 1, f'{match.group(1)}="{value.strip()}"')
            )
    for block in _BLOCKS:
        source = block.sub(_blank, source)
    source = _TAG.sub(lambda m: _blank(m) or " ", source)
    found = []
    for number, line in enumerate(source.splitlines(), start=1):
        text = html.unescape(line).strip()
        words = [w for w in _WORD.findall(text) if w not in _SAME_IN_EVERY_LANGUAGE | _KEYS]
        if words:
            found.append((number, text))
    return sorted(found + attributes)


def test_templates_hold_no_text_outside_the_translation_tags():
    problems = []
    for path in sorted(TEMPLATES.rglob("*")):
        relative = path.relative_to(ROOT).as_posix()
        if (
            not path.is_file()
            or path.suffix not in (".html", ".txt")
            or relative.startswith(tuple(f"templates/{p}" for p in _NOT_TEXT))
        ):
            continue
        for number, text in untranslated_text(path.read_text(encoding="utf-8")):
            problems.append(f"{relative}:{number}  {text[:100]!r}")
    assert not problems, _report("Template text outside {% translate %} / {% blocktranslate %}", problems)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('<p>{% translate "Hello" %}</p>', []),
        ("<p>Hello there</p>", [(1, "Hello there")]),
        ("<h1>\n  {{ project.name }} · 12 / 40\n</h1>", []),
        ("{% blocktranslate %}Hi {{ name }}{% endblocktranslate %}\n<b>Bye</b>", [(2, "Bye")]),
        ('<input placeholder="Search">', [(1, 'placeholder="Search"')]),
        ("<input placeholder=\"{% translate 'Search' %}\">", []),
        ("{# a note #}<!-- and another --><script>var x = 'text';</script>", []),
        ("{% comment %}Any words{% endcomment %}<span>Timbang</span>", []),
    ],
)
def test_the_template_scanner(source, expected):
    assert untranslated_text(source) == expected


def test_the_po_reader_sees_empty_and_fuzzy_entries(tmp_path):
    po = tmp_path / "django.po"
    po.write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        '#: a.py:1\nmsgid "Done"\nmsgstr "Selesai"\n\n'
        '#: b.html:2\nmsgid "Empty"\nmsgstr ""\n\n'
        '#: c.py:3\n#, fuzzy\nmsgid "Fuzzy"\nmsgstr "Kabur"\n\n'
        'msgid "one"\nmsgid_plural "many"\nmsgstr[0] "satu"\nmsgstr[1] ""\n\n'
        'msgctxt "verb"\nmsgid "Long"\n"er"\nmsgstr ""\n"Lebih panjang"\n\n'
        '#~ msgid "Gone"\n#~ msgstr ""\n',
        encoding="utf-8",
    )
    entries = {e.msgid: e for e in read_po(po)}
    assert set(entries) == {"Done", "Empty", "Fuzzy", "one", "Longer"}
    assert [m for m, e in entries.items() if not e.translated] == ["Empty", "Fuzzy", "one"]
    assert entries["Longer"].msgctxt == "verb" and entries["Longer"].msgstr == {0: "Lebih panjang"}
    assert entries["Empty"].where(None) == "b.html:2  'Empty'"


# --- form labels ----------------------------------------------------------------------------------------

FORM_MODULES = (
    "accounts.forms",
    "annotation.forms",
    "datasets_app.views",
    "evaluation.forms",
    "exports.views",
    "analytics.views",
)


def test_every_form_field_has_a_translated_label():
    """A field without a label shows its name, capitalised, in English ("Name"): each needs ``label=_()``."""
    import importlib
    import inspect

    from django import forms
    from django.utils.functional import Promise

    problems = []
    for module_name in FORM_MODULES:
        module = importlib.import_module(module_name)
        for _, form in inspect.getmembers(module, inspect.isclass):
            if not issubclass(form, forms.BaseForm) or form.__module__ != module_name:
                continue
            for name, formfield in form.base_fields.items():
                if isinstance(formfield.widget, forms.HiddenInput):
                    continue
                if not isinstance(formfield.label, Promise):
                    owner = [k for k in form.__mro__ if name in getattr(k, "declared_fields", {})][-1]
                    source, first = inspect.getsourcelines(owner)
                    offset = next(
                        (i for i, text in enumerate(source) if text.lstrip().startswith(f"{name} =")), 0
                    )
                    path = inspect.getsourcefile(owner)
                    where = f"{Path(path).relative_to(ROOT).as_posix()}:{first + offset}"
                    problems.append(f"{where}  {form.__name__}.{name}")
    assert not problems, _report("Form fields without a translated label (label=_(...))", problems)
