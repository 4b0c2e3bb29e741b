"""An error-span project's settings as plain values: its category tree (``error_spans.DEFAULT_TREE``, the
MQM core typology, unless the project sets its own), its MQM weights (WMT 2021 by default), the
severities annotators choose from, which categories the automatic flags suggest, and its attention checks
(``attention_checks``: the share of targets that get a copy with an injected error, the kinds of error,
and whether a found error must also carry the expected category).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from annotation.domain.attention_checks import KINDS as CHECK_KINDS
from annotation.domain.error_spans import (
    DEFAULT_TREE,
    WMT21,
    Category,
    MqmWeights,
    tree_from_json,
    weights_from_json,
)
from annotation.domain.span_marking import ESA, FlagCategories

OMISSION_CATEGORY = "accuracy/omission"
MINOR = "minor"
MAJOR = "major"
SEVERITIES = (MINOR, MAJOR)
# At most this share of a project's targets get an attention check: beyond it the checks are the job.
MAX_CHECK_SHARE = 0.5

_FLAG_DEFAULTS = FlagCategories(
    mistranslation="accuracy/mistranslation",
    addition="accuracy/addition",
    untranslated="accuracy/untranslated",
    register="fluency/register",
    style="style",
    non_translation="non-translation",
)


@dataclass(frozen=True)
class AttentionCheckSettings:
    """``share``: the share of targets that get a copy with an injected error (0: none); ``kinds``: which
    errors (``attention_checks.KINDS``); ``match_category``: a found error must carry an agreeing category."""

    share: float = 0.0
    kinds: tuple[str, ...] = CHECK_KINDS
    match_category: bool = False

    @property
    def on(self) -> bool:
        return self.share > 0 and bool(self.kinds)

    def as_json(self) -> dict[str, Any]:
        return {"share": self.share, "kinds": list(self.kinds), "match_category": self.match_category}


def check_settings_from_json(data: object) -> AttentionCheckSettings:
    """``{"share": 0.1, "kinds": [...], "match_category": false}`` (kinds default to all three); a
    ``ValueError`` names what is wrong."""
    if not isinstance(data, Mapping):
        raise ValueError("attention_checks is an object with share, kinds and match_category.")
    unknown = sorted(set(data) - {"share", "kinds", "match_category"})
    if unknown:
        raise ValueError(
            f"Unknown attention_checks setting {unknown[0]!r} (known: share, kinds, match_category)."
        )
    share = data.get("share", 0.0)
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= MAX_CHECK_SHARE:
        raise ValueError(f"attention_checks.share is a number from 0 to {MAX_CHECK_SHARE}; got {share!r}.")
    kinds = data.get("kinds", list(CHECK_KINDS))
    if not isinstance(kinds, list | tuple) or not kinds:
        raise ValueError(f"attention_checks.kinds lists one or more of {', '.join(CHECK_KINDS)}.")
    for kind in kinds:
        if kind not in CHECK_KINDS:
            raise ValueError(
                f"attention_checks.kinds: unknown kind {kind!r}; expected one of {', '.join(CHECK_KINDS)}."
            )
    match = data.get("match_category", False)
    if not isinstance(match, bool):
        raise ValueError("attention_checks.match_category is true or false.")
    return AttentionCheckSettings(float(share), tuple(dict.fromkeys(kinds)), match)


@dataclass(frozen=True)
class SpanConfig:
    """``categories``: the tree's nodes an annotator picks from (the leaves, each with its parent's name
    before its own), in the tree's order."""

    protocol: str
    tree: tuple[Category, ...]
    weights: MqmWeights
    severities: tuple[str, ...]
    flag_categories: FlagCategories
    minor: str = MINOR
    major: str = MAJOR
    checks: AttentionCheckSettings = AttentionCheckSettings()

    @property
    def leaves(self) -> list[tuple[Category, Category | None]]:
        out = []
        for top in self.tree:
            if not top.children:
                out.append((top, None))
            for child in top.children:
                for node in child.walk():
                    if not node.children:
                        out.append((node, top))
        return out

    @property
    def codes(self) -> frozenset[str]:
        return frozenset(node.code for node, _ in self.leaves)

    def labelled(self, lang: str) -> list[dict[str, str]]:
        """The categories to pick from, named and explained in ``lang`` (``id`` or ``en``)."""
        indonesian = lang.startswith("id")
        out = []
        for node, parent in self.leaves:
            name = node.name_id if indonesian else node.name_en
            if parent is not None:
                name = f"{parent.name_id if indonesian else parent.name_en} · {name}"
            out.append(
                {
                    "code": node.code,
                    "label": name,
                    "help": node.help_id if indonesian else node.help_en,
                    "register": node.register,
                    "source_side": node.source_side,
                }
            )
        return out


class SpanSettingsInvalid(ValueError):
    pass


def span_config(settings: Mapping[str, Any], *, protocol: str) -> SpanConfig:
    """The settings of a project of ``protocol`` (``mqm`` or ``esa``): ``categories`` (a tree in
    ``tree_to_json``'s form) and ``weights`` (``weights_from_json``'s), each defaulting to the MQM core
    typology and the WMT 2021 weights. ``SpanSettingsInvalid`` names what is wrong."""
    unknown = sorted(set(settings) - {"categories", "weights", "attention_checks"})
    if unknown:
        raise SpanSettingsInvalid(
            f"Unknown span setting {unknown[0]!r} (known: categories, weights, attention_checks)."
        )
    try:
        tree = tree_from_json(settings["categories"]) if settings.get("categories") else DEFAULT_TREE
        weights = weights_from_json(settings["weights"]) if settings.get("weights") else WMT21
        checks = (
            check_settings_from_json(settings["attention_checks"])
            if settings.get("attention_checks") is not None
            else AttentionCheckSettings()
        )
    except ValueError as exc:
        raise SpanSettingsInvalid(str(exc)) from None
    config = SpanConfig(
        protocol=protocol,
        tree=tree,
        weights=weights,
        severities=SEVERITIES,
        flag_categories=_FLAG_DEFAULTS,
    )
    codes = config.codes
    fallback = "other" if "other" in codes else sorted(codes)[0]
    flags = FlagCategories(
        **{name: (code if code in codes else fallback) for name, code in vars(_FLAG_DEFAULTS).items()}
    )
    return SpanConfig(
        protocol=protocol,
        tree=tree,
        weights=weights,
        severities=SEVERITIES,
        flag_categories=flags,
        checks=checks,
    )


__all__ = [
    "ESA",
    "MAJOR",
    "MAX_CHECK_SHARE",
    "MINOR",
    "AttentionCheckSettings",
    "OMISSION_CATEGORY",
    "SEVERITIES",
    "SpanConfig",
    "SpanSettingsInvalid",
    "check_settings_from_json",
    "span_config",
]
