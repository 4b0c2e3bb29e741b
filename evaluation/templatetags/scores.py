"""``{% load scores %}``: judge scores for reading."""

from __future__ import annotations

from django import template
from django.utils.formats import number_format

from evaluation.domain.judge_parsing import plain_score

register = template.Library()


@register.filter
def score(value: object, places: int = 2) -> str:
    """A score as people write it, in the page's language: 7.5 as 7.5 (7,5 in Indonesian), 7.0 as 7, a mean
    such as 7.3333 cut to ``places`` decimals (7.33); no score as "—"."""
    if value is None or value == "":
        return "—"
    try:
        number = round(float(value), int(places))
    except (TypeError, ValueError):
        return str(value)
    return number_format(plain_score(number))
