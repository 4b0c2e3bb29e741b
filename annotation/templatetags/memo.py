"""``{% load memo %}``: parts of a page rendered once per process and reused while what they show is the same.

The task page shows the same instructions, shortcuts, rubric and scales on every task of a project; the
template engine rebuilding them on every submit was most of the htmx loop's time. ::

    {% memo task.instructions.id task.instructions.en %} ... {% endmemo %}
    {% memo cell.criterion cell.selected vary name=cell.name %} ... {{ name }} ... {% endmemo %}
    {% memo task.kind vary done=task.done total=task.total|default:1 %} ... {{ done }} / {{ total }} ... {% endmemo %}

The block is rendered once for each combination of the values after ``memo`` and of the active
language (and autoescaping), then its output is reused. So the values must name everything the block
shows: a block may read nothing else from its context, except its ``vary`` variables. Those are rendered
as markers the first time and put in at each use as ``{{ name }}`` would show them (localized, escaped),
so a block that differs only by a field name (``r-3-fluency``) or a count is still rendered once. Inside
the block a ``vary`` variable is only ever shown as it is (``{{ name }}``, or passed to ``{% url %}`` or
``{% blocktranslate with %}``, which leave the marker whole); a filter belongs in its ``vary`` expression.

A value with a ``content_key`` (``selectors.CriterionView``) is keyed by it; lists and dicts by their
items. A value that cannot be a key makes the block render as usual, every time. What is kept belongs to
the compiled template (a template loaded again starts empty) and holds at most ``MEMO_SIZE`` outputs.
"""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from django import template
from django.conf import settings
from django.template.base import FilterExpression, Node, NodeList, Parser, Token, render_value_in_context
from django.template.defaultfilters import linebreaksbr
from django.template.loader import get_template
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

register = template.Library()

MEMO_SIZE = 256
# Stands for a ``vary`` value in the kept output: random per process, so no text shown can hold it.
_MARKER = f"memo-{secrets.token_hex(16)}"
_VARY = re.compile(re.escape(_MARKER) + r"-v(\d+)-")


def _vary_marker(index: int) -> str:
    return f"{_MARKER}-v{index}-"


def _shown(value: Any, context: template.Context) -> str:
    """``value`` as ``{{ value }}`` shows it (``render_value_in_context``), with the two kinds a kept block
    puts in on every use taken first: text (escaped, or as it is without autoescaping) and whole numbers
    (no thousands separator unless the settings ask for one)."""
    kind = type(value)
    if kind is str:
        return html.escape(value) if context.autoescape else value
    if kind is int and not settings.USE_THOUSAND_SEPARATOR:
        return str(value)
    return str(render_value_in_context(value, context))


_PLAIN = frozenset({str, int, bool, float, tuple, type(None)})


def _key_of(value: Any) -> Hashable:
    if type(value) in _PLAIN:  # a tuple is taken as it is: hashing it finds anything unhashable inside
        return value
    content_key = getattr(value, "content_key", None)
    if content_key is not None:
        return content_key
    if isinstance(value, list | tuple):
        return tuple(_key_of(item) for item in value)
    if isinstance(value, dict):
        return tuple((name, _key_of(item)) for name, item in value.items())
    return value


class MemoNode(Node):
    def __init__(
        self, nodelist: NodeList, keys: list[FilterExpression], vary: list[tuple[str, FilterExpression]]
    ) -> None:
        self.nodelist = nodelist
        self.keys = keys
        self.vary = vary
        # Per key: the output's texts, and which vary value goes between each two of them.
        self.kept: dict[Hashable, tuple[list[str], list[int]]] = {}

    def render(self, context: template.Context) -> SafeString:
        key = (
            get_language(),
            context.autoescape,
            tuple(_key_of(expression.resolve(context)) for expression in self.keys),
        )
        try:
            kept = self.kept.get(key)
        except TypeError:  # a value that cannot be a key
            return self._render_now(context)
        if kept is None:
            with context.push({name: _vary_marker(i) for i, (name, _) in enumerate(self.vary)}):
                parts = _VARY.split(self.nodelist.render(context))
            kept = (parts[0::2], [int(index) for index in parts[1::2]])
            if len(self.kept) >= MEMO_SIZE:
                self.kept.clear()
            self.kept[key] = kept
        texts, order = kept
        if not order:
            return mark_safe(texts[0])
        values = [_shown(expression.resolve(context), context) for _, expression in self.vary]
        shown = [texts[0]]
        for index, text in zip(order, texts[1:], strict=True):
            shown.append(values[index])
            shown.append(text)
        return mark_safe("".join(shown))

    def _render_now(self, context: template.Context) -> SafeString:
        with context.push({name: expression.resolve(context) for name, expression in self.vary}):
            return self.nodelist.render(context)


