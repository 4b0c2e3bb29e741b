"""``{% load labels %}``: codes of annotation shown by their labels (``annotation.labels``)."""

from __future__ import annotations

from django import template

from annotation import labels

register = template.Library()

register.filter("error_category", labels.error_category)
register.filter("vote_label", labels.vote)
register.filter("translation_verdict", labels.translation_verdict)


@register.filter
def error_categories(codes) -> str:
    """A list of error categories, joined."""
    return ", ".join(labels.error_category(code) for code in codes or ())
