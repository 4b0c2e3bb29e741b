"""``{% load memo %}``: parts of a page rendered once per process and reused while what they show is the same.

The task page shows the same instructions, shortcuts, rubric and scales on every task of a project; the
template engine rebuilding them on every submit was most of the htmx loop's time. ::

    {% memo task.instructions.id task.instructions.en %} ... {% endmemo %}
    {% memo cell.criterion cell.selected vary name=cell.name %} ... {{ name }} ... {% endmemo %}

The block is rendered once for each combination of the values after ``memo`` and of the active
language (and autoescaping), then its output is reused. So the values must name everything the block
shows: a block may read nothing else from its context, except the one ``vary`` variable. That one is
rendered as a marker the first time and put in, escaped, at each use, so a block that differs only by a
field name (``r-3-fluency``) is still rendered once.

A value with a ``content_key`` (``selectors.CriterionView``) is keyed by it; lists and dicts by their
items. A value that cannot be a key makes the block render as usual, every time. What is kept belongs to
the compiled template (a template loaded again starts empty) and holds at most ``MEMO_SIZE`` outputs.
"""

from __future__ import annotations

import secrets
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from django import template
from django.template.base import FilterExpression, Node, NodeList, Parser, Token
from django.template.defaultfilters import linebreaksbr
from django.template.loader import get_template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

register = template.Library()

MEMO_SIZE = 256
# Stands for the ``vary`` value in the kept output: random per process, so no text shown can hold it.
_MARKER = f"memo-{secrets.token_hex(16)}"


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
        self, nodelist: NodeList, keys: list[FilterExpression], vary: tuple[str, FilterExpression] | None
    ) -> None:
        self.nodelist = nodelist
        self.keys = keys
        self.vary = vary
        self.kept: dict[Hashable, list[str]] = {}

    def render(self, context: template.Context) -> SafeString:
        key = (
            get_language(),
            context.autoescape,
            tuple(_key_of(expression.resolve(context)) for expression in self.keys),
        )
        try:
            pieces = self.kept.get(key)
        except TypeError:  # a value that cannot be a key
            return self._render_now(context)
        if pieces is None:
            if self.vary is None:
                pieces = [self.nodelist.render(context)]
            else:
                with context.push({self.vary[0]: _MARKER}):
                    pieces = self.nodelist.render(context).split(_MARKER)
            if len(self.kept) >= MEMO_SIZE:
                self.kept.clear()
            self.kept[key] = pieces
        if self.vary is None:
            return mark_safe(pieces[0])
        return mark_safe(str(conditional_escape(self.vary[1].resolve(context))).join(pieces))

    def _render_now(self, context: template.Context) -> SafeString:
        if self.vary is None:
            return self.nodelist.render(context)
        with context.push({self.vary[0]: self.vary[1].resolve(context)}):
            return self.nodelist.render(context)


@register.tag
def memo(parser: Parser, token: Token) -> MemoNode:
    """``{% memo value ... [vary name=value] %}...{% endmemo %}`` (see the module's docstring)."""
    bits = token.split_contents()[1:]
    vary = None
    if "vary" in bits:
        at = bits.index("vary")
        if at != len(bits) - 2 or "=" not in bits[-1]:
            raise template.TemplateSyntaxError("memo: 'vary' takes one name=value, at the end")
        name, _, expression = bits[-1].partition("=")
        vary = (name, parser.compile_filter(expression))
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