@register.tag
def memo(parser: Parser, token: Token) -> MemoNode:
    """``{% memo value ... [vary name=value ...] %}...{% endmemo %}`` (see the module's docstring)."""
    bits = token.split_contents()[1:]
    vary: list[tuple[str, FilterExpression]] = []
    if "vary" in bits:
        at = bits.index("vary")
        named = bits[at + 1 :]
        if not named or any("=" not in bit for bit in named):
            raise template.TemplateSyntaxError("memo: 'vary' takes name=value pairs, at the end")
        for bit in named:
            name, _, expression = bit.partition("=")
            vary.append((name, parser.compile_filter(expression)))
        bits = bits[:at]
    if not bits:
        raise template.TemplateSyntaxError("memo needs at least one value to key the kept output on")
    nodelist = parser.parse(("endmemo",))
    parser.delete_first_token()
    return MemoNode(nodelist, [parser.compile_filter(bit) for bit in bits], vary)


# --- the response card ------------------------------------------------------------------------------------

_CARD_TEMPLATE = "annotation/_response_card.html"
_CARD_NUMBER = f"{_MARKER}-n"
_cards: dict[Hashable, tuple[list[str], int]] = {}


@dataclass(frozen=True)
class _MarkedResponse:
    number: str
    label: str
    turns: list[str]


def _turn_marker(index: int) -> str:
    return f"{_MARKER}-t{index}-"


@register.simple_tag(takes_context=True)
def response_card(context: template.Context, row: dict[str, Any], read_only: bool = False) -> SafeString:
    """One response's card (``annotation/_response_card.html``), as ``{% include %}`` of that template with
    ``row`` and ``read_only`` renders it.

    The card is rendered once per process for each combination of its scales (``row.scales_key``), its
    label, its number of turns, ``read_only`` and the active language, with markers in place of the
    response's number and of each turn's text; each use puts them in (each turn escaped and with its line
    breaks, as the template's ``linebreaksbr``)."""
    response = row["response"]
    turns = response.turns
    key = (
        get_language(),
        context.autoescape,
        bool(read_only),
        response.label,
        len(turns),
        _key_of(row["scales_key"]),
    )
    try:
        kept = _cards.get(key)
    except TypeError:  # scales that cannot be a key: render as the include does
        kept = None
        key = None
    if kept is None:
        marked = {
            "response": _MarkedResponse(
                _CARD_NUMBER, response.label, [_turn_marker(i) for i in range(len(turns))]
            ),
            "cells": row["cells"],
            "scales_key": row["scales_key"],
        }
        card = get_template(_CARD_TEMPLATE).template
        with context.push(row=marked, read_only=read_only):
            html = card.render(context)
        for index in range(len(turns)):
            html = html.replace(_turn_marker(index), f"{_MARKER}-t-")
        kept = (html.split(f"{_MARKER}-t-"), len(turns))
        if key is not None:
            if len(_cards) >= MEMO_SIZE:
                _cards.clear()
            _cards[key] = kept
    pieces, _count = kept
    number = str(response.number)
    shown = [pieces[0].replace(_CARD_NUMBER, number)]
    for text, piece in zip(turns, pieces[1:], strict=True):
        shown.append(str(linebreaksbr(text, autoescape=context.autoescape)))
        shown.append(piece.replace(_CARD_NUMBER, number))
    return mark_safe("".join(shown))
