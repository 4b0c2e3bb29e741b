"""An error-span project's settings as plain values: its category tree (``error_spans.DEFAULT_TREE``, the
MQM core typology, unless the project sets its own), its MQM weights (WMT 2021 by default), the
severities annotators choose from, and which categories the automatic flags suggest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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

_FLAG_DEFAULTS = FlagCategories(
    mistranslation="accuracy/mistranslation",
    addition="accuracy/addition",
    untranslated="accuracy/untranslated",
    register="fluency/register",
    style="style",
    non_translation="non-translation",
)


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
    unknown = sorted(set(settings) - {"categories", "weights"})
    if unknown:
        raise SpanSettingsInvalid(f"Unknown span setting {unknown[0]!r} (known: categories, weights).")
    try:
        tree = tree_from_json(settings["categories"]) if settings.get("categories") else DEFAULT_TREE
        weights = weights_from_json(settings["weights"]) if settings.get("weights") else WMT21
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
        protocol=protocol, tree=tree, weights=weights, severities=SEVERITIES, flag_categories=flags
    )


__all__ = [
    "ESA",
    "MAJOR",
    "MINOR",
    "OMISSION_CATEGORY",
    "SEVERITIES",
    "SpanConfig",
    "SpanSettingsInvalid",
    "span_config",
]
