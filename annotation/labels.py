"""The codes of annotation as pages show them, in the active language: one mapping per family of codes.

Pages show these labels; the API, the CSV downloads and the commands keep the codes. A code a mapping does not
know is shown as written.
"""

from __future__ import annotations

from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from annotation.domain import rubrics as default_rubrics
from annotation.models import Rubric, TranslationError, TranslationRound

# Annotators' votes and picks: a pairwise vote (canonical A / B), a tie, both bad; the best-of-N "all bad".
VOTES = {
    "A": "A",
    "B": "B",
    "tie": _("Tie"),
    "both_bad": _("Both bad"),
    "all_bad": _("All bad"),
}


def page_language() -> str:
    """``id`` or ``en``: the language of the rubric texts to show on the page."""
    return "id" if (get_language() or "en").startswith("id") else "en"


def vote(code: object) -> str:
    return str(VOTES.get(str(code), code))


def error_category(code: str) -> str:
    """A translation reviewer's error category (``TranslationError``)."""
    return str(TranslationError(code).label) if code in TranslationError.values else code


def translation_verdict(code: str) -> str:
    """A translation reviewer's verdict: accept, fix, reject."""
    values = TranslationRound.Verdict
    return str(values(code).label) if code in values.values else code


def criterion_labels() -> dict[str, str]:
    """Every criterion's label in the page's language: the newest rubric's, else the built-in one (one
    query)."""
    lang = page_language()
    labels = {code: names[lang] for code, names in default_rubrics.CRITERION_LABELS.items()}
    labels["best"] = str(_("Best response"))
    labels["vote"] = str(_("Vote"))
    newest: dict[str, int] = {}
    for criterion, version, label in (
        Rubric.objects.filter(category="")
        .order_by("criterion", "-version")
        .values_list("criterion", "version", "label")
    ):
        if newest.setdefault(criterion, version) == version and isinstance(label, dict) and label.get(lang):
            labels[criterion] = str(label[lang])
    return labels
